import AuthHTTP
import AuthStore
import Synchronization

/// All state of one emulated project. Nothing in GoTrue is global, so several isolated projects
/// can share one process.
public struct Project: Sendable {
    /// The live configuration, shared by every copy of this project: the emulator's control
    /// API may change it while the server runs (auto-confirm, signup, rate limits, ...).
    public let settings: LiveConfiguration
    public var database: Database
    public var environment: Environment
    /// Captured email/SMS bookkeeping: global send limiters and the "message captured" observer.
    public let outbox: Outbox
    /// The per-client request limiters (reference §6.1), shared by every copy of this project.
    public let rateLimiter = RateLimiter()
    /// The last fixture seeded (`reset?keep_seed=true` returns to it).
    public let fixtures = FixtureMemory()
    /// The fake identity providers' in-memory state (codes, provider tokens, cached key).
    public let identityProviders = IdentityProviderStore()

    public init(configuration: Configuration, database: Database, environment: Environment = Environment()) {
        self.settings = LiveConfiguration(configuration)
        self.database = database
        self.environment = environment
        self.outbox = Outbox(start: environment.now())
    }

    /// A snapshot of the live configuration. Setting it replaces the live configuration.
    public var configuration: Configuration {
        get { settings.current }
        nonmutating set { settings.update { $0 = newValue } }
    }
}

/// The project's configuration behind a lock, so it can change at runtime.
public final class LiveConfiguration: Sendable {
    private let value: Mutex<Configuration>

    public init(_ configuration: Configuration) { value = Mutex(configuration) }

    public var current: Configuration { value.withLock { $0 } }

    /// Applies `change` atomically; nothing changes when it throws.
    public func update<E: Error>(_ change: (inout Configuration) throws(E) -> Void) throws(E) {
        try value.withLock { (configuration: inout Configuration) throws(E) in
            var copy = configuration
            try change(&copy)
            configuration = copy
        }
    }
}

/// A seam in the request pipeline, between error rendering and the route handler. Failure
/// scenarios plug in here; with no middleware the server is the plain GoTrue emulation.
/// `context.operation` is already resolved, so a middleware can match on operation names.
public protocol Middleware: Sendable {
    func respond(to context: RequestContext, next: (RequestContext) -> HTTPResponse) -> HTTPResponse
}

/// The GoTrue API as an `HTTPResponder`: serves every route at the root, as GoTrue does, and
/// under `/auth/v1`, as Supabase clients reach it through the gateway.
public final class GoTrueAPI: HTTPResponder {
    public let project: Project
    public let router: Router
    let middleware: [any Middleware]
    private let requestIDPrefix: [UInt8]
    private let requestSerial = Atomic<UInt64>(0)

    /// The path prefix the Supabase gateway strips before requests reach GoTrue.
    public static let gatewayPrefix = "/auth/v1"

    /// The prefix of the emulator's own control routes (outbox, seeding, clock, scenarios, ...).
    /// They never collide with a GoTrue path and require the service_role key.
    public static let emulatorPrefix = "/emulator/v1"

    /// - Parameter extensions: routes added by the layers above (emulator control routes, whose
    ///   patterns start with `emulatorPrefix`).
    public init(project: Project, middleware: [any Middleware] = [], extensions: [Route] = []) {
        self.project = project
        self.middleware = middleware
        self.requestIDPrefix = project.environment.randomBytes(8)
        var router = Router()
        for route in GoTrueAPI.routes(project) + extensions { router.add(route) }
        self.router = router
    }

    static func routes(_ project: Project) -> [Route] {
        let core = Core(project: project)
        return HealthEndpoints(project: project).routes
            + SettingsEndpoints(api: core).routes
            + SignupEndpoints(api: core).routes
            + TokenEndpoints(api: core).routes
            + UserEndpoints(api: core).routes
            + LogoutEndpoints(api: core).routes
            + AdminEndpoints(api: core).routes
            + MailFlowEndpoints(api: core).routes
            + ExternalEndpoints(api: core).routes
            + ControlEndpoints(api: core).routes
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        var path = request.path
        var viaGateway = false
        if path == GoTrueAPI.gatewayPrefix || path.hasPrefix(GoTrueAPI.gatewayPrefix + "/") {
            viaGateway = true
            path = String(path.dropFirst(GoTrueAPI.gatewayPrefix.count))
            if path.isEmpty { path = "/" }
        }
        var context = RequestContext(
            request: request,
            requestID: RequestID(
                prefix: requestIDPrefix,
                serial: requestSerial.add(1, ordering: .relaxed).newValue
            ),
            apiVersion: APIVersion(headerValue: request.headers[APIVersion.headerName]),
            path: path,
            viaGateway: viaGateway
        )
        let cors = CORS(configuration: project.configuration)
        if let preflight = cors.preflight(request, viaGateway: viaGateway) { return preflight }
        if viaGateway, let refusal = gatewayRefusal(request, path: path) { return refusal }
        // The fake identity providers' public routes are reached as a real provider's are: by a
        // browser or an OIDC library, without the service_role key.
        if path == GoTrueAPI.emulatorPrefix || path.hasPrefix(GoTrueAPI.emulatorPrefix + "/"),
           !ControlIdPEndpoints.isPublic(path: path) {
            do {
                try Core(project: project).requireServiceRole(context)
            } catch {
                return error.response(apiVersion: context.apiVersion, requestID: context.requestID)
            }
        }

        let match = router.match(method: request.method, path: path)
        if case .found(let route, let parameters) = match {
            context.operation = route.operation
            // One operation name per grant, so scenarios can target `token.refresh_token`.
            if route.operation == "token" {
                context.operation = "token." + (request.queryValue("grant_type") ?? "")
            }
            context.pathParameters = parameters
        }
        var response = run(context, from: 0, match: match)
        cors.decorate(&response, request: request, viaGateway: viaGateway)
        return response
    }

