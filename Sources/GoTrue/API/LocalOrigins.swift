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

    private static let prefix = Array(GoTrueAPI.sideDoorPrefix.utf8)

    /// Whether a `Host` header value (`name[:port]`, `[v6]:port`) is one the emulator's routes
    /// answer to.
    static func allows(host authority: String, _ configuration: Configuration) -> Bool {
        let host = hostname(authority)
        if host.isEmpty { return false }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "host.docker.internal" { return true }
        if RateLimitSettings.isIPAddress(host) { return true }
        if let external = GoParsedURL.parse(configuration.externalURL), hostname(external.host) == host { return true }
        return configuration.mailer.externalHosts.contains { hostname($0) == host }
    }

    /// Whether a response may be shared with `origin` (`scheme://host[:port]`).
    static func allows(origin: String, _ configuration: Configuration) -> Bool {
        guard let url = GoParsedURL.parse(origin), !url.host.isEmpty else { return false }
        return allows(host: url.host, configuration)
    }

    /// `URL.Hostname()` of an authority, lowercased and without a final dot, as names compare.
    private static func hostname(_ authority: String) -> String {
        var host = Substring(GoParsedURL.splitHostPort(authority.lowercased()).host)
        if host.hasSuffix(".") { host = host.dropLast() }
        return String(host)
    }
}
