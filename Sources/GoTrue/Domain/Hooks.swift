import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore

/// How a hook request leaves the process: an HTTP POST with a deadline. The emulator binds it
/// to the toolchain's HTTP client (`URLSession`, which also speaks HTTPS); tests bind it to
/// in-process fakes. GoTrue itself opens no sockets.
public protocol HookTransport: Sendable {
    func post(_ url: String, headers: [(String, String)], body: [UInt8], timeout: Double) -> HookReply
}

/// What came back from one hook request.
public enum HookReply: Sendable {
    case response(status: Int, headers: [(String, String)], body: [UInt8])
    /// The deadline passed before an answer (`context.DeadlineExceeded`).
    case timedOut
    /// No answer: refused, reset, DNS, TLS (`client.Do` failed otherwise).
    case failed(String)
}

/// The transport of a project nobody bound one to: every call fails as an unreachable hook.
public struct UnavailableHookTransport: HookTransport {
    public init() {}
    public func post(_ url: String, headers: [(String, String)], body: [UInt8], timeout: Double) -> HookReply {
        .failed("no HTTP client is available to call hooks")
    }
}

/// One hook call as the journal and tests see it.
public struct HookCall: Sendable {
    public var name: String
    public var uri: String
    public var status: Int?
    public var error: String?
    /// The error code the request got from the failure, if any.
    public var errorCode: String?
    public var milliseconds: Double
    public var time: Timestamp
}

/// The auth hooks (`internal/hooks`: v0hooks payloads, hookshttp dispatch, hookserrors): the
/// input signed with Standard Webhooks, POSTed with the real dispatcher's deadline, retries and
/// response checks, and the real errors when the hook fails.
///
/// Where they run follows the real server. The user-creation and verification-attempt hooks run
/// before any transaction (GoTrue's `checkTX` refuses them inside one). The custom-access-token,
/// send-email and send-SMS hooks belong to the caller's write, as GoTrue runs them inside its
/// transaction, so a refusal rolls the change back; but they are called while no writer is held
/// (`WriteRounds`), so a slow or hanging hook delays only the requests that call it.
struct Hooks {
    let api: Core
    /// The request that caused the call (its client address goes into the metadata).
    let request: HTTPRequest?

    /// `hookshttp` defaults: a 5 s deadline for the whole call (retries included), 3 attempts,
    /// at most 200 KiB read from the answer; the pause between attempts is the project's.
    static let timeout = 5.0
    static let attempts = 3
    static let responseLimit = 200 * 1024

    private var project: Project { api.project }

    /// `v0hooks.Name`: the name in the payload's `metadata`.
    enum Name: String {
        case sendSMS = "send-sms"
        case sendEmail = "send-email"
        case customizeAccessToken = "customize-access-token"
        case mfaVerification = "mfa-verification"
        case passwordVerification = "password-verification"
        case beforeUserCreated = "before-user-created"
        case afterUserCreated = "after-user-created"

        var point: WritableKeyPath<HookSettings, HookSettings.Point> {
            switch self {
            case .sendSMS: return \.sendSMS
            case .sendEmail: return \.sendEmail
            case .customizeAccessToken: return \.customAccessToken
            case .mfaVerification: return \.mfaVerificationAttempt
            case .passwordVerification: return \.passwordVerificationAttempt
            case .beforeUserCreated: return \.beforeUserCreated
            case .afterUserCreated: return \.afterUserCreated
            }
        }
    }

    func enabled(_ name: Name) -> Bool { api.snapshot.configuration.hooks[keyPath: name.point].callable }

    /// `NewMetadata`: a fresh id, the (virtual) time, the hook's name, the caller's address.
    private func metadata(_ name: Name) -> JSON {
        var o = JSONObject()
        o["uuid"] = .string(project.environment.uuid())
        o["time"] = .string(project.environment.now().rfc3339)
        o["name"] = .string(name.rawValue)
        if let request {
            let ip = api.clientIP(request)
            if !ip.isEmpty { o["ip_address"] = .string(ip) }
        }
        return .object(o)
    }

