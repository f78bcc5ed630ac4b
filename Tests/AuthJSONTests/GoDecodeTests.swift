import AuthJSON
import Testing

/// `JSON.goDecode` and the parser's errors against Go's `encoding/json` (scanner.go, decode.go).
/// The expected texts were produced by Go's `json.Unmarshal` and `json.NewDecoder(...).Decode`
/// for the same inputs (a struct with `email string` and `data map[string]interface{}`).
@Suite struct GoDecodeTests {
    /// (input, json.Unmarshal's error, Decoder.Decode's error): the second column is what
    /// `JSON.goDecode` and the strict parser must say.
    static let syntaxErrors: [(String, String, String)] = [
        ("{\"email\":\"a@b.co\",}", "invalid character '}' looking for beginning of object key string", "invalid character '}' looking for beginning of object key string"),
        ("[1,]", "invalid character ']' looking for beginning of value", "invalid character ']' looking for beginning of value"),
        ("{\"a\":1,}", "invalid character '}' looking for beginning of object key string", "invalid character '}' looking for beginning of object key string"),
        ("{\"a\":\"\\x\"}", "invalid character 'x' in string escape code", "invalid character 'x' in string escape code"),
        ("{\"a\":\"\\u12G4\"}", "invalid character 'G' in \\u hexadecimal character escape", "invalid character 'G' in \\u hexadecimal character escape"),
        ("{\"a\":\"\\u12", "invalid character ' ' in \\u hexadecimal character escape", "unexpected EOF"),
        ("\"\\", "invalid character ' ' in string escape code", "unexpected EOF"),
        ("{\"a\":\"x\u{0}\"}", "invalid character '\\x00' in string literal", "invalid character '\\x00' in string literal"),
        ("\u{0}", "invalid character '\\x00' looking for beginning of value", "invalid character '\\x00' looking for beginning of value"),
        ("{\"a\":\u{7f}}", "invalid character '\\x7f' looking for beginning of value", "invalid character '\\x7f' looking for beginning of value"),
        ("{\"a\":\u{e9}}", "invalid character '\u{c3}' looking for beginning of value", "invalid character '\u{c3}' looking for beginning of value"),
        ("{\"a\":\u{85}}", "invalid character '\u{c2}' looking for beginning of value", "invalid character '\u{c2}' looking for beginning of value"),
        ("{\"a\":\u{a0}}", "invalid character '\u{c2}' looking for beginning of value", "invalid character '\u{c2}' looking for beginning of value"),
        ("\u{feff}{}", "invalid character '\u{ef}' looking for beginning of value", "invalid character '\u{ef}' looking for beginning of value"),
        ("{\"a\":tru}", "invalid character '}' in literal true (expecting 'e')", "invalid character '}' in literal true (expecting 'e')"),
        ("{\"a\":trux}", "invalid character 'x' in literal true (expecting 'e')", "invalid character 'x' in literal true (expecting 'e')"),
        ("nul", "invalid character ' ' in literal null (expecting 'l')", "unexpected EOF"),
        ("tr", "invalid character ' ' in literal true (expecting 'u')", "unexpected EOF"),
        ("-", "invalid character ' ' in numeric literal", "unexpected EOF"),
        ("1.", "invalid character ' ' after decimal point in numeric literal", "unexpected EOF"),
        ("1e", "invalid character ' ' in exponent of numeric literal", "unexpected EOF"),
        ("1e+", "invalid character ' ' in exponent of numeric literal", "unexpected EOF"),
        ("-x", "invalid character 'x' in numeric literal", "invalid character 'x' in numeric literal"),
        ("01", "invalid character '1' after top-level value", "json: cannot unmarshal number into Go value of type main.SignupParams"),
        ("[01]", "invalid character '1' after array element", "invalid character '1' after array element"),
        ("{\"a\":01}", "invalid character '1' after object key:value pair", "invalid character '1' after object key:value pair"),
        ("{a:1}", "invalid character 'a' looking for beginning of object key string", "invalid character 'a' looking for beginning of object key string"),
        ("{'a':1}", "invalid character '\\'' looking for beginning of object key string", "invalid character '\\'' looking for beginning of object key string"),
        ("{\"a\" 1}", "invalid character '1' after object key", "invalid character '1' after object key"),
        ("{\"a\":1 \"b\":2}", "invalid character '\"' after object key:value pair", "invalid character '\"' after object key:value pair"),
        ("[1 2]", "invalid character '2' after array element", "invalid character '2' after array element"),
        ("{\"a\":[1,2}", "invalid character '}' after array element", "invalid character '}' after array element"),
        ("{\"a\":\\}", "invalid character '\\\\' looking for beginning of value", "invalid character '\\\\' looking for beginning of value"),
        ("{\"a\":\"\\\\\"}x", "invalid character 'x' after top-level value", "<nil>"),
        ("{\"a\":1}\\", "invalid character '\\\\' after top-level value", "<nil>"),
        ("{\"a\":\"\u{9}\"}", "invalid character '\\t' in string literal", "invalid character '\\t' in string literal"),
        ("{\"a\":\"\u{a}\"}", "invalid character '\\n' in string literal", "invalid character '\\n' in string literal"),
        ("{\"a\":1.5.2}", "invalid character '.' after object key:value pair", "invalid character '.' after object key:value pair"),
        ("{\"a\":+1}", "invalid character '+' looking for beginning of value", "invalid character '+' looking for beginning of value"),
        ("{\"a\":.5}", "invalid character '.' looking for beginning of value", "invalid character '.' looking for beginning of value"),
        ("{\"a\":NaN}", "invalid character 'N' looking for beginning of value", "invalid character 'N' looking for beginning of value"),
        ("\"abc", "unexpected end of JSON input", "unexpected EOF"),
        ("{\"a\"", "unexpected end of JSON input", "unexpected EOF"),
        ("{\"a\":", "unexpected end of JSON input", "unexpected EOF"),
        ("{", "unexpected end of JSON input", "unexpected EOF"),
        ("[", "unexpected end of JSON input", "unexpected EOF"),
        (" ", "unexpected end of JSON input", "EOF"),
        ("{\"a\":1}x", "invalid character 'x' after top-level value", "<nil>"),
        ("{\"a\":1} {\"b\":2}", "invalid character '{' after top-level value", "<nil>"),
        ("{\"a\":\u{1b}}", "invalid character '\\x1b' looking for beginning of value", "invalid character '\\x1b' looking for beginning of value"),
        ("{\"a\":\u{b}}", "invalid character '\\v' looking for beginning of value", "invalid character '\\v' looking for beginning of value"),
        ("{\"a\":\u{7}}", "invalid character '\\a' looking for beginning of value", "invalid character '\\a' looking for beginning of value"),
        ("{\"a\":'}", "invalid character '\\'' looking for beginning of value", "invalid character '\\'' looking for beginning of value"),
    ]

