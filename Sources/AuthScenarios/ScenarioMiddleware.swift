import AuthHTTP
import AuthJSON
import GoTrue

/// GoTrue's middleware seam, filled: records every GoTrue request in the journal and, when a
/// scenario rule fires, answers in its place. The emulator's own routes (`/emulator/v1` and the
/// dashboard under `/emulator`) pass untouched and unrecorded, so control calls and a dashboard
/// left open never disturb counters or journal counts.
///
/// Unless the rule says `passthrough_then`, a fault never runs the real handler, so nothing it
/// would have written is stored: the client's view fails, the server's state is unchanged.
public struct ScenarioMiddleware: Middleware {
    public let engine: ScenarioEngine
    public let journal: Journal
    public let project: Project

    public init(engine: ScenarioEngine, journal: Journal, project: Project) {
        self.engine = engine
        self.journal = journal
        self.project = project
    }

    public func respond(to context: RequestContext, next: (RequestContext) -> HTTPResponse) -> HTTPResponse {
        let prefix = GoTrueAPI.sideDoorPrefix
        if context.path == prefix || context.path.hasPrefix(prefix + "/") { return next(context) }
        let clock = ContinuousClock()
        let started = clock.now
        var facts = RequestFacts(context)
        let firing = engine.evaluate(&facts)
        var context = context
        // The hook-fault marker comes only from a rule, never from the client.
        context.request.headers[HookFaults.header] = nil
        var response = firing.map { apply($0, context, next) } ?? next(context)
        let elapsed = started.duration(to: clock.now)
        var latency = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        latency += Double(firing?.delayMilliseconds ?? 0)
        let delivery = Delivery(response, firing: firing)
        // The access log, outside this middleware, prints the same facts as the journal.
        delivery.annotate(&response)
        let id = journal.record(entry(context, delivery, latency: latency))
        // What a 5xx kept from its client (`AuthError.internalError`), from GoTrue's side.
        if (delivery.status ?? 0) >= 500, let cause = project.hookLog.takeInternalError(request: context.requestIDSource) {
            journal.noteDatabaseError(cause, for: id)
        }
        // Every hook call appears in the journal after the request that made it, as `hook.<name>`.
        for call in project.hookLog.drain() {
            var hook = JournalEntry(
                id: 0, time: call.time, operation: "hook." + call.name, method: "POST",
                path: call.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? call.uri, viaGateway: false,
                query: [], status: call.status, latencyMilliseconds: call.milliseconds, rule: nil,
                fault: call.error == nil ? nil : "hook_failed", test: context.request.headers[Match.testHeader])
            hook.errorCode = call.errorCode
            journal.record(hook)
        }
        return response
    }

    func entry(_ context: RequestContext, _ delivery: Delivery, latency: Double) -> JournalEntry {
        JournalEntry(
            id: 0, time: project.environment.now(), operation: context.operation, method: context.request.method,
            path: context.path, viaGateway: context.viaGateway,
            query: context.request.query.map { ($0.name, JournalEntry.redacted($0.name, $0.value)) },
            status: delivery.status, latencyMilliseconds: latency, rule: delivery.rule, fault: delivery.fault,
            test: context.request.headers[Match.testHeader], errorCode: delivery.errorCode
        )
    }

    /// The response a fired rule gives, with its transport directive.
    func apply(_ firing: Firing, _ context: RequestContext, _ next: (RequestContext) -> HTTPResponse) -> HTTPResponse {
        let effect = firing.effect
        var response: HTTPResponse
        if effect.passthrough || (!effect.suppliesResponse && !effect.breaksTransport) {
            // The real handler runs and commits; only the delivery is altered (and, with `hook`,
            // how the request's hook calls fail).
            var context = context
            if let fault = effect.hook { context.request.headers[HookFaults.header] = fault }
            response = next(context)
        } else if let code = effect.error {
            if effect.consequence { applyConsequence(code, context) }
            let error = ErrorCatalog.error(code, status: effect.status, message: effect.message, operation: context.operation)
            response = error.response(apiVersion: context.apiVersion, requestID: context.requestID)
        } else if effect.status != nil || effect.body != nil {
            var headers = HTTPHeaders()
            var body: [UInt8] = []
            switch effect.body {
            case .text(let text)?:
                headers["Content-Type"] = "text/plain; charset=utf-8"
                body = Array(text.utf8)
            case .json(let value)?:
                headers["Content-Type"] = "application/json"
                body = value.goJSONBytes
            case nil:
                break
            }
            response = HTTPResponse(status: effect.status ?? 200, headers: headers, body: body)
        } else {
            // `malformed_json` alone, or a broken transport with nothing to break: a success
            // response shaped like a session (its content never reaches the client whole).
            response = .json(ScenarioMiddleware.placeholderSession)
        }
        for (name, value) in effect.headers { response.headers[name] = value }
        if let seconds = effect.retryAfter { response.headers["Retry-After"] = String(seconds) }
        if effect.malformedJSON {
            response.headers["Content-Type"] = "application/json"
            response.body = ScenarioMiddleware.broken(response.body)
        }
        var directive = response.directive
        if let ms = firing.delayMilliseconds, ms > 0 { directive.delay = .milliseconds(ms) }
        if effect.hang { directive.stall = true }
        if effect.reset { directive.reset = true }
        if effect.emptyResponse { directive.closeAfterBytes = 0 }
        if let bytes = effect.closeAfterBytes { directive.closeAfterBytes = bytes }
        if let drip = effect.drip { directive.drip = .init(chunks: drip.chunks, duration: .milliseconds(drip.milliseconds)) }
        response.directive = directive
        return response
    }

    /// A JSON document cut in the middle: the client's parser fails on it.
    static func broken(_ body: [UInt8]) -> [UInt8] {
        let source = body.count >= 8 ? body : ScenarioMiddleware.placeholderSession.goJSONBytes
        return Array(source.prefix(source.count / 2))
    }

    static let placeholderSession: JSON = [
        "access_token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzY2VuYXJpbyJ9.c2NlbmFyaW8",
        "token_type": "bearer",
        "expires_in": 3600,
        "expires_at": 0,
        "refresh_token": "scenario0000",
        "user": ["id": "00000000-0000-0000-0000-000000000000", "aud": "authenticated", "role": "authenticated"],
    ]

    /// The real server's side effect of the error, applied through the store: reuse detection
    /// revokes the presented token's whole session family; an expired or missing session is
    /// ended (the presented refresh token's session, else the access token's `session_id`).
    func applyConsequence(_ code: ErrorCode, _ context: RequestContext) {
        let refreshToken = (try? JSON.goDecode(context.request.body))?.value["refresh_token"]?.stringValue
        let accessToken = context.request.bearerToken
        switch code {
        case .refreshTokenAlreadyUsed:
            if let refreshToken { _ = try? project.revokeRefreshTokenFamily(of: refreshToken) }
        case .sessionExpired, .sessionNotFound:
            _ = try? project.endSession(refreshToken: refreshToken, accessToken: accessToken)
        default:
            break
        }
    }
}
