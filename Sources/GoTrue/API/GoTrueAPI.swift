import AuthHTTP
import AuthStore
import Synchronization

/// A seam in the request pipeline, between error rendering and the route handler. Failure
/// scenarios plug in here; with no middleware the server is the plain GoTrue emulation.
/// `context.operation` is already resolved, so a middleware can match on operation names.
/// `next` answers with the rendered response (errors included); an error a middleware throws is
/// rendered by `GoTrueAPI` exactly as a handler's.
public protocol Middleware: Sendable {
    func respond(to context: RequestContext, next: (RequestContext) -> HTTPResponse) throws -> HTTPResponse
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

    /// Where the emulator's own pages and routes live (the dashboard at `/emulator`, the control
    /// routes below `emulatorPrefix`).
    public static let sideDoorPrefix = "/emulator"

    /// The prefix of the emulator's own control routes (outbox, seeding, clock, scenarios, ...).
    /// They never collide with a GoTrue path and require the service_role key.
    public static let emulatorPrefix = "/emulator/v1"

    let plugins: [APIPlugin]

    /// - Parameters:
    ///   - extensions: routes added by the layers above (emulator control routes, whose patterns
    ///     start with `emulatorPrefix`).
    ///   - plugins: what the layers above plug in beside routes (the side doors).
    public init(project: Project, middleware: [any Middleware] = [], extensions: [Route] = [], plugins: [APIPlugin] = []) {
        self.project = project
        self.middleware = middleware
        self.plugins = plugins
        self.requestIDPrefix = project.environment.randomBytes(8)
        self.router = Router(GoTrueAPI.routes(project) + plugins.flatMap(\.routes) + extensions)
        for plugin in plugins { plugin.attach(self) }
    }

    /// Every route group, in the order the real server's `internal/api/api.go` mounts them. The
    /// emulator's own groups come from the layers above (`plugins`).
    static let groups: [any EndpointGroup.Type] = [
        HealthEndpoints.self,
        WellKnownEndpoints.self,
        SettingsEndpoints.self,
        SignupEndpoints.self,
        InviteEndpoints.self,
        RecoverEndpoints.self,
        ResendEndpoints.self,
        OtpEndpoints.self,
        TokenEndpoints.self,
        VerifyEndpoints.self,
        ExternalEndpoints.self,
        UserEndpoints.self,
        MFAEndpoints.self,
        IdentityEndpoints.self,
        ReauthenticateEndpoints.self,
        LogoutEndpoints.self,
        AdminEndpoints.self,
        // Features off by default: their real "disabled" answers (passkeys are built, see
        // Passkeys.swift, and answer so while GOTRUE_PASSKEY_ENABLED is off).
        SSOEndpoints.self,
        SSOAdminEndpoints.self,
        OAuthServerEndpoints.self,
        CustomOAuthProviderEndpoints.self,
        PasskeyEndpoints.self,
        SCIMEndpoints.self,
        AdminPasskeyEndpoints.self,
    ]

    static func routes(_ project: Project) -> [Route] {
        groups.flatMap { $0.routes(project) }
    }

    /// The operation names a request can resolve to, derived from the route table: every
    /// GoTrue route's operation, `/token` split by grant type as `respond` splits it
    /// (`token.password`, ...). The emulator's own `/emulator/v1` routes are left out: they pass
    /// scenarios and the journal untouched. Scenario files are checked against this list.
    public static let operationNames: [String] = {
        var names: [String] = []
        for operation in groups.flatMap({ $0.operations }) where !operation.hasPrefix("emulator.") {
            let expanded = operation == TokenEndpoints.operation ? TokenEndpoints.grants.map { "token." + $0 } : [operation]
            for name in expanded where !names.contains(name) { names.append(name) }
        }
        return names
    }()

    /// Routes answered from the configuration alone, at the root and through the gateway: the
    /// event loop may run them itself (`HTTPResponder.respondsInline`). Every middleware still
    /// applies (scenarios, journal, access log); none of them blocks.
    static let inlinePaths: Set<String> = {
        let paths = ["/health", "/settings", "/.well-known/jwks.json"]
        return Set(paths + paths.map { gatewayPrefix + $0 })
    }()

    /// `GET /user`, what apps call most: a token check (cached per thread once verified) and
    /// one indexed read transaction, tens of microseconds. A file database gives every thread a
    /// reader connection of its own (WAL: readers never wait for the writer), so the loop
    /// answers it itself. In memory, reads share the writer's connection and would wait for a
    /// whole group commit; on Postgres, every read waits on the network: there, workers answer it.
    static let quickReadPaths: Set<String> = ["/user", gatewayPrefix + "/user"]

