@testable import AuthEmulator
import AuthHTTP
import AuthJSON
import AuthJWT
@testable import EmulatorConfiguration
import EmulatorTools
import Foundation
import GoTrue
import Testing
@testable import auth_emulator

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

    func patch(_ emulator: Emulator, _ body: String) -> HTTPResponse {
        let key = emulator.project.configuration.apiKeys.serviceRole
        return emulator.api.respond(to: HTTPRequest(
            method: "PATCH", target: "/emulator/v1/config",
            headers: ["Host": "127.0.0.1", "Authorization": "Bearer \(key)"], body: Array(body.utf8)))
    }

    func message(_ response: HTTPResponse) -> String {
        (try? JSON(parsing: response.body))?["msg"]?.stringValue ?? ""
    }

    /// Values that would break every later request are refused with a 400 naming the setting,
    /// and nothing changes.
    @Test func runtimePatchRefusesValuesThatBreakLaterRequests() throws {
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        let before = emulator.project.configuration
        let refused: [(String, String)] = [
            (#"{"site_url": "\u0000"}"#, "site_url (set at run time)"),
            (#"{"site_url": "not a url"}"#, "site_url (set at run time)"),
            (#"{"site_url": "http://"}"#, "site_url (set at run time)"),
            (#"{"webauthn": {"rp_origins": ["not a url"]}}"#, "GOTRUE_WEBAUTHN_RP_ORIGINS (webauthn.rp_origins)"),
            (#"{"webauthn": {"rp_id": ""}}"#, "webauthn.rp_id"),
            (#"{"webauthn": {"rp_id": "https://example.com"}}"#, "GOTRUE_WEBAUTHN_RP_ID (webauthn.rp_id)"),
            (#"{"webauthn": {"rp_id": "localhost:3000"}}"#, "GOTRUE_WEBAUTHN_RP_ID (webauthn.rp_id)"),
            (#"{"webauthn": {"rp_id": "intranet"}}"#, "GOTRUE_WEBAUTHN_RP_ID (webauthn.rp_id)"),
            (#"{"jwt_keys": [{"kty": "oct", "k": "", "key_ops": ["sign", "verify"]}]}"#, "jwt_keys[0]"),
            // A valid change in the same PATCH is not applied either.
            (#"{"disable_signup": true, "site_url": "not a url"}"#, "site_url (set at run time)"),
        ]
        for (body, setting) in refused {
            let response = patch(emulator, body)
            #expect(response.status == 400, "\(body)")
            #expect(message(response).hasPrefix(setting), "\(body): \(message(response))")
        }
        let after = emulator.project.configuration
        #expect(after.siteURL == before.siteURL && after.webAuthn == before.webAuthn && after.disableSignup == before.disableSignup)
        #expect(after.jwt.keys.map(\.key.kid) == before.jwt.keys.map(\.key.kid))

        // Sound values still apply; null returns the RP id to the one derived from site_url.
        #expect(patch(emulator, #"{"site_url": "io.supabase.app://login-callback", "webauthn": {"rp_id": "example.com", "rp_origins": ["https://example.com", "android:apk-key-hash:abc"]}}"#).status == 200)
        #expect(patch(emulator, #"{"site_url": "http://127.0.0.1:3000", "webauthn": {"rp_id": null, "rp_origins": []}}"#).status == 200)
        let config = emulator.project.configuration
        #expect(config.webAuthn.relyingParty(siteURL: config.siteURL).id == "localhost")
        // GoTrue sets no minimum length on a signing key (jwx checks only that "k" is present;
        // the CLI's 16-character floor is for config.toml's jwt_secret): a 3-byte key signs.
        #expect(patch(emulator, #"{"jwt_keys": [{"kty": "oct", "k": "YWJj", "kid": "short", "key_ops": ["sign", "verify"]}]}"#).status == 200)
    }

    /// `jwt_keys: []` after `--signing-key` would leave the printed anon and service_role keys,
    /// signed by the dropped key, verifying nowhere.
    @Test func runtimePatchKeepsTheHandedOutKeysVerifying() throws {
        var options = EmulatorOptions.testing()
        options.signingKeyAlgorithm = .rs256
        let emulator = try Emulator(options: options)
        defer { emulator.stop() }
        let keys = emulator.project.configuration.jwt.keys
        let emptied = patch(emulator, #"{"jwt_keys": []}"#)
        #expect(emptied.status == 400)
        #expect(message(emptied).hasPrefix("GOTRUE_JWT_KEYS (jwt_keys): the anon key would no longer verify"))
        #expect(emulator.project.configuration.jwt.keys.map(\.key.kid) == keys.map(\.key.kid))
        let admin = emulator.api.respond(to: HTTPRequest(method: "GET", target: "/admin/users", headers: [
            "Host": "127.0.0.1", "Authorization": "Bearer " + emulator.project.configuration.apiKeys.serviceRole]))
        #expect(admin.status == 200)
    }

    /// The same rules hold at start-up, whichever source sets the field.
    @Test func startUpSourcesShareTheRules() throws {
        #expect(throws: EmulatorError.self) { try EmulatorOptions.resolve(environment: ["GOTRUE_SITE_URL": "not a url"]) }
        #expect(throws: EmulatorError.self) { try EmulatorOptions.resolve(environment: ["GOTRUE_WEBAUTHN_RP_ORIGINS": "not a url"]) }
        #expect(throws: EmulatorError.self) { try EmulatorOptions.resolve(environment: ["GOTRUE_WEBAUTHN_RP_ID": "https://example.com"]) }
        #expect(throws: Never.self) { try EmulatorOptions.resolve(environment: ["GOTRUE_SITE_URL": "https://example.com/app"]) }

        let path = NSTemporaryDirectory() + "auth-emulator-rules-\(UUID().uuidString).toml"
        try Data("[auth]\nsite_url = \"not a url\"\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try EmulatorOptions.resolve(configFile: path, environment: [:])
            Issue.record("config.toml's site_url was accepted")
        } catch {
            // Named by its source: the file, not the variable.
            #expect(error.description.contains("site_url (config.toml)"))
        }
        // An env() the environment does not set is named as such.
        try Data("[auth]\nsite_url = \"env(NO_SUCH_SITE)\"\n".utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try EmulatorOptions.resolve(configFile: path, environment: [:])
            Issue.record("an unset env() was accepted as site_url")
        } catch {
            #expect(error.description.contains("site_url (config.toml): must be an absolute URL"))
            #expect(error.description.contains("env(NO_SUCH_SITE) names an environment variable that is not set"))
            #expect(!error.description.contains("GOTRUE_SITE_URL"))
        }

        let flags = try CLI.parseOptions(["--site-url", "not a url"], values: CLI.serveValueOptions, switches: CLI.serveSwitches)
        do {
            _ = try CLI.options(from: flags, context: CLI.Context(environment: [:], console: .silent))
            Issue.record("--site-url was accepted")
        } catch {
            #expect("\(error)".contains("--site-url: must be"))
        }
    }
}
