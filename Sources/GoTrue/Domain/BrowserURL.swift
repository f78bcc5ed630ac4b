/// The WHATWG URL Standard's reading of an absolute URL string (no base URL), reduced to scheme,
/// host and port: the origin a browser navigates to.
struct BrowserURL: Equatable {
    enum Host: Equatable {
        /// No host at all (`mailto:x`, `myapp:/path`).
        case none
        /// The empty host (`file:///x`, `myapp:///x`).
        case empty
        /// An ASCII domain, lowercased.
        case domain(String)
        case ipv4(UInt32)
        case ipv6([UInt16])
        /// A non-special scheme's host, kept as written (percent-encoded, case kept).
        case opaque(String)

        /// The host serializer (§3.6).
        var serialized: String {
            switch self {
            case .none, .empty: return ""
            case .domain(let d), .opaque(let d): return d
            case .ipv4(let v): return IPAddress.serializeIPv4(v)
            case .ipv6(let pieces): return "[" + IPAddress.serializeIPv6(pieces) + "]"
            }
        }
    }

    var scheme: String
    var host: Host
    /// Nil when absent or the scheme's default port.
    var port: Int?

    /// §4.2: schemes whose URLs always have a host and treat `\` like `/`.
    static let specialSchemes: [String: Int?] = ["ftp": 21, "file": nil, "http": 80, "https": 443, "ws": 80, "wss": 443]

