import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

/// Everything a GoTrue handler gets about one request.
public struct RequestContext: Sendable {
    public var request: HTTPRequest
    /// The request id the real server puts in the log and in 5xx `error_id`s, formatted only
    /// when used (most requests never need it).
    public var requestID: String { requestIDSource.formatted }
    public var requestIDSource: RequestID
    public var apiVersion: APIVersion
    /// The path with any gateway prefix (`/auth/v1`) removed: the path GoTrue itself sees.
    public var path: String
    /// Whether the request came through the emulated gateway prefix.
    public var viaGateway: Bool
    /// The matched route's operation name (e.g. `health`, `token.password`), nil when unrouted.
    public var operation: String?
    /// `{name}` segments of the matched route.
    public var pathParameters: [String: String] = [:]
    /// Where this project is mounted on the server, as the client addressed it: "" at the root
    /// (the default project, or one reached by its host name `<ref>.localhost`), else
    /// `/project/<ref>`. Absolute links a page gives the browser start with it.
    public var mountPath = ""
    /// The project's configuration as it was when the request arrived: taken once, so a
    /// concurrent `PATCH /emulator/v1/config` never hands one request two configurations.
    public var configuration: Configuration {
        get { snapshot.configuration }
        set { snapshot = ConfigurationSnapshot(newValue) }
    }
    /// `configuration` by reference, with what is derived from it.
    public private(set) var snapshot: ConfigurationSnapshot
    /// What the route's guards admitted (`RouteGuard`), as api.go's middleware leaves it in the
    /// request's context: the authenticated caller, the admin caller, the loaded factor. Boxed:
    /// a caller is some 700 bytes, and the context is copied along the middleware chain.
    private var admitted = Admitted.nothing

    var caller: Authenticated? {
        get { if case .values(let caller, _, _) = admitted { caller } else { nil } }
        set { admitted = .values(caller: newValue, admin: admin, factor: factor) }
    }

    var admin: AdminCaller? {
        get { if case .values(_, let admin, _) = admitted { admin } else { nil } }
        set { admitted = .values(caller: caller, admin: newValue, factor: factor) }
    }

    var factor: FactorRecord? {
        get { if case .values(_, _, let factor) = admitted { factor } else { nil } }
        set { admitted = .values(caller: caller, admin: admin, factor: newValue) }
    }

    public init(request: HTTPRequest, requestID: RequestID, apiVersion: APIVersion, path: String, viaGateway: Bool,
                configuration: Configuration) {
        self.init(request: request, requestID: requestID, apiVersion: apiVersion, path: path, viaGateway: viaGateway,
                  snapshot: ConfigurationSnapshot(configuration))
    }

    public init(request: HTTPRequest, requestID: RequestID, apiVersion: APIVersion, path: String, viaGateway: Bool,
                snapshot: ConfigurationSnapshot) {
        self.snapshot = snapshot
        self.request = request
        self.requestIDSource = requestID
        self.apiVersion = apiVersion
        self.path = path
        self.viaGateway = viaGateway
    }
}

/// The values a route's guards admitted, behind one reference (an indirect case).
private indirect enum Admitted: Sendable {
    case nothing
    case values(caller: Authenticated?, admin: AdminCaller?, factor: FactorRecord?)
}

/// A UUID-shaped request id: a random per-server prefix plus a serial number, so that minting one
/// per request costs no system call and no formatting until it is printed.
public struct RequestID: Sendable, Equatable {
    public var prefix: [UInt8]   // 8 random bytes
    public var serial: UInt64

    public init(prefix: [UInt8], serial: UInt64) {
        self.prefix = prefix
        self.serial = serial
    }

    public var formatted: String {
        var bytes = prefix
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: serial >> UInt64(shift))) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUIDText.format(bytes)
    }
}

public typealias Handler = @Sendable (RequestContext) throws -> HTTPResponse

/// One GoTrue route: method, path pattern and the operation name failure scenarios match on.
/// A class, immutable: a matched route travels with every request (`Router.Match`), and a
/// reference is one retain where the struct's four fields were four.
public final class Route: Sendable {
    public enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    public let method: String
    public let segments: [Segment]
    public let operation: String
    public let handler: Handler

    /// `pattern` uses chi's syntax: `/admin/users/{user_id}`.
    public init(_ method: String, _ pattern: String, operation: String, handler: @escaping Handler) {
        self.method = method
        self.segments = pattern.split(separator: "/", omittingEmptySubsequences: true).map { part in
            part.hasPrefix("{") && part.hasSuffix("}")
                ? .parameter(String(part.dropFirst().dropLast()))
                : .literal(String(part))
        }
        self.operation = operation
        self.handler = handler
    }

