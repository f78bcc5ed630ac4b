import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthScenarios
import AuthStore
import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Synchronization

/// Sends each request to its project: `/project/<ref>/...` by path (the prefix is removed before
/// the project sees it), `Host: <ref>.localhost[:port]` by name, anything else to the default
/// project, so a server with no other project answers exactly as before.
final class ProjectRouter: HTTPResponder {
    let registry: ProjectRegistry
    let primary: GoTrueAPI

    init(registry: ProjectRegistry, primary: GoTrueAPI) {
        self.registry = registry
        self.primary = primary
    }

    enum Target {
        case project(GoTrueAPI, HTTPRequest, mountPath: String, lane: Int)
        /// A project not open yet (or one `--auto-create-projects` would make): asked on the
        /// event loop, which must not open databases, it goes to a worker, which opens it.
        case unopened(lane: Int)
        case unknown(String)
        /// Refused with this error (auto-creation at its cap).
        case refused(AuthError)
    }

    private static let prefixBytes = Array(ProjectRegistry.pathPrefix.utf8)
    private static let localhostSuffix = ".localhost"

    /// The request's project. `opening` (on a worker) opens or makes it as needed; without it
    /// (on the event loop) a project not open yet is only named, `.unopened`.
    func route(_ request: HTTPRequest, opening: Bool) -> Target {
        if request.path.utf8.starts(with: Self.prefixBytes) {
            let rest = request.path.dropFirst(ProjectRegistry.pathPrefix.count)
            let ref = String(rest.prefix { $0 != "/" })
            let remainder = String(rest.dropFirst(ref.count))
            let mount = ProjectRegistry.pathPrefix + ref
            var inner = request
            inner.path = remainder.isEmpty ? "/" : remainder
            if inner.target.hasPrefix(mount) {
                let tail = inner.target.dropFirst(mount.count)
                inner.target = tail.isEmpty || tail.first == "?" ? "/" + tail : String(tail)
            }
            if ref == ProjectRegistry.defaultRef { return .project(primary, inner, mountPath: mount, lane: 0) }
            return target(ref, inner, mountPath: mount, opening: opening)
        }
        if registry.routesByHost, let ref = Self.hostRef(request.headers["Host"]) {
            if ref == ProjectRegistry.defaultRef { return .project(primary, request, mountPath: "", lane: 0) }
            return target(ref, request, mountPath: "", opening: opening)
        }
        return .project(primary, request, mountPath: "", lane: 0)
    }

    private func target(_ ref: String, _ request: HTTPRequest, mountPath: String, opening: Bool) -> Target {
        if !opening {
            if let entry = registry.entry(ref) {
                guard let open = entry.openProject else { return .unopened(lane: entry.lane) }
                return .project(open.api, request, mountPath: mountPath, lane: open.lane)
            }
            return registry.autoCreate && ProjectRegistry.isValidRef(ref) ? .unopened(lane: 0) : .unknown(ref)
        }
        let hosted: HostedProject?
        do {
            hosted = try registry.resolve(ref)
        } catch {
            return .refused(error)
        }
        guard let hosted else { return .unknown(ref) }
        return .project(hosted.api, request, mountPath: mountPath, lane: hosted.lane)
    }

    /// `abc` from `abc.localhost` or `abc.localhost:9999` (any case, a final dot allowed); nil
    /// for any other host, `localhost` itself and deeper names. Asked of every request, so the
    /// common answer (an IP address or `localhost`) is found on the bytes, without allocating.
    static func hostRef(_ authority: String?) -> String? {
        guard var authority else { return nil }
        return authority.withUTF8 { bytes -> String? in
            var end = bytes.count
            // `name:port`: the port goes. (An IPv6 literal, `[::1]:port`, is left with no
            // `.localhost` ending whichever colon this finds.)
            if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) { end = colon }
            if end > 0, bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
            let suffix = localhostSuffixBytes
            guard end > suffix.count else { return nil }
            let start = end - suffix.count
            for offset in 0..<suffix.count where bytes[start + offset] | 0x20 != suffix[offset] { return nil }
            let label = UnsafeBufferPointer(rebasing: bytes[0..<start])
            guard !label.contains(UInt8(ascii: ".")) else { return nil }
            return String(decoding: label, as: UTF8.self).lowercased()
        }
    }

    /// `.localhost` in lowercase; `| 0x20` lowercases the letters of a byte compared with it
    /// (and leaves `.` as it is).
    private static let localhostSuffixBytes = Array(localhostSuffix.utf8)

    /// Neither `/project/...` nor `Host: <name>.localhost`: the default project's, as every
    /// request of a server hosting one project is. Checked first, on the bytes, so those
    /// requests skip building a `Target` (a copy of the request) on the loop and again on the
    /// worker.
    func isForDefaultProject(_ request: HTTPRequest) -> Bool {
        var bytes = request.path.utf8.makeIterator()
        for expected in Self.prefixBytes where bytes.next() != expected {
            // Usually at the second byte: not `/project/`.
            return !registry.routesByHost || Self.hostRef(request.headers["Host"]) == nil
        }
        return false
    }

    func respondsInline(to request: HTTPRequest) -> Bool {
        dispatch(request) == .inline
    }

    /// Each project waits in a lane of its own, so a flood of requests to one project delays
    /// another's by about one request, not by the flood.
    func dispatch(_ request: HTTPRequest) -> HTTPDispatch {
        if isForDefaultProject(request) { return primary.respondsInline(to: request) ? .inline : .queued(lane: 0) }
        switch route(request, opening: false) {
        case .project(let api, let inner, _, let lane): return api.respondsInline(to: inner) ? .inline : .queued(lane: lane)
        case .unopened(let lane): return .queued(lane: lane)
        case .unknown, .refused: return .inline
        }
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        if isForDefaultProject(request) { return primary.respond(to: request) }
        switch route(request, opening: true) {
        case .project(let api, let inner, let mount, _):
            return api.respond(to: inner, mountPath: mount)
        case .unopened:
            preconditionFailure("route(opening: true) opens the project")
        case .unknown(let ref):
            let message = ProjectRegistry.isValidRef(ref)
                ? "No project \"\(ref)\" on this emulator: create it with POST /emulator/v1/projects"
                : "\"\(ref)\" is not a project name"
            return AuthError(404, nil, message)
                .response(apiVersion: APIVersion(headerValue: request.headers[APIVersion.headerName]), requestID: "")
        case .refused(let error):
            return error.response(apiVersion: APIVersion(headerValue: request.headers[APIVersion.headerName]), requestID: "")
        }
    }
}