    public func respondsInline(to request: HTTPRequest) -> Bool {
        switch request.method {
        case "GET":
            return GoTrueAPI.inlinePaths.contains(request.path)
                || (GoTrueAPI.quickReadPaths.contains(request.path) && project.database.readsWithoutWaiting)
        case "HEAD":
            return GoTrueAPI.inlinePaths.contains(request.path)
        default:
            return false
        }
    }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        respond(to: request, mountPath: "")
    }

    /// Answers a request whose mount prefix (`/project/<ref>`) the server has already removed
    /// from `request.path` and `request.target`; see `RequestContext.mountPath`.
    public func respond(to request: HTTPRequest, mountPath: String) -> HTTPResponse {
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
            viaGateway: viaGateway,
            // The one lock taken on the live configuration for this request.
            snapshot: project.settings.snapshot
        )
        context.mountPath = mountPath
        GoTrueAPI.applyExternalHost(&context)
        var cors = CORS(allowedHeaders: context.snapshot.configuration.corsAllowedHeaders)
        if LocalOrigins.isEmulatorRoute(path) {
            if let host = request.headers["Host"], !LocalOrigins.allows(host: host, context.snapshot.configuration) {
                return GoTrueAPI.render(AuthError(403, nil, "Host \"\(host)\" is not allowed for the emulator's own routes: use localhost, an IP address, or add the name to GOTRUE_MAILER_EXTERNAL_HOSTS"), context)
            }
            cors.sharesWith = { LocalOrigins.allows(origin: $0, context.snapshot.configuration) }
        }
        if let preflight = cors.preflight(request, viaGateway: viaGateway) { return preflight }
        if viaGateway {
            let keys = context.snapshot.configuration.apiKeys
            if context.snapshot.configuration.requireAPIKey, let refusal = gatewayRefusal(request, path: path, keys: keys) { return refusal }
            if !GoTrueAPI.untransformedGatewayPaths.contains(path) { GoTrueAPI.translateKeys(&context.request, keys: keys) }
        }
        // The fake identity providers' public routes are reached as a real provider's are: by a
        // browser or an OIDC library, without the service_role key.
        if path == GoTrueAPI.emulatorPrefix || path.hasPrefix(GoTrueAPI.emulatorPrefix + "/"),
           !plugins.contains(where: { $0.isPublic(path) }) {
            do {
                try Core(project: project, snapshot: context.snapshot).requireServiceRole(context)
            } catch {
                return GoTrueAPI.render(error, context)
            }
        }

        var match = router.match(method: request.method, path: path)
        // chi's `r.Route(prefix, ...)` with a `"/"` route answers `prefix/` as `prefix`.
        if case .notFound = match, path.utf8.count > 1, path.hasSuffix("/"), GoTrueAPI.isGroupRoot(path.dropLast()) {
            match = router.match(method: request.method, path: String(path.dropLast()))
        }
        // The dashboard's discovery page at `/` (and `/emulator/`): only where GoTrue has no route.
        if case .notFound = match {
            for plugin in plugins {
                if let route = plugin.fallback(request.method, path, viaGateway) {
                    match = .found(route, [:])
                    break
                }
            }
        }
        if case .found(let route, let parameters) = match {
            context.operation = route.operation
            // One operation name per grant, so scenarios can target `token.refresh_token`.
            if route.operation == TokenEndpoints.operation {
                context.operation = "token." + (request.queryValue("grant_type") ?? "")
            }
            context.pathParameters = parameters
        }
        var response = run(context, from: 0, match: match)
        cors.decorate(&response, request: request)
        return response
    }

    private func run(_ context: RequestContext, from index: Int, match: Router.Match) -> HTTPResponse {
        do {
            if index < middleware.count {
                return try middleware[index].respond(to: context) { next in
                    self.run(next, from: index + 1, match: match)
                }
            }
            switch match {
            case .notFound, .methodNotAllowed:
                // The middleware of the groups the path is mounted under runs first.
                let guards = RouteGuard.mounted(on: context.path).compactMap(\.check)
                if !guards.isEmpty {
                    let core = Core(project: project, snapshot: context.snapshot)
                    var guarded = context
                    for check in guards { try check(core, &guarded) }
                }
            case .found:
                break
            }
            switch match {
            case .notFound:
                return .plainText(status: 404, "404 page not found")
            case .methodNotAllowed(let allowed):
                var headers = HTTPHeaders()
                for method in allowed { headers.add(name: "Allow", value: method) }
                return HTTPResponse(status: 405, headers: headers)
            case .found(let route, _):
                var response = try route.handler(context)
                response.shapeAsGoRedirect(method: context.request.method)
                return response
            }
        } catch {
            if let cause = (error as? AuthError)?.internalError { project.hookLog.noteInternalError(cause, request: context.requestIDSource) }
            return GoTrueAPI.render(error, context)
        }
    }

    /// The one place errors become responses: an `AuthError` in GoTrue's format for the
    /// request's API version; anything else is logged and answered with GoTrue's generic 500.
    package static func render(_ error: any Error, _ context: RequestContext) -> HTTPResponse {
        if let error = error as? AuthError {
            if let cause = error.internalError {
                logError("request \(context.requestID) \(context.request.method) \(context.path): \(error.message): \(cause)")
            }
            return error.response(apiVersion: context.apiVersion, requestID: context.requestID)
        }
        logError("request \(context.requestID) \(context.request.method) \(context.path): \(error)")
        return AuthError.unexpected.response(apiVersion: context.apiVersion, requestID: context.requestID)
    }

    /// `isValidExternalHost`: with `GOTRUE_MAILER_EXTERNAL_HOSTS` set, an `X-Forwarded-Host` on
    /// that list becomes this request's external URL (`https://`, or `http://` for `localhost`
    /// with `X-Forwarded-Proto: http`), so its links point at the host the client used. The
    /// request target's own host counts only when no `X-Forwarded-Host` is sent; server requests
    /// carry none (origin-form targets), as Go's `req.URL.Hostname()` is empty for them.
    static func applyExternalHost(_ context: inout RequestContext) {
        let hosts = context.snapshot.configuration.mailer.externalHosts
        guard !hosts.isEmpty, let forwarded = context.request.headers["X-Forwarded-Host"], !forwarded.isEmpty,
              hosts.contains(forwarded) else { return }
        let proto = forwarded == "localhost" && context.request.headers["X-Forwarded-Proto"] == "http" ? "http" : "https"
        context.configuration.externalURL = proto + "://" + forwarded
    }

    /// The routes `supabase start`'s Kong sends to GoTrue untouched (its `auth-v1-open*`
    /// services): links opened in a browser and OAuth redirects.
    static let untransformedGatewayPaths: Set<String> = ["/verify", "/callback", "/authorize"]

    /// The Authorization header Kong's request-transformer gives every other `/auth/v1` request
    /// (the CLI's `BearerToken` template): a bearer that is not an `sb_` key passes as it is; an
    /// `apikey` equal to the secret or publishable key becomes the service_role or anon JWT
    /// bearer; otherwise the `apikey` value itself. So opaque keys reach GoTrue as JWTs.
    static func translateKeys(_ request: inout HTTPRequest, keys: APIKeys) {
        if let authorization = request.headers["Authorization"], !authorization.hasPrefix("Bearer sb_") { return }
        guard let apikey = request.headers["apikey"] else { return }
        if let secret = keys.secret, apikey == secret {
            request.headers["Authorization"] = "Bearer " + keys.serviceRole
        } else if let publishable = keys.publishable, apikey == publishable {
            request.headers["Authorization"] = "Bearer " + keys.anon
        } else {
            request.headers["Authorization"] = apikey
        }
    }

    /// With `requireAPIKey`, the routes the hosted gateway leaves open: links opened in a browser
    /// and OAuth redirects carry no key, and discovery documents are public by nature (any JWT
    /// library fetches them bare).
    static let openGatewayPaths: Set<String> = [
        "/verify", "/callback", "/authorize", "/.well-known/jwks.json", "/.well-known/openid-configuration",
    ]

    /// The hosted gateway's key check (`requireAPIKey`): the key comes from the `apikey`
    /// header or query parameter, or as the bearer token, and must be one of the project's keys
    /// (legacy JWT keys or the opaque `sb_publishable_`/`sb_secret_` ones).
    private func gatewayRefusal(_ request: HTTPRequest, path: String, keys: APIKeys) -> HTTPResponse? {
        if GoTrueAPI.openGatewayPaths.contains(path) || plugins.contains(where: { $0.isPublic(path) }) { return nil }
        let accepted = [keys.anon, keys.serviceRole, keys.publishable, keys.secret].compactMap { $0 }
        var candidates: [String] = []
        if let key = request.headers["apikey"], !key.isEmpty { candidates.append(key) }
        if let key = request.queryValue("apikey"), !key.isEmpty { candidates.append(key) }
        // A user's access token is no API key: the bearer counts only when it is one.
        if let bearer = request.bearerToken, accepted.contains(bearer) { candidates.append(bearer) }
        guard !candidates.isEmpty else {
            return .json(status: 401, ["message": "No API key found in request"])
        }
        if candidates.contains(where: { accepted.contains($0) }) { return nil }
        return .json(status: 401, ["message": "Invalid authentication credentials"])
    }
}

/// What a layer above plugs into the plain server beside middleware: routes, `/emulator/v1`
/// paths reached without the service_role key, a route for paths no GoTrue route matches, and
/// a call once the API exists.
public struct APIPlugin: Sendable {
    public var routes: [Route]
    public var isPublic: @Sendable (_ path: String) -> Bool
    public var fallback: @Sendable (_ method: String, _ path: String, _ viaGateway: Bool) -> Route?
    public var attach: @Sendable (GoTrueAPI) -> Void

    public init(
        routes: [Route],
        isPublic: @escaping @Sendable (_ path: String) -> Bool = { _ in false },
        fallback: @escaping @Sendable (_ method: String, _ path: String, _ viaGateway: Bool) -> Route? = { _, _, _ in nil },
        attach: @escaping @Sendable (GoTrueAPI) -> Void = { _ in }
    ) {
        self.routes = routes
        self.isPublic = isPublic
        self.fallback = fallback
        self.attach = attach
    }
}

/// Server-side diagnostics go to standard error, never to clients.
package func logError(_ message: String) {
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
        case .shuttingDown:
            return .plainText(status: 503, "503 Service Unavailable: the server is shutting down")
        }
    }
}
