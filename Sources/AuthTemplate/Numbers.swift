import GoFormats

/// Number constants as Go's parse.Tree.newNumber reads them (node.go): every constant is tried
/// as an unsigned, a signed and a floating-point number with strconv's rules (base prefixes
/// 0x, 0o, 0b, a leading 0 for octal, `_` between digits), and keeps each reading that works;
/// execution picks among them by the argument's type.
enum NumberParser {
    struct Failure: Error {
        let message: String
    }

    static func parse(_ text: String, type: ItemType, pos: Int) -> Result<NumberNode, Failure> {
        var n = NumberNode(pos: pos, text: text)
        switch type {
        case .charConstant:
            guard let (r, complete) = try? GoUnquote.unquoteRune(text) else {
                return .failure(Failure(message: "invalid syntax"))
            }
            if !complete { return .failure(Failure(message: "malformed character constant: \(text)")) }
            n.int64 = Int64(r)
            n.isInt = true
            n.uint64 = UInt64(r)
            n.isUint = true
            n.float64 = Double(r)  // A character constant is a float too, in Go.
            n.isFloat = true
            return .success(n)
        case .complex:
            // "1+2i": the real part, then the signed imaginary part.
            let bytes = Array(text.utf8)
            var split = bytes.count - 1
            while split > 0 {
                let c = bytes[split]
                let before = bytes[split - 1]
                if (c == UInt8(ascii: "+") || c == UInt8(ascii: "-")) && before != UInt8(ascii: "e") && before != UInt8(ascii: "E")
                    && before != UInt8(ascii: "p") && before != UInt8(ascii: "P")
                {
                    break
                }
                split -= 1
            }
            guard split > 0, let re = parseFloat(String(decoding: bytes[..<split], as: UTF8.self)),
                let im = parseFloat(String(decoding: bytes[split..<(bytes.count - 1)], as: UTF8.self))
            else {
                return .failure(Failure(message: "expected integer"))
            }
            n.isComplex = true
            n.complex = (re, im)
            simplifyComplex(&n)
            return .success(n)
        default:
            break
        }
        if text.hasSuffix("i"), let f = parseFloat(String(text.dropLast())) {
            n.isComplex = true
            n.complex = (0, f)
            simplifyComplex(&n)
            return .success(n)
        }
        let u = parseUint(text)
        if let u {
            n.isUint = true
            n.uint64 = u
        }
        if let i = parseInt(text) {
            n.isInt = true
            n.int64 = i
            if i == 0 {
                n.isUint = true  // -0 is an unsigned zero too.
                n.uint64 = u ?? 0
            }
        }
        if n.isInt {
            n.isFloat = true
            n.float64 = Double(n.int64)
        } else if n.isUint {
            n.isFloat = true
            n.float64 = Double(n.uint64)
        } else if let f = parseFloat(text) {
            // An integer literal out of range of int64 and uint64 is an error, not a float.
            if !text.contains(where: { ".eEpP".contains($0) }) {
                return .failure(Failure(message: "integer overflow: \(GoStrconv.quote(text))"))
            }
            n.isFloat = true
            n.float64 = f
            if !n.isInt, f.rounded(.towardZero) == f, f >= -9.223372036854775808e18, f < 9.223372036854775808e18 {
                n.isInt = true
                n.int64 = Int64(f)
            }
            if !n.isUint, f.rounded(.towardZero) == f, f >= 0, f < 1.8446744073709551616e19 {
                n.isUint = true
                n.uint64 = UInt64(f)
            }
        }
        if !n.isInt && !n.isUint && !n.isFloat {
            return .failure(Failure(message: "illegal number syntax: \(GoStrconv.quote(text))"))
        }
        return .success(n)
    }

    private static func simplifyComplex(_ n: inout NumberNode) {
        n.isFloat = n.complex.im == 0
        if n.isFloat {
            let f = n.complex.re
            n.float64 = f
            n.isInt = f.rounded(.towardZero) == f && f >= -9.223372036854775808e18 && f < 9.223372036854775808e18
            if n.isInt { n.int64 = Int64(f) }
            n.isUint = f.rounded(.towardZero) == f && f >= 0 && f < 1.8446744073709551616e19
            if n.isUint { n.uint64 = UInt64(f) }
        }
    }

