// What the GoTrue, scenario and emulator test targets share: a hand-moved clock, a GoTrue API
// over a fresh database (in-memory SQLite, or Postgres: `TestStore`) answering in-process, and
// request and response helpers.
import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import EmulatorTools
import Foundation
import GoTrue
import PostgresTestSupport
import Synchronization

/// A clock tests move by hand.
public final class ManualClock: AuthClock, Sendable {
    private let current: Mutex<Int64>
    public init(_ start: Int64 = 1_767_225_600_000_000) { current = Mutex(start) }  // 2026-01-01T00:00:00Z
    public func now() -> Timestamp { Timestamp(microseconds: current.withLock { $0 }) }
    public func advance(seconds: Double) { current.withLock { $0 += Int64(seconds * 1_000_000) } }
}

/// The configuration tests start from: the defaults with cheap password hashing.
public func testConfiguration(_ configure: (inout Configuration) -> Void = { _ in }) -> Configuration {
    var configuration = Configuration()
    configuration.passwordHashIterations = PasswordHasher.insecureTestIterations
    configure(&configuration)
    return configuration
}

/// Which store the harness's databases live in. Normally each is a fresh in-memory SQLite
/// database; with AUTH_EMULATOR_TEST_DB=postgres each is a database bootstrapped with GoTrue's
/// `auth` schema on a throw-away Postgres cluster shared by the test process
/// (`PostgresCluster.bootstrapping`), so the same tests run the store's Postgres statements.
public enum TestStore {
    public static let isPostgres = ProcessInfo.processInfo.environment["AUTH_EMULATOR_TEST_DB"] == "postgres"

    /// A Postgres database made for a project, and that project's store while it lives.
    private struct Made: Sendable {
        let conninfo: String
        weak var store: Database?
    }

    /// Every database made so far. Held while one is made: the bootstrap creates and grants
    /// cluster-wide roles, and two at once fail with "tuple concurrently updated".
    private static let made = Mutex<[Made]>([])

    /// A fresh, empty database in the store this run tests.
    ///
    /// On Postgres, a database whose project is gone (its `Database` released, so its
    /// connections are closed) is emptied and given to the next project rather than a new one
    /// made: a database is a copy of a template of some 300 files and 7 MB, and the GoTrue suite
    /// makes one per project, some 530. Made anew every time, they filled /tmp with 4 GB and
    /// took minutes to delete when the cluster stopped; reused, a run makes a few dozen.
    public static func database() throws -> Database {
        guard isPostgres else { return try Database(path: ":memory:") }
        if let database = try reused() { return database }
        return try made.withLock { made in
            let conninfo = try PostgresCluster.bootstrappingCluster().makeDatabase()
            let database = try Database(postgres: conninfo, postgres: PostgresOptions(bootstrap: true))
            made.append(Made(conninfo: conninfo, store: database))
            return database
        }
    }

    /// A database no project uses any more, opened and emptied; nil when every one is in use.
    private static func reused() throws -> Database? {
        guard let conninfo = made.withLock({ made -> String? in
            guard let free = made.firstIndex(where: { $0.store == nil }) else { return nil }
            // Taken: no other caller may reuse it while it is opened.
            return made.remove(at: free).conninfo
        }) else { return nil }
        let database = try Database(postgres: conninfo)
        try database.write { try $0.emptyEveryTable() }
        made.withLock { $0.append(Made(conninfo: conninfo, store: database)) }
        return database
    }
}

/// A project over a fresh database (`TestStore.database()`) on `clock`.
public func testProject(clock: ManualClock, configure: (inout Configuration) -> Void = { _ in }) throws -> Project {
    Project(configuration: testConfiguration(configure), database: try TestStore.database(),
            environment: Environment(clock: clock))
}

/// A GoTrue API over a fresh database (`TestStore.database()`), answering in-process.
public func makeAPI(clock: ManualClock = ManualClock(), configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    GoTrueAPI(emulating: try testProject(clock: clock, configure: configure))
}

extension HTTPResponse {
    public var text: String { String(decoding: body, as: UTF8.self) }
    public var json: JSON { (try? JSON(parsing: body)) ?? .null }
}

public func request(_ method: String, _ target: String, headers: HTTPHeaders = [:], body: String = "") -> HTTPRequest {
    var headers = headers
    if headers["Host"] == nil { headers["Host"] = "127.0.0.1" }
    return HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8))
}

extension GoTrueAPI {
    /// One request answered in-process; `raw` sends a body as it is (not JSON-serialized).
    public func call(_ method: String, _ target: String, _ body: JSON? = nil, bearer: String? = nil,
                     headers: HTTPHeaders = [:], raw: String? = nil) -> HTTPResponse {
        var headers = headers
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        return respond(to: request(method, target, headers: headers, body: raw ?? body?.serialized() ?? ""))
    }

    /// Signs up with autoconfirm on and returns the session JSON.
    public func signUp(_ email: String, _ password: String = "password1", data: JSON? = nil) -> JSON {
        var body: JSONObject = ["email": .string(email), "password": .string(password)]
        if let data { body["data"] = data }
        return call("POST", "/signup", .object(body)).json
    }

    public func signIn(_ email: String, _ password: String = "password1", headers: HTTPHeaders = [:]) -> HTTPResponse {
        call("POST", "/token?grant_type=password", ["email": .string(email), "password": .string(password)], headers: headers)
    }

    public func refresh(_ token: String) -> HTTPResponse {
        call("POST", "/token?grant_type=refresh_token", ["refresh_token": .string(token)])
    }
}

/// The payload of a compact JWS, without verifying it.
public func claims(of token: String) -> JSONObject {
    let payload = token.split(separator: ".")[1]
    let bytes = (try? Base64URL.decode(String(payload))) ?? []
    return (try? JSON(parsing: bytes))?.objectValue ?? JSONObject()
}

public func errorCode(_ response: HTTPResponse) -> String? { response.json["error_code"]?.stringValue }
