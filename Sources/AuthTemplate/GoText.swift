import GoFormats

/// Go's character classes (unicode.IsLetter/IsDigit) and fmt's %U, which template error messages
/// and the `printf` builtin use; strconv's quoting and IsPrint are GoFormats' GoStrconv.
enum GoUnicode {
    static func category(_ r: UInt32) -> Unicode.GeneralCategory? {
        Unicode.Scalar(r)?.properties.generalCategory
    }

    /// unicode.IsLetter: categories Lu, Ll, Lt, Lm, Lo.
    static func isLetter(_ r: UInt32) -> Bool {
        if r < 0x80 {
            return (r >= 0x41 && r <= 0x5A) || (r >= 0x61 && r <= 0x7A)
        }
        switch category(r) {
        case .uppercaseLetter?, .lowercaseLetter?, .titlecaseLetter?, .modifierLetter?, .otherLetter?: return true
        default: return false
        }
    }

    /// unicode.IsDigit: category Nd.
    static func isDigit(_ r: UInt32) -> Bool {
        if r < 0x80 { return r >= 0x30 && r <= 0x39 }
        return category(r) == .decimalNumber
    }

    /// The template lexer's isAlphaNumeric.
    static func isAlphaNumeric(_ r: UInt32) -> Bool {
        r == UInt32(ascii: "_") || isLetter(r) || isDigit(r)
    }
}

/// fmt's %U and %#U of a rune, as template errors and `printf` write them.
extension GoUnicode {
    /// fmt's %#U: `U+0023 '#'`, the character left out when it is not printable.
    static func unicodeVerbose(_ r: UInt32) -> String {
        var s = unicodePlain(r)
        if r <= 0x10FFFF && GoStrconv.isPrint(r), let scalar = Unicode.Scalar(r) {
            s += " '" + String(scalar) + "'"
        }
        return s
    }

    /// fmt's %U: `U+0041`, at least four uppercase hex digits.
    static func unicodePlain(_ r: UInt32) -> String {
        var hex = String(r, radix: 16, uppercase: true)
        while hex.utf8.count < 4 { hex = "0" + hex }
        return "U+" + hex
    }
}

/// strconv.Unquote for the template's string and character constants.
enum GoUnquote {
    struct SyntaxError: Error {}

    /// A quoted string (`"..."` or a raw `` `...` ``) as Go reads it.
    static func unquote(_ quoted: String) throws(SyntaxError) -> String {
        let b = Array(quoted.utf8)
        guard b.count >= 2, let first = b.first, first == b.last else { throw SyntaxError() }
        let body = Array(b[1..<(b.count - 1)])
        if first == UInt8(ascii: "`") {
            if body.contains(UInt8(ascii: "`")) { throw SyntaxError() }
            // Carriage returns are dropped from raw strings.
            return String(decoding: body.filter { $0 != 0x0D }, as: UTF8.self)
        }
        guard first == UInt8(ascii: "\"") else { throw SyntaxError() }
        var out: [UInt8] = []
        var i = 0
        while i < body.count {
            let (r, tail, bytes) = try unquoteChar(body, &i, quote: UInt8(ascii: "\""))
            if let bytes { out.append(contentsOf: bytes) } else { appendUTF8(r, tail, to: &out) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A character constant such as `'a'` or `'\n'`: its code point, and whether the closing
    /// quote follows the one character (Go: "malformed character constant" when not).
    static func unquoteRune(_ quoted: String) throws(SyntaxError) -> (value: UInt32, complete: Bool) {
        let b = Array(quoted.utf8)
        guard b.count >= 2, b.first == UInt8(ascii: "'") else { throw SyntaxError() }
        let body = Array(b[1...])
        var i = 0
        let (r, _, bytes) = try unquoteChar(body, &i, quote: UInt8(ascii: "'"))
        // \x and octal escapes name a byte, which is the constant's value.
        let value = bytes.map { UInt32($0[0]) } ?? r
        return (value, i == body.count - 1 && body.last == UInt8(ascii: "'"))
    }

    private static func appendUTF8(_ r: UInt32, _ unused: Bool, to out: inout [UInt8]) {
        let scalar = Unicode.Scalar(r) ?? "\u{FFFD}"
        out.append(contentsOf: Array(String(scalar).utf8))
    }

    private static func hexValue(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(c - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(c - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// One character of a quoted body: (rune, _, raw byte when the escape names a byte).
    private static func unquoteChar(_ s: [UInt8], _ i: inout Int, quote: UInt8) throws(SyntaxError)
        -> (UInt32, Bool, [UInt8]?)
    {
        let c = s[i]
        if c == quote && (quote == UInt8(ascii: "'") || quote == UInt8(ascii: "\"")) { throw SyntaxError() }
        if c >= 0x80 {
            let (r, w) = GoUTF8.decodeRune(s, i)
            i += w
            if r == 0xFFFD && w == 1 { return (0, false, [c]) }
            return (r, false, nil)
        }
        if c != UInt8(ascii: "\\") {
            i += 1
            return (UInt32(c), false, nil)
        }
        guard i + 1 < s.count else { throw SyntaxError() }
        let e = s[i + 1]
        i += 2
        switch e {
        case UInt8(ascii: "a"): return (7, false, nil)
        case UInt8(ascii: "b"): return (8, false, nil)
        case UInt8(ascii: "f"): return (12, false, nil)
        case UInt8(ascii: "n"): return (10, false, nil)
        case UInt8(ascii: "r"): return (13, false, nil)
        case UInt8(ascii: "t"): return (9, false, nil)
        case UInt8(ascii: "v"): return (11, false, nil)
        case UInt8(ascii: "x"), UInt8(ascii: "u"), UInt8(ascii: "U"):
            let n = e == UInt8(ascii: "x") ? 2 : (e == UInt8(ascii: "u") ? 4 : 8)
            guard i + n <= s.count else { throw SyntaxError() }
            var v: UInt32 = 0
            for k in 0..<n {
                guard let h = hexValue(s[i + k]) else { throw SyntaxError() }
                v = v << 4 | h
            }
            i += n
            if e == UInt8(ascii: "x") { return (0, false, [UInt8(v)]) }
            if v > 0x10FFFF || (0xD800...0xDFFF).contains(v) { throw SyntaxError() }
            return (v, false, nil)
        case UInt8(ascii: "0")...UInt8(ascii: "7"):
            var v = UInt32(e - UInt8(ascii: "0"))
            guard i + 2 <= s.count else { throw SyntaxError() }
            for k in 0..<2 {
                let d = s[i + k]
                guard d >= UInt8(ascii: "0") && d <= UInt8(ascii: "7") else { throw SyntaxError() }
                v = v << 3 | UInt32(d - UInt8(ascii: "0"))
            }
            i += 2
            if v > 255 { throw SyntaxError() }
            return (0, false, [UInt8(v)])
        case UInt8(ascii: "\\"): return (UInt32(e), false, nil)
        case UInt8(ascii: "'"), UInt8(ascii: "\""):
            if e != quote { throw SyntaxError() }
            return (UInt32(e), false, nil)
        default:
            throw SyntaxError()
        }
    }
}

extension UInt32 {
    /// The code point of an ASCII (or any) scalar, for comparing runes with literals.
    init(ascii scalar: Unicode.Scalar) {
        self = scalar.value
    }
}
