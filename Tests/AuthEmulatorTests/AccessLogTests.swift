@testable import AuthEmulator
import AuthHTTP
import AuthJSON
@testable import AuthScenarios
import AuthTestSupport
@testable import EmulatorConfiguration
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

    /// A hook endpoint that never answers in time, counting the calls that reached it.
    final class Counter: Sendable { let value = Mutex(0) }
    struct HangingHook: HTTPResponder {
        let calls: Counter
        func respond(to request: HTTPRequest) -> HTTPResponse {
            calls.value.withLock { $0 += 1 }
            return HTTPResponse(status: 204, directive: ResponseDirective(delay: .seconds(60)))
        }
    }

    /// Over a socket a line is written once the transport knows what the client got: a response
    /// held by a delay when the drain's time runs out is cut off (no status), and a request a
    /// worker still has then is answered 503 by the server, which is what its line says (not the
    /// status the handler builds after the hook gives up).
    @Test func linesAtShutdownSayWhatTheClientSaw() throws {
        let hookCalls = Counter()
        let hook = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, loopThreads: 1, workerThreads: 1),
                              responder: HangingHook(calls: hookCalls))
        try hook.start()
        defer { hook.shutdown(timeout: .milliseconds(100)) }

        let lines = Mutex<[String]>([])
        var options = EmulatorOptions.testing()
        options.scenarios = [try Scenario(json: Array(#"{"name": "d", "rules": [{"match": {"op": "settings"}, "then": {"delay_ms": 60000}}]}"#.utf8), source: "t")]
        options.configuration.hooks.customAccessToken.enabled = true
        options.configuration.hooks.customAccessToken.uri = "http://127.0.0.1:\(hook.port)/claims"
        options.configuration.hooks.customAccessToken.secrets = ["v1,whsec_" + String(repeating: "A", count: 40)]
        options.accessLog = AccessLog(format: .text) { line in lines.withLock { $0.append(line) } }
        let emulator = try Emulator.start(options)
        let service = emulator.project.configuration.apiKeys.serviceRole
        let created = emulator.api.respond(to: HTTPRequest(
            method: "POST", target: "/admin/users", headers: ["Host": "127.0.0.1", "Authorization": "Bearer " + service],
            body: Array(#"{"email": "late@example.com", "password": "password1", "email_confirm": true}"#.utf8)))
        #expect(created.status == 200)

        // A request answered in full is logged with its status once written.
        let plain = try TestClient(port: emulator.port)
        try plain.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try plain.readResponse().status == 200)
        #expect(waitUntil { lines.withLock { $0 }.map(head).contains("GET /health 200") })

        let delayed = try TestClient(port: emulator.port)
        try delayed.send("GET /settings HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let signIn = try TestClient(port: emulator.port)
        try signIn.post("/token?grant_type=password", #"{"email": "late@example.com", "password": "password1"}"#)
        // Both are in flight: the sign-in's worker waits on the hook, the settings answer on its
        // delay (the journal records it before the loop holds it).
        #expect(waitUntil { hookCalls.value.withLock { $0 } == 1 })
        #expect(waitUntil { emulator.journal.entries().contains { $0.operation == "settings" } })

        emulator.stop(timeout: .milliseconds(300))
        #expect(waitUntil(seconds: 60) { lines.withLock { $0.count } >= 4 })
        let heads = lines.withLock { $0 }.map(head)
        #expect(heads.contains("GET /settings - delay cut_off rule=d#0"), "\(heads)")
        #expect(heads.contains("POST /token 503"), "\(heads)")
        #expect(!heads.contains { $0.hasPrefix("GET /settings 200") || $0.hasPrefix("POST /token 2") || $0.hasPrefix("POST /token 4") })
        #expect(try signIn.readResponse().status == 503)
    }

    /// The dashboard's actions (POSTs that change state) are logged as API calls are; its page
    /// loads and its live polling are not, or they would drown the app's requests.
    @Test func dashboardActionsAreLoggedItsPagesAndPollingAreNot() throws {
        let lines = Mutex<[String]>([])
        var options = EmulatorOptions.testing()
        options.accessLog = AccessLog(format: .text) { line in lines.withLock { $0.append(line) } }
        let emulator = try Emulator(options: options)
        defer { emulator.stop() }
        let browser = DashboardWiringTests.Browser(emulator)
        let token = browser.token()
        _ = browser.send("GET", "/emulator")
        _ = browser.send("GET", "/emulator/live?view=users")
        #expect(lines.withLock { $0 }.isEmpty)
        let created = browser.send("POST", "/emulator/users", form: [("email", "logged@example.com"), ("password", "password1"), ("csrf", token)])
        #expect(created.status == 303)
        _ = browser.send("POST", "/emulator/settings/clock", form: [("advance", "60"), ("csrf", token)])
        #expect(lines.withLock { $0 }.map(head) == ["POST /emulator/users 303", "POST /emulator/settings/clock 303"])
    }
}
