@testable import AuthEmulator
import AuthJSON
@testable import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Testing
@testable import auth_emulator

// GOTRUE_PASSKEY_* / GOTRUE_WEBAUTHN_* (the real server's conf.PasskeyConfiguration and
// conf.WebAuthnConfiguration) and the CLI's [auth.passkey], [auth.webauthn] and
// [auth.mfa.web_authn] sections (apps/cli-go/internal/start/start.go appendGotruePasskeyEnv).
@Suite struct PasskeyConfigurationTests {
    @Test func offByDefault() {
        let config = EmulatorOptions().configuration
        #expect(!config.passkey.enabled)
        #expect(config.passkey.maxPasskeysPerUser == 10)
        #expect(config.webAuthn.challengeExpirySeconds == 300)
        #expect(!config.mfa.webAuthn.enroll && !config.mfa.webAuthn.verify)
    }

    @Test func environmentVariables() throws {
        var options = EmulatorOptions()
        let ignored = try EnvironmentConfiguration.apply([
            "GOTRUE_PASSKEY_ENABLED": "true",
            "GOTRUE_PASSKEY_MAX_PASSKEYS_PER_USER": "3",
            "GOTRUE_WEBAUTHN_RP_ID": "example.com",
            "GOTRUE_WEBAUTHN_RP_DISPLAY_NAME": "Example",
            "GOTRUE_WEBAUTHN_RP_ORIGINS": "https://example.com,https://app.example.com",
            "GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION": "2m",
            "GOTRUE_MFA_WEB_AUTHN_ENROLL_ENABLED": "true",
        ], to: &options)
        #expect(ignored.isEmpty)
        let config = options.configuration
        #expect(config.passkey == { var p = PasskeySettings(); p.enabled = true; p.maxPasskeysPerUser = 3; return p }())
        #expect(config.webAuthn.relyingParty(siteURL: config.siteURL)
                == RelyingParty(id: "example.com", name: "Example", origins: ["https://example.com", "https://app.example.com"]))
        #expect(config.webAuthn.challengeExpirySeconds == 120)
        #expect(config.mfa.webAuthn.enroll)
        #expect(throws: EmulatorError.self) { try EnvironmentConfiguration.apply(["GOTRUE_PASSKEY_ENABLED": "maybe"], to: &options) }
    }

    @Test func configFileSections() throws {
        let path = "/tmp/auth-emulator-passkeys-\(Int.random(in: 0..<1_000_000)).toml"
        try writeFile(path, """
            [auth]
            site_url = "http://127.0.0.1:3000"
            [auth.passkey]
            enabled = true
            [auth.webauthn]
            rp_display_name = "Supabase"
            rp_id = "localhost"
            rp_origins = ["http://127.0.0.1:3000"]
            [auth.mfa.web_authn]
            enroll_enabled = true
            verify_enabled = true
            """)
        defer { removeFile(path) }
        let config = try EmulatorOptions.resolve(configFile: path, environment: [:]).configuration
        #expect(config.passkey.enabled)
        #expect(config.webAuthn.rpID == "localhost")
        #expect(config.webAuthn.rpOrigins == ["http://127.0.0.1:3000"])
        #expect(config.webAuthn.rpDisplayName == "Supabase")
        #expect(config.mfa.webAuthn.enroll && config.mfa.webAuthn.verify)
    }

    @Test func runtimePatch() throws {
        var config = Configuration()
        try ConfigRoutes.apply(["passkey": ["enabled": true, "max_passkeys_per_user": 2],
                                "webauthn": ["rp_id": "example.com", "rp_origins": ["https://example.com"]]], to: &config)
        #expect(config.passkey.enabled && config.passkey.maxPasskeysPerUser == 2)
        #expect(config.webAuthn.rpID == "example.com")
        #expect(ConfigRoutes.describe(config)["webauthn"]?["relying_party"]?["origins"] == ["https://example.com"])
        #expect(throws: AuthError.self) { try ConfigRoutes.apply(["passkey": ["enable": true]], to: &config) }
    }
}
