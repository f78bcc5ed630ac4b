@testable import AuthEmulator
import AuthHTTP
import AuthJSON
import AuthScenarios
import Synchronization
import Testing

/// The access log prints what the client saw, with the journal's rule and fault: a reset is
/// `- reset`, never the 200 the handler built behind it.
@Suite struct AccessLogTests {
    static let faults = #"""
        {"name": "faults", "rules": [
          {"match": {"op": "health"}, "when": {"times": 1}, "then": {"reset": true}},
          {"match": {"op": "token.password"}, "when": {"times": 1}, "then": {"error": "unexpected_failure", "message": "Database error finding user"}},
          {"match": {"op": "settings"}, "when": {"times": 1}, "then": {"hang": true}},
          {"match": {"op": "settings"}, "when": {"times": 1}, "then": {"close_after_bytes": 5}},
          {"match": {"op": "settings"}, "when": {"times": 1}, "then": {"close_after_bytes": 40}},
          {"match": {"op": "settings"}, "when": {"times": 1}, "then": {"delay_ms": 1500}}
        ]}
        """#

    /// Runs the requests through an emulator whose access log writes into the returned lines.
    func logged(_ format: AccessLog.Format, _ requests: [(String, String)]) throws -> [String] {
        let lines = Mutex<[String]>([])
        var options = EmulatorOptions.testing()
        options.scenarios = [try Scenario(json: AccessLogTests.faults, source: "t")]
        options.accessLog = AccessLog(format: format) { line in lines.withLock { $0.append(line) } }
        let emulator = try Emulator(options: options)
        defer { emulator.stop() }
        for (method, target) in requests {
            let body = method == "POST" ? Array(#"{"email": "a@example.com", "password": "password1"}"#.utf8) : []
            _ = emulator.api.respond(to: HTTPRequest(method: method, target: target, headers: ["Host": "127.0.0.1"], body: body))
        }
        return lines.withLock { $0 }
    }

    /// The line without its trailing milliseconds.
    func head(_ line: String) -> String {
        String(line.split(separator: " ").dropLast().joined(separator: " "))
    }

    @Test func textLinesTellTheFaultTheClientSaw() throws {
        let lines = try logged(.text, [("GET", "/health"), ("GET", "/health"), ("POST", "/token?grant_type=password"),
                                       ("GET", "/settings"), ("GET", "/settings"), ("GET", "/settings"), ("GET", "/settings"),
                                       ("POST", "/token?grant_type=password")])
        #expect(lines.map(head) == [
            "GET /health - reset rule=faults#0",
            "GET /health 200",
            "POST /token 500 unexpected_failure rule=faults#1",
            "GET /settings - hang rule=faults#2",
            // Five bytes end before the status code; forty carry the status line.
            "GET /settings - close_after_bytes rule=faults#3",
            "GET /settings 200 close_after_bytes rule=faults#4",
            "GET /settings 200 delay rule=faults#5",
            "POST /token 400 invalid_credentials",
        ])
        // The injected delay counts, as in the journal's latency.
        let delayed = try #require(Double(lines[6].split(separator: " ").last!.dropLast(3)))
        #expect(delayed >= 1500)
        #expect(lines.allSatisfy { $0.hasSuffix("ms\n") })
    }

    @Test func jsonLinesCarryTheSameFacts() throws {
        let lines = try logged(.json, [("GET", "/health"), ("POST", "/token?grant_type=password"), ("GET", "/health")])
        let entries = try lines.map { try JSON(parsing: $0) }
        #expect(entries[0]["status"] == .null)
        #expect(entries[0]["fault"] == "reset")
        #expect(entries[0]["rule"] == "faults#0")
        #expect(entries[0]["error_code"] == nil)
        #expect(entries[1]["status"] == 500)
        #expect(entries[1]["error_code"] == "unexpected_failure")
        #expect(entries[1]["rule"] == "faults#1")
        #expect(entries[1]["fault"] == nil)
        #expect(entries[2]["status"] == 200)
        #expect(entries[2]["rule"] == nil && entries[2]["fault"] == nil)
        #expect(entries.allSatisfy { $0["request_id"]?.stringValue?.isEmpty == false && $0["ms"]?.doubleValue != nil })
        // The default project's lines name no project.
        #expect(entries.allSatisfy { $0["project"] == nil })
    }

    /// Another project's lines say which project answered (docs/projects.md).
    @Test func aProjectsLinesNameIt() throws {
        let lines = Mutex<[String]>([])
        var options = EmulatorOptions.testing()
        options.accessLog = AccessLog(format: .text) { line in lines.withLock { $0.append(line) } }
        let emulator = try Emulator.start(options)
        defer { emulator.stop() }
        try emulator.projects.create(ProjectSpec(ref: "shop"))
        let router = ProjectRouter(registry: emulator.projects, primary: emulator.api)
        _ = router.respond(to: HTTPRequest(method: "GET", target: "/project/shop/auth/v1/health", headers: ["Host": "127.0.0.1"]))
        _ = router.respond(to: HTTPRequest(method: "GET", target: "/health", headers: ["Host": "shop.localhost"]))
        _ = router.respond(to: HTTPRequest(method: "GET", target: "/health", headers: ["Host": "127.0.0.1"]))
        #expect(lines.withLock { $0 }.map(head) == ["[shop] GET /auth/v1/health 200", "[shop] GET /health 200", "GET /health 200"])

        let json = AccessLog(format: .json) { _ in }
        let line = json.line(method: "GET", path: "/health", delivery: Delivery(of: HTTPResponse(status: 200)), milliseconds: 1,
                             requestID: "r", project: "shop")
        #expect(try JSON(parsing: line)["project"] == "shop")
    }
}