    private func run(_ context: RequestContext, from index: Int, match: Router.Match) -> HTTPResponse {
        if index < middleware.count {
            return middleware[index].respond(to: context) { next in
                self.run(next, from: index + 1, match: match)
            }
        }
        switch match {
        case .notFound:
            return .plainText(status: 404, "404 page not found")
        case .methodNotAllowed(let allowed):
            var headers = HTTPHeaders()
            for method in allowed { headers.add(name: "Allow", value: method) }
            return HTTPResponse(status: 405, headers: headers)
        case .found(let route, _):
            do {
                return try route.handler(context)
            } catch let error as AuthError {
                return error.response(apiVersion: context.apiVersion, requestID: context.requestID)
            } catch {
                // Details stay in the log; the client sees only GoTrue's generic 500.
                logError("request \(context.requestID) \(context.request.method) \(context.path): \(error)")
                return AuthError.unexpected.response(apiVersion: context.apiVersion, requestID: context.requestID)
            }
        }
    }

    /// Routes the gateway leaves open: links opened in a browser and OAuth redirects carry no key.
    static let openGatewayPaths: Set<String> = ["/verify", "/callback", "/authorize"]

    /// The Supabase gateway's key check (Kong `key-auth`): the key comes from the `apikey`
    /// header or query parameter, or as the bearer token, and must be one of the project's keys
    /// (legacy JWT keys or the opaque `sb_publishable_`/`sb_secret_` ones).
    private func gatewayRefusal(_ request: HTTPRequest, path: String) -> HTTPResponse? {
        if GoTrueAPI.openGatewayPaths.contains(path) || ControlIdPEndpoints.isPublic(path: path) { return nil }
        let keys = project.configuration.apiKeys
        let accepted = [keys.anon, keys.serviceRole, keys.publishable, keys.secret].compactMap { $0 }
        var candidates: [String] = []
        if let key = request.headers["apikey"], !key.isEmpty { candidates.append(key) }
        if let key = request.queryValue("apikey"), !key.isEmpty { candidates.append(key) }
        if let authorization = request.headers["Authorization"], authorization.count > 7,
           authorization.prefix(7).lowercased() == "bearer " {
            // A user's access token is no API key: the bearer counts only when it is one.
            let bearer = String(authorization.dropFirst(7))
            if accepted.contains(bearer) { candidates.append(bearer) }
        }
        guard !candidates.isEmpty else {
            return .json(status: 401, ["message": "No API key found in request"])
        }
        if candidates.contains(where: { accepted.contains($0) }) { return nil }
        return .json(status: 401, ["message": "Invalid authentication credentials"])
    }
}

/// Server-side diagnostics go to standard error, never to clients.
func logError(_ message: String) {
    var line = "auth-emulator: " + message + "\n"
    line.withUTF8 { buffer in
        _ = writeToStandardError(buffer)
    }
}

extension GoTrueAPI {
    /// Shapes the HTTP layer's framing errors. An oversized body is what GoTrue itself reports
    /// (`request_entity_too_large`, from Go's `MaxBytesReader` limit of 1 MiB); the others never
    /// reach GoTrue on the real stack, so they answer as Go's `net/http` server does: plain text.
    public static func renderProtocolFailure(_ failure: HTTPProtocolFailure, headers: HTTPHeaders?) -> HTTPResponse {
        let apiVersion = APIVersion(headerValue: headers?[APIVersion.headerName])
        switch failure {
        case .bodyTooLarge(let limit):
            let error = AuthError(413, .requestEntityTooLarge, "Request body too large (max \(limit) bytes)")
            return error.response(apiVersion: apiVersion, requestID: "")
        case .headersTooLarge:
            return .plainText(status: 431, "431 Request Header Fields Too Large")
        case .badRequest(let reason):
            return .plainText(status: 400, "400 Bad Request: " + reason)
        case .connectionLimit:
            return .plainText(status: 503, "503 Service Unavailable: too many open connections")
        case .unsupportedVersion:
            return .plainText(status: 505, "505 HTTP Version Not Supported")
        case .notImplemented(let reason):
            return .plainText(status: 501, "501 Not Implemented: " + reason)
        }
    }
}
