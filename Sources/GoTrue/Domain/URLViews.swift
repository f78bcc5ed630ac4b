// Two readings of one URL string, so a redirect can be judged on the host the browser will
// actually visit:
// - `GoParsedURL` accepts and splits a URL the way Go's `net/url.Parse` does (Go 1.26, the
//   toolchain GoTrue is built with): what it rejects, GoTrue treats as an invalid redirect.
// - `BrowserURL` computes scheme, host and port as the WHATWG URL Standard's basic URL parser
//   does (§4.4), which is what a browser does with a `Location` header.
// A server-side check that reads a different host than the browser is an open redirect
// (`http://evil.example\@127.0.0.1/` is loopback to a naive splitter, `evil.example` to a
// browser), so the redirect policy insists both readings agree.

/// `url.Parse`, reduced to what redirect checks read.
public struct GoParsedURL: Equatable, Sendable {
    /// Lowercased, as `url.Parse` stores it; empty for a relative reference.
    public internal(set) var scheme = ""
    /// The rootless rest of `scheme:rest` (`mailto:x`), which has no authority.
    var opaque = ""
    /// `URL.Host`: unescaped, with the port.
    package var host = ""
    /// The raw fragment (after the first `#`).
    var fragment = ""

    /// `URL.Hostname()`: the host without a valid `:port` and without IPv6 brackets.
    public var hostname: String { Self.splitHostPort(host).host }
    /// `URL.Port()`.
    var port: String { Self.splitHostPort(host).port }

    static func splitHostPort(_ hostPort: String) -> (host: String, port: String) {
        var host = Substring(hostPort)
        var port = Substring("")
        if let colon = host.lastIndex(of: ":"), validOptionalPort(host[colon...]) {
            port = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        if host.hasPrefix("["), host.hasSuffix("]"), host.count >= 2 { host = host.dropFirst().dropLast() }
        return (String(host), String(port))
    }

    /// `url.Parse`: nil where Go answers an error.
    public static func parse(_ text: String) -> GoParsedURL? {
        var url = GoParsedURL()
        let bytes = Array(text.utf8)
        let hash = bytes.firstIndex(of: UInt8(ascii: "#"))
        let main = bytes[..<(hash ?? bytes.endIndex)]
        if let hash {
            let frag = bytes[(hash + 1)...]
            // `setFragment`: only a malformed %-escape fails.
            guard unescape(frag, .fragment) != nil else { return nil }
            url.fragment = String(decoding: frag, as: UTF8.self)
        }
        // "net/url: invalid control character in URL" (the fragment is not checked).
        if main.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return nil }
        if main.elementsEqual("*".utf8) { return url }

        // getScheme: letters first, then letters, digits, `+`, `-`, `.` up to a `:`; a `:` first
        // is "missing protocol scheme"; any other character means there is no scheme.
        var rest = main
        for (offset, c) in main.enumerated() {
            if isAlpha(c) { continue }
            if isDigit(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") {
                if offset == 0 { break }
                continue
            }
            if c == UInt8(ascii: ":") {
                if offset == 0 { return nil }
                url.scheme = String(decoding: main.prefix(offset), as: UTF8.self).lowercased()
                rest = main.dropFirst(offset + 1)
            }
            break
        }

        // The query goes first, so a `?` ends the authority and the path alike.
        if let question = rest.firstIndex(of: UInt8(ascii: "?")) { rest = rest[..<question] }

        if rest.first != UInt8(ascii: "/") {
            if !url.scheme.isEmpty {
                url.opaque = String(decoding: rest, as: UTF8.self)
                return url
            }
            // "first path segment in URL cannot contain colon".
            if rest.prefix(while: { $0 != UInt8(ascii: "/") }).contains(UInt8(ascii: ":")) { return nil }
        }
        let slashes = rest.prefix(3).filter { $0 == UInt8(ascii: "/") }.count
        if rest.starts(with: "//".utf8) && (!url.scheme.isEmpty || slashes < 3) {
            let authority = rest.dropFirst(2)
            let end = authority.firstIndex(of: UInt8(ascii: "/")) ?? authority.endIndex
            guard let host = parseAuthority(authority[..<end]) else { return nil }
            url.host = host
            rest = authority[end...]
        }
        // `setPath`: only a malformed %-escape fails.
        guard unescape(rest, .path) != nil else { return nil }
        return url
    }

