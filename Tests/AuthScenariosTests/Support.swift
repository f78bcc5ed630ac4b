// Shared pieces of the scenario tests: a GoTrue API with the scenario middleware in front and a
// real server around it. The clock, request helpers and the loopback client that observes
// transport faults byte by byte are AuthTestSupport's.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
@_exported import AuthTestSupport
import Foundation
import EmulatorTools
import GoTrue
import ScenarioControl
import Synchronization
@testable import AuthScenarios

/// One emulated project with the scenario engine and journal plugged in, answering in-process.
struct Harness {
    let clock = ManualClock()
    let project: Project
    let engine: ScenarioEngine
    let journal: Journal
    let api: GoTrueAPI

    init(journalCapacity: Int = 100, configure: (inout Configuration) -> Void = { _ in }) throws {
        project = try testProject(clock: clock, configure: configure)
        engine = ScenarioEngine(environment: project.environment)
        journal = Journal(capacity: journalCapacity)
        api = GoTrueAPI(emulating: project, middleware: [ScenarioMiddleware(engine: engine, journal: journal, project: project)],
                        extensions: ControlRoutes.routes(engine: engine, journal: journal))
    }

    var serviceRole: String { project.configuration.apiKeys.serviceRole }

    func call(_ method: String, _ target: String, _ body: JSON? = nil, bearer: String? = nil,
              headers: HTTPHeaders = [:], raw: String? = nil) -> HTTPResponse {
        api.call(method, target, body, bearer: bearer, headers: headers, raw: raw)
    }

    /// A control call with the service_role key.
    func control(_ method: String, _ path: String, raw: String? = nil) -> HTTPResponse {
        call(method, GoTrueAPI.emulatorPrefix + path, bearer: serviceRole, raw: raw)
    }

    @discardableResult
    func load(_ json: String) throws -> Scenario {
        let scenario = try Scenario(json: json, source: "test")
        engine.add(scenario)
        return scenario
    }

    func signUp(_ email: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        call("POST", "/signup", ["email": .string(email), "password": "password1"], headers: headers)
    }

    func signIn(_ email: String, headers: HTTPHeaders = [:]) -> HTTPResponse { api.signIn(email, headers: headers) }

    func refresh(_ token: String) -> HTTPResponse { api.refresh(token) }
}

/// The repository root, found from this file's path.
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// Runs `body` against a real server with the harness's API as responder.
func withServer(_ harness: Harness, _ body: (Int) throws -> Void) throws {
    var configuration = HTTPServerConfiguration(port: 0, loopThreads: 1, workerThreads: 2)
    configuration.host = "127.0.0.1"
    let server = HTTPServer(configuration: configuration, responder: harness.api)
    try server.start()
    defer { server.shutdown(timeout: .seconds(2)) }
    try body(server.port)
}
