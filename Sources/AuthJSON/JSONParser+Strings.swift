import AuthPlatform
import GoFormats

extension JSONParser {
    /// A string checked as Go's scanner checks it (control bytes, escapes), not decoded.
    mutating func skipString() throws(JSONError) {
        position += 1  // opening quote
        while true {
            position = ByteScan.skipStringRun(bytes, from: position)
            guard !atEnd else { throw unexpectedEnd }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return
            }
            if byte < 0x20 { throw syntax("in string literal") }
            position += 1
            if byte == UInt8(ascii: "\\") { try skipEscape() }
        }
    }

    /// The escape after a backslash (`stateInStringEsc`, `stateInStringEscU...`).
    private mutating func skipEscape() throws(JSONError) {
        guard !atEnd else { throw syntax("in string escape code") }
        switch bytes[position] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
             UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 1
        case UInt8(ascii: "u"):
            position += 1
            for _ in 0..<4 {
                guard !atEnd, isHexDigit(bytes[position]) else { throw syntax("in \\u hexadecimal character escape") }
                position += 1
            }
        default:
            throw syntax("in string escape code")
        }
    }

    mutating func parseString() throws(JSONError) -> String {
        position += 1  // opening quote
        var out: [UInt8] = []
        var runStart = position
        while true {
            position = ByteScan.skipStringRun(bytes, from: position)
            guard !atEnd else { throw unexpectedEnd }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                if out.isEmpty {
                    // Common case: no escapes and no repairs; still validated below.
                    let raw = UnsafeBufferPointer(rebasing: bytes[runStart..<position])
                    position += 1
                    // ASCII is valid UTF-8 as it stands, and most strings are ASCII: this skips
                    // `String(validating:)`, whose unspecialized generic validation instantiated
                    // type metadata on every call (~2.5 % of a `GET /user`).
                    if ByteScan.isASCII(raw) { return String(decoding: raw, as: UTF8.self) }
                    return String(validating: raw, as: UTF8.self) ?? repairUTF8(Array(raw))
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                position += 1
                return String(validating: out, as: UTF8.self) ?? repairUTF8(out)
            }
            if byte < 0x20 { throw syntax("in string literal") }
            if byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
            position += 1
            guard !atEnd else { throw syntax("in string escape code") }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xd800...0xdfff).contains(scalar) {
                    // A high surrogate followed by an escaped low one is a pair; anything else
                    // is U+FFFD, and a following escape is decoded on its own (Go's behaviour).
                    if scalar <= 0xdbff, position + 6 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                       bytes[position + 1] == UInt8(ascii: "u"),
                       let low = peekHex4(at: position + 2), (0xdc00...0xdfff).contains(low)
                    {
                        scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
                        position += 6
                    } else {
                        scalar = 0xfffd
                    }
                }
                appendUTF8(Unicode.Scalar(scalar)!, to: &out)
            default:
                throw syntax("in string escape code", at: position - 1)
            }
            runStart = position
        }
    }

    private mutating func hex4() throws(JSONError) -> UInt32 {
        guard let value = peekHex4(at: position) else {
            // Go names the first byte that is not a hex digit (or the space `eof` feeds).
            var offset = position
            while offset < bytes.count, offset < position + 4, isHexDigit(bytes[offset]) { offset += 1 }
            throw syntax("in \\u hexadecimal character escape", at: offset)
        }
        position += 4
        return value
    }

    private func peekHex4(at offset: Int) -> UInt32? {
        guard offset + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for i in offset..<(offset + 4) {
            let c = bytes[i]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private func appendUTF8(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        for unit in UTF8.encode(scalar)! { out.append(unit) }
    }

    /// Replaces each byte that does not start a well-formed UTF-8 sequence with U+FFFD,
    /// one replacement per byte as Go's `utf8.DecodeRune` does (Swift's own repair would
    /// merge a truncated sequence into a single U+FFFD).
    private func repairUTF8(_ input: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(input.count + 8)
        var i = 0
        while i < input.count {
            let length = wellFormedLength(input, i)
            if length == 0 {
                out.append(contentsOf: [0xef, 0xbf, 0xbd])
                i += 1
            } else {
                out.append(contentsOf: input[i..<(i + length)])
                i += length
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Length of the well-formed sequence at `i` (Unicode Table 3-7), or 0.
    private func wellFormedLength(_ s: [UInt8], _ i: Int) -> Int {
        let b0 = s[i]
        if b0 < 0x80 { return 1 }
        func cont(_ j: Int, _ range: ClosedRange<UInt8> = 0x80...0xbf) -> Bool {
            j < s.count && range.contains(s[j])
        }
        switch b0 {
        case 0xc2...0xdf: return cont(i + 1) ? 2 : 0
        case 0xe0: return cont(i + 1, 0xa0...0xbf) && cont(i + 2) ? 3 : 0
        case 0xe1...0xec, 0xee...0xef: return cont(i + 1) && cont(i + 2) ? 3 : 0
        case 0xed: return cont(i + 1, 0x80...0x9f) && cont(i + 2) ? 3 : 0
        case 0xf0: return cont(i + 1, 0x90...0xbf) && cont(i + 2) && cont(i + 3) ? 4 : 0
        case 0xf1...0xf3: return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0
        case 0xf4: return cont(i + 1, 0x80...0x8f) && cont(i + 2) && cont(i + 3) ? 4 : 0
        default: return 0
        }
    }
}
