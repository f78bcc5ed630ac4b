import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import Synchronization
@testable import GoTrue

/// A clock tests move by hand.
final class ManualClock: AuthClock, Sendable {
    private let current: Mutex<Int64>
    init(_ start: Int64 = 1_767_225_600_000_000) { current = Mutex(start) }  // 2026-01-01T00:00:00Z
    func now() -> Timestamp { Timestamp(microseconds: current.withLock { $0 }) }
    func advance(seconds: Double) { current.withLock { $0 += Int64(seconds * 1_000_000) } }
}

/// A GoTrue API over a fresh in-memory database, answering in-process.
func makeAPI(clock: ManualClock = ManualClock(), configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    var configuration = Configuration()
    configuration.passwordHashIterations = PasswordHasher.insecureTestIterations
    configure(&configuration)
    let database = try Database(path: ":memory:")
    return GoTrueAPI(project: Project(configuration: configuration, database: database, environment: Environment(clock: clock)))
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSON { (try? JSON(parsing: body)) ?? .null }
}

func request(_ method: String, _ target: String, headers: HTTPHeaders = [:], body: String = "") -> HTTPRequest {
    var headers = headers
    if headers["Host"] == nil { headers["Host"] = "127.0.0.1" }
    return HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8))
}

extension GoTrueAPI {
    func call(_ method: String, _ target: String, _ body: JSON? = nil, bearer: String? = nil,
              headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        return respond(to: request(method, target, headers: headers, body: body?.serialized() ?? ""))
    }

    /// Signs up with autoconfirm on and returns the session JSON.
    func signUp(_ email: String, _ password: String = "password1", data: JSON? = nil) -> JSON {
        var body: JSONObject = ["email": .string(email), "password": .string(password)]
        if let data { body["data"] = data }
        return call("POST", "/signup", .object(body)).json
    }

    func signIn(_ email: String, _ password: String = "password1") -> HTTPResponse {
        call("POST", "/token?grant_type=password", ["email": .string(email), "password": .string(password)])
    }

    func refresh(_ token: String) -> HTTPResponse {
        call("POST", "/token?grant_type=refresh_token", ["refresh_token": .string(token)])
    }
}

/// The payload of a compact JWS, without verifying it.
func claims(of token: String) -> JSONObject {
    let payload = token.split(separator: ".")[1]
    let bytes = (try? Base64URL.decode(String(payload))) ?? []
    return (try? JSON(parsing: bytes))?.objectValue ?? JSONObject()
}

func errorCode(_ response: HTTPResponse) -> String? { response.json["error_code"]?.stringValue }
