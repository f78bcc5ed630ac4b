import AuthCrypto
@testable import AuthEmulator
import AuthJWT
@testable import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Testing
@testable import auth_emulator

/// The checked-in `supabase init` config file (Tests/Fixtures/supabase/config.toml).
let fixtureConfigPath: String = {
    var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    components.removeLast(2)  // AuthEmulatorTests/ConfigurationTests.swift
    return components.joined(separator: "/") + "/Fixtures/supabase/config.toml"
}()

/// The keys `supabase start` prints for the default local JWT secret.
let wellKnownAnonKey = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9"
    + ".CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0"
let wellKnownServiceRoleKey = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0"
    + ".EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU"

@Suite struct ConfigurationTests {
    // MARK: Defaults

    @Test func defaultsMatchSupabaseStart() {
        let options = EmulatorOptions()
        let config = options.configuration
        #expect(options.host == "127.0.0.1")
        #expect(options.port == 9999)
        #expect(config.jwt.secret == "super-secret-jwt-token-with-at-least-32-characters-long")
        #expect(config.jwt.expirySeconds == 3600)
        #expect(config.jwt.audience == "authenticated")
        #expect(config.siteURL == "http://127.0.0.1:3000")
        #expect(config.disableSignup == false)
        #expect(config.external.anonymousUsersEnabled == false)
        #expect(config.external.phoneEnabled == false)
        #expect(config.mailer.autoconfirm == true)
        #expect(config.sms.autoconfirm == true)
        #expect(config.password.minLength == 6)
        #expect(config.security.refreshTokenRotationEnabled == true)
        #expect(config.security.refreshTokenReuseInterval == 10)
        // GoTrue's default: 12-character tokens, no upgrade.
        #expect(config.security.refreshTokenAlgorithmVersion == 0)
        #expect(config.security.refreshTokenUpgradePercentage == 0)
        // The well-known local keys `supabase start` prints.
        #expect(config.apiKeys.anon == wellKnownAnonKey)
        #expect(config.apiKeys.serviceRole == wellKnownServiceRoleKey)
    }

    // MARK: Environment

    @Test func environmentVariables() throws {
        var options = EmulatorOptions()
        let ignored = try EnvironmentConfiguration.apply([
            "GOTRUE_JWT_SECRET": "env-secret-env-secret-env-secret-env-secret",
            "GOTRUE_JWT_EXP": "600",
            "GOTRUE_JWT_ADMIN_ROLES": "service_role, custom_admin ,",
            "GOTRUE_SITE_URL": "http://localhost:3000",
            "API_EXTERNAL_URL": "http://127.0.0.1:54321/auth/v1",
            "PORT": "8081",
            "GOTRUE_API_HOST": "0.0.0.0",
            "AUTH_EMULATOR_DB": "/tmp/x.db",
            "UNRELATED": "ignored",
        ], to: &options)
        #expect(ignored.isEmpty)
        #expect(options.configuration.jwt.secret == "env-secret-env-secret-env-secret-env-secret")
        #expect(options.configuration.jwt.expirySeconds == 600)
        #expect(options.configuration.jwt.adminRoles == ["service_role", "custom_admin"])
        #expect(options.configuration.siteURL == "http://localhost:3000")
        #expect(options.configuration.externalURL == "http://127.0.0.1:54321/auth/v1")
        #expect(options.port == 8081)
        #expect(options.host == "0.0.0.0")
        #expect(options.databasePath == "/tmp/x.db")
        // The gateway keys follow the secret.
        #expect(options.configuration.apiKeys == APIKeys.standard(secret: "env-secret-env-secret-env-secret-env-secret"))
    }