    /// Invokes the hook with `fields` after its `metadata`; returns the answer's JSON object
    /// (nil for 204 No Content) or throws the real server's error.
    @discardableResult
    func invoke(_ name: Name, _ fields: JSONObject) throws(AuthError) -> JSONObject? {
        let point = api.snapshot.configuration.hooks[keyPath: name.point]
        var input: JSONObject = ["metadata": metadata(name)]
        for (key, value) in fields { input[key] = value }
        let payload = JSON.object(input).serializedBytes()
        let body: [UInt8]?
        if let rounds = WriteRounds.current {
            // Inside a write: the call happens once the writer is free, then this closure runs again.
            body = try rounds.answer(name: name.rawValue, payload: payload) {
                Result { () throws(AuthError) in try self.dispatch(point, payload, name: name) }
            }
        } else {
            body = try dispatch(point, payload, name: name)
        }
        guard let body else { return nil }
        guard let parsed = try? JSON(parsing: body) else {
            throw AuthError(500, .unexpectedFailure, "Error unmarshaling JSON output.")
        }
        // `json.Unmarshal` of `null` into the output struct leaves it empty, without an error.
        if parsed == .null { return [:] }
        guard let object = parsed.objectValue else {
            throw AuthError(500, .unexpectedFailure, "Error unmarshaling JSON output.")
        }
        return object
    }

    /// `runHTTPHook`. The worker thread waits here for up to the deadline; a stand-in serves
    /// other requests meanwhile (`BlockingIO`).
    ///
    /// When this project already has as many requests waiting on hooks as the server allows one
    /// project (`HTTPServerConfiguration.maxBlockedPerLane`), the hook is not called and the
    /// request gets at once the error a call that reached the deadline gets (`hookserrors`'
    /// 422 `hook_timeout`): the emulator's own limit, so a hook that never answers cannot hold
    /// the stand-in workers every project shares.
    private func dispatch(_ point: HookSettings.Point, _ payload: [UInt8], name: Name) throws(AuthError) -> [UInt8]? {
        try BlockingIO.perform(refusing: { record(name, point, SystemClock().now().microseconds, nil, Hooks.timedOut) }) {
            () throws(AuthError) in try attempts(point, payload, name: name)
        }
    }

    /// What a call that did not answer within `timeout` fails with (`hookserrors`: 422
    /// `hook_timeout`, the deadline as Go's `%f`).
    static var timedOut: AuthError {
        AuthError(422, .hookTimeout, "Failed to reach hook within maximum time of \(goFloat(timeout)) seconds")
    }

