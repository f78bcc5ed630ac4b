import AuthHTTP
import AuthJSON

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
            throw AuthError(400, .badJson, "Could not parse request body as JSON: expected an object, got \(RequestBody.kind(value))")
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