    func match(_ parts: [Substring]) -> [String: String]? {
        guard parts.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            switch segment {
            // Bytes, not Characters: String equality is canonical equivalence, under which
            // a segment spelled with other scalars could match a literal Go tells apart.
            case .literal(let text): if !text.utf8.elementsEqual(part.utf8) { return nil }
            case .parameter(let name):
                guard !part.isEmpty else { return nil }
                parameters[name] = String(part)
            }
        }
        return parameters
    }
}

/// Path routing with chi's observable behaviour: exact segment matching (a trailing slash is a
/// different path), 404 for unknown paths, 405 with an `Allow` header for a known path with
/// another method.
public struct Router: Sendable {
    public enum Match: Sendable {
        case found(Route, [String: String])
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    public let routes: [Route]
    /// What `scan` answers for each path that is a parameterless pattern, by method, and for
    /// any other method: most requests name such a path (`/token`, `/user`, `/health`), and
    /// splitting the path and comparing it with every route cost ~7,000 instructions each.
    /// Built with the routes, which never change after, so it is always the scan's answer.
    /// Keyed by String, whose hashing and equality are canonical equivalence: an answer counts
    /// only when its path has the request's very bytes (`match`).
    private let literalPaths: [String: LiteralPath]

    /// A class: the lookup hands out one reference instead of copying three fields.
    private final class LiteralPath: Sendable {
        let path: String
        let byMethod: [String: Match]
        let otherwise: Match

        init(path: String, byMethod: [String: Match], otherwise: Match) {
            self.path = path
            self.byMethod = byMethod
            self.otherwise = otherwise
        }
    }

    public init(_ routes: [Route] = []) {
        self.routes = routes
        literalPaths = Router.literalPaths(routes)
    }

    /// One pass over the routes per literal path gives the scan's answer for every method: the
    /// first matching route of that method, else 405 naming the matching routes' methods.
    private static func literalPaths(_ routes: [Route]) -> [String: LiteralPath] {
        var table: [String: LiteralPath] = [:]
        for literal in routes {
            let texts = literal.segments.compactMap { if case .literal(let text) = $0 { text } else { nil } }
            guard texts.count == literal.segments.count else { continue }  // has a parameter
            let path = "/" + texts.joined(separator: "/")
            guard table[path] == nil else { continue }
            let segments = texts.map { Substring($0) }
            var byMethod: [String: Match] = [:]
            var allowed: [String] = []
            for route in routes {
                guard let parameters = route.match(segments) else { continue }
                if byMethod[route.method] == nil { byMethod[route.method] = .found(route, parameters) }
                if !allowed.contains(route.method) { allowed.append(route.method) }
            }
            table[path] = LiteralPath(path: path, byMethod: byMethod, otherwise: allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed))
        }
        return table
    }

    public func match(method: String, path: String) -> Match {
        // memcmp: the generic `utf8.elementsEqual` cost ~300 instructions for "/health".
        if let known = literalPaths[path], UTF8Bytes.equal(known.path, path) {
            return known.byMethod[method] ?? known.otherwise
        }
        return scan(method: method, path: path)
    }

    /// chi's answer by comparing `path` with every route in order. chi splits the path on the
    /// byte `/`; splitting a Swift String splits on Characters, and a `/` followed by a
    /// combining mark, an emoji modifier, a variation selector or a tag character is one
    /// Character that is not `/` (`/admin/users/%CC%81` would find no route at all).
    func scan(method: String, path: String) -> Match {
        let slash = UInt8(ascii: "/")
        guard path.utf8.first == slash else { return .notFound }
        let trailingSlash = path.utf8.count > 1 && path.utf8.last == slash
        let parts = path.utf8.split(separator: slash, omittingEmptySubsequences: false).dropFirst().map { Substring($0) }
        if trailingSlash || parts.contains(where: \.isEmpty) && path != "/" { return .notFound }
        let segments = Array(parts.filter { !$0.isEmpty })
        var allowed: [String] = []
        for route in routes {
            guard let parameters = route.match(segments) else { continue }
            // chi does not answer HEAD from a GET route: HEAD /health is a 405 on the real server.
            if route.method == method {
                return .found(route, parameters)
            }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }
}