    /// `parseAuthority`: userinfo up to the last `@` (checked by `validUserinfo`), then the host.
    private static func parseAuthority(_ authority: ArraySlice<UInt8>) -> String? {
        guard let at = authority.lastIndex(of: UInt8(ascii: "@")) else { return parseHost(authority) }
        guard let host = parseHost(authority[(at + 1)...]) else { return nil }
        let userinfo = authority[..<at]
        guard userinfo.allSatisfy(isUserinfoByte), unescape(userinfo, .userPassword) != nil else { return nil }
        return host
    }

    /// `validUserinfo`: RFC 3986 §3.2.1 unreserved, sub-delims, `:`, `%` and `@`; nothing else
    /// (no `\`, no space, no non-ASCII).
    private static func isUserinfoByte(_ c: UInt8) -> Bool {
        isAlpha(c) || isDigit(c) || "-._:~!$&'()*+,;=%@".utf8.contains(c)
    }

    /// `parseHost`: an RFC 3986 IP-literal (with an RFC 6874 `%25` zone) that must hold an IPv6
    /// address (Go 1.25.2+, CVE-2025-47912), or a reg-name whose port, after the first `:`
    /// (Go 1.26's strict colons), is all digits.
    private static func parseHost(_ host: ArraySlice<UInt8>) -> String? {
        if host.first == UInt8(ascii: "[") {
            guard let close = host.lastIndex(of: UInt8(ascii: "]")) else { return nil }
            let colonPort = host[(close + 1)...]
            guard validOptionalPort(colonPort) else { return nil }
            let literal = host[...close]
            var unescaped: String
            if let zone = firstRange(of: "%25", in: literal) {
                guard let address = unescape(literal[..<zone], .host),
                      let zoneText = unescape(literal[zone...].dropLast(), .zone) else { return nil }
                unescaped = address + zoneText + "]"
            } else {
                guard let address = unescape(literal, .host) else { return nil }
                unescaped = address
            }
            // `netip.ParseAddr` of the bracketed text: IPv6 (an IPv4 address is refused).
            let inside = Array(unescaped.utf8).dropFirst().dropLast()
            let withoutZone: ArraySlice<UInt8>
            if let percent = inside.firstIndex(of: UInt8(ascii: "%")) {
                guard percent + 1 < inside.endIndex else { return nil }
                withoutZone = inside[..<percent]
            } else {
                withoutZone = inside
            }
            guard IPAddress.parseIPv6(withoutZone) != nil else { return nil }
            return unescaped + String(decoding: colonPort, as: UTF8.self)
        }
        if let colon = host.firstIndex(of: UInt8(ascii: ":")), !validOptionalPort(host[colon...]) { return nil }
        return unescape(host, .host)
    }

    /// `validOptionalPort`: empty, or `:` and digits (any number of them, leading zeros too).
    static func validOptionalPort<S: Collection>(_ port: S) -> Bool where S.Element == UInt8 {
        guard let first = port.first else { return true }
        return first == UInt8(ascii: ":") && port.dropFirst().allSatisfy(isDigit)
    }

    static func validOptionalPort(_ port: Substring) -> Bool { validOptionalPort(Array(port.utf8)) }

    enum Mode { case host, zone, userPassword, path, fragment }

    /// `unescape`: a `%` needs two hex digits; in a host only non-ASCII bytes may be escaped
    /// (RFC 3986 §3.2.2) besides `%25`; a zone may escape only what it could hold plainly
    /// (or a space); and a host or zone byte below 0x80 must be one `shouldEscape` keeps.
    static func unescape(_ text: ArraySlice<UInt8>, _ mode: Mode) -> String? {
        var out: [UInt8] = []
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < text.endIndex, let high = hexValue(text[i + 1]), let low = hexValue(text[i + 2]) else { return nil }
                let value = high << 4 | low
                let isPercent25 = high == 2 && low == 5
                if mode == .host && high < 8 && !isPercent25 { return nil }
                if mode == .zone && !isPercent25 && value != 0x20 && !isHostByte(value) { return nil }
                out.append(value)
                i += 3
                continue
            }
            if (mode == .host || mode == .zone) && c < 0x80 && !isHostByte(c) { return nil }
            out.append(c)
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The ASCII bytes `shouldEscape(c, encodeHost)` leaves alone: unreserved, sub-delims, and
    /// `:`, `[`, `]`, `<`, `>`, `"` (which Go admits because the host holds the port and brackets).
    private static func isHostByte(_ c: UInt8) -> Bool {
        isAlpha(c) || isDigit(c) || "-_.~!$&'()*+,;=:[]<>\"".utf8.contains(c)
    }

