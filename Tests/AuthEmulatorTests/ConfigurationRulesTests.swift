import AuthEmulator
import AuthHTTP
import AuthJSON
import GoTrue
import Testing

/// `Configuration` owns its normalisations and cross-setting checks; every source of settings
/// (environment, file, runtime PATCH, the embedding API) reaches the same answer.
@Suite struct ConfigurationRulesTests {
    @Test func normalisations() {
        #expect(Configuration.jwtExpiry(0) == 3600)
        #expect(Configuration.jwtExpiry(60) == 60)
        #expect(Configuration.passwordMinLength(2) == 6)
        #expect(Configuration.passwordMinLength(12) == 12)
        #expect(Configuration.otpLength(5) == 6)
        #expect(Configuration.otpLength(8) == 8)
        #expect(Configuration.otpLength(11) == 6)
        #expect(Configuration.testPhone("+1 555 0100") == "15550100")
    }

    @Test func environmentAndRuntimePatchNormaliseAlike() throws {
        var options = EmulatorOptions.testing()
        _ = try EnvironmentConfiguration.apply(["GOTRUE_JWT_EXP": "0", "GOTRUE_PASSWORD_MIN_LENGTH": "3"], to: &options)
        #expect(options.configuration.jwt.expirySeconds == 3600)
        #expect(options.configuration.password.minLength == 6)

        let emulator = try Emulator(options: .testing())
        let key = emulator.project.configuration.apiKeys.serviceRole
        let body = #"{"jwt_expiry": 0, "password_min_length": 3}"#
        let response = emulator.api.respond(to: HTTPRequest(
            method: "PATCH", target: "/emulator/v1/config",
            headers: ["Host": "127.0.0.1", "Authorization": "Bearer \(key)"], body: Array(body.utf8)))
        #expect(response.status == 200)
        #expect(emulator.project.configuration.jwt.expirySeconds == 3600)
        #expect(emulator.project.configuration.password.minLength == 6)
    }

    @Test func crossSettingRuleHoldsForEmbeddersAndAtRuntime() throws {
        var options = EmulatorOptions.testing()
        options.configuration.mailer.autoconfirm = true
        options.configuration.mailer.allowUnverifiedEmailSignIns = true
        #expect(options.configuration.problem() != nil)
        #expect(throws: EmulatorError.self) { _ = try Emulator(options: options) }

        options.configuration.mailer.autoconfirm = false
        let emulator = try Emulator(options: options)
        let key = emulator.project.configuration.apiKeys.serviceRole
        let body = #"{"mailer_autoconfirm": true}"#
        let response = emulator.api.respond(to: HTTPRequest(
            method: "PATCH", target: "/emulator/v1/config",
            headers: ["Host": "127.0.0.1", "Authorization": "Bearer \(key)"], body: Array(body.utf8)))
        #expect(response.status == 400)
        // All or nothing: the refused change left the live configuration as it was.
        #expect(emulator.project.configuration.mailer.autoconfirm == false)
    }
}
