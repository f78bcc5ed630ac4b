/// Who may reach the emulator's own routes (the dashboard at `/emulator` and the side door at
/// `/emulator/v1`), which show the project's keys and every captured code.
///
/// DNS rebinding: a page on `rebind.evil.example` whose name first resolves to the attacker and
/// then to 127.0.0.1 is, for the browser, same-origin with the emulator, and could read
/// `/emulator/settings`. Such a request carries the attacker's name in `Host`. So these routes
/// answer only when `Host` is a loopback name (`localhost`, `*.localhost`), an IP address (a
/// page reached by address is the emulator's own, no name was rebound), `host.docker.internal`
/// (Docker's name for the host, which no web page controls), the external URL's host, or one of
/// `GOTRUE_MAILER_EXTERNAL_HOSTS`. Requests without `Host` (HTTP/1.0 tools) pass.
///
/// CORS: GoTrue's routes keep the real server's answer (any origin). The emulator's routes share
/// responses only with origins whose host passes the same rule, so a page on another site cannot
/// read the outbox with the public demo key.
enum LocalOrigins {
    /// `/emulator` or below it; asked of every request, so on the path's bytes.
    static func isEmulatorRoute(_ path: String) -> Bool {
        var bytes = path.utf8.makeIterator()
        for expected in prefix where bytes.next() != expected { return false }
        let next = bytes.next()
        return next == nil || next == UInt8(ascii: "/")
    }

    private static let prefix = Array(Dashboard.path.utf8)

    /// Whether a `Host` header value (`name[:port]`, `[v6]:port`) is one the emulator's routes
    /// answer to.
    static func allows(host authority: String, _ configuration: Configuration) -> Bool {
        let host = hostPart(authority)
        if host.isEmpty { return false }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "host.docker.internal" { return true }
        if isIPAddress(host) { return true }
        if let external = originHost(configuration.externalURL), hostPart(external) == host { return true }
        return configuration.mailer.externalHosts.contains { hostPart($0) == host }
    }

    /// Whether a response may be shared with `origin` (`scheme://host[:port]`).
    static func allows(origin: String, _ configuration: Configuration) -> Bool {
        guard let host = originHost(origin) else { return false }
        return allows(host: host, configuration)
    }

    /// The host of `scheme://authority/...`, or nil.
    private static func originHost(_ url: String) -> String? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        let rest = url[url.index(colon, offsetBy: 3)...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.contains("@") { return nil }
        return String(authority)
    }

    /// The host of an authority, lowercased, without port, brackets or a final dot.
    static func hostPart(_ authority: String) -> String {
        var text = Substring(authority.lowercased())
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return "" }
            return String(text[text.index(after: text.startIndex)..<close])
        }
        if let colon = text.lastIndex(of: ":") { text = text[..<colon] }
        if text.hasSuffix(".") { text = text.dropLast() }
        return String(text)
    }

    /// A dotted-quad IPv4 address or an IPv6 address (as inside brackets).
    private static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") {
            return host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }
}
