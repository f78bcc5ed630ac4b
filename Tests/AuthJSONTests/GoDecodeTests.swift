import AuthJSON
import GoJSONFixtures
import Testing

/// `JSON.goDecode` and the parser's errors against Go's `encoding/json` (scanner.go, decode.go).
/// The expected texts were produced by Go's `json.Unmarshal` and `json.NewDecoder(...).Decode`
/// for the same inputs (a struct with `email string` and `data map[string]interface{}`).
@Suite struct GoDecodeTests {
    /// (input, json.Unmarshal's error, Decoder.Decode's error): the second column is what
    /// `JSON.goDecode` and the strict parser must say. "01" is only here: the decoder's
    /// message names the Go type, which differs between the probe and GoTrue.
    static let syntaxErrors: [(String, String, String)] = GoJSONSyntaxErrors.cases + [
        ("01", "invalid character '1' after top-level value", "json: cannot unmarshal number into Go value of type main.SignupParams"),
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