    /// The basic URL parser with no base, as far as scheme, host and port. Nil where a browser
    /// fails, and where the host is not ASCII: the emulator implements no UTS 46 mapping, so it
    /// cannot know which host a browser would derive from one, and refuses instead.
    static func parse(_ text: String) -> BrowserURL? {
        // Leading and trailing C0 controls and spaces are trimmed; tabs and newlines anywhere
        // are removed (§4.4 basic URL parser, steps 1-3).
        var input = Array(text.utf8)[...]
        while let first = input.first, first <= 0x20 { input = input.dropFirst() }
        while let last = input.last, last <= 0x20 { input = input.dropLast() }
        let bytes = input.filter { $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }

        // scheme start and scheme states: without a base, anything but `alpha *(alnum / + - .) :`
        // is a failure.
        guard let first = bytes.first, GoParsedURL.isAlpha(first),
              let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
              bytes[..<colon].allSatisfy({ GoParsedURL.isAlpha($0) || GoParsedURL.isDigit($0) || "+-.".utf8.contains($0) })
        else { return nil }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        var rest = bytes[(colon + 1)...]
        let special = specialSchemes.keys.contains(scheme)
        let isSlash: (UInt8) -> Bool = { $0 == UInt8(ascii: "/") || (special && $0 == UInt8(ascii: "\\")) }

        if scheme == "file" {
            // file state, file slash state, file host state: a host only after two slashes.
            guard rest.prefix(2).count == 2, rest.prefix(2).allSatisfy(isSlash) else {
                return BrowserURL(scheme: scheme, host: .empty, port: nil)
            }
            rest = rest.dropFirst(2)
            let hostText = rest.prefix { !isSlash($0) && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
            if isWindowsDriveLetter(hostText) || hostText.isEmpty { return BrowserURL(scheme: scheme, host: .empty, port: nil) }
            guard let host = parseHost(hostText, special: true) else { return nil }
            return BrowserURL(scheme: scheme, host: host == .domain("localhost") ? .empty : host, port: nil)
        }
        if special {
            // special authority (ignore) slashes: any run of `/` and `\` leads to the authority,
            // so `http:host`, `http:/host` and `http:\\host` all name `host`.
            while let c = rest.first, isSlash(c) { rest = rest.dropFirst() }
        } else if rest.starts(with: "//".utf8) {
            rest = rest.dropFirst(2)
        } else {
            return BrowserURL(scheme: scheme, host: .none, port: nil)
        }

        // authority state: it ends at `/`, `?`, `#` (and `\` when special); the credentials end
        // at its last `@`, and an `@` with nothing after it is a failure.
        let authority = rest.prefix { !isSlash($0) && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        var hostPort = authority
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            hostPort = authority[(at + 1)...]
            if hostPort.isEmpty { return nil }
        }

        // host state: a `:` outside brackets starts the port.
        var insideBrackets = false
        var hostEnd = hostPort.endIndex
        for i in hostPort.indices {
            let c = hostPort[i]
            if c == UInt8(ascii: "[") { insideBrackets = true }
            if c == UInt8(ascii: "]") { insideBrackets = false }
            if c == UInt8(ascii: ":") && !insideBrackets { hostEnd = i; break }
        }
        let hostText = hostPort[..<hostEnd]
        if hostText.isEmpty {
            // An empty host before a `:` always fails; elsewhere only for special schemes.
            if special || hostEnd < hostPort.endIndex { return nil }
            return BrowserURL(scheme: scheme, host: .empty, port: nil)
        }
        guard let host = parseHost(hostText, special: special) else { return nil }

        // port state: digits only, at most 65535; the scheme's default becomes null.
        var port: Int?
        if hostEnd < hostPort.endIndex {
            let digits = hostPort[(hostEnd + 1)...]
            guard digits.allSatisfy(GoParsedURL.isDigit) else { return nil }
            if !digits.isEmpty {
                var value = 0
                for d in digits {
                    value = value * 10 + Int(d - UInt8(ascii: "0"))
                    if value > 65535 { return nil }
                }
                port = value
            }
        }
        if let port, let defaultPort = specialSchemes[scheme], port == defaultPort { return BrowserURL(scheme: scheme, host: host, port: nil) }
        return BrowserURL(scheme: scheme, host: host, port: port)
    }

    /// §3.5 host parser.
    static func parseHost(_ input: ArraySlice<UInt8>, special: Bool) -> Host? {
        if input.first == UInt8(ascii: "[") {
            guard input.last == UInt8(ascii: "]"), input.count >= 2,
                  let pieces = IPAddress.parseIPv6(input.dropFirst().dropLast()) else { return nil }
            return .ipv6(pieces)
        }
        if !special {
            // opaque-host parser: forbidden host code points fail (`%` is allowed); the rest is
            // percent-encoded with the C0 control set.
            if input.contains(where: { isForbiddenHostByte($0) && $0 != UInt8(ascii: "%") }) { return nil }
            var out = ""
            for c in input {
                if c < 0x20 || c > 0x7E {
                    out += "%" + String(c, radix: 16, uppercase: true).leftPadded(to: 2)
                } else {
                    out.unicodeScalars.append(Unicode.Scalar(c))
                }
            }
            return .opaque(out)
        }
        // domain: percent-decoded, then domain to ASCII (UTS 46). For an ASCII domain that is the
        // lowercase form (a valid `xn--` label stays as it is; an invalid one makes the browser
        // fail, which sends nobody anywhere); a non-ASCII domain is refused here.
        let decoded = percentDecode(input)
        guard !decoded.isEmpty, decoded.allSatisfy({ $0 < 0x80 }) else { return nil }
        let lower = decoded.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }
        if lower.contains(where: { isForbiddenHostByte($0) || $0 < 0x20 || $0 == UInt8(ascii: "%") || $0 == 0x7F }) { return nil }
        if IPAddress.endsInANumber(lower[...]) {
            guard let address = IPAddress.parseWHATWGIPv4(lower[...]) else { return nil }
            return .ipv4(address)
        }
        return .domain(String(decoding: lower, as: UTF8.self))
    }

    /// §3.1 forbidden host code points (ASCII part).
    static func isForbiddenHostByte(_ c: UInt8) -> Bool {
        [0x00, 0x09, 0x0A, 0x0D, 0x20].contains(c) || "#/:<>?@[\\]^|".utf8.contains(c)
    }

    private static func isWindowsDriveLetter(_ s: ArraySlice<UInt8>) -> Bool {
        s.count == 2 && GoParsedURL.isAlpha(s[s.startIndex]) && (s.last == UInt8(ascii: ":") || s.last == UInt8(ascii: "|"))
    }

    /// §1.3 percent-decode: a `%` not followed by two hex digits stays as it is.
    private static func percentDecode(_ input: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        var i = input.startIndex
        while i < input.endIndex {
            if input[i] == UInt8(ascii: "%"), i + 2 < input.endIndex,
               let high = GoParsedURL.hexValue(input[i + 1]), let low = GoParsedURL.hexValue(input[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(input[i])
                i += 1
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
