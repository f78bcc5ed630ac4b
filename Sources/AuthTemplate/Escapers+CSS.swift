import AuthJSON
import GoFormats

extension Escapers {
    // MARK: CSS

    private static let cssReplacementTable = table([
        (0, "\\0"), (UInt8(ascii: "\t"), "\\9"), (UInt8(ascii: "\n"), "\\a"), (0x0C, "\\c"), (UInt8(ascii: "\r"), "\\d"),
        (UInt8(ascii: "\""), "\\22"), (UInt8(ascii: "&"), "\\26"), (UInt8(ascii: "'"), "\\27"), (UInt8(ascii: "("), "\\28"),
        (UInt8(ascii: ")"), "\\29"), (UInt8(ascii: "+"), "\\2b"), (UInt8(ascii: "/"), "\\2f"), (UInt8(ascii: ":"), "\\3a"),
        (UInt8(ascii: ";"), "\\3b"), (UInt8(ascii: "<"), "\\3c"), (UInt8(ascii: ">"), "\\3e"), (UInt8(ascii: "\\"), "\\\\"),
        (UInt8(ascii: "{"), "\\7b"), (UInt8(ascii: "}"), "\\7d"),
    ])

    static func isCSSSpace(_ c: UInt8) -> Bool {
        c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x20
    }

    static func cssEscaper(_ s: String) -> String {
        rewriteRunes(s) { r, rest in
            guard Int(r) < cssReplacementTable.count, let repl = cssReplacementTable[Int(r)] else { return nil }
            // A space ends a hex escape that a hex digit or a space would otherwise extend.
            if repl != "\\\\", rest.first.map({ isHex($0) || isCSSSpace($0) }) ?? true { return repl + " " }
            return repl
        }
    }

    static func isCSSNmchar(_ r: UInt32) -> Bool {
        (r >= 0x61 && r <= 0x7A) || (r >= 0x41 && r <= 0x5A) || (r >= 0x30 && r <= 0x39) || r == 0x2D || r == 0x5F
            || (r >= 0x80 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
    }

    /// decodeCSS: CSS escapes (`\41 `, `\"`) replaced by what they stand for.
    static func decodeCSS(_ s: [UInt8]) -> [UInt8] {
        guard s.contains(UInt8(ascii: "\\")) else { return s }
        var b: [UInt8] = []
        var rest = s[...]
        while !rest.isEmpty {
            let i = rest.firstIndex(of: UInt8(ascii: "\\")) ?? rest.endIndex
            b.append(contentsOf: rest[rest.startIndex..<i])
            rest = rest[i...]
            if rest.count < 2 { break }
            let second = rest[rest.startIndex + 1]
            if isHex(second) {
                var j = rest.startIndex + 2
                while j < rest.endIndex && j < rest.startIndex + 7 && isHex(rest[j]) { j += 1 }
                var r: UInt32 = 0
                for c in rest[(rest.startIndex + 1)..<j] { r = r << 4 | UInt32(hexValue(c)) }
                if r > 0x10FFFF {
                    r /= 16
                    j -= 1
                }
                let scalar = Unicode.Scalar(r) ?? "\u{FFFD}"
                b.append(contentsOf: String(scalar).utf8)
                rest = rest[j...]
                // skipCSSSpace: one space (or CRLF) ends the escape.
                if let c = rest.first {
                    if c == 0x0D && rest.count >= 2 && rest[rest.startIndex + 1] == 0x0A {
                        rest = rest.dropFirst(2)
                    } else if c == 0x09 || c == 0x0A || c == 0x0C || c == 0x20 || c == 0x0D {
                        rest = rest.dropFirst()
                    }
                }
            } else {
                let array = Array(rest)
                let (_, n) = GoUTF8.decodeRune(array, 1)
                b.append(contentsOf: rest[(rest.startIndex + 1)..<(rest.startIndex + 1 + n)])
                rest = rest[(rest.startIndex + 1 + n)...]
            }
        }
        return b
    }

    private static func hexValue(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        default: return c - UInt8(ascii: "A") + 10
        }
    }

    static func cssValueFilter(_ s: String) -> String {
        let b = decodeCSS(Array(s.utf8))
        var id: [UInt8] = []
        for (i, c) in b.enumerated() {
            switch c {
            case 0, UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "/"), UInt8(ascii: ";"),
                UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "\\"), UInt8(ascii: "]"), UInt8(ascii: "`"), UInt8(ascii: "{"),
                UInt8(ascii: "}"), UInt8(ascii: "<"), UInt8(ascii: ">"):
                return filterFailsafe
            case UInt8(ascii: "-"):
                // Two hyphens could open or close an HTML comment.
                if i != 0 && b[i - 1] == UInt8(ascii: "-") { return filterFailsafe }
            default:
                if c < 0x80 && isCSSNmchar(UInt32(c)) { id.append(c) }
            }
        }
        let lowered = String(decoding: id.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
        if lowered.contains("expression") || lowered.contains("mozbinding") { return filterFailsafe }
        return String(decoding: b, as: UTF8.self)
    }
}
