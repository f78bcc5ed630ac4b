/// `encoding/base64`'s `StdEncoding` and `RawStdEncoding` decoders as Go runs them by default:
/// not in strict mode, so '\r' and '\n' anywhere are skipped and the unused bits of the last
/// symbol may be set (RFC 4648 section 3.5 lets a decoder accept them; Go does unless `Strict`).
/// Stricter decoders elsewhere would refuse values a real server accepts.
package enum GoBase64 {
    /// The failure, with Go's `CorruptInputError` text: the offset of the first byte it could
    /// not use, in the input as given.
    package struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        package let offset: Int
        package var description: String { "illegal base64 data at input byte \(offset)" }
    }

    /// `StdEncoding.DecodeString` (`padded`: '=' completes the last quantum) or
    /// `RawStdEncoding.DecodeString` (no '=' at all).
    package static func decode(_ text: String, padded: Bool) throws(Failure) -> [UInt8] {
        // The symbols and where each stood, newlines left out.
        var symbols: [(value: UInt8, offset: Int)] = []
        var padding: [Int] = []
        for (offset, byte) in text.utf8.enumerated() {
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { continue }
            if padded, byte == UInt8(ascii: "=") {
                padding.append(offset)
                continue
            }
            // Anything after the padding is corrupt.
            if let first = padding.first { throw Failure(offset: first) }
            guard let value = value(of: byte) else { throw Failure(offset: offset) }
            symbols.append((value, offset))
        }
        let rest = symbols.count % 4
        if padded {
            // The last quantum is 4 symbols, or 2 or 3 completed by exactly as many '='.
            let expected = rest == 0 ? 0 : 4 - rest
            if rest == 1 || padding.count != expected {
                throw Failure(offset: padding.count > expected ? padding[expected] : text.utf8.count)
            }
        } else if rest == 1 {
            throw Failure(offset: symbols[symbols.count - 1].offset)
        }
        var out: [UInt8] = []
        out.reserveCapacity(symbols.count * 3 / 4)
        var index = 0
        while index < symbols.count {
            let count = min(4, symbols.count - index)
            var quantum: UInt32 = 0
            for k in 0..<4 { quantum = quantum << 6 | UInt32(k < count ? symbols[index + k].value : 0) }
            out.append(UInt8(truncatingIfNeeded: quantum >> 16))
            if count > 2 { out.append(UInt8(truncatingIfNeeded: quantum >> 8)) }
            if count > 3 { out.append(UInt8(truncatingIfNeeded: quantum)) }
            index += 4
        }
        return out
    }

    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
