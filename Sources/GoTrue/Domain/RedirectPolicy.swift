/// Redirect targets (`utilities.IsRedirectURLValid`, reference §1.5), judged on a URL that Go's
/// `url.Parse` accepts and whose host, scheme and port a browser reads the same way
/// (`RedirectTarget`); then, as GoTrue does:
/// - same scheme and hostname as `SITE_URL`, and the same port unless the host is `localhost`,
///   `*.localhost`, `127.0.0.1`, `::1`, `0.0.0.0` or `::` (`isLocalhost`; RFC 8252 §7.3 lets
///   native apps pick any loopback port);
/// - a host of digits only is refused; an IP address is allowed exactly when it is loopback;
/// - an `http`/`https` host outside `[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?` is refused;
/// - otherwise a match of one of the `GOTRUE_URI_ALLOW_LIST` globs (gobwas/glob with `.` and `/`
///   as separators) against the URL without its fragment.
struct RedirectPolicy {
    let configuration: Configuration

    func isValid(_ candidate: String) -> Bool {
        guard !candidate.isEmpty, let site = GoParsedURL.parse(configuration.siteURL),
              let target = RedirectTarget(candidate) else { return false }
        let url = target.go
        let hostname = url.hostname
        if site.hostname == hostname && site.scheme == url.scheme
            && (site.port == url.port || Self.isLocalhost(hostname)) {
            return true
        }
        if !hostname.isEmpty && hostname.utf8.allSatisfy(GoParsedURL.isDigit) { return false }
        if let loopback = IPAddress.isGoLoopback(hostname) { return loopback }
        if (url.scheme == "http" || url.scheme == "https") && !Self.isRegularHostname(hostname) { return false }
        let withoutFragment = candidate.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? candidate
        return configuration.uriAllowList.contains { pattern in
            !pattern.isEmpty && Glob.matches(Array(pattern.utf8)[...], Array(withoutFragment.utf8)[...])
        }
    }

    /// A valid `candidate`, else `SITE_URL`.
    func resolve(_ candidates: String?...) -> String {
        for candidate in candidates {
            if let candidate, isValid(candidate) { return candidate }
        }
        return configuration.siteURL
    }

    /// `isLocalhost` (utilities/url_validator.go).
    static func isLocalhost(_ hostname: String) -> Bool {
        let host = hostname.lowercased()
        return ["localhost", "127.0.0.1", "::1", "0.0.0.0", "::"].contains(host) || host.hasSuffix(".localhost")
    }

    /// `regularHostname`: `^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$`.
    static func isRegularHostname(_ hostname: String) -> Bool {
        let bytes = Array(hostname.utf8)
        let alnum: (UInt8) -> Bool = { GoParsedURL.isAlpha($0) || GoParsedURL.isDigit($0) }
        guard let first = bytes.first, let last = bytes.last, alnum(first), alnum(last) else { return false }
        return bytes.allSatisfy { alnum($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }

    /// gobwas/glob with separators `.` and `/`: `**` matches anything, `*` a run without
    /// separators, `?` one non-separator character, `[abc]` / `[a-z]` one character in the list
    /// or range (`[!...]` one not in it, separators included), `{a,b}` either alternative, `\c`
    /// the character c; everything else literally. A pattern gobwas cannot compile (an unclosed
    /// `[` or `{`, a range with more after it) stops GoTrue at start-up (`glob.MustCompile`);
    /// here it matches nothing.
    enum Glob {
        static func matches(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
            guard let p = pattern.first else { return text.isEmpty }
            let isSeparator: (UInt8) -> Bool = { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "/") }
            switch p {
            case UInt8(ascii: "*"):
                let doubled = pattern.dropFirst().first == UInt8(ascii: "*")
                let rest = pattern.dropFirst(doubled ? 2 : 1)
                var i = text.startIndex
                while true {
                    if matches(rest, text[i...]) { return true }
                    guard i < text.endIndex, doubled || !isSeparator(text[i]) else { return false }
                    i += 1
                }
            case UInt8(ascii: "{"):
                guard let (alternatives, rest) = alternatives(pattern.dropFirst()) else { return false }
                return alternatives.contains { matches($0 + rest, text) }
            default:
                break
            }
            guard let t = text.first else { return false }
            switch p {
            case UInt8(ascii: "?"):
                return !isSeparator(t) && matches(pattern.dropFirst(), text.dropFirst())
            case UInt8(ascii: "["):
                guard let (accepts, rest) = characterClass(pattern.dropFirst()) else { return false }
                return accepts(t) && matches(rest, text.dropFirst())
            case UInt8(ascii: "\\"):
                guard let escaped = pattern.dropFirst().first else { return false }
                return escaped == t && matches(pattern.dropFirst(2), text.dropFirst())
            default:
                return p == t && matches(pattern.dropFirst(), text.dropFirst())
            }
        }

        /// After `[`: `lo-hi` or a list of characters (`\` escapes one), either after `!`, then
        /// `]`. Returns the test and the pattern after the class.
        private static func characterClass(_ pattern: ArraySlice<UInt8>) -> ((UInt8) -> Bool, ArraySlice<UInt8>)? {
            var rest = pattern
            let negated = rest.first == UInt8(ascii: "!")
            if negated { rest = rest.dropFirst() }
            let bytes = Array(rest.prefix(3))
            if bytes.count == 3, bytes[1] == UInt8(ascii: "-") {
                guard rest.dropFirst(3).first == UInt8(ascii: "]") else { return nil }
                let (lo, hi) = (bytes[0], bytes[2])
                return ({ ($0 >= lo && $0 <= hi) != negated }, rest.dropFirst(4))
            }
            var list: [UInt8] = []
            while let c = rest.first, c != UInt8(ascii: "]") {
                if c == UInt8(ascii: "\\") {
                    guard let escaped = rest.dropFirst().first else { return nil }
                    list.append(escaped)
                    rest = rest.dropFirst(2)
                } else {
                    list.append(c)
                    rest = rest.dropFirst()
                }
            }
            guard rest.first == UInt8(ascii: "]") else { return nil }
            return ({ list.contains($0) != negated }, rest.dropFirst())
        }

        /// After `{`: the comma-separated alternatives up to the matching `}` (nested braces,
        /// classes and escapes kept whole), and the pattern after it.
        private static func alternatives(_ pattern: ArraySlice<UInt8>) -> ([ArraySlice<UInt8>], ArraySlice<UInt8>)? {
            var depth = 0
            var inClass = false
            var start = pattern.startIndex
            var found: [ArraySlice<UInt8>] = []
            var i = pattern.startIndex
            while i < pattern.endIndex {
                let c = pattern[i]
                if c == UInt8(ascii: "\\") {
                    i += 2
                    continue
                }
                if inClass {
                    if c == UInt8(ascii: "]") { inClass = false }
                } else if c == UInt8(ascii: "[") {
                    inClass = true
                } else if c == UInt8(ascii: "{") {
                    depth += 1
                } else if c == UInt8(ascii: "}") {
                    if depth == 0 {
                        found.append(pattern[start..<i])
                        return (found, pattern[(i + 1)...])
                    }
                    depth -= 1
                } else if c == UInt8(ascii: ","), depth == 0 {
                    found.append(pattern[start..<i])
                    start = i + 1
                }
                i += 1
            }
            return nil
        }
    }
}