    private static func firstRange(of needle: String, in haystack: ArraySlice<UInt8>) -> Int? {
        let n = Array(needle.utf8)
        guard haystack.count >= n.count else { return nil }
        for i in haystack.startIndex...(haystack.endIndex - n.count) where haystack[i..<(i + n.count)].elementsEqual(n) {
            return i
        }
        return nil
    }
}

extension GoParsedURL {
    static func isAlpha(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") }
    static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// A redirect target read both ways, accepted only when both readings name the same place.
package struct RedirectTarget {
    package let go: GoParsedURL
    let browser: BrowserURL

    /// Schemes GoTrue's `validateRedirectURI` refuses: they run script or read local data.
    package static let scriptSchemes: Set<String> = ["javascript", "data", "file", "vbscript", "about", "blob"]

    /// Nil when Go rejects the text, when it is not absolute (a relative or scheme-relative
    /// reference is resolved against the auth server's own URL, not judged by the allow-list), or
    /// when a browser would reach a different scheme, host or port than Go's reading names.
    package init?(_ text: String) {
        guard let go = GoParsedURL.parse(text), !go.scheme.isEmpty,
              let browser = BrowserURL.parse(text), browser.scheme == go.scheme else { return nil }
        self.go = go
        self.browser = browser
        guard Self.sameHost(go, browser.host), Self.samePort(go, browser) else { return nil }
    }

    private static func sameHost(_ go: GoParsedURL, _ host: BrowserURL.Host) -> Bool {
        let name = go.hostname
        switch host {
        case .none: return go.host.isEmpty
        case .empty: return name.isEmpty
        case .domain(let d): return name.lowercased() == d
        case .opaque(let o): return name == o
        case .ipv4(let v): return name == IPAddress.serializeIPv4(v)
        case .ipv6(let pieces):
            return go.host.hasPrefix("[") && !name.contains("%") && IPAddress.parseIPv6(Array(name.utf8)[...]) == pieces
        }
    }

    private static func samePort(_ go: GoParsedURL, _ browser: BrowserURL) -> Bool {
        let digits = go.port
        guard !digits.isEmpty else { return browser.port == nil }
        // Leading zeros name the same port for both; more digits than a port has cannot be it.
        let trimmed = digits.drop { $0 == "0" }
        guard trimmed.count <= 5, let value = Int(trimmed.isEmpty ? "0" : trimmed) else { return false }
        if let defaultPort = BrowserURL.specialSchemes[go.scheme], value == defaultPort { return browser.port == nil }
        return browser.port == value
    }
}

/// The host a client that reads URLs as a browser does (libcurl's URL parser follows the same
/// WHATWG rules for http and https: `\` ends the authority, `0x7f.1` is an IPv4 address) will
/// connect to, for a caller that must keep its fetches on this machine (email template URLs).
public enum ConnectHost: Equatable, Sendable {
    /// An address literal, serialized, and whether it is loopback (127.0.0.0/8, `::1`, or
    /// `::ffff:127.0.0.0/104`, which Linux routes to 127/8).
    case address(String, isLoopback: Bool)
    /// A name (lowercased) that must be resolved to know where it leads.
    case name(String)

    /// Nil unless the URL is http or https, Go's `url.Parse` accepts it, and a browser reads
    /// the same host and port (`RedirectTarget`): a text two readers split differently names
    /// no one host to check.
    public static func of(_ url: String) -> ConnectHost? {
        guard let target = RedirectTarget(url), target.go.scheme == "http" || target.go.scheme == "https" else { return nil }
        switch target.browser.host {
        case .ipv4(let v): return .address(IPAddress.serializeIPv4(v), isLoopback: v >> 24 == 127)
        case .ipv6(let pieces): return .address(IPAddress.serializeIPv6(pieces), isLoopback: isLoopback(pieces))
        case .domain(let name): return .name(name)
        case .none, .empty, .opaque: return nil
        }
    }

    /// Whether a numeric address text (as `getnameinfo` writes it) is loopback; nil if it is
    /// no address.
    public static func isLoopbackAddress(_ text: String) -> Bool? {
        let address = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let bytes = Array(address.utf8)[...]
        if let v4 = IPAddress.parseGoIPv4(bytes) { return v4 >> 24 == 127 }
        guard bytes.contains(UInt8(ascii: ":")), let pieces = IPAddress.parseIPv6(bytes) else { return nil }
        return isLoopback(pieces)
    }

    private static func isLoopback(_ pieces: [UInt16]) -> Bool {
        if pieces == [0, 0, 0, 0, 0, 0, 0, 1] { return true }
        return pieces[0..<5].allSatisfy { $0 == 0 } && pieces[5] == 0xFFFF && pieces[6] >> 8 == 127
    }
}
