import AuthHTTP
import AuthJSON
import Testing
@testable import GoTrue

/// Request bodies read as Go's `json.Unmarshal` (`retrieveRequestParams`) and `json.Decoder`
/// (`/magiclink`) read them. Expected texts were produced by Go's encoding/json for the same
/// inputs (see AuthJSONTests/GoDecodeTests.swift).
@Suite struct RequestBodyTests {
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

    private func body(_ text: String) -> HTTPRequest { request("POST", "/x", body: text) }

    @Test(arguments: RequestBodyTests.syntaxErrors.indices)
    func unmarshalAndDecoderMessages(_ index: Int) {
        let (input, unmarshal, decoder) = RequestBodyTests.syntaxErrors[index]
        #expect(throws: AuthError(400, .badJson, "Could not parse request body as JSON: " + unmarshal)) {
            _ = try RequestBody(body(input), as: "SignupParams")
        }
        if decoder == "<nil>" {
            #expect(throws: Never.self) { _ = try RequestBody(decoding: body(input), as: "MagicLinkParams", prefix: "p: ") }
        } else {
            #expect(throws: AuthError(400, .badJson, "p: " + decoder)) {
                _ = try RequestBody(decoding: body(input), as: "MagicLinkParams", prefix: "p: ")
            }
        }
    }

    @Test func overflowingNumberOnlyFailsInADecodedMap() throws {
        let ignored = try RequestBody(body(#"{"ignored":1e400,"email":"x"}"#), as: "SignupParams")
        #expect(try ignored.string("email") == "x")
        let inData = try RequestBody(body(#"{"email":"x","data":{"a":[{"b":-1e999}]}}"#), as: "SignupParams")
        #expect(throws: AuthError(400, .badJson, "Could not parse request body as JSON: json: cannot unmarshal number -1e999 into Go struct field SignupParams.data of type float64")) {
            _ = try inData.map("data")
        }
        #expect(throws: AuthError(400, .badJson, "Could not parse request body as JSON: json: cannot unmarshal number into Go struct field SignupParams.email of type string")) {
            _ = try RequestBody(body(#"{"email":1e400}"#), as: "SignupParams").string("email")
        }
    }

    @Test func signupThroughTheAPI() throws {
        let api = try makeAPI()
        let overflow = api.call("POST", "/signup", raw: #"{"email":"o@example.com","password":"password1","data":{"n":1e400}}"#)
        #expect(overflow.status == 400)
        #expect(overflow.json["msg"] == "Could not parse request body as JSON: json: cannot unmarshal number 1e400 into Go struct field SignupParams.data of type float64")
        let skipped = api.call("POST", "/signup", raw: #"{"email":"s@example.com","password":"password1","extra":1e400}"#)
        #expect(skipped.status == 200, "\(skipped.text)")
        let deep = #"{"email":"d@example.com","password":"password1","extra":"# + String(repeating: "[", count: 9_998)
            + String(repeating: "]", count: 9_998) + "}"
        let deepResponse = api.call("POST", "/signup", raw: deep)
        #expect(deepResponse.status == 200, "\(deepResponse.text.prefix(200))")
        // Metadata is kept to 64 levels (Go would take 10,000): deeper is a 400 saying so.
        let limit = JSON.requestBodyMaterializedDepth
        let deepData = #"{"email":"m@example.com","password":"password1","data":{"a":"# + String(repeating: "[", count: limit - 1)
            + String(repeating: "]", count: limit - 1) + "}}"
        let deepDataResponse = api.call("POST", "/signup", raw: deepData)
        #expect(deepDataResponse.status == 400)
        #expect(deepDataResponse.json["msg"]?.stringValue == "Could not parse request body as JSON: SignupParams.data nests deeper than \(limit) levels, more than the emulator supports")
        let atLimit = #"{"email":"l@example.com","password":"password1","data":{"a":"# + String(repeating: "[", count: limit - 2)
            + String(repeating: "]", count: limit - 2) + "}}"
        #expect(api.call("POST", "/signup", raw: atLimit).status == 200)
        let trailing = api.call("POST", "/signup", raw: #"{"email":"t@example.com","password":"password1",}"#)
        #expect(trailing.json["msg"] == "Could not parse request body as JSON: invalid character '}' looking for beginning of object key string")
    }
}
