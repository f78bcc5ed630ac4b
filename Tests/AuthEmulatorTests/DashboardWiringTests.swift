@testable import AuthEmulator
import AuthHTTP
import AuthJSON
import AuthScenarios
@testable import EmulatorConfiguration
import EmulatorTools
import Foundation
import GoTrue
import Testing
@testable import auth_emulator

/// The dashboard as the emulator assembles it: journal, scenarios and runtime configuration
/// reached through their control routes, the bind address deciding whether a key is needed,
/// and `--dashboard off`.
@Suite struct DashboardWiringTests {
    let repository: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// A browser session: cookies kept, forms posted with the page's CSRF field.
    final class Browser {
        let emulator: Emulator
        var cookies: [String: String] = [:]
        init(_ emulator: Emulator) { self.emulator = emulator }

        func send(_ method: String, _ target: String, form: [(String, String)]? = nil) -> HTTPResponse {
            var headers: HTTPHeaders = ["Host": "127.0.0.1"]
            if !cookies.isEmpty { headers["Cookie"] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
            var body: [UInt8] = []
            if let form {
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                body = Array(form.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&").utf8)
            }
            let response = emulator.api.respond(to: HTTPRequest(method: method, target: target, headers: headers, body: body))
            for header in response.headers.values(for: "Set-Cookie") {
                let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
                if pair.count == 2 { cookies[String(pair[0])] = String(pair[1]) }
            }
            return response
        }

        func encode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
        }

        func token() -> String {
            let html = text(send("GET", "/emulator/mailbox"))
            guard let range = html.range(of: "name=\"csrf\" value=\"") else { return "" }
            return String(html[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    static func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }
    func text(_ response: HTTPResponse) -> String { Self.text(response) }

    func control(_ emulator: Emulator, _ method: String, _ target: String, body: String = "") -> HTTPResponse {
        let headers: HTTPHeaders = ["Host": "127.0.0.1", "Authorization": "Bearer " + emulator.project.configuration.apiKeys.serviceRole]
        return emulator.api.respond(to: HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8)))
    }

    @Test func journalPageShowsRequestsWithTheirErrorCodes() throws {
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        let browser = Browser(emulator)
        _ = emulator.api.respond(to: HTTPRequest(method: "POST", target: "/token?grant_type=password",
                                                 headers: ["Host": "127.0.0.1", "X-Emulator-Test": "checkout-17"],
                                                 body: Array(#"{"email": "nobody@example.com", "password": "wrong-one"}"#.utf8)))
        let page = text(browser.send("GET", "/emulator/journal"))
        #expect(page.contains("token.password"))
        #expect(page.contains("invalid_credentials"))
        #expect(page.contains("checkout-17"))
        // Filters are the journal route's; a bad one is its 400.
        #expect(text(browser.send("GET", "/emulator/journal?op=signup")).contains("No requests recorded"))
        let bad = browser.send("GET", "/emulator/journal?status=abc")
        #expect(bad.status == 400)
        #expect(text(bad).contains("status must be a code"))
        // Pages and their polling are not recorded: only the one sign-in attempt is.
        #expect(emulator.journal.count() == 1)
    }

    @Test func scenariosLoadFromTheCatalogueOrPasteAndRemove() throws {
        var options = EmulatorOptions.testing()
        options.scenarioCatalogue = repository + "/scenarios"
        let emulator = try Emulator(options: options)
        defer { emulator.stop() }
        let browser = Browser(emulator)
        let token = browser.token()
        #expect(text(browser.send("GET", "/emulator/scenarios")).contains("<option>refresh-503.json</option>"))
        var response = browser.send("POST", "/emulator/scenarios", form: [("catalogue", "refresh-503.json"), ("csrf", token)])
        #expect(response.status == 303)
        #expect(emulator.scenarios.describe().count == 1)
        let name = emulator.scenarios.describe().first?["name"]?.stringValue ?? ""
        #expect(text(browser.send("GET", "/emulator/scenarios")).contains(name))

        // A bad document: the control route's status and message, and the text kept for fixing.
        let bad = #"{"name": "x", "rules": [{"match": {"op": "token.nope"}, "then": {"status": 503}}]}"#
        let direct = control(emulator, "POST", "/emulator/v1/scenarios", body: bad)
        response = browser.send("POST", "/emulator/scenarios", form: [("json", bad), ("csrf", token)])
        #expect(response.status == direct.status)
        let message = (try JSON(parsing: direct.body))["msg"]?.stringValue ?? "?"
        #expect(text(response).contains(message.replacingOccurrences(of: "\"", with: "&#34;")))
        #expect(text(response).contains("token.nope"))

        let good = #"{"name": "pasted-one", "description": "signs <b>up</b> fail", "rules": [{"match": {"op": "signup"}, "then": {"error": "over_request_rate_limit"}}]}"#
        #expect(browser.send("POST", "/emulator/scenarios", form: [("json", good), ("csrf", token)]).status == 303)
        #expect(emulator.scenarios.describe().count == 2)
        #expect(text(browser.send("GET", "/emulator/scenarios")).contains("signs &lt;b&gt;up&lt;/b&gt; fail"))
        response = browser.send("POST", "/emulator/scenarios/pasted-one/remove", form: [("csrf", token)])
        #expect(response.status == 303)
        #expect(emulator.scenarios.describe().count == 1)
        #expect(browser.send("POST", "/emulator/scenarios/" + name + "/remove", form: [("csrf", "")]).status == 403)
        #expect(emulator.scenarios.describe().count == 1)
    }

    /// A rule scoped to a test id says so on the page (the file's `test` is not in the rule's
    /// own JSON); an unscoped one says it sees every request.
    @Test func scenariosPageShowsEachRulesTestScope() throws {
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        let browser = Browser(emulator)
        let scoped = #"{"name": "scoped", "test": "checkout-17", "rules": [{"match": {"op": "token.password"}, "then": {"status": 503}}]}"#
        #expect(control(emulator, "POST", "/emulator/v1/scenarios", body: scoped).status == 201)
        let global = #"{"name": "global", "rules": [{"match": {"op": "signup"}, "then": {"status": 503}}]}"#
        #expect(control(emulator, "POST", "/emulator/v1/scenarios", body: global).status == 201)
        let page = text(browser.send("GET", "/emulator/scenarios"))
        #expect(page.contains("<th scope=\"col\">Test id</th>"))
        #expect(page.contains("<code class=\"test-scope\">checkout-17</code>"))
        #expect(page.contains("every request"))
    }

    @Test func configTogglesGoThroughTheConfigRoute() throws {
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        let browser = Browser(emulator)
        let token = browser.token()
        #expect(text(browser.send("GET", "/emulator/settings")).contains("<dt>New email addresses</dt><dd>confirmed automatically "))
        #expect(emulator.project.configuration.mailer.autoconfirm)
        var response = browser.send("POST", "/emulator/settings/config",
                                    form: [("setting", "mailer_autoconfirm"), ("value", "false"), ("csrf", token)])
        #expect(response.status == 303)
        #expect(!emulator.project.configuration.mailer.autoconfirm)
        response = browser.send("POST", "/emulator/settings/config", form: [("setting", "rate_limits"), ("value", "tiny"), ("csrf", token)])
        #expect(response.status == 303)
        #expect(emulator.project.configuration.rateLimits.preset == .tiny)
        // The route's validation, not the page's: an unknown setting is its 400.
        response = browser.send("POST", "/emulator/settings/config", form: [("setting", "nonsense"), ("value", "true"), ("csrf", token)])
        #expect(response.status == 400)
        #expect(text(response).contains("nonsense"))
    }

    @Test func aNonLoopbackBindAsksForTheKey() throws {
        var options = EmulatorOptions.testing()
        options.host = "0.0.0.0"
        let emulator = try Emulator(options: options)
        defer { emulator.stop() }
        #expect(emulator.project.dashboard.requiresKey)
        let browser = Browser(emulator)
        #expect(browser.send("GET", "/emulator").status == 401)
        let loopback = try Emulator(options: .testing())
        defer { loopback.stop() }
        #expect(!loopback.project.dashboard.requiresKey)
        #expect(Browser(loopback).send("GET", "/emulator").status == 200)
    }

    @Test func dashboardOffIsNotFound() throws {
        let context = CLI.Context(environment: [:], console: .silent)
        let flags = try CLI.parseOptions(["--dashboard", "off"], values: CLI.serveValueOptions, switches: CLI.serveSwitches)
        let options = try CLI.options(from: flags, context: context)
        #expect(!options.dashboard)
        var testing = options
        testing.port = 0
        testing.databasePath = EmulatorOptions.inMemory
        let emulator = try Emulator(options: testing)
        defer { emulator.stop() }
        #expect(emulator.dashboardURL == nil)
        #expect(Browser(emulator).send("GET", "/emulator").status == 404)
        #expect(Browser(emulator).send("GET", "/emulator/settings").status == 404)
        // The environment variable, and a bad flag value.
        var fromEnvironment = EmulatorOptions()
        try EnvironmentConfiguration.apply(["AUTH_EMULATOR_DASHBOARD": "off"], to: &fromEnvironment)
        #expect(!fromEnvironment.dashboard)
        #expect(throws: CLI.UsageError.self) {
            try CLI.options(from: CLI.parseOptions(["--dashboard", "maybe"], values: CLI.serveValueOptions), context: context)
        }
    }
}
