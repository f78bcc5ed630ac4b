import AuthHTTP
import AuthJSON
import Testing
import AuthTestSupport
@testable import EmulatorTools
@testable import GoTrue

// DNS rebinding and cross-origin reads of the emulator's own routes (`LocalOrigins`); GoTrue's
// routes keep the real server's answers.
@Suite struct LocalOriginsTests {
    private func api(_ configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
        GoTrueAPI(emulating: try testProject(clock: ManualClock(), configure: configure))
    }

    @Test func emulatorRoutesAnswerOnlyLocalAndConfiguredHosts() throws {
        let api = try api {
            $0.externalURL = "http://laptop.lan:9999"
            $0.mailer.externalHosts = ["auth.example.test"]
        }
        let key = api.project.configuration.apiKeys.serviceRole
        for host in ["localhost:9999", "LOCALHOST", "app.localhost:9999", "127.0.0.1:9999", "192.168.1.20:9999",
                     "[::1]:9999", "host.docker.internal:9999", "laptop.lan:9999", "laptop.lan.", "auth.example.test"] {
            #expect(api.call("GET", "/emulator/v1/outbox", headers: ["Host": host, "apikey": key]).status == 200, "\(host)")
        }
        for host in ["rebind.evil.example:9999", "evil.localhost.example", "127.0.0.1.nip.io:9999", "laptop.lan.evil"] {
            let refused = api.call("GET", "/emulator/v1/outbox", headers: ["Host": host, "apikey": key])
            #expect(refused.status == 403, "\(host)")
            #expect(refused.json["msg"]?.stringValue?.contains("is not allowed") == true)
            #expect(api.call("GET", "/auth/v1/emulator/v1/outbox", headers: ["Host": host, "apikey": key]).status == 403)
            #expect(api.call("GET", "/emulator/settings", headers: ["Host": host]).status == 403)
            // GoTrue's own routes do not look at Host, as the real server.
            #expect(api.call("GET", "/settings", headers: ["Host": host]).status == 200)
        }
    }

    @Test func emulatorRoutesShareResponsesOnlyWithLocalOrigins() throws {
        let api = try api()
        let key = api.project.configuration.apiKeys.serviceRole
        // GoTrue's own header list (at the root) has no `apikey`; the gateway allows any.
        func preflight(_ path: String, origin: String) -> HTTPResponse {
            api.call("OPTIONS", path, headers: ["Origin": origin, "Access-Control-Request-Method": "GET",
                                                "Access-Control-Request-Headers": "authorization"])
        }
        for path in ["/auth/v1/emulator/v1/outbox", "/emulator/v1/outbox"] {
            #expect(preflight(path, origin: "https://evil.example").headers["Access-Control-Allow-Origin"] == nil)
            #expect(preflight(path, origin: "http://rebind.evil.example:9999").headers["Access-Control-Allow-Origin"] == nil)
            #expect(preflight(path, origin: "http://localhost:3000").headers["Access-Control-Allow-Origin"] == "*")
            let read = api.call("GET", path, headers: ["Origin": "https://evil.example", "apikey": key])
            #expect(read.headers["Access-Control-Allow-Origin"] == nil)
        }
        // GoTrue's routes: any origin, as the real server and the gateway.
        #expect(preflight("/auth/v1/token", origin: "https://evil.example").headers["Access-Control-Allow-Origin"] == "*")
        #expect(api.call("GET", "/settings", headers: ["Origin": "https://evil.example"]).headers["Access-Control-Allow-Origin"] == "*")
    }
}
