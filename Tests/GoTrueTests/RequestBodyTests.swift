import AuthHTTP
import AuthJSON
import GoJSONFixtures
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// Request bodies read as Go's `json.Unmarshal` (`retrieveRequestParams`) and `json.Decoder`
/// (`/magiclink`) read them. Expected texts were produced by Go's encoding/json for the same
/// inputs (see AuthJSONTests/GoDecodeTests.swift).
@Suite struct RequestBodyTests {

    private func body(_ text: String) -> HTTPRequest { request("POST", "/x", body: text) }

    @Test(arguments: GoJSONSyntaxErrors.cases.indices)
    func unmarshalAndDecoderMessages(_ index: Int) {
        let (input, unmarshal, decoder) = GoJSONSyntaxErrors.cases[index]
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

    /// encoding/json fills a field from a member whose name matches it exactly or, failing that,
    /// case-insensitively (`bytes.EqualFold`: the Kelvin sign folds to `k`, the long s to `s`);
    /// a later member for the same field wins, and a type error names the field.
    @Test func membersFillFieldsCaseInsensitively() throws {
        let folded = try RequestBody(body(#"{"EMAIL":"a@example.com","Password":"x","Data":{"k":1}}"#), as: "SignupParams")
        #expect(try folded.string("email") == "a@example.com")
        #expect(try folded.string("password") == "x")
        #expect(try folded.map("data") == ["k": 1])
        #expect(folded.contains("email") && !folded.contains("phone"))
        let later = try RequestBody(body(#"{"email":"first@example.com","Email":"second@example.com"}"#), as: "SignupParams")
        #expect(try later.string("email") == "second@example.com")
        let kelvin = try RequestBody(body("{\"refresh_to\u{212A}en\":\"r\",\"\u{017F}cope\":\"local\"}"), as: "RefreshTokenGrantParams")
        #expect(try kelvin.string("refresh_token") == "r")
        #expect(try kelvin.string("scope") == "local")
        #expect(try RequestBody(body(#"{"emails":"x","e-mail":"y"}"#), as: "SignupParams").string("email") == nil)
        #expect(throws: AuthError(400, .badJson, "Could not parse request body as JSON: json: cannot unmarshal number into Go struct field SignupParams.email of type string")) {
            _ = try RequestBody(body(#"{"Email":5}"#), as: "SignupParams").checking(["email": .string])
        }

        let api = try makeAPI()
        let signedUp = api.call("POST", "/signup", raw: #"{"Email":"Folded@example.com","PASSWORD":"password1"}"#)
        #expect(signedUp.status == 200)
        #expect(signedUp.json["user"]?["email"] == "folded@example.com")
        #expect(signedUp.json["user"]?["is_anonymous"] == false)
    }
}
