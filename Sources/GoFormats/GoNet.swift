/// Go's `net.ParseIP` followed by `IP.String()`: what GoTrue keeps of an address a client sends
/// (`X-Forwarded-For`, `Sb-Forwarded-For`) for rate limits, audit entries and hook metadata.
package enum GoNet {
    /// The address in Go's canonical form, or nil where `net.ParseIP` returns nil. IPv4 is four
    /// decimal fields of at most three digits without a leading zero (Go 1.17 on), each at most
    /// 255; IPv6 has hex groups of at most four digits, one `::`, an optional dotted IPv4 tail,
    /// and no zone. The form printed is the dotted quad for IPv4 and for an IPv4-mapped IPv6
    /// address (`::ffff:1.2.3.4` is `1.2.3.4`), else RFC 5952: lowercase, no leading zeros, the
    /// first longest run of two or more zero groups as `::`.
    package static func canonicalIP(_ text: some StringProtocol) -> String? {
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return nil }
        if !bytes.contains(UInt8(ascii: ":")) {
            guard let v4 = ipv4(bytes[...]) else { return nil }
            return dotted(v4)
        }
        guard let v6 = ipv6(bytes) else { return nil }
        if v6[0..<10].allSatisfy({ $0 == 0 }) && v6[10] == 0xFF && v6[11] == 0xFF { return dotted(Array(v6[12...])) }
        return hexGroups(v6)
    }

    private static func dotted(_ v4: [UInt8]) -> String {
        v4.map { String($0) }.joined(separator: ".")
    }

    /// netip's `parseIPv4`.
    private static func ipv4(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        var value = 0
        var digits = 0
        var leadingZero = false
        for byte in bytes {
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                if digits == 1 && leadingZero { return nil }
                if digits == 0 && byte == UInt8(ascii: "0") { leadingZero = true }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                if value > 255 { return nil }
            } else if byte == UInt8(ascii: ".") {
                if digits == 0 || out.count == 3 { return nil }
                out.append(UInt8(value))
                (value, digits, leadingZero) = (0, 0, false)
            } else {
                return nil
            }
        }
        if digits == 0 || out.count != 3 { return nil }
        out.append(UInt8(value))
        return out
    }

    /// netip's `parseIPv6`, without zones (`net.ParseIP` refuses them).
    private static func ipv6(_ bytes: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 16)
        var filled = 0
        var ellipsis: Int? = nil
        var i = 0
        if bytes.count >= 2 && bytes[0] == UInt8(ascii: ":") && bytes[1] == UInt8(ascii: ":") {
            ellipsis = 0
            i = 2
            if i == bytes.count { return out }
        }
        while i < bytes.count {
            var value = 0
            var digits = 0
            var j = i
            while j < bytes.count, let hex = hexValue(bytes[j]) {
                value = value * 16 + hex
                digits += 1
                if digits > 4 { return nil }
                j += 1
            }
            if digits == 0 { return nil }
            if j < bytes.count && bytes[j] == UInt8(ascii: ".") {
                // A dotted IPv4 tail takes the last four bytes.
                if ellipsis == nil && filled != 12 { return nil }
                if filled + 4 > 16 { return nil }
                guard let v4 = ipv4(bytes[i...]) else { return nil }
                out[filled..<filled + 4] = v4[...]
                filled += 4
                i = bytes.count
                break
            }
            if filled + 2 > 16 { return nil }
            out[filled] = UInt8(value >> 8)
            out[filled + 1] = UInt8(value & 0xFF)
            filled += 2
            i = j
            if i == bytes.count { break }
            guard bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            if i < bytes.count && bytes[i] == UInt8(ascii: ":") {
                if ellipsis != nil { return nil }
                ellipsis = filled
                i += 1
                if i == bytes.count { break }
            } else if i == bytes.count {
                return nil
            }
        }
        if let ellipsis {
            let tail = filled - ellipsis
            if filled == 16 { return nil }
            let moved = Array(out[ellipsis..<filled])
            for k in ellipsis..<16 { out[k] = 0 }
            for k in 0..<tail { out[16 - tail + k] = moved[k] }
        } else if filled != 16 {
            return nil
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte - UInt8(ascii: "A")) + 10
        default: return nil
        }
    }

    /// RFC 5952 §4 as netip's `string6` writes it.
    private static func hexGroups(_ v6: [UInt8]) -> String {
        var groups = [Int](repeating: 0, count: 8)
        for i in 0..<8 {
            let high = Int(v6[2 * i])
            groups[i] = high << 8 | Int(v6[2 * i + 1])
        }
        var bestStart = -1
        var bestLength = 0
        var k = 0
        while k < 8 {
            if groups[k] == 0 {
                var end = k
                while end < 8 && groups[end] == 0 { end += 1 }
                if end - k > bestLength && end - k >= 2 { (bestStart, bestLength) = (k, end - k) }
                k = end
            } else {
                k += 1
            }
        }
        var text = ""
        var g = 0
        while g < 8 {
            if g == bestStart {
                text += "::"
                g += bestLength
                continue
            }
            if !text.isEmpty && !text.hasSuffix(":") { text += ":" }
            text += String(groups[g], radix: 16)
            g += 1
        }
        return text
    }
}