    private func attempts(_ point: HookSettings.Point, _ payload: [UInt8], name: Name) throws(AuthError) -> [UInt8]? {
        let clock = SystemClock()
        let started = clock.now().microseconds
        let deadline = clock.now().microseconds + Int64(Hooks.timeout * 1_000_000)
        let timedOut = Hooks.timedOut
        for attempt in 0..<Hooks.attempts {
            // Signatures carry the wall clock: the receiver checks them against its own.
            let messageID = project.environment.uuid()
            let timestamp = clock.now().unixSeconds
            let signatures = try Hooks.signatures(point.secrets, id: messageID, timestamp: timestamp, payload: payload)
            let headers: [(String, String)] = [
                ("Content-Type", "application/json"), ("webhook-id", messageID),
                ("webhook-timestamp", String(timestamp)), ("webhook-signature", signatures.joined(separator: ", ")),
                ("Accept-Encoding", "identity"),
            ]
            let remaining = Double(deadline - clock.now().microseconds) / 1_000_000
            if remaining <= 0 { throw record(name, point, started, nil, timedOut) }
            let scripted = request?.headers[HookFaults.header].flatMap(HookFaults.reply)
            let reply = scripted ?? project.hookTransport.post(point.uri, headers: headers, body: payload, timeout: remaining)
            switch reply {
            case .timedOut:
                throw record(name, point, started, nil, timedOut)
            case .failed(let reason):
                logError("hook \(point.uri): attempt \(attempt) failed: \(reason)")
                if attempt < Hooks.attempts - 1 {
                    if scripted != nil { continue }  // a scripted failure skips the real back-off
                    if Double(deadline - clock.now().microseconds) / 1_000_000 <= project.hookBackoff {
                        throw record(name, point, started, nil, timedOut)
                    }
                    Hooks.sleep(seconds: project.hookBackoff)
                    continue
                }
                throw record(name, point, started, nil, AuthError(422, .hookTimeoutAfterRetry, "Failed to reach hook after maximum retries"))
            case .response(let status, let responseHeaders, let body):
                func header(_ name: String) -> String? {
                    responseHeaders.first { $0.0.lowercased() == name.lowercased() }?.1
                }
                switch status {
                case 204:
                    record(name, point, started, status, nil)
                    return nil
                case 200, 202:
                    guard let contentType = header("Content-Type"), !contentType.isEmpty else {
                        throw record(name, point, started, status, AuthError(400, .hookPayloadInvalidContentType,
                                                                    "Invalid Content-Type: Missing Content-Type header"))
                    }
                    let mediaType = contentType.split(separator: ";", maxSplits: 1).first
                        .map { String($0.filter { $0 != " " && $0 != "\t" }).lowercased() } ?? ""
                    if mediaType != "application/json" {
                        throw record(name, point, started, status, AuthError(400, .hookPayloadInvalidContentType,
                                                                    "Invalid JSON response. Received content-type: \(contentType)"))
                    }
                    if body.count > Hooks.responseLimit {
                        throw record(name, point, started, status, AuthError(422, .hookPayloadOverSizeLimit,
                                                                    "Payload size exceeded size limit of \(Hooks.responseLimit) bytes"))
                    }
                    if let error = Hooks.hookError(body) { throw record(name, point, started, status, error) }
                    record(name, point, started, status, nil)
                    return body
                case 429, 503:
                    if let retry = header("retry-after"), !retry.isEmpty { continue }
                    throw record(name, point, started, status, AuthError(500, .unexpectedFailure, "Service currently unavailable due to hook"))
                case 400:
                    throw record(name, point, started, status, AuthError(500, .unexpectedFailure, "Invalid payload sent to hook"))
                case 401:
                    throw record(name, point, started, status, AuthError(500, .unexpectedFailure, "Hook requires authorization token"))
                default:
                    throw record(name, point, started, status, AuthError(500, .unexpectedFailure, "Unexpected status code returned from hook: \(status)"))
                }
            }
        }
        throw record(name, point, started, nil, AuthError(500, .unexpectedFailure, "Service currently unavailable due to hook"))
    }

    /// Every call is remembered (the journal and tests read it); returns the error to throw.
    @discardableResult
    private func record(_ name: Name, _ point: HookSettings.Point, _ started: Int64, _ status: Int?, _ error: AuthError?) -> AuthError {
        let now = SystemClock().now().microseconds
        project.hookLog.append(HookCall(name: name.rawValue, uri: point.uri, status: status, error: error?.message,
                                        errorCode: error.map { $0.code?.rawValue ?? ($0.status == 500 ? "unexpected_failure" : "unknown") },
                                        milliseconds: Double(now - started) / 1000, time: project.environment.now()))
        if let error { logError("hook \(name.rawValue) (\(point.uri)): \(error.message)") }
        return error ?? AuthError.unexpected
    }

    /// `hookserrors.Check`: an `{"error": {"http_code": n, "message": "..."}}` answer is the
    /// hook's own error, passed through with its status (500 when none); an empty message is
    /// no error. Read as `fromBytes`' `json.Unmarshal` reads it: keys match case-insensitively,
    /// and a value of the wrong type (a string or fractional `http_code`, a non-string
    /// `message`, an `error` that is no object) fails the whole decoding, which then counts as
    /// no error object at all. (A whole number written with a fraction, `403.0`, is read as
    /// 403 here; Go refuses that too.)
    static func hookError(_ body: [UInt8]) -> AuthError? {
        guard let parsed = try? JSON(parsing: body), let top = parsed.objectValue,
              let errorValue = goField(top, "error"), errorValue != .null else { return nil }
        guard let error = errorValue.objectValue else { return nil }
        var message = ""
        switch goField(error, "message") {
        case .string(let text)?: message = text
        case .null?, nil: break
        default: return nil
        }
        var status = 0
        switch goField(error, "http_code") {
        case .number?:
            guard let code = goField(error, "http_code")?.int64Value, let int = Int(exactly: code) else { return nil }
            status = int
        case .null?, nil: break
        default: return nil
        }
        if message.isEmpty { return nil }
        if status == 0 { status = 500 }
        return AuthError(status, nil, message)
    }

