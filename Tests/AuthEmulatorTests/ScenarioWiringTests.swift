@testable import AuthEmulator
import AuthHTTP
import AuthJSON
import AuthScenarios
@testable import EmulatorConfiguration
import EmulatorTools
import Foundation
import GoTrue
import Synchronization
import Testing
@testable import auth_emulator

/// The emulator's wiring of rate limits, scenarios, the journal and the runtime config route.
@Suite struct ScenarioWiringTests {
    let repository: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    func call(_ emulator: Emulator, _ method: String, _ target: String, body: String = "", service: Bool = false) -> HTTPResponse {
        var headers: HTTPHeaders = ["Host": "127.0.0.1"]
        if service { headers["Authorization"] = "Bearer " + emulator.project.configuration.apiKeys.serviceRole }
        return emulator.api.respond(to: HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8)))
    }

    func json(_ response: HTTPResponse) -> JSON { (try? JSON(parsing: response.body)) ?? .null }

    @Test func changingRateLimitsStartsEveryBucketAfresh() throws {
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        #expect(call(emulator, "PATCH", "/emulator/v1/config", body: #"{"rate_limits": "tiny"}"#, service: true).status == 200)
        let attempt = #"{"email": "nobody@example.com", "password": "password1"}"#
        // The tiny preset allows three token requests per client and window.
        for _ in 0..<3 { #expect(call(emulator, "POST", "/token?grant_type=password", body: attempt).status == 400) }
        #expect(call(emulator, "POST", "/token?grant_type=password", body: attempt).status == 429)
        // Setting limits again, even the same ones, starts every bucket afresh.
        #expect(call(emulator, "PATCH", "/emulator/v1/config", body: #"{"rate_limits": "tiny"}"#, service: true).status == 200)
        #expect(call(emulator, "POST", "/token?grant_type=password", body: attempt).status == 400)
        // Other changes leave the counts alone.
        for _ in 0..<2 { _ = call(emulator, "POST", "/token?grant_type=password", body: attempt) }
        #expect(call(emulator, "PATCH", "/emulator/v1/config", body: #"{"disable_signup": false}"#, service: true).status == 200)
        #expect(call(emulator, "POST", "/token?grant_type=password", body: attempt).status == 429)
    }

    @Test func configRouteReadsAndChangesTheLiveConfiguration() throws {
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        #expect(call(emulator, "GET", "/emulator/v1/config").status == 401)
        let initial = json(call(emulator, "GET", "/emulator/v1/config", service: true))
        #expect(initial["mailer_autoconfirm"] == true)
        #expect(initial["rate_limits"]?["preset"] == "default")
        #expect(initial["rate_limits"]?["token_refresh"] == 150)

        let patched = call(emulator, "PATCH", "/emulator/v1/config", body: """
            {"mailer_autoconfirm": false, "disable_signup": true, "anonymous_users_enabled": true,
             "password_min_length": 4, "password_required_characters": ["0123456789"], "rate_limits": "tiny"}
            """, service: true)
        #expect(patched.status == 200)
        #expect(json(patched)["password_min_length"] == 6)  // GoTrue raises anything below 6
        let settings = json(call(emulator, "GET", "/settings"))
        #expect(settings["mailer_autoconfirm"] == false)
        #expect(settings["disable_signup"] == true)
        #expect(settings["external"]?["anonymous_users"] == true)
        #expect(emulator.project.configuration.password.requiredCharacters == ["0123456789"])
        #expect(emulator.project.configuration.rateLimits.preset == .tiny)

        // One bad field: 400 naming it, nothing applied.
        let bad = call(emulator, "PATCH", "/emulator/v1/config", body: #"{"disable_signup": false, "rate_limits": {"otp": -1}}"#, service: true)
        #expect(bad.status == 400)
        #expect(json(bad)["msg"]?.stringValue?.hasPrefix("rate_limits.otp:") == true)
        #expect(emulator.project.configuration.disableSignup)
        #expect(call(emulator, "PATCH", "/emulator/v1/config", body: #"{"nope": 1}"#, service: true).status == 400)
        #expect(call(emulator, "PATCH", "/emulator/v1/config", body: "[", service: true).status == 400)
        let limits = call(emulator, "PATCH", "/emulator/v1/config", body: #"{"rate_limits": {"preset": "real", "otp": 5, "header": "X-Real-IP"}}"#, service: true)
        #expect(json(limits)["rate_limits"]?["otp"] == 5)
        #expect(emulator.project.configuration.rateLimits.header == "X-Real-IP")

        #expect(initial["mailer_notifications"] == [])
        let notices = call(emulator, "PATCH", "/emulator/v1/config",
                           body: #"{"mailer_notifications": ["password_changed", "identity_linked"]}"#, service: true)
        #expect(json(notices)["mailer_notifications"] == ["password_changed", "identity_linked"])
        let unknown = call(emulator, "PATCH", "/emulator/v1/config", body: #"{"mailer_notifications": ["password_reset"]}"#, service: true)
        #expect(unknown.status == 400)
        #expect(json(unknown)["msg"]?.stringValue?.hasPrefix("mailer_notifications: unknown notification 'password_reset'") == true)
        #expect(emulator.project.configuration.mailer.notifications == [.passwordChanged, .identityLinked])

        #expect(initial["mfa"]?["totp"]?["enroll_enabled"] == false)
        let mfa = call(emulator, "PATCH", "/emulator/v1/config",
                       body: #"{"mfa": {"totp": {"enroll_enabled": true, "verify_enabled": true}, "challenge_expiry_seconds": 60}}"#,
                       service: true)
        #expect(json(mfa)["mfa"]?["totp"]?["verify_enabled"] == true)
        #expect(json(mfa)["mfa"]?["challenge_expiry_seconds"] == 300)  // raised to GoTrue's minimum
        let badMFA = call(emulator, "PATCH", "/emulator/v1/config", body: #"{"mfa": {"totp": {"enrol": true}}}"#, service: true)
        #expect(json(badMFA)["msg"] == "mfa.totp.enrol: unknown setting")
    }

    @Test func rateLimitPresetSwitchesAtRuntime() throws {
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        let signIn = { call(emulator, "POST", "/token?grant_type=password", body: #"{"email": "x@example.com", "password": "password1"}"#).status }
        #expect((0..<5).map { _ in signIn() }.allSatisfy { $0 == 400 })
        _ = call(emulator, "PATCH", "/emulator/v1/config", body: #"{"rate_limits": "tiny"}"#, service: true)
        #expect((0..<4).map { _ in signIn() } == [400, 400, 400, 429])
        _ = call(emulator, "PATCH", "/emulator/v1/config", body: #"{"rate_limits": "off"}"#, service: true)
        #expect(signIn() == 400)
    }

    @Test func optionsScenariosAreActiveAndJournalled() throws {
        var options = EmulatorOptions.testing()
        options.scenarios = [try Scenario(json: #"{"name": "h", "rules": [{"match": {"op": "health"}, "when": {"times": 1}, "then": {"status": 503}}]}"#, source: "t")]
        options.journalCapacity = 10
        let emulator = try Emulator.start(options)
        defer { emulator.stop() }
        #expect(call(emulator, "GET", "/health").status == 503)
        #expect(call(emulator, "GET", "/health").status == 200)
        let listed = json(call(emulator, "GET", "/emulator/v1/scenarios", service: true))
        #expect(listed["scenarios"]?[0]?["rules"]?[0]?["fired"] == 1)
        #expect(json(call(emulator, "GET", "/emulator/v1/journal/count?op=health&status=503", service: true))["count"] == 1)
        #expect(emulator.journal.capacity == 10)
    }

    func run(_ arguments: [String], environment: [String: String] = [:]) -> (status: Int32, output: String, error: String) {
        let captured = CapturedConsole()
        let status = CLI.run(arguments, environment: environment, console: captured.console)
        return (status, captured.standardOutput, captured.standardError)
    }

    @Test func scenarioValidateSubcommand() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: repository + "/scenarios")
            .filter { $0.hasSuffix(".json") }.map { repository + "/scenarios/" + $0 }
        let valid = run(["scenario", "validate"] + files)
        #expect(valid.status == 0)
        #expect(valid.output.split(separator: "\n").count == files.count)

        let bad = NSTemporaryDirectory() + "bad-scenario-\(UUID().uuidString).json"
        try writeFile(bad, #"{"name": "bad", "rules": [{"match": {}, "when": {"nth": 0}, "then": {"reset": true}}]}"#)
        defer { removeFile(bad) }
        let invalid = run(["scenario", "validate", files[0], bad])
        #expect(invalid.status == CLI.exitFailure)
        #expect(invalid.error.contains("\(bad): rule 0: rules[0].when.nth: expected a whole number of at least 1"))
        #expect(run(["scenario", "validate", "/no/such/file.json"]).status == CLI.exitFailure)
        #expect(run(["scenario"]).status == CLI.exitUsage)
        #expect(run(["scenario", "check", files[0]]).status == CLI.exitUsage)
        #expect(run(["scenario", "validate"]).status == CLI.exitUsage)
    }

    @Test func serveFlagsForScenariosAndRateLimits() throws {
        let first = repository + "/scenarios/refresh-503.json"
        let second = repository + "/scenarios/flaky-network.json"
        let flags = try CLI.parseOptions(["--scenario", first, "--scenario=" + second, "--rate-limits", "tiny", "--journal-size", "5"],
                                         values: CLI.serveValueOptions, switches: CLI.serveSwitches)
        let context = CLI.Context(environment: [:], console: .silent)
        let options = try CLI.options(from: flags, context: context)
        #expect(options.scenarios.map(\.name) == ["refresh-503", "flaky-network"])
        #expect(options.configuration.rateLimits.preset == .tiny)
        #expect(options.journalCapacity == 5)

        #expect(run(["serve", "--rate-limits", "fast"]).status == CLI.exitUsage)
        let bad = NSTemporaryDirectory() + "bad-serve-\(UUID().uuidString).json"
        try writeFile(bad, #"{"name": "x", "rules": [{"match": {"op": "nope"}, "then": {"reset": true}}]}"#)
        defer { removeFile(bad) }
        let refused = run(["serve", "--db", ":memory:", "--port", "0", "--scenario", bad])
        #expect(refused.status == CLI.exitConfiguration)
        #expect(refused.error.contains("rules[0].match.op: unknown operation \"nope\""))
    }

    @Test func rateLimitEnvironmentAndConfigFile() throws {
        var options = EmulatorOptions()
        let ignored = try EnvironmentConfiguration.apply([
            "GOTRUE_RATE_LIMIT_HEADER": "X-Forwarded-For", "GOTRUE_SECURITY_SB_FORWARDED_FOR_ENABLED": "true",
            "GOTRUE_RATE_LIMIT_OTP": "5", "GOTRUE_RATE_LIMIT_TOKEN_REFRESH": "1.5", "GOTRUE_MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY": "7",
            "AUTH_EMULATOR_RATE_LIMITS": "real", "AUTH_EMULATOR_RATE_LIMIT_PEER": "1", "AUTH_EMULATOR_JOURNAL_SIZE": "50",
        ], to: &options)
        #expect(ignored.isEmpty)
        let limits = options.configuration.rateLimits
        #expect(limits.header == "X-Forwarded-For" && limits.sbForwardedForEnabled && limits.keyOnPeerAddress)
        #expect(limits.otp == 5 && limits.tokenRefresh == 1.5 && limits.mfaChallengeAndVerify == 7)
        #expect(limits.preset == .real)
        #expect(options.journalCapacity == 50)
        #expect(throws: EmulatorError.self) { try EnvironmentConfiguration.apply(["GOTRUE_RATE_LIMIT_OTP": "lots"], to: &options) }
        #expect(throws: EmulatorError.self) { try EnvironmentConfiguration.apply(["AUTH_EMULATOR_RATE_LIMITS": "fast"], to: &options) }

        // The Supabase CLI's [auth.rate_limit] keys, mapped as its start command maps them.
        var fromFile = EmulatorOptions()
        _ = try SupabaseConfigFile.apply("""
            [auth.rate_limit]
            email_sent = 2
            sms_sent = 30
            anonymous_users = 11
            token_refresh = 12
            sign_in_sign_ups = 13
            token_verifications = 14
            web3 = 15
            """, environment: [:], to: &fromFile)
        let mapped = fromFile.configuration.rateLimits
        #expect([mapped.anonymousUsers, mapped.tokenRefresh, mapped.otp, mapped.verify, mapped.web3] == [11, 12, 13, 14, 15])
    }
}

@Suite struct HookScenarioTests {
    func call(_ emulator: Emulator, _ method: String, _ target: String, body: String = "", service: Bool = false) -> HTTPResponse {
        ScenarioWiringTests().call(emulator, method, target, body: body, service: service)
    }

    func json(_ response: HTTPResponse) -> JSON { (try? JSON(parsing: response.body)) ?? .null }

    @Test func aRuleMakesTheRequestsHookTimeOut() throws {
        var options = EmulatorOptions.testing()
        options.configuration.hooks.customAccessToken.enabled = true
        // Never contacted: the scripted fault answers first.
        options.configuration.hooks.customAccessToken.uri = "http://127.0.0.1:9/claims"
        options.scenarios = [try Scenario(json: Array(#"{"name": "h", "rules": [{"match": {"op": "token.password"}, "when": {"times": 1}, "then": {"hook": "timeout"}}]}"#.utf8), source: "t")]
        let emulator = try Emulator(options: options)
        defer { emulator.stop() }
        let seeded = call(emulator, "POST", "/emulator/v1/seed",
                          body: #"{"users": [{"email": "x@example.com", "password": "password1", "email_confirm": true}]}"#, service: true)
        #expect(seeded.status == 200)
        let signIn = call(emulator, "POST", "/token?grant_type=password", body: #"{"email": "x@example.com", "password": "password1"}"#)
        #expect(signIn.status == 422)
        #expect(json(signIn)["error_code"] == "hook_timeout")
        #expect(emulator.project.hookLog.entries.last?.error == "Failed to reach hook within maximum time of 5.000000 seconds")
        let entries = emulator.journal.entries(JournalFilter())
        #expect(entries.compactMap(\.fault).contains("hook_timeout"))
        // The hook call itself is journaled after the request that made it.
        let hook = try #require(entries.first { $0.operation == "hook.customize-access-token" })
        #expect(hook.path == "http://127.0.0.1:9/claims")
        #expect(hook.errorCode == "hook_timeout")
        #expect(hook.fault == "hook_failed")
    }

    @Test func clientsCannotScriptHookFaults() throws {
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        let middleware = ScenarioMiddleware(engine: emulator.scenarios, journal: emulator.journal, project: emulator.project)
        let request = HTTPRequest(method: "GET", target: "/health", headers: ["Host": "127.0.0.1", HookFaults.header: "error"], body: [])
        let context = RequestContext(request: request, requestID: RequestID(prefix: [UInt8](repeating: 1, count: 8), serial: 1), apiVersion: .initial, path: "/health",
                                     viaGateway: false, configuration: emulator.project.configuration)
        let seen = Mutex<String?>("unset")
        _ = middleware.respond(to: context) { inner in
            seen.withLock { $0 = inner.request.headers[HookFaults.header] }
            return HTTPResponse(status: 200, headers: [:], body: [])
        }
        #expect(seen.withLock { $0 } == nil)
    }
}
