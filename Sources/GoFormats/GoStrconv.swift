/// Go's `strconv` as GoTrue's messages and templates show it: `Quote`, `QuoteToASCII`,
/// `QuoteRune`, `IsPrint`, `ParseBool`, `ParseUint`, and the shortest digits `FormatFloat` prints with
/// precision -1.
package enum GoStrconv {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `strconv.Quote` (fmt's `%q`); with `asciiOnly`, `strconv.QuoteToASCII` (fmt's `%+q`).
    package static func quote(_ s: String, asciiOnly: Bool = false) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(s.utf8.count + 2)
        appendQuoted(Array(s.utf8), quote: UInt8(ascii: "\""), asciiOnly: asciiOnly, to: &out)
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }

    /// `strconv.QuoteRune` (fmt's `%q` of an integer); with `asciiOnly`, `QuoteRuneToASCII`.
    /// A value that is no Unicode scalar (a surrogate, above U+10FFFF) quotes as U+FFFD.
    package static func quoteRune(_ r: UInt32, asciiOnly: Bool = false) -> String {
        var out: [UInt8] = [UInt8(ascii: "'")]
        let rune = (r > 0x10FFFF || (0xD800...0xDFFF).contains(r)) ? 0xFFFD : r
        appendRune(rune, width: 2, quote: UInt8(ascii: "'"), asciiOnly: asciiOnly, to: &out)
        out.append(UInt8(ascii: "'"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The body of `strconv.Quote` for bytes that need not be UTF-8 (fmt's `%q` of a `[]byte`):
    /// an invalid byte is written `\xNN`, as Go does.
    package static func appendQuoted(_ bytes: [UInt8], quote: UInt8, asciiOnly: Bool, to out: inout [UInt8]) {
        var i = 0
        while i < bytes.count {
            let (r, width) = GoUTF8.decodeRune(bytes, i)
            if width == 1 && r == 0xFFFD {
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "x"))
                out.append(hexDigits[Int(bytes[i] >> 4)])
                out.append(hexDigits[Int(bytes[i] & 0xF)])
                i += 1
                continue
            }
            appendRune(r, width: width, quote: quote, asciiOnly: asciiOnly, to: &out)
            i += width
        }
    }

    private static func appendRune(_ r: UInt32, width: Int, quote: UInt8, asciiOnly: Bool, to out: inout [UInt8]) {
        if r == UInt32(quote) || r == 0x5C {
            out.append(UInt8(ascii: "\\"))
            out.append(UInt8(r))
            return
        }
        if r < 0x80 && r >= 0x20 && r != 0x7F {
            out.append(UInt8(r))
            return
        }
        if !asciiOnly && isPrint(r), let scalar = Unicode.Scalar(r) {
            out.append(contentsOf: String(scalar).utf8)
            return
        }
        switch r {
        case 0x07: out.append(contentsOf: #"\a"#.utf8)
        case 0x08: out.append(contentsOf: #"\b"#.utf8)
        case 0x0C: out.append(contentsOf: #"\f"#.utf8)
        case 0x0A: out.append(contentsOf: #"\n"#.utf8)
        case 0x0D: out.append(contentsOf: #"\r"#.utf8)
        case 0x09: out.append(contentsOf: #"\t"#.utf8)
        case 0x0B: out.append(contentsOf: #"\v"#.utf8)
        default:
            if r < 0x20 || r == 0x7F {
                out.append(contentsOf: #"\x"#.utf8)
                out.append(hexDigits[Int(r >> 4)])
                out.append(hexDigits[Int(r & 0xF)])
            } else if r < 0x10000 {
                out.append(contentsOf: #"\u"#.utf8)
                for shift in stride(from: 12, through: 0, by: -4) { out.append(hexDigits[Int((r >> UInt32(shift)) & 0xF)]) }
            } else {
                out.append(contentsOf: #"\U"#.utf8)
                for shift in stride(from: 28, through: 0, by: -4) { out.append(hexDigits[Int((r >> UInt32(shift)) & 0xF)]) }
            }
        }
    }

    /// `strconv.IsPrint` (= `unicode.IsPrint`): letters, marks, numbers, punctuation, symbols
    /// and the ASCII space; no other space.
    package static func isPrint(_ r: UInt32) -> Bool {
        if r < 0x80 { return r >= 0x20 && r < 0x7F }
        if r < 0xA1 || r == 0xAD { return false }
        switch Unicode.Scalar(r)?.properties.generalCategory {
        case .uppercaseLetter?, .lowercaseLetter?, .titlecaseLetter?, .modifierLetter?, .otherLetter?,
            .nonspacingMark?, .spacingMark?, .enclosingMark?,
            .decimalNumber?, .letterNumber?, .otherNumber?,
            .connectorPunctuation?, .dashPunctuation?, .openPunctuation?, .closePunctuation?,
            .initialPunctuation?, .finalPunctuation?, .otherPunctuation?,
            .mathSymbol?, .currencySymbol?, .modifierSymbol?, .otherSymbol?:
            return true
        default:
            return false
        }
    }

    /// `strconv.ParseBool`: exactly these twelve spellings, nil for anything else.
    package static func parseBool(_ text: some StringProtocol) -> Bool? {
        switch text {
        case "1", "t", "T", "TRUE", "true", "True": true
        case "0", "f", "F", "FALSE", "false", "False": false
        default: nil
        }
    }

    /// The shortest decimal digits that read back to the same float64, as `strconv.FormatFloat`
    /// chooses them with precision -1 (Swift's `description` chooses the same digits, the closest
    /// to the exact value on ties): digits d1 d2 ... dn, no leading or trailing zeros, and the
    /// point such that magnitude = 0.d1d2...dn × 10^point. No digits (point 0) for zero.
    /// `magnitude` must be finite and not negative.
    package static func shortestDigits(_ magnitude: Double) -> (digits: [UInt8], point: Int) {
        if magnitude == 0 { return ([], 0) }
        let text = Array(magnitude.description.utf8)
        var mantissa = text[...]
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            mantissa = text[..<e]
            exponent = Int(String(decoding: text[(e + 1)...], as: UTF8.self)) ?? 0
        }
        var digits: [UInt8] = []
        digits.reserveCapacity(mantissa.count)
        var point = 0
        var seenPoint = false
        for c in mantissa {
            if c == UInt8(ascii: ".") {
                seenPoint = true
                continue
            }
            if digits.isEmpty && c == UInt8(ascii: "0") {
                if seenPoint { point -= 1 }
                continue
            }
            digits.append(c)
            if !seenPoint { point += 1 }
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return (digits, point + exponent)
    }

    /// `strconv.ParseUint(text, 10, 64)` with its error text.
    package static func parseUInt(_ text: String) -> Result<UInt64, ParseError> {
        guard !text.isEmpty else { return .failure(ParseError(message: "strconv.ParseUint: parsing \"\": invalid syntax")) }
        var value: UInt64 = 0
        var overflow = false
        for b in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) else {
                return .failure(ParseError(message: "strconv.ParseUint: parsing \(quote(text)): invalid syntax"))
            }
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(b - UInt8(ascii: "0")))
            if o1 || o2 { overflow = true }
            value = s
        }
        if overflow { return .failure(ParseError(message: "strconv.ParseUint: parsing \(quote(text)): value out of range")) }
        return .success(value)
    }

    package struct ParseError: Error {
        package let message: String
    }
}