    /// encoding/json's field lookup: the exact key, else one equal but for ASCII case.
    static func goField(_ object: JSONObject, _ name: String) -> JSON? {
        if let exact = object[name] { return exact }
        return object.first { $0.key.lowercased() == name }?.value
    }

    /// Standard Webhooks: `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<payload>")>` for each
    /// `v1,whsec_<base64 key>` secret; any other form is the real "invalid signature format".
    static func signatures(_ secrets: [String], id: String, timestamp: Int64, payload: [UInt8]) throws(AuthError) -> [String] {
        var out: [String] = []
        for secret in secrets {
            guard secret.hasPrefix("v1,") else {
                throw AuthError(500, .unexpectedFailure, "Error generating signatures: invalid signature format")
            }
            var key = String(secret.dropFirst(3))
            if key.hasPrefix("whsec_") { key = String(key.dropFirst(6)) }
            guard let bytes = try? Base64.decode(key) else {
                throw AuthError(500, .unexpectedFailure, "Error generating signatures: illegal base64 data")
            }
            let message = Array("\(id).\(timestamp).".utf8) + payload
            let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: bytes))
            out.append("v1," + Base64.encode(mac))
        }
        return out
    }

    /// Go's `%f`: six decimals.
    static func goFloat(_ value: Double) -> String {
        let micros = Int64((value * 1_000_000).rounded())
        let fraction = String(micros % 1_000_000)
        return "\(micros / 1_000_000)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    static func sleep(seconds: Double) { sleepThread(seconds: seconds) }
}

// MARK: the hooks' effects

extension Hooks {
    /// `customize-access-token`: the claims the server would sign go to the hook; its `claims`
    /// answer, once it passes the minimum schema, is what gets signed.
    func customizeAccessToken(userID: String, claims: JSONObject, method: String) throws(AuthError) -> JSONObject {
        let output = try invoke(.customizeAccessToken, [
            "user_id": .string(userID), "claims": .object(claims), "authentication_method": .string(method),
        ])
        // A 204 leaves the output untouched, and `{"claims": null}` decodes to a nil map: both
        // reach `validateTokenClaims` with nil, which the schema refuses as null. A missing
        // `claims` key (a `null` body too) is `UnmarshalJSON`'s own error (v0hooks.go).
        guard let output else { throw Hooks.claimsAreNull }
        guard let value = output["claims"] else {
            throw AuthError(500, nil, "output claims field is missing")
        }
        if value == .null { throw Hooks.claimsAreNull }
        guard let claims = value.objectValue else {
            throw AuthError(500, .unexpectedFailure, "Error unmarshaling JSON output.")
        }
        try Hooks.validateClaims(claims)
        return claims
    }

    /// `validateTokenClaims` with `MinimumViableTokenSchema`: the required claims present and
    /// every known claim of its type; messages as gojsonschema writes them.
    static let claimsAreNull = AuthError(500, nil, "output claims do not conform to the expected schema: \n"
        + "- (root): Invalid type. Expected: object, given: null\n")

    static func validateClaims(_ claims: JSONObject) throws(AuthError) {
        let required = ["aud", "exp", "iat", "sub", "email", "phone", "role", "aal", "session_id", "is_anonymous"]
        let types: [(String, [String])] = [
            ("aud", ["string", "array"]), ("exp", ["integer"]), ("jti", ["string"]), ("iat", ["integer"]),
            ("iss", ["string"]), ("nbf", ["integer"]), ("sub", ["string"]), ("email", ["string"]), ("phone", ["string"]),
            ("app_metadata", ["object"]), ("user_metadata", ["object"]), ("role", ["string"]), ("aal", ["string"]),
            ("amr", ["array"]), ("session_id", ["string"]), ("client_id", ["string"]),
        ]
        var problems: [String] = []
        for name in required where claims[name] == nil { problems.append("(root): \(name) is required") }
        for (name, expected) in types {
            guard let value = claims[name] else { continue }
            let given = jsonSchemaType(value)
            let accepted = expected.contains(given) || (given == "integer" && expected.contains("number"))
            if !accepted {
                problems.append("\(name): Invalid type. Expected: \(expected.joined(separator: "/")), given: \(given)")
                continue
            }
            if name == "amr", let items = value.arrayValue {
                for (index, item) in items.enumerated() where item.stringValue == nil && item.objectValue == nil {
                    problems.append("amr.\(index): Must validate at least one schema (anyOf)")
                }
            }
        }
        guard !problems.isEmpty else { return }
        throw AuthError(500, nil, "output claims do not conform to the expected schema: \n"
            + problems.map { "- \($0)\n" }.joined())
    }

