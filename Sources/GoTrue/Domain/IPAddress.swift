/// IP address text forms shared by both readings of a URL (`GoParsedURL` and `BrowserURL`).
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