    /// strconv's underscoreOK: `_` only between digits (a base prefix counts as a digit).
    static func underscoreOK(_ text: String) -> Bool {
        var s = Array(text.utf8)[...]
        if let first = s.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") { s = s.dropFirst() }
        var saw: UInt8 = UInt8(ascii: "^")
        var hex = false
        var i = s.startIndex
        if s.count >= 2 && s[i] == UInt8(ascii: "0") {
            let p = s[i + 1] | 0x20
            if p == UInt8(ascii: "b") || p == UInt8(ascii: "o") || p == UInt8(ascii: "x") {
                i += 2
                saw = UInt8(ascii: "0")
                hex = p == UInt8(ascii: "x")
            }
        }
        while i < s.endIndex {
            let c = s[i]
            let lower = c | 0x20
            if (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || (hex && lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "f")) {
                saw = UInt8(ascii: "0")
            } else if c == UInt8(ascii: "_") {
                if saw != UInt8(ascii: "0") { return false }
                saw = UInt8(ascii: "_")
            } else {
                if saw == UInt8(ascii: "_") { return false }
                saw = UInt8(ascii: "!")
            }
            i += 1
        }
        return saw != UInt8(ascii: "_")
    }

    /// strconv.ParseUint(text, 0, 64).
    static func parseUint(_ text: String) -> UInt64? {
        var s = Array(text.utf8)
        guard !s.isEmpty else { return nil }
        var base: UInt64 = 10
        if s[0] == UInt8(ascii: "0") {
            if s.count >= 3 && (s[1] | 0x20) == UInt8(ascii: "b") {
                base = 2
                s.removeFirst(2)
            } else if s.count >= 3 && (s[1] | 0x20) == UInt8(ascii: "o") {
                base = 8
                s.removeFirst(2)
            } else if s.count >= 3 && (s[1] | 0x20) == UInt8(ascii: "x") {
                base = 16
                s.removeFirst(2)
            } else {
                base = 8
                s.removeFirst(1)
                if s.isEmpty { return 0 }
            }
        }
        var sawUnderscore = false
        var value: UInt64 = 0
        for c in s {
            let d: UInt64
            switch c {
            case UInt8(ascii: "_"):
                sawUnderscore = true
                continue
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt64(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): d = UInt64(c - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): d = UInt64(c - UInt8(ascii: "A")) + 10
            default: return nil
            }
            guard d < base else { return nil }
            let (m, o1) = value.multipliedReportingOverflow(by: base)
            let (a, o2) = m.addingReportingOverflow(d)
            guard !o1, !o2 else { return nil }
            value = a
        }
        if sawUnderscore && !underscoreOK(text) { return nil }
        return value
    }

    /// strconv.ParseInt(text, 0, 64).
    static func parseInt(_ text: String) -> Int64? {
        var body = text
        var negative = false
        if let first = text.first, first == "+" || first == "-" {
            negative = first == "-"
            body = String(text.dropFirst())
        }
        guard let u = parseUint(body) else { return nil }
        if negative {
            guard u <= UInt64(Int64.max) + 1 else { return nil }
            return u == UInt64(Int64.max) + 1 ? Int64.min : -Int64(u)
        }
        guard u <= UInt64(Int64.max) else { return nil }
        return Int64(u)
    }

    /// strconv.ParseFloat(text, 64), for the forms the lexer lets through; out-of-range values
    /// fail, as Go's do.
    static func parseFloat(_ text: String) -> Double? {
        var s = text
        if s.contains("_") {
            guard underscoreOK(s) else { return nil }
            s.removeAll { $0 == "_" }
        }
        let bytes = Array(s.utf8)
        guard !bytes.isEmpty else { return nil }
        var body = bytes[...]
        if body.first == UInt8(ascii: "+") || body.first == UInt8(ascii: "-") { body = body.dropFirst() }
        guard let first = body.first else { return nil }
        let isHex = body.count > 1 && first == UInt8(ascii: "0") && (body[body.startIndex + 1] | 0x20) == UInt8(ascii: "x")
        if isHex {
            // Go requires the p exponent of a hexadecimal floating-point literal.
            guard body.contains(UInt8(ascii: "p")) || body.contains(UInt8(ascii: "P")) else { return nil }
        } else {
            for c in body {
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"),
                    UInt8(ascii: "+"), UInt8(ascii: "-"):
                    continue
                default:
                    return nil
                }
            }
        }
        guard let value = Double(s), value.isFinite else { return nil }
        return value
    }
}
