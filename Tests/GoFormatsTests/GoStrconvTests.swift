import Testing
@testable import GoFormats

/// Known answers from Go's strconv documentation (pkg.go.dev/strconv) and what `go run` prints
/// for the same calls.
@Suite struct GoStrconvTests {
    @Test func quoteAsGoDocuments() {
        // strconv.Quote and QuoteToASCII examples.
        #expect(GoStrconv.quote("\"Fran & Freddie's Diner\t☺\"") == #""\"Fran & Freddie's Diner\t☺\"""#)
        #expect(GoStrconv.quote("\"Fran & Freddie's Diner\t☺\"", asciiOnly: true) == #""\"Fran & Freddie's Diner\t\u263a\"""#)
        #expect(GoStrconv.quote("") == #""""#)
        #expect(GoStrconv.quote("\u{7}\u{8}\u{c}\n\r\t\u{b}\\") == #""\a\b\f\n\r\t\v\\""#)
        #expect(GoStrconv.quote("\u{0}\u{1f}\u{7f}") == #""\x00\x1f\x7f""#)
        // Not printable past ASCII: C1 controls, NO-BREAK SPACE, SOFT HYPHEN, format characters.
        #expect(GoStrconv.quote("\u{85}\u{a0}\u{ad}\u{200b}\u{2028}") == #""\u0085\u00a0\u00ad\u200b\u2028""#)
        #expect(GoStrconv.quote("é€😀") == #""é€😀""#)
        #expect(GoStrconv.quote("é€😀", asciiOnly: true) == #""\u00e9\u20ac\U0001f600""#)
        #expect(GoStrconv.quote("'") == #""'""#)
    }

    @Test func quoteRuneAsGoDocuments() {
        #expect(GoStrconv.quoteRune(0x263A) == "'☺'")
        #expect(GoStrconv.quoteRune(0x263A, asciiOnly: true) == #"'\u263a'"#)
        #expect(GoStrconv.quoteRune(0x27) == #"'\''"#)
        #expect(GoStrconv.quoteRune(0x22) == #"'"'"#)
        #expect(GoStrconv.quoteRune(0x0A) == #"'\n'"#)
        #expect(GoStrconv.quoteRune(0x85) == #"'\u0085'"#)
        #expect(GoStrconv.quoteRune(0xFF) == "'ÿ'")
        // No Unicode scalar: Go quotes utf8.RuneError.
        #expect(GoStrconv.quoteRune(0xD800) == "'\u{FFFD}'")
        #expect(GoStrconv.quoteRune(0x110000) == "'\u{FFFD}'")
    }

    @Test func invalidUTF8IsHexEscapedByteByByte() {
        var out: [UInt8] = []
        GoStrconv.appendQuoted([0xFF, UInt8(ascii: "a"), 0xE2, 0x82], quote: UInt8(ascii: "\""), asciiOnly: false, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"\xffa\xe2\x82"#)
    }

    @Test func isPrint() {
        #expect(GoStrconv.isPrint(0x20))
        #expect(!GoStrconv.isPrint(0x7F))
        #expect(!GoStrconv.isPrint(0xA0))
        #expect(GoStrconv.isPrint(0xA1))
        #expect(!GoStrconv.isPrint(0xAD))
        #expect(GoStrconv.isPrint(0x1F600))
        #expect(!GoStrconv.isPrint(0x3000))
    }

    /// strconv.ParseBool accepts exactly these spellings (pkg.go.dev/strconv#ParseBool).
    @Test func parseBool() {
        for text in ["1", "t", "T", "TRUE", "true", "True"] { #expect(GoStrconv.parseBool(text) == true) }
        for text in ["0", "f", "F", "FALSE", "false", "False"] { #expect(GoStrconv.parseBool(text) == false) }
        for text in ["yes", "on", "tRUE", "", " true", "true "] { #expect(GoStrconv.parseBool(text) == nil) }
        #expect(GoStrconv.parseBool("x true".dropFirst(2)) == true)
    }

    /// The digits of strconv.FormatFloat(x, 'e', -1, 64): 0.1 is 1e-01, 5e-324 the smallest
    /// subnormal, 1.7976931348623157e+308 the largest double.
    @Test(arguments: [
        (0.1, "1", 0), (123.456, "123456", 3), (100, "1", 3), (1e21, "1", 22), (1e-7, "1", -6),
        (Double.leastNonzeroMagnitude, "5", -323), (1.7976931348623157e308, "17976931348623157", 309), (0.000123, "123", -3),
        (2.5, "25", 1), (1.0 / 3, "3333333333333333", 0), (9_007_199_254_740_992, "9007199254740992", 16),
    ] as [(Double, String, Int)])
    func shortestDigits(_ value: Double, _ digits: String, _ point: Int) {
        let result = GoStrconv.shortestDigits(value)
        #expect(String(decoding: result.digits, as: UTF8.self) == digits)
        #expect(result.point == point)
    }

    @Test func shortestDigitsOfZero() {
        #expect(GoStrconv.shortestDigits(0).digits.isEmpty)
        #expect(GoStrconv.shortestDigits(0).point == 0)
    }
}

@Suite struct GoUTF8Tests {
    /// utf8.DecodeRune: invalid, overlong, surrogate and truncated sequences are (RuneError, 1).
    @Test func decodeRune() {
        #expect(GoUTF8.decodeRune([0x61], 0) == (0x61, 1))
        #expect(GoUTF8.decodeRune([0xC3, 0xA9], 0) == (0xE9, 2))
        #expect(GoUTF8.decodeRune([0xE2, 0x82, 0xAC], 0) == (0x20AC, 3))
        #expect(GoUTF8.decodeRune([0xF0, 0x9F, 0x98, 0x80], 0) == (0x1F600, 4))
        #expect(GoUTF8.decodeRune([0xC0, 0x80], 0) == (0xFFFD, 1))
        #expect(GoUTF8.decodeRune([0xED, 0xA0, 0x80], 0) == (0xFFFD, 1))
        #expect(GoUTF8.decodeRune([0xE2, 0x82], 0) == (0xFFFD, 1))
        #expect(GoUTF8.decodeRune([0xF4, 0x90, 0x80, 0x80], 0) == (0xFFFD, 1))
    }

    @Test func decodeLastRune() {
        #expect(GoUTF8.decodeLastRune([0x61, 0xE2, 0x82, 0xAC], 4) == (0x20AC, 3))
        #expect(GoUTF8.decodeLastRune([0x61, 0xE2, 0x82, 0xAC], 1) == (0x61, 1))
        #expect(GoUTF8.decodeLastRune([0x82, 0xAC], 2) == (0xFFFD, 1))
    }
}
