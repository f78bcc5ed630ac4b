import AuthHTTP
import AuthJSON

/// A request's JSON body read the way GoTrue's `retrieveRequestParams` reads it: a plain
/// `json.Unmarshal` into a params struct, whatever the `Content-Type`. Failures are 400
/// `bad_json` with Go's error text; unknown fields are ignored.
struct RequestBody {
    let object: JSONObject
    /// The Go struct name used in type-mismatch messages, e.g. `SignupParams`.
    let structName: String
    /// What every `bad_json` message starts with.
    let prefix: String

    /// `retrieveRequestParams`: `json.Unmarshal` of the whole body.
    init(_ request: HTTPRequest, as structName: String) throws(AuthError) {
        try self.init(request, as: structName, prefix: "Could not parse request body as JSON: ", streaming: false)
    }

    /// `json.NewDecoder(r.Body).Decode(params)`, as `/magiclink` reads its body: the first JSON
    /// value only (whatever follows it is never read), an empty body is `EOF` and a cut-off one
    /// `unexpected EOF`; messages start with `prefix`.
    init(decoding request: HTTPRequest, as structName: String, prefix: String) throws(AuthError) {
        try self.init(request, as: structName, prefix: prefix, streaming: true)
    }

    private init(_ request: HTTPRequest, as structName: String, prefix: String, streaming: Bool) throws(AuthError) {
        self.structName = structName
        self.prefix = prefix
        let body = request.body
        let blank = body.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if body.isEmpty || (streaming && blank) {
            throw AuthError(400, .badJson, prefix + (streaming ? "EOF" : "unexpected end of JSON input"))
        }
        var value: JSON
        do {
            value = try JSON(parsing: body)
        } catch {
            let message = RequestBody.goSyntaxError(body, error)
            if streaming, message.hasSuffix("after top-level value"),
               let first = try? JSON(parsing: Array(body[..<min(error.offset, body.count)])) {
                value = first  // the decoder stops after the first value
            } else if streaming, message == "unexpected end of JSON input" {
                throw AuthError(400, .badJson, prefix + "unexpected EOF")
            } else {
                throw AuthError(400, .badJson, prefix + message)
            }
        }
        switch value {
        case .object(let object):
            self.object = object
        case .null:
            // `json.Unmarshal([]byte("null"), &params)` leaves the struct untouched.
            self.object = JSONObject()
        default:
            throw AuthError(400, .badJson, prefix + "json: cannot unmarshal \(RequestBody.kind(value)) into Go value of type api.\(structName)")
        }
    }

    /// Go's names for JSON kinds in `UnmarshalTypeError`.
    static func kind(_ value: JSON) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "bool"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// Approximates `encoding/json`'s `SyntaxError` text from the parser's position.
    static func goSyntaxError(_ body: [UInt8], _ error: JSONError) -> String {
        let offset = error.offset
        if offset >= body.count { return "unexpected end of JSON input" }
        let character = RequestBody.quoted(body[offset])
        let firstNonSpace = body.firstIndex { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        // A misspelt literal: Go names the literal and the byte it expected.
        if let start = firstNonSpace, let literal = ["t": "true", "f": "false", "n": "null"][Character(UnicodeScalar(body[start]))] {
            let expected = Array(literal.utf8)
            var i = 1
            while i < expected.count, start + i < body.count, body[start + i] == expected[i] { i += 1 }
            if i < expected.count {
                guard start + i < body.count else { return "unexpected end of JSON input" }
                return "invalid character \(RequestBody.quoted(body[start + i])) in literal \(literal) (expecting '\(Character(UnicodeScalar(expected[i])))')"
            }
        }
        if offset == firstNonSpace {
            return "invalid character \(character) looking for beginning of value"
        }
        return "invalid character \(character) after top-level value"
    }

    /// Go's `quoteChar`.
    private static func quoted(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "'"): return "'\\''"
        case UInt8(ascii: "\""): return "'\"'"
        case 0x20..<0x7F: return "'" + String(UnicodeScalar(byte)) + "'"
        default: return "'\\x" + String(byte, radix: 16) + "'"
        }
    }

    private func mismatch(_ key: String, _ value: JSON, goType: String) -> AuthError {
        AuthError(400, .badJson,
                  prefix + "json: cannot unmarshal \(RequestBody.kind(value)) into Go struct field \(structName).\(key) of type \(goType)")
    }

    /// A `string` field: absent or null is nil ("" in Go, where it matters the caller decides).
    func string(_ key: String) throws(AuthError) -> String? {
        guard let value = object[key] else { return nil }
        switch value {
        case .null: return nil
        case .string(let s): return s
        default: throw mismatch(key, value, goType: "string")
        }
    }

    /// A `bool` field.
    func bool(_ key: String) throws(AuthError) -> Bool? {
        guard let value = object[key] else { return nil }
        switch value {
        case .null: return nil
        case .bool(let b): return b
        default: throw mismatch(key, value, goType: "bool")
        }
    }

    /// A `map[string]interface{}` field: absent or null is nil.
    func map(_ key: String) throws(AuthError) -> JSONObject? {
        guard let value = object[key] else { return nil }
        switch value {
        case .null: return nil
        case .object(let o): return o
        default: throw mismatch(key, value, goType: "map[string]interface {}")
        }
    }

    func contains(_ key: String) -> Bool { object[key] != nil && object[key] != .null }
}