    @Test func prefixedPortWinsOverAlias() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply(["PORT": "1", "GOTRUE_API_PORT": "2"], to: &options)
        #expect(options.port == 2)
    }

    @Test func coreAndJWTFamily() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply([
            "GOTRUE_URI_ALLOW_LIST": "http://localhost:3000/**,myapp://callback",
            "GOTRUE_DISABLE_SIGNUP": "T",
            "GOTRUE_CORS_ALLOWED_HEADERS": "x-custom",
            "GOTRUE_JWT_AUD": "my-aud",
            "GOTRUE_JWT_ADMIN_GROUP_NAME": "superuser",
            "GOTRUE_JWT_DEFAULT_GROUP_NAME": "member",
            "GOTRUE_JWT_ISSUER": "http://127.0.0.1:54321/auth/v1",
            "GOTRUE_JWT_KEY_ID": "kid-1",
        ], to: &options)
        let config = options.configuration
        #expect(config.uriAllowList == ["http://localhost:3000/**", "myapp://callback"])
        #expect(config.disableSignup)
        #expect(config.corsAllowedHeaders == ["x-custom"])
        #expect(config.jwt.audience == "my-aud")
        #expect(config.jwt.adminGroupName == "superuser")
        #expect(config.jwt.defaultGroupName == "member")
        #expect(config.jwt.issuer == "http://127.0.0.1:54321/auth/v1")
        #expect(config.jwt.keyID == "kid-1")
    }

    @Test func zeroMeansTheRealServersDefault() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply([
            "GOTRUE_JWT_EXP": "0", "GOTRUE_MAILER_OTP_EXP": "0", "GOTRUE_SMS_OTP_EXP": "0",
            "GOTRUE_SMTP_MAX_FREQUENCY": "0", "GOTRUE_SMS_MAX_FREQUENCY": "0s",
            "GOTRUE_MAILER_OTP_LENGTH": "12", "GOTRUE_SMS_OTP_LENGTH": "4", "GOTRUE_PASSWORD_MIN_LENGTH": "3",
        ], to: &options)
        let config = options.configuration
        #expect(config.jwt.expirySeconds == 3600)
        #expect(config.mailer.otpExpirySeconds == 86_400)
        #expect(config.sms.otpExpirySeconds == 60)
        #expect(config.mailer.maxFrequencySeconds == 60)
        #expect(config.sms.maxFrequencySeconds == 60)
        #expect(config.mailer.otpLength == 6)
        #expect(config.sms.otpLength == 6)
        #expect(config.password.minLength == 6)
    }

    @Test func externalProvidersFamily() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply([
            "GOTRUE_EXTERNAL_EMAIL_ENABLED": "false",
            "GOTRUE_EXTERNAL_EMAIL_MAGIC_LINK_ENABLED": "0",
            "GOTRUE_EXTERNAL_PHONE_ENABLED": "TRUE",
            "GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED": "True",
            "GOTRUE_EXTERNAL_IOS_BUNDLE_ID": "com.example.app",
            "GOTRUE_EXTERNAL_GOOGLE_ENABLED": "true",
            "GOTRUE_EXTERNAL_GOOGLE_CLIENT_ID": "web-id,ios-id",
            "GOTRUE_EXTERNAL_GOOGLE_SECRET": "shh",
            "GOTRUE_EXTERNAL_GOOGLE_REDIRECT_URI": "http://127.0.0.1:54321/auth/v1/callback",
            "GOTRUE_EXTERNAL_GOOGLE_SKIP_NONCE_CHECK": "t",
            "GOTRUE_EXTERNAL_LINKEDIN_OIDC_ENABLED": "1",
            "GOTRUE_EXTERNAL_KEYCLOAK_URL": "http://keycloak.local/realms/x",
            "GOTRUE_EXTERNAL_GITHUB_EMAIL_OPTIONAL": "true",
        ], to: &options)
        let external = options.configuration.external
        #expect(!external.emailEnabled)
        #expect(!external.magicLinkEnabled)
        #expect(external.phoneEnabled)
        #expect(external.anonymousUsersEnabled)
        #expect(external.iosBundleID == "com.example.app")
        let google = try #require(external.providers["google"])
        #expect(google.enabled)
        #expect(google.clientIDs == ["web-id", "ios-id"])
        #expect(google.secret == "shh")
        #expect(google.redirectURI == "http://127.0.0.1:54321/auth/v1/callback")
        #expect(google.skipNonceCheck)
        #expect(external.isEnabled("linkedin_oidc"))
        #expect(external.providers["keycloak"]?.url == "http://keycloak.local/realms/x")
        #expect(external.providers["github"]?.emailOptional == true)
        #expect(external.providers["apple"] == nil)  // untouched providers are not added
    }

    @Test func mailerAndSMSFamily() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply([
            "GOTRUE_MAILER_AUTOCONFIRM": "false",
            "GOTRUE_MAILER_SECURE_EMAIL_CHANGE_ENABLED": "false",
            "GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS": "true",
            "GOTRUE_MAILER_OTP_EXP": "900",
            "GOTRUE_MAILER_OTP_LENGTH": "8",
            "GOTRUE_SMTP_MAX_FREQUENCY": "1m30s",
            "GOTRUE_SMS_AUTOCONFIRM": "f",
            "GOTRUE_SMS_PROVIDER": "twilio",
            "GOTRUE_SMS_OTP_EXP": "6000",
            "GOTRUE_SMS_OTP_LENGTH": "10",
            "GOTRUE_SMS_MAX_FREQUENCY": "500ms",
            "GOTRUE_SMS_TEMPLATE": "Code: {{ .Code }}",
            "GOTRUE_SMS_TEST_OTP": "+1 415 212 7777:123456,4155550000:000000",
        ], to: &options)
        let config = options.configuration
        #expect(!config.mailer.autoconfirm)
        #expect(!config.mailer.secureEmailChangeEnabled)
        #expect(config.mailer.allowUnverifiedEmailSignIns)
        #expect(config.mailer.otpExpirySeconds == 900)
        #expect(config.mailer.otpLength == 8)
        #expect(config.mailer.maxFrequencySeconds == 90)
        #expect(!config.sms.autoconfirm)
        #expect(config.sms.provider == "twilio")
        #expect(config.sms.otpExpirySeconds == 6000)
        #expect(config.sms.otpLength == 10)
        #expect(config.sms.maxFrequencySeconds == 0.5)
        #expect(config.sms.template == "Code: {{ .Code }}")
        // GoTrue strips '+' and spaces from test OTP phones.
        #expect(config.sms.testOTP == ["14152127777": "123456", "4155550000": "000000"])
    }

    @Test func passwordSecurityAndSessionsFamily() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply([
            "GOTRUE_PASSWORD_MIN_LENGTH": "10",
            "GOTRUE_PASSWORD_REQUIRED_CHARACTERS": "abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789",
            "GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED": "false",
            "GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL": "30",
            "GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION": "2",
            "GOTRUE_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE": "25",
            "GOTRUE_SECURITY_REFRESH_TOKEN_ALLOW_REUSE": "true",
            "GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION": "true",
            "GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD": "true",
            "GOTRUE_SECURITY_MANUAL_LINKING_ENABLED": "true",
            "GOTRUE_SESSIONS_TIMEBOX": "24h",
            "GOTRUE_SESSIONS_INACTIVITY_TIMEOUT": "1h30m",
            "GOTRUE_SESSIONS_SINGLE_PER_USER": "true",
            "GOTRUE_SESSIONS_TAGS": "mobile,web",
            "AUTH_EMULATOR_PASSWORD_ITERATIONS": "1000",
        ], to: &options)
        let config = options.configuration
        #expect(config.password.minLength == 10)
        #expect(config.password.requiredCharacters == ["abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"])
        #expect(!config.security.refreshTokenRotationEnabled)
        #expect(config.security.refreshTokenReuseInterval == 30)
        #expect(config.security.refreshTokenAlgorithmVersion == 2)
        #expect(config.security.refreshTokenUpgradePercentage == 25)
        #expect(config.security.refreshTokenAllowReuse)
        #expect(config.security.updatePasswordRequireReauthentication)
        #expect(config.security.updatePasswordRequireCurrentPassword)
        #expect(config.security.manualLinkingEnabled)
        #expect(config.sessions.timeboxSeconds == 86_400)
        #expect(config.sessions.inactivityTimeoutSeconds == 5400)
        #expect(config.sessions.singlePerUser)
        #expect(config.sessions.tags == ["mobile", "web"])
        #expect(config.passwordHashIterations == 1000)
    }

    @Test func explicitKeysSurviveASecretChange() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply([
            "GOTRUE_JWT_SECRET": "another-secret-of-at-least-32-characters!!",
            "AUTH_EMULATOR_ANON_KEY": "my-anon",
            "AUTH_EMULATOR_PUBLISHABLE_KEY": "sb_publishable_x",
            "AUTH_EMULATOR_SECRET_KEY": "sb_secret_y",
        ], to: &options)
        let keys = options.configuration.apiKeys
        #expect(keys.anon == "my-anon")
        #expect(keys.serviceRole == APIKeys.standard(secret: "another-secret-of-at-least-32-characters!!").serviceRole)
        #expect(keys.publishable == "sb_publishable_x")
        #expect(keys.secret == "sb_secret_y")

        // A later secret change (e.g. --jwt-secret) keeps the explicit anon key.
        options.configuration.setJWTSecret("third-secret-of-at-least-32-characters!!!")
        #expect(options.configuration.apiKeys.anon == "my-anon")
        #expect(options.configuration.apiKeys.serviceRole == APIKeys.standard(secret: "third-secret-of-at-least-32-characters!!!").serviceRole)
    }

    @Test func unknownGoTrueVariablesAreReportedNotFatal() throws {
        var options = EmulatorOptions()
        let ignored = try EnvironmentConfiguration.apply([
            "GOTRUE_DB_DRIVER": "postgres",
            "GOTRUE_SMTP_HOST": "inbucket",
            "GOTRUE_SAML_ENABLED": "false",
            "GOTRUE_SITE_URL": "http://x",
            "AUTH_EMULATOR_TYPO": "1",
            "HOME": "/root",
            // Set by scripts/test for the Python suite, which starts servers with its environment.
            "AUTH_EMULATOR_BIN": ".build/debug/auth-emulator",
            "AUTH_EMULATOR_PYTHON": ".venv/bin/python",
            "AUTH_EMULATOR_VENV": ".venv",
        ], to: &options)
        #expect(ignored == ["AUTH_EMULATOR_TYPO", "GOTRUE_DB_DRIVER", "GOTRUE_SAML_ENABLED", "GOTRUE_SMTP_HOST"])
        #expect(options.configuration.siteURL == "http://x")
    }

    @Test(arguments: [
        ["PORT": "70000"], ["PORT": "abc"], ["GOTRUE_JWT_EXP": "-5"], ["GOTRUE_JWT_EXP": "1h"],
        ["GOTRUE_DISABLE_SIGNUP": "yes"], ["GOTRUE_MAILER_AUTOCONFIRM": "on"],
        ["GOTRUE_SMTP_MAX_FREQUENCY": "60"], ["GOTRUE_SMS_MAX_FREQUENCY": "1d"],
        ["GOTRUE_SESSIONS_TIMEBOX": "0"], ["GOTRUE_SESSIONS_INACTIVITY_TIMEOUT": "-1h"],
        ["GOTRUE_SMS_TEST_OTP": "4152127777=123456"], ["GOTRUE_MAILER_OTP_EXP": "1h"],
        ["GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL": "10s"],
        // GoTrue: "refresh token algorithm version must be 0, 1 or 2", "... percentage must be between 0 and 100".
        ["GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION": "3"], ["GOTRUE_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE": "101"],
        ["GOTRUE_EXTERNAL_GITHUB_ENABLED": "maybe"], ["GOTRUE_EXTERNAL_APPLE_SKIP_NONCE_CHECK": "2"],
        ["AUTH_EMULATOR_PASSWORD_ITERATIONS": "999"], ["AUTH_EMULATOR_PASSWORD_ITERATIONS": "20000000"],
        ["GOTRUE_JWT_KEYS": "not json"],
    ])
    func malformedValuesNameTheVariable(environment: [String: String]) {
        var options = EmulatorOptions()
        do {
            try EnvironmentConfiguration.apply(environment, to: &options)
            Issue.record("accepted \(environment)")
        } catch {
            #expect(error.description.hasPrefix(environment.keys.first! + ": "), "\(error)")
        }
    }

    /// GoTrue refuses to start with both; the check runs once every source has been applied.
    @Test func autoconfirmAndUnverifiedSignInsConflict() throws {
        #expect(throws: EmulatorError.self) {
            try EmulatorOptions.resolve(environment: ["GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS": "true"])
        }
        let options = try EmulatorOptions.resolve(environment: [
            "GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS": "true", "GOTRUE_MAILER_AUTOCONFIRM": "false",
        ])
        #expect(options.configuration.mailer.allowUnverifiedEmailSignIns)
    }

    // MARK: Go value syntax

    /// Examples from Go's time.ParseDuration documentation (pkg.go.dev/time#ParseDuration).
    @Test func goDurations() {
        let cases: [(String, Double)] = [
            ("0", 0), ("10s", 10), ("1m", 60), ("1h30m", 5400), ("500ms", 0.5), ("300ms", 0.3), ("-1.5h", -5400),
            ("2h45m", 9900), ("1.5s", 1.5), (".5s", 0.5), ("1us", 1e-6), ("1\u{00B5}s", 1e-6), ("1\u{03BC}s", 1e-6),
            ("100ns", 1e-7), ("+5s", 5), ("1h1m1s", 3661),
        ]
        for (text, seconds) in cases {
            let parsed = GoValue.parseDuration(text)
            #expect(parsed.map { abs($0 - seconds) < 1e-9 } == true, "\(text) -> \(String(describing: parsed))")
        }
        for text in ["", "1", "s", "1d", "1.2.3s", "-", "1h 30m", "5 s", "."] {
            #expect(GoValue.parseDuration(text) == nil, "\(text)")
        }
    }

    /// The vectors of GoTrue's TestPasswordRequiredCharactersDecode
    /// (supabase/auth internal/conf/configuration_test.go).
    @Test func requiredCharactersDecodeLikeGoTrue() {
        #expect(GoValue.requiredCharacters("a:b:c") == ["a", "b", "c"])
        #expect(GoValue.requiredCharacters("a\\:b:c") == ["a:b", "c"])
        #expect(GoValue.requiredCharacters("a:b\\:c") == ["a", "b:c"])
        #expect(GoValue.requiredCharacters("\\:a:b:c") == [":a", "b", "c"])
        #expect(GoValue.requiredCharacters("a:b:c\\:") == ["a", "b", "c:"])
        #expect(GoValue.requiredCharacters("::\\::") == [":"])
        #expect(GoValue.requiredCharacters("") == [])
        #expect(GoValue.requiredCharacters(" ") == [" "])
    }

    // MARK: GOTRUE_JWT_KEYS

    @Test func jwtKeysSymmetric() throws {
        // RFC 7515 Appendix A.1's HMAC key, as a JWK.
        let k = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply([
            "GOTRUE_JWT_KEYS": #"[{"kty":"oct","kid":"new","k":"\#(k)","key_ops":["sign","verify"],"alg":"HS256"},{"kty":"oct","kid":"old","k":"c2VjcmV0","key_ops":["verify"]}]"#,
        ], to: &options)
        let keys = options.configuration.jwt.keys
        #expect(keys.count == 2)
        let secret = try Base64URL.decode(k)
        #expect(keys[0].key.kid == "new" && keys[0].key.secret == secret && keys[0].canSign)
        #expect(keys[0].key.secret.count == 64)
        #expect(keys[1].key.kid == "old" && keys[1].key.secret == Array("secret".utf8) && !keys[1].canSign)
        #expect(keys.allSatisfy { $0.key.algorithm == .hs256 })
    }

    @Test(arguments: [
        (#"[{"kty":"oct","k":"c2VjcmV0","key_ops":["verify"]}]"#, "no signing key"),
        (#"[{"kty":"oct","kid":"a","k":"c2VjcmV0","key_ops":["sign"]},{"kty":"oct","kid":"b","k":"c2VjcmV0","key_ops":["sign"]}]"#, "multiple signing keys"),
        (#"[{"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB","key_ops":["sign"]}]"#, "not a valid RSA key"),
        (#"[{"kty":"EC","crv":"P-256","x":"x","y":"y","d":"d","key_ops":["sign"]}]"#, "\"x\" is missing or not valid base64url"),
        (#"[{"kty":"EC","crv":"P-384","x":"AA","y":"AA","key_ops":["sign"]}]"#, "only P-256"),
        (#"[{"kty":"OKP","crv":"X25519","x":"AA","key_ops":["sign"]}]"#, "only Ed25519"),
        (#"[{"kty":"oct","k":"c2Vj+cmV0","key_ops":["sign"]}]"#, "base64url"),
        (#"[{"kty":"oct","key_ops":["sign"]}]"#, "\"k\" is missing"),
        (#"[{"kty":"oct","k":"c2VjcmV0","alg":"HS512","key_ops":["sign"]}]"#, "HS512"),
        (#"{"kty":"oct"}"#, "array"),
        (#"[{"k":"c2VjcmV0"}]"#, "kty"),
    ])
    func jwtKeysErrors(json: String, message: String) {
        var options = EmulatorOptions()
        do {
            try EnvironmentConfiguration.apply(["GOTRUE_JWT_KEYS": json], to: &options)
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.description.hasPrefix("GOTRUE_JWT_KEYS"), "\(error)")
            #expect(error.description.contains(message), "\(error)")
        }
    }

    // MARK: supabase/config.toml

    @Test func supabaseInitConfigLoadsUnchanged() throws {
        var options = EmulatorOptions()
        let warnings = try SupabaseConfigFile.apply(path: fixtureConfigPath, environment: [:], to: &options)
        #expect(warnings.isEmpty, "\(warnings)")
        let config = options.configuration
        let defaults = Configuration()
        #expect(config.siteURL == defaults.siteURL)
        #expect(config.uriAllowList == ["https://127.0.0.1:3000"])
        #expect(config.jwt.secret == defaults.jwt.secret)
        #expect(config.apiKeys == defaults.apiKeys)
        #expect(config.jwt.expirySeconds == 3600)
        #expect(config.disableSignup == false)
        #expect(config.external.emailEnabled)
        #expect(!config.external.phoneEnabled)
        #expect(!config.external.anonymousUsersEnabled)
        #expect(config.mailer.autoconfirm)
        #expect(config.mailer.secureEmailChangeEnabled)
        #expect(config.mailer.maxFrequencySeconds == 1)
        #expect(config.mailer.otpLength == 6)
        #expect(config.mailer.otpExpirySeconds == 3600)
        #expect(config.sms.autoconfirm)
        #expect(config.sms.maxFrequencySeconds == 5)
        #expect(config.sms.template == "Your code is {{ .Code }}")
        #expect(config.sms.provider == "")
        #expect(config.password.minLength == 6)
        #expect(config.password.requiredCharacters.isEmpty)
        #expect(config.security.refreshTokenRotationEnabled)
        #expect(config.security.refreshTokenReuseInterval == 10)
        #expect(config.external.providers["apple"]?.enabled == false)
        #expect(config.sessions.timeboxSeconds == nil)
    }

    static let customConfig = #"""
        project_id = "custom"

        [api]
        port = 54321
        something_new = "ignored: not an [auth] key"

        [auth]
        site_url = "http://localhost:5173"
        external_url = "http://127.0.0.1:54321/auth/v1"
        additional_redirect_urls = ["http://localhost:5173/**", "myapp://login-callback"]
        jwt_expiry = 900
        enable_refresh_token_rotation = false
        refresh_token_reuse_interval = 0
        enable_signup = false
        enable_anonymous_sign_ins = true
        enable_manual_linking = true
        minimum_password_length = 12
        password_requirements = "lower_upper_letters_digits_symbols"
        jwt_secret = "env(MY_JWT_SECRET)"
        anon_key = "explicit-anon"

        [auth.email]
        enable_signup = false
        double_confirm_changes = false
        enable_confirmations = true
        secure_password_change = true
        max_frequency = "1m30s"
        otp_length = 8
        otp_expiry = 600

        [auth.sms]
        enable_signup = true
        enable_confirmations = true
        template = "Your code: {{ .Code }}"
        max_frequency = "10s"

        [auth.sms.test_otp]
        4152127777 = "123456"
        "+1 555 0100" = 654321

        [auth.sms.vonage]
        enabled = "true"
        from = "Emulator"
        api_key = ""
        api_secret = "env(VONAGE_SECRET)"

        [auth.sessions]
        timebox = "24h"
        inactivity_timeout = "8h"

        [auth.external.github]
        enabled = true
        client_id = "gh-client"
        secret = "env(GITHUB_SECRET)"
        redirect_uri = "http://localhost:5173/callback"

        [auth.external.google]
        enabled = true
        client_id = "web.apps.googleusercontent.com,ios.apps.googleusercontent.com"
        skip_nonce_check = true

        [auth.external.keycloak]
        enabled = false
        url = "http://keycloak.local/realms/demo"
        email_optional = true

        [auth.rate_limit]
        email_sent = 100

        [auth.hook.custom_access_token]
        enabled = true
        uri = "pg-functions://postgres/public/hook"
        """#

    @Test func everyMappedSettingOfTheAuthSection() throws {
        var options = EmulatorOptions()
        let warnings = try SupabaseConfigFile.apply(
            Self.customConfig, file: "supabase/config.toml",
            environment: ["MY_JWT_SECRET": "file-secret-of-at-least-32-characters-long", "GITHUB_SECRET": "gh-secret"],
            to: &options
        )
        let config = options.configuration
        #expect(config.siteURL == "http://localhost:5173")
        #expect(config.externalURL == "http://127.0.0.1:54321/auth/v1")
        // The CLI defaults jwt_issuer to the auth external URL.
        #expect(config.jwt.issuer == "http://127.0.0.1:54321/auth/v1")
        #expect(config.uriAllowList == ["http://localhost:5173/**", "myapp://login-callback"])
        #expect(config.jwt.expirySeconds == 900)
        #expect(!config.security.refreshTokenRotationEnabled)
        #expect(config.security.refreshTokenReuseInterval == 0)
        #expect(config.disableSignup)
        #expect(config.external.anonymousUsersEnabled)
        #expect(config.security.manualLinkingEnabled)
        #expect(config.password.minLength == 12)
        // The CLI's symbol set, after GoTrue's `\:` unescaping: one backslash, then a colon.
        #expect(config.password.requiredCharacters == [
            "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", #"!@#$%^&*()_+-=[]{};'\:"|<>?,./`~"#,
        ])
        // env(...) substitution, and the explicit anon key survives; service_role follows the secret.
        #expect(config.jwt.secret == "file-secret-of-at-least-32-characters-long")
        #expect(config.apiKeys.anon == "explicit-anon")
        #expect(config.apiKeys.serviceRole == APIKeys.standard(secret: "file-secret-of-at-least-32-characters-long").serviceRole)
        #expect(!config.external.emailEnabled)
        #expect(!config.mailer.secureEmailChangeEnabled)
        #expect(!config.mailer.autoconfirm)
        #expect(config.security.updatePasswordRequireReauthentication)
        #expect(config.mailer.maxFrequencySeconds == 90)
        #expect(config.mailer.otpLength == 8)
        #expect(config.mailer.otpExpirySeconds == 600)
        #expect(config.external.phoneEnabled)
        #expect(!config.sms.autoconfirm)
        #expect(config.sms.template == "Your code: {{ .Code }}")
        #expect(config.sms.maxFrequencySeconds == 10)
        #expect(config.sms.testOTP == ["4152127777": "123456", "15550100": "654321"])
        #expect(config.sms.provider == "vonage")
        #expect(config.sessions.timeboxSeconds == 86_400)
        #expect(config.sessions.inactivityTimeoutSeconds == 28_800)
        let github = try #require(config.external.providers["github"])
        #expect(github.enabled && github.clientIDs == ["gh-client"] && github.secret == "gh-secret")
        #expect(github.redirectURI == "http://localhost:5173/callback")
        let google = try #require(config.external.providers["google"])
        #expect(google.clientIDs == ["web.apps.googleusercontent.com", "ios.apps.googleusercontent.com"])
        #expect(google.skipNonceCheck && google.secret.isEmpty)
        #expect(config.external.providers["keycloak"] == {
            var keycloak = OAuthProviderSettings()
            keycloak.url = "http://keycloak.local/realms/demo"
            keycloak.emailOptional = true
            return keycloak
        }())
        // The enabled SMS provider's credentials are checked before each send, so the unset
        // VONAGE_SECRET is worth a warning; the empty api_key fails sends as on the real server.
        #expect(warnings.count == 1 && warnings[0].contains("auth.sms.vonage.api_secret: environment variable VONAGE_SECRET is not set"),
                "\(warnings)")
        #expect(config.sms.providerProblem == "missing Vonage API key")
    }

    @Test func unresolvedEnvReferenceInAnEnabledProviderWarns() throws {
        var options = EmulatorOptions()
        let warnings = try SupabaseConfigFile.apply("""
            [auth.external.github]
            enabled = true
            client_id = "id"
            secret = "env(GITHUB_SECRET)"
            """, environment: [:], to: &options)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("config.toml:4: auth.external.github.secret: environment variable GITHUB_SECRET is not set") == true)
        #expect(options.configuration.external.providers["github"]?.secret == "env(GITHUB_SECRET)")
    }

    @Test(arguments: [
        ("[auth]\nsite_url = \"x\"\nsite_ulr = \"y\"\n", "config.toml:3: auth.site_ulr: unknown setting"),
        ("[auth]\nsite_ulr = \"y\"\n", "[auth] section) (did you mean 'site_url'?)"),
        ("[auth.email]\nenable_confirmation = true\n", "(did you mean 'enable_confirmations'?)"),
        ("[auth.email]\nenable_confirmation = true\n", "config.toml:2: auth.email.enable_confirmation: unknown setting"),
        ("[auth.rate_limit]\nemails_sent = 1\n", "config.toml:2: auth.rate_limit.emails_sent: unknown setting"),
        ("[auth.external.githib]\nenabled = false\n", "config.toml:1: auth.external.githib: unknown name 'githib'"),
        ("[auth]\njwt_expiry = \"soon\"\n", "config.toml:2: auth.jwt_expiry: expected a whole number"),
        ("[auth]\njwt_expiry = -1\n", "config.toml:2: auth.jwt_expiry: -1 is out of range"),
        ("[auth]\nenable_signup = \"yes\"\n", "config.toml:2: auth.enable_signup: expected true or false"),
        ("[auth]\nenable_signup = \"env(SIGNUP)\"\n", "auth.enable_signup: a boolean is needed, but the environment variable SIGNUP"),
        ("[auth.email]\nmax_frequency = 5\n", "config.toml:2: auth.email.max_frequency: expected a duration string"),
        ("[auth.sessions]\ntimebox = \"1 day\"\n", "config.toml:2: auth.sessions.timebox: \"1 day\" is not a duration"),
        ("[auth]\npassword_requirements = \"strong\"\n", "config.toml:2: auth.password_requirements: must be one of"),
        ("[auth]\nadditional_redirect_urls = [1]\n", "config.toml:2: auth.additional_redirect_urls: element 1 is an integer"),
        ("[auth]\njwt_secret = \"short\"\n", "config.toml:2: auth.jwt_secret: must be at least 16 characters"),
        ("[auth]\nemail = 1\n", "config.toml:2: auth.email: expected a table, found an integer"),
        ("[auth]\nsite_url = { a = 1 }\n", "config.toml:2: auth.site_url: expected a value, found a table"),
        ("auth = \"on\"\n", "config.toml:1: auth: expected a table"),
        ("[auth.external.github]\nenabled = true\nsecret = \"s\"\n", "config.toml:1: auth.external.github.client_id: required"),
        ("[auth.external.github]\nenabled = true\nclient_id = \"c\"\n", "config.toml:1: auth.external.github.secret: required"),
        ("[auth]\nsite_url = \"x\"\nsite_url = \"y\"\n", "config.toml:3: duplicate key 'site_url'"),
        ("[auth\n", "config.toml:1: expected ']'"),
        ("[auth.email]\nenable_confirmations = true\n[auth]\n[auth.email]\n", "config.toml:4: table [auth.email] is defined twice"),
    ])
    func malformedConfigNamesTheSettingAndLine(text: String, message: String) {
        var options = EmulatorOptions()
        do {
            try SupabaseConfigFile.apply(text, file: "config.toml", environment: [:], to: &options)
            Issue.record("accepted \(text.debugDescription)")
        } catch {
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test func appleAndGoogleNeedNoSecret() throws {
        var options = EmulatorOptions()
        try SupabaseConfigFile.apply("[auth.external.apple]\nenabled = true\nclient_id = \"com.example.app\"\n", environment: [:], to: &options)
        #expect(options.configuration.external.isEnabled("apple"))
    }

    @Test func otherSectionsAreNotInspected() throws {
        var options = EmulatorOptions()
        try SupabaseConfigFile.apply("""
            [db]
            anything = { goes = [1, "two", 3.0] }
            [[remotes.staging.functions]]
            x = 1
            [studio]
            port = "not even a number"
            """, environment: [:], to: &options)
        #expect(options.configuration.siteURL == Configuration().siteURL)
    }

    @Test(arguments: ["rsa.json", "ec.json", "ed25519.json"])
    func signingKeysPathSignsTokensAndTheAPIKeys(_ fixture: String) throws {
        // Relative to the config file's folder, as the CLI resolves it against supabase/.
        let folder = testRepositoryRoot + "/Tests/Fixtures/signing_keys"
        var options = EmulatorOptions()
        let warnings = try SupabaseConfigFile.apply(
            "[auth]\nsigning_keys_path = \"./\(fixture)\"\n", file: folder + "/config.toml", environment: [:], to: &options)
        #expect(warnings.isEmpty)
        let key = try #require(try signingKeys(fixture).first)
        let config = options.configuration
        #expect(config.jwt.keys.count == 1)
        #expect(config.jwt.signingKey.algorithm == key.key.algorithm)
        #expect(config.jwt.validMethods?.prefix(3) == ["HS256", "RS256", "ES256"])
        // The anon and service_role keys are signed by the key, with its kid, as the CLI signs them.
        for (token, role) in [(config.apiKeys.anon, "anon"), (config.apiKeys.serviceRole, "service_role")] {
            let verified = try JWT.verify(token, keys: config.jwt.verificationKeys, now: 1_900_000_000)
            #expect(verified.header["kid"]?.stringValue == key.key.kid)
            #expect(verified.header["alg"]?.stringValue == key.key.algorithm.rawValue)
            #expect(verified.claims["role"]?.stringValue == role)
            #expect(verified.claims["iss"] == "supabase-demo")
        }
    }

    @Test func signingKeysPathErrorsNameTheFile() {
        var options = EmulatorOptions()
        do {
            try SupabaseConfigFile.apply("[auth]\nsigning_keys_path = \"./missing.json\"\n", file: "/tmp/nowhere/config.toml",
                                         environment: [:], to: &options)
            Issue.record("accepted a missing key file")
        } catch {
            #expect(error.description.hasPrefix("/tmp/nowhere/config.toml:2: auth.signing_keys_path: failed to read signing keys"), "\(error)")
        }
    }

    @Test func supabaseStartPassesNullKeys() throws {
        // `supabase start` without signing keys serialises an empty list as null.
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply(["GOTRUE_JWT_KEYS": "null", "GOTRUE_JWT_VALID_METHODS": "HS256,RS256,ES256"], to: &options)
        #expect(options.configuration.jwt.keys.isEmpty)
        #expect(options.configuration.jwt.validMethods == ["HS256", "RS256", "ES256"])
    }

    @Test func realGoTrueTestKeySetupStarts() throws {
        // An RSA signing key plus an oct verify-only key, as GoTrue's own test setups use.
        var options = EmulatorOptions.testing()
        try EnvironmentConfiguration.apply(["GOTRUE_JWT_KEYS": try signingKeysFixture("rsa-and-oct.json")], to: &options)
        #expect(options.configuration.jwt.acceptedMethods == ["RS256", "HS256"])
        let emulator = try Emulator(options: options)
        #expect(emulator.project.configuration.jwt.publicJWKs.count == 1)
    }

    @Test func missingFileIsAClearError() {
        var options = EmulatorOptions()
        do {
            try SupabaseConfigFile.apply(path: "/nonexistent/supabase/config.toml", environment: [:], to: &options)
            Issue.record("accepted a missing file")
        } catch {
            #expect(error.description.hasPrefix("/nonexistent/supabase/config.toml: cannot read the file"))
        }
    }

    // MARK: Precedence

    /// file < environment < flags, one setting at each level.
    @Test func precedenceFileThenEnvironmentThenFlags() throws {
        let path = "/tmp/auth-emulator-precedence-\(Int.random(in: 0..<1_000_000)).toml"
        try writeFile(path, """
            [auth]
            site_url = "http://file"
            jwt_expiry = 100
            enable_anonymous_sign_ins = true
            [auth.email]
            enable_confirmations = true
            """)
        defer { removeFile(path) }
        let environment = ["GOTRUE_SITE_URL": "http://env", "GOTRUE_JWT_EXP": "200"]

        let fileOnly = try EmulatorOptions.resolve(configFile: path, environment: [:])
        #expect(fileOnly.configuration.siteURL == "http://file")
        #expect(fileOnly.configuration.jwt.expirySeconds == 100)

        let fileAndEnv = try EmulatorOptions.resolve(configFile: path, environment: environment)
        #expect(fileAndEnv.configuration.siteURL == "http://env")
        #expect(fileAndEnv.configuration.jwt.expirySeconds == 200)
        #expect(fileAndEnv.configuration.external.anonymousUsersEnabled)  // only the file set it
        #expect(!fileAndEnv.configuration.mailer.autoconfirm)

        let flags = try CLI.parseOptions(
            ["--config", path, "--site-url", "http://flag", "--no-anonymous", "--autoconfirm"],
            values: CLI.serveValueOptions, switches: CLI.serveSwitches
        )
        let all = try CLI.options(from: flags, context: CLI.Context(environment: environment, console: .silent))
        #expect(all.configuration.siteURL == "http://flag")
        #expect(all.configuration.jwt.expirySeconds == 200)
        #expect(!all.configuration.external.anonymousUsersEnabled)
        #expect(all.configuration.mailer.autoconfirm)
    }

    @Test func secretFromTheFileThenKeysFromTheEnvironment() throws {
        var options = EmulatorOptions()
        try SupabaseConfigFile.apply("[auth]\njwt_secret = \"file-secret-of-at-least-32-characters-long\"\n", environment: [:], to: &options)
        #expect(options.configuration.apiKeys == APIKeys.standard(secret: "file-secret-of-at-least-32-characters-long"))
        try EnvironmentConfiguration.apply(["AUTH_EMULATOR_SERVICE_ROLE_KEY": "svc"], to: &options)
        #expect(options.configuration.apiKeys.serviceRole == "svc")
        #expect(options.configuration.apiKeys.anon == APIKeys.standard(secret: "file-secret-of-at-least-32-characters-long").anon)
    }
}