    static func jsonSchemaType(_ value: JSON) -> String {
        switch value {
        case .null: return "null"
        case .bool: return "boolean"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        default:
            if let number = value.doubleValue, number == number.rounded(), abs(number) < 9.007e15 { return "integer" }
            return "number"
        }
    }

    /// `before-user-created`: the user about to be created, as `SignupParams.ToUserModel` makes
    /// it before the transaction: no role yet (`SetRole` runs inside it), Go's zero time in
    /// `created_at` and `updated_at` (pop stamps them on insert), no identities. An error answer
    /// refuses the sign-up before anything is stored.
    func beforeUserCreated(_ prospect: UserRecord) throws(AuthError) {
        guard enabled(.beforeUserCreated) else { return }
        var unsaved = prospect
        unsaved.role = ""
        unsaved.createdAt = Timestamp.goZero.microseconds
        unsaved.updatedAt = Timestamp.goZero.microseconds
        try invoke(.beforeUserCreated, ["user": Models.user(unsaved, identities: [])])
    }

    /// `after-user-created`: the user as stored; an error answer fails the request.
    func afterUserCreated(_ user: JSON) throws(AuthError) {
        guard enabled(.afterUserCreated) else { return }
        try invoke(.afterUserCreated, ["user": user])
    }

    /// A verification-attempt hook's decision: `reject` with its message (or the default).
    struct Decision {
        var rejected: Bool
        var message: String
        var logout: Bool
    }

    /// The answer is decoded as `json.Unmarshal` fills `PasswordVerificationAttemptOutput`
    /// (`decision`, `message`, `should_logout_user`) or `MFAVerificationAttemptOutput` (the first
    /// two): keys in any case, `null` leaves a field empty, and a value of another type fails the
    /// whole answer with hookshttp's 500 "Error unmarshaling JSON output.".
    func verificationAttempt(_ name: Name, _ fields: JSONObject, defaultMessage: String) throws(AuthError) -> Decision? {
        guard enabled(name) else { return nil }
        let output = try invoke(name, fields) ?? [:]
        let unmarshal = AuthError(500, .unexpectedFailure, "Error unmarshaling JSON output.")
        func string(_ key: String) throws(AuthError) -> String {
            switch Hooks.goField(output, key) {
            case nil, .null?: return ""
            case .string(let text)?: return text
            default: throw unmarshal
            }
        }
        let rejected = try string("decision") == "reject"
        var message = try string("message")
        if message.isEmpty { message = defaultMessage }
        var logout = false
        if name == .passwordVerification {
            switch Hooks.goField(output, "should_logout_user") {
            case nil, .null?: break
            case .bool(let value)?: logout = value
            default: throw unmarshal
            }
        }
        return Decision(rejected: rejected, message: message, logout: logout)
    }
}

/// Scripted hook failures: a scenario rule with `"then": {"hook": "timeout"}` marks the request
/// it fires on, and that request's hook calls fail this way without reaching the hook.
public enum HookFaults {
    /// The request header carrying the fault from the scenario middleware to the dispatcher.
    public static let header = "X-Emulator-Hook-Fault"
    public static let names: Set<String> = ["timeout", "unreachable", "error"]

    static func reply(_ fault: String) -> HookReply? {
        switch fault {
        case "timeout": return .timedOut
        case "unreachable": return .failed("connection refused (scenario)")
        case "error": return .response(status: 500, headers: [], body: [])
        default: return nil
        }
    }
}
