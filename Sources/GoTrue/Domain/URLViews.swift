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

/// IP address text forms shared by both readings.
enum IPAddress {
    /// The WHATWG IPv6 parser (URL Standard §3.5), which also accepts what `netip.ParseAddr` and
    /// `net.ParseIP` accept for IPv6 without a zone: hex pieces, one `::`, a dotted IPv4 tail
    /// without leading zeros.
    static func parseIPv6(_ input: ArraySlice<UInt8>) -> [UInt16]? {
        var address = [UInt16](repeating: 0, count: 8)
        var pieceIndex = 0
        var compress: Int?
        let s = Array(input)
        var p = 0
        func at(_ i: Int) -> UInt8? { i < s.count ? s[i] : nil }
        if at(p) == UInt8(ascii: ":") {
            guard at(p + 1) == UInt8(ascii: ":") else { return nil }
            p += 2
            pieceIndex += 1
            compress = pieceIndex
        }
        while let c = at(p) {
            if pieceIndex == 8 { return nil }
            if c == UInt8(ascii: ":") {
                if compress != nil { return nil }
                p += 1
                pieceIndex += 1
                compress = pieceIndex
                continue
            }
            var value: UInt32 = 0
            var length = 0
            while length < 4, let h = at(p).flatMap(GoParsedURL.hexValue) {
                value = value * 16 + UInt32(h)
                p += 1
                length += 1
            }
            if at(p) == UInt8(ascii: ".") {
                if length == 0 || pieceIndex > 6 { return nil }
                p -= length
                var numbersSeen = 0
                while at(p) != nil {
                    var piece: Int?
                    if numbersSeen > 0 {
                        guard at(p) == UInt8(ascii: "."), numbersSeen < 4 else { return nil }
                        p += 1
                    }
                    guard let d = at(p), GoParsedURL.isDigit(d) else { return nil }
                    while let d = at(p), GoParsedURL.isDigit(d) {
                        let number = Int(d - UInt8(ascii: "0"))
                        if let current = piece {
                            if current == 0 { return nil }
                            piece = current * 10 + number
                        } else {
                            piece = number
                        }
                        if piece! > 255 { return nil }
                        p += 1
                    }
                    address[pieceIndex] = address[pieceIndex] &* 0x100 &+ UInt16(piece!)
                    numbersSeen += 1
                    if numbersSeen == 2 || numbersSeen == 4 { pieceIndex += 1 }
                }
                if numbersSeen != 4 { return nil }
                break
            } else if at(p) == UInt8(ascii: ":") {
                p += 1
                if at(p) == nil { return nil }
            } else if at(p) != nil {
                return nil
            }
            address[pieceIndex] = UInt16(value)
            pieceIndex += 1
        }
        if let compress {
            var swaps = pieceIndex - compress
            pieceIndex = 7
            while pieceIndex != 0 && swaps > 0 {
                address.swapAt(pieceIndex, compress + swaps - 1)
                pieceIndex -= 1
                swaps -= 1
            }
        } else if pieceIndex != 8 {
            return nil
        }
        return address
    }

    /// §3.6 IPv6 serializer: lowercase hex, the first longest run of two or more zero pieces
    /// compressed to `::`.
    static func serializeIPv6(_ pieces: [UInt16]) -> String {
        var bestStart = -1, bestLength = 1
        var i = 0
        while i < 8 {
            var j = i
            while j < 8 && pieces[j] == 0 { j += 1 }
            if j - i > bestLength { bestStart = i; bestLength = j - i }
            i = j == i ? i + 1 : j
        }
        var out = ""
        var index = 0
        while index < 8 {
            if index == bestStart {
                out += index == 0 ? "::" : ":"
                index += bestLength
                continue
            }
            out += String(pieces[index], radix: 16)
            if index < 7 { out += ":" }
            index += 1
        }
        return out
    }

    static func serializeIPv4(_ v: UInt32) -> String {
        [24, 16, 8, 0].map { String((v >> UInt32($0)) & 0xFF) }.joined(separator: ".")
    }

    /// `net.ParseIP` for the dotted-decimal form Go accepts: four parts, each 0-255 without
    /// leading zeros.
    static func parseGoIPv4(_ text: ArraySlice<UInt8>) -> UInt32? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(GoParsedURL.isDigit),
                  part.count == 1 || part.first != UInt8(ascii: "0") else { return nil }
            let n = part.reduce(UInt32(0)) { $0 * 10 + UInt32($1 - UInt8(ascii: "0")) }
            guard n <= 255 else { return nil }
            value = value << 8 | n
        }
        return value
    }

    /// `net.ParseIP(host).IsLoopback()`: 127.0.0.0/8 (also IPv4-mapped) or `::1`.
    static func isGoLoopback(_ host: String) -> Bool? {
        let bytes = Array(host.utf8)[...]
        if let v4 = parseGoIPv4(bytes) { return v4 >> 24 == 127 }
        guard bytes.contains(UInt8(ascii: ":")), let pieces = parseIPv6(bytes) else { return nil }
        if pieces == [0, 0, 0, 0, 0, 0, 0, 1] { return true }
        if pieces[0..<5].allSatisfy({ $0 == 0 }) && pieces[5] == 0xFFFF { return pieces[6] >> 8 == 127 }
        return false
    }

    /// §3.5 "ends in a number": the last label (a single trailing dot ignored) is all digits or
    /// parses as an IPv4 number (`0x…`).
    static func endsInANumber(_ input: ArraySlice<UInt8>) -> Bool {
        var parts = input.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if parts.last?.isEmpty == true {
            if parts.count == 1 { return false }
            parts.removeLast()
        }
        guard let last = parts.last else { return false }
        if !last.isEmpty && last.allSatisfy(GoParsedURL.isDigit) { return true }
        return parseIPv4Number(last) != nil
    }

    /// §3.5 IPv4 parser: one to four parts, each decimal, octal (leading 0) or hex (0x); the last
    /// fills the remaining bytes.
    static func parseWHATWGIPv4(_ input: ArraySlice<UInt8>) -> UInt32? {
        var parts = input.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if parts.last?.isEmpty == true && parts.count > 1 { parts.removeLast() }
        guard parts.count <= 4 else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard let n = parseIPv4Number(part) else { return nil }
            numbers.append(n)
        }
        for n in numbers.dropLast() where n > 255 { return nil }
        guard let last = numbers.last, last < (UInt64(1) << (8 * UInt64(5 - numbers.count))) else { return nil }
        var value = last
        for (i, n) in numbers.dropLast().enumerated() { value += n << (8 * UInt64(3 - i)) }
        return UInt32(value)
    }

    /// §3.5 IPv4 number parser (values past 2^32 are failures either way, so capped).
    static func parseIPv4Number(_ input: ArraySlice<UInt8>) -> UInt64? {
        if input.isEmpty { return nil }
        var digits = input
        var radix: UInt64 = 10
        if digits.count >= 2 && digits.first == UInt8(ascii: "0")
            && (digits.dropFirst().first == UInt8(ascii: "x") || digits.dropFirst().first == UInt8(ascii: "X")) {
            digits = digits.dropFirst(2)
            radix = 16
        } else if digits.count >= 2 && digits.first == UInt8(ascii: "0") {
            digits = digits.dropFirst()
            radix = 8
        }
        var value: UInt64 = 0
        for d in digits {
            guard let h = GoParsedURL.hexValue(d), UInt64(h) < radix else { return nil }
            value = min(value * radix + UInt64(h), UInt64(1) << 40)
        }
        return value
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

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
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