    @Test(arguments: GoDecodeTests.syntaxErrors.indices)
    func syntaxErrorsAsGo(_ index: Int) {
        let (input, expected, _) = GoDecodeTests.syntaxErrors[index]
        #expect(throws: JSONError.self) { _ = try JSON.goDecode(Array(input.utf8)) }
        do {
            _ = try JSON.goDecode(Array(input.utf8))
        } catch {
            #expect(error.message == expected, "input \(input.debugDescription)")
        }
        do {
            _ = try JSON(parsing: input)
        } catch {
            #expect(error.message == expected, "strict, input \(input.debugDescription)")
        }
    }

    /// Go's `quoteChar` treats the byte as the rune U+0000...U+00FF (`strconv.Quote`).
    @Test(arguments: [
        (0x80, #"'\u0080'"#), (0x85, #"'\u0085'"#), (0x9f, #"'\u009f'"#), (0xa0, #"'\u00a0'"#), (0xa1, "'¡'"),
        (0xad, #"'\u00ad'"#), (0xae, "'®'"), (0xff, "'ÿ'"), (0x7f, #"'\x7f'"#), (0x1f, #"'\x1f'"#), (0x00, #"'\x00'"#),
        (0x08, #"'\b'"#), (0x0c, #"'\f'"#), (0x5c, #"'\\'"#), (0x27, #"'\''"#),
    ] as [(UInt8, String)])
    func rawBytesQuotedAsGo(_ byte: UInt8, _ quoted: String) {
        #expect(throws: JSONError(offset: 1, message: "invalid character \(quoted) looking for beginning of value")) {
            _ = try JSON.goDecode([UInt8(ascii: "["), byte, UInt8(ascii: "]")])
        }
    }

    /// Go's `maxNestingDepth` is 10,000: the bracket that opens level 10,001 is the error.
    @Test func nestingLimitIsGos() throws {
        let ok = #"{"x":"# + String(repeating: "[", count: 9_999) + String(repeating: "]", count: 9_999) + #","email":"d"}"#
        let document = try JSON.goDecode(Array(ok.utf8))
        #expect(document.value["email"] == "d")
        #expect(document.truncatedKeys == ["x"])
        let objects = String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)
        #expect(throws: Never.self) { _ = try JSON.goDecode(Array(objects.utf8)) }

        let tooDeep = #"{"x":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}"
        #expect(throws: JSONError(offset: 5 + 9_999, message: "invalid character '[' exceeded max depth")) {
            _ = try JSON.goDecode(Array(tooDeep.utf8))
        }
        #expect(throws: JSONError(offset: 10_000, message: "invalid character '[' exceeded max depth")) {
            _ = try JSON.goDecode(Array(String(repeating: "[", count: 200_000).utf8))
        }
        // Errors inside a skipped (unbuilt) region read as anywhere else.
        let badInside = #"{"x":"# + String(repeating: "[", count: 600) + "1,]" + String(repeating: "]", count: 599) + "}"
        #expect(throws: JSONError(offset: 5 + 600 + 2, message: "invalid character ']' looking for beginning of value")) {
            _ = try JSON.goDecode(Array(badInside.utf8))
        }
        let cut = #"{"x":"# + String(repeating: #"{"k":"#, count: 600) + "tr"
        #expect(throws: JSONError(offset: cut.utf8.count, message: "invalid character ' ' in literal true (expecting 'u')")) {
            _ = try JSON.goDecode(Array(cut.utf8))
        }
        // The strict parser keeps its own smaller limit.
        let limit = JSON.defaultMaximumDepth
        #expect(throws: JSONError(offset: limit, message: "invalid character '[' exceeded max depth")) {
            _ = try JSON(parsing: String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
        }
    }

    @Test func valuesAreBuiltUpToTheMaterializedDepth() throws {
        let text = #"{"a":[[["x"]]],"b":[[[["y"]]]]}"#
        let document = try JSON.goDecode(Array(text.utf8), materializedDepth: 4)
        #expect(document.value["a"] == [[["x"]]])
        #expect(document.value["b"] == [[[nil]]])
        #expect(document.truncatedKeys == ["b"])
    }

    /// Go fails on a number beyond a float64 only when a field decodes it (`convertNumber`),
    /// never for a field it skips; its syntax is fine.
    @Test func overflowingNumbersAreKeptAndListed() throws {
        let document = try JSON.goDecode(Array(#"{"ignored":1e400,"data":{"a":[-1E999,2e999]},"email":"x"}"#.utf8))
        #expect(document.value["email"] == "x")
        #expect(document.value["ignored"]?.doubleValue == .infinity)
        #expect(document.overflowingNumbers == ["ignored": "1e400", "data": "-1E999"])
        #expect(try JSON.goDecode(Array("1e-400".utf8)).value == 0)  // underflow is not an error in Go
        #expect(throws: JSONError(offset: 5, message: "json: cannot unmarshal number 1e400 into Go value of type float64")) {
            try JSON(parsing: #"{"a":1e400}"#)
        }
    }
}
