import AuthHTTP
import AuthJSON

/// A request's JSON body read the way GoTrue's `retrieveRequestParams` reads it: a plain
/// `json.Unmarshal` into a params struct, whatever the `Content-Type`. Failures are 400
/// `bad_json` with Go's error text; unknown fields are ignored.
package struct RequestBody {
    let object: JSONObject
    /// The Go struct name used in type-mismatch messages, e.g. `SignupParams`.
    let structName: String
    /// What every `bad_json` message starts with.
    let prefix: String
    /// Numbers beyond a float64 under each top-level key (`JSON.goDecode`).
    private let overflowingNumbers: [String: String]
    /// Top-level keys nested deeper than the emulator builds values.
    private let truncatedKeys: Set<String>

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
        let body = request.jsonBody
        let blank = body.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if body.isEmpty || (streaming && blank) {
            throw AuthError(400, .badJson, prefix + (streaming ? "EOF" : "unexpected end of JSON input"))
        }
        var document: GoDecodedDocument
        do {
            document = try JSON.goDecode(body)
        } catch {
            if streaming, error.message.hasSuffix("after top-level value"),
               let first = try? JSON.goDecode(Array(body[..<min(error.offset, body.count)])) {
                document = first  // the decoder stops after the first value
            } else if streaming, error.offset >= body.count {
                // `Decoder.readValue`: input that ends inside the value is io.ErrUnexpectedEOF.
                throw AuthError(400, .badJson, prefix + "unexpected EOF")
            } else {
                throw AuthError(400, .badJson, prefix + error.message)
            }
        }
        overflowingNumbers = document.overflowingNumbers
        truncatedKeys = document.truncatedKeys
        switch document.value {
        case .object(let object):
            self.object = object
        case .null:
            // `json.Unmarshal([]byte("null"), &params)` leaves the struct untouched.
            self.object = JSONObject()
        default:
            throw AuthError(400, .badJson, prefix + "json: cannot unmarshal \(document.value.goKind) into Go value of type api.\(structName)")
        }
        // Every params field's JSON name is lower-case ASCII: a body whose keys are too can
        // only name a field exactly, and needs no case-folded search.
        exactKeysOnly = object.allSatisfy { member in member.key.utf8.allSatisfy { $0 < 0x80 && !(0x41...0x5A).contains($0) } }
    }

    /// Whether no key could name a field by folding (`value(_:)`).
    private var exactKeysOnly = true

    /// The member `json.Unmarshal` stores in the field named `key`: Go matches a member to a
    /// field by its exact name, else case-insensitively (`foldName`, as `bytes.EqualFold`), and
    /// a later member for the same field overwrites an earlier one. `{"Email": ...}` fills
    /// `email`, as it does for GoTrue.
    func value(_ key: String) -> JSON? {
        if exactKeysOnly { return object[key] }
        var found: JSON?
        for (name, value) in object where name == key || RequestBody.foldEquals(name, key) { found = value }
        return found
    }

    /// The member key that fills the field `key` (`value(_:)`), for error messages and checks.
    private func memberKey(_ key: String) -> String? {
        if exactKeysOnly { return object[key] == nil ? nil : key }
        var found: String?
        for (name, _) in object where name == key || RequestBody.foldEquals(name, key) { found = name }
        return found
    }

    /// `bytes.EqualFold(member, field)` for a lower-case ASCII field name: ASCII letters in
    /// either case, the Kelvin sign for `k` and the long s for `s` (their simple case folds).
    static func foldEquals(_ member: String, _ field: String) -> Bool {
        var scalars = member.unicodeScalars.makeIterator()
        for f in field.unicodeScalars {
            guard let m = scalars.next() else { return false }
            if m == f { continue }
            if m.value < 0x80 {
                guard (0x41...0x5A).contains(m.value), m.value + 0x20 == f.value else { return false }
            } else if !(m == "\u{212A}" && f == "k") && !(m == "\u{017F}" && f == "s") {
                return false
            }
        }
        return scalars.next() == nil
    }

    /// The text of Go's `json.SyntaxError` for a body the parser refused (the parser words
    /// its errors as Go's scanner does).
    package static func goSyntaxError(_ body: [UInt8], _ error: JSONError) -> String {
        error.message
    }

    private func mismatch(_ key: String, _ value: JSON, goType: String) -> AuthError {
        AuthError(400, .badJson,
                  prefix + "json: cannot unmarshal \(value.goKind) into Go struct field \(structName).\(key) of type \(goType)")
    }

    /// A field of Go type `goType`: absent or null is nil; a value `extract` does not take is
    /// the decoder's type mismatch.
    private func field<T>(_ key: String, goType: String, _ extract: (JSON) -> T?) throws(AuthError) -> T? {
        guard let value = value(key), !value.isNull else { return nil }
        guard let typed = extract(value) else { throw mismatch(key, value, goType: goType) }
        return typed
    }

    /// A `string` field: absent or null is nil ("" in Go, where it matters the caller decides).
    func string(_ key: String) throws(AuthError) -> String? { try field(key, goType: "string") { $0.stringValue } }

    /// A `bool` field.
    func bool(_ key: String) throws(AuthError) -> Bool? { try field(key, goType: "bool") { $0.boolValue } }

    /// A `map[string]interface{}` field: absent or null is nil.
    func map(_ key: String) throws(AuthError) -> JSONObject? {
        guard let value = value(key) else { return nil }
        switch value {
        case .null: return nil
        case .object(let o):
            if let literal = overflowingNumbers[memberKey(key) ?? key] {
                // `convertNumber` fails when the map's interface{} values are decoded; the
                // error names the struct field, not the map key (`addErrorContext`).
                throw AuthError(400, .badJson, prefix
                    + "json: cannot unmarshal number \(literal) into Go struct field \(structName).\(key) of type float64")
            }
            if truncatedKeys.contains(memberKey(key) ?? key) {
                // Go decodes up to 10,000 levels into the map; the emulator builds values only
                // to JSON.requestBodyMaterializedDepth levels, which keeps every later step (storing,
                // rendering, signing) within a worker thread's stack.
                throw AuthError(400, .badJson, prefix
                    + "\(structName).\(key) nests deeper than \(JSON.requestBodyMaterializedDepth) levels, more than the emulator supports")
            }
            return o
        default: throw mismatch(key, value, goType: "map[string]interface {}")
        }
    }

    func contains(_ key: String) -> Bool { value(key).map { $0 != .null } ?? false }

    /// Type-checks one member as Go decodes it into the field `key` (null always fits).
    private func typed(_ member: String, _ key: String, goType: String, _ fits: (JSON) -> Bool) throws(AuthError) {
        guard let value = object[member], value != .null, !fits(value) else { return }
        throw mismatch(key, value, goType: goType)
    }

    /// The Go type of a params struct's field, for `checking(_:)`.
    enum FieldType: Sendable { case string, bool, map }

    /// `json.Unmarshal` type-checks every field of the params struct before the handler reads
    /// any of them, and keeps the first mismatch in the body's order (`decodeState.saveError`).
    /// A handler that reads its fields one by one, and branches before reading them all (the
    /// anonymous branch of `/signup`, a bad address before `data`), would otherwise answer
    /// another error, or none, for a body GoTrue refuses as `bad_json`.
    func checking(_ fields: [String: FieldType]) throws(AuthError) -> RequestBody {
        for member in object.keys {
            // The field the member fills: its exact name, else a case-folded one.
            let key = fields[member] != nil || exactKeysOnly ? member
                : fields.keys.sorted().first { RequestBody.foldEquals(member, $0) } ?? member
            switch fields[key] {
            case .string?: _ = try typed(member, key, goType: "string") { $0.stringValue != nil }
            case .bool?: _ = try typed(member, key, goType: "bool") { $0.boolValue != nil }
            case .map?: _ = try map(key)
            case nil: continue
            }
        }
        return self
    }
}
