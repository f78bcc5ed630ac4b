import AuthHTTP
import AuthJSON
import GoTrue

/// Request parsing shared by the emulator's control routes under `/emulator/v1` (here, in
/// AuthScenarios and in AuthEmulator). `GoTrueAPI` requires the service_role key for every path
/// under that prefix before any of them run. Errors use GoTrue's shape, so clients that already
/// parse `error_code` need nothing new.
public enum ControlRequest {
    /// The request body as a JSON object. An empty body is `{}` when `emptyAllowed`.
    public static func body(_ request: HTTPRequest, emptyAllowed: Bool = false) throws(AuthError) -> JSONObject {
        if request.body.isEmpty {
            if emptyAllowed { return JSONObject() }
            throw AuthError(400, .badJson, "Could not parse request body as JSON: unexpected end of JSON input")
        }
        let value: JSON
        do {
            value = try JSON(parsing: request.body)
        } catch {
            throw AuthError(400, .badJson, "Could not parse request body as JSON: \(RequestBody.goSyntaxError(request.body, error))")
        }
        guard let object = value.objectValue else {
            throw AuthError(400, .badJson, "Could not parse request body as JSON: expected an object, got \(value.goKind)")
        }
        return object
    }

    public static func invalid(_ message: String) -> AuthError { AuthError(400, .validationFailed, message) }

    /// Refuses keys outside `allowed`, naming the first unknown one (a misspelt control field
    /// silently ignored would make a test pass for the wrong reason).
    public static func checkKeys(_ object: JSONObject, allowed: Set<String>, context: String = "") throws(AuthError) {
        for (key, _) in object where !allowed.contains(key) {
            let known = allowed.sorted().joined(separator: ", ")
            throw invalid("\(context)unknown field \"\(key)\" (expected one of: \(known))")
        }
    }
}

/// The fields of a control route's JSON body, read with one set of rules and messages: `null`
/// counts as absent, a value of the wrong type is a 400 `validation_failed` naming the field.
public struct ControlFields: Sendable {
    public let object: JSONObject

    /// The body as an object whose keys are all in `allowed`.
    public init(_ request: HTTPRequest, allowed: Set<String>, emptyAllowed: Bool = false) throws(AuthError) {
        object = try ControlRequest.body(request, emptyAllowed: emptyAllowed)
        try ControlRequest.checkKeys(object, allowed: allowed)
    }

    public subscript(key: String) -> JSON? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    public func string(_ key: String) throws(AuthError) -> String? {
        guard let value = self[key] else { return nil }
        guard let text = value.stringValue else { throw ControlRequest.invalid("\"\(key)\" must be a string") }
        return text
    }

    /// A string where `""` means absent.
    public func nonEmptyString(_ key: String) throws(AuthError) -> String? {
        try string(key).flatMap { $0.isEmpty ? nil : $0 }
    }

    public func bool(_ key: String) throws(AuthError) -> Bool? {
        guard let value = self[key] else { return nil }
        guard let flag = value.boolValue else { throw ControlRequest.invalid("\"\(key)\" must be true or false") }
        return flag
    }

    public func object(_ key: String) throws(AuthError) -> JSONObject? {
        guard let value = self[key] else { return nil }
        guard let object = value.objectValue else { throw ControlRequest.invalid("\"\(key)\" must be an object") }
        return object
    }

    /// Ten years either way: past lifetimes mint expired tokens on purpose.
    public static let lifetimeRange: ClosedRange<Int64> = -315_360_000...315_360_000

    /// `expires_in` of a minted token, in whole seconds within `lifetimeRange`.
    public func expiresIn(default lifetime: Int64) throws(AuthError) -> Int64 {
        guard let value = self["expires_in"] else { return lifetime }
        guard let seconds = value.int64Value, ControlFields.lifetimeRange.contains(seconds) else {
            throw ControlRequest.invalid("\"expires_in\" must be a whole number of seconds (at most ten years either way)")
        }
        return seconds
    }
}
