@testable import AuthEmulator
@testable import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Testing
@testable import auth_emulator

// The email/SMS settings of reference §6.2, §10 and §15.3, read as GoTrue's envconfig reads them.
@Suite struct MailConfigurationTests {
    @Test func environmentVariables() throws {
        var options = EmulatorOptions()
        let unused = try EnvironmentConfiguration.apply([
            "GOTRUE_MAILER_URLPATHS_CONFIRMATION": "/auth/v1/verify",
            "GOTRUE_MAILER_URLPATHS_RECOVERY": "/r",
            "GOTRUE_RATE_LIMIT_EMAIL_SENT": "10/1m",
            "GOTRUE_RATE_LIMIT_SMS_SENT": "5",
            "AUTH_EMULATOR_MAILER_TEST_OTP": "Alice@Example.com:123456,bob@example.com:654321",
            "GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION": "1m",
        ], to: &options)
        #expect(unused.isEmpty, "\(unused)")
        let config = options.configuration
        #expect(config.mailer.urlPaths.confirmation == "/auth/v1/verify")
        #expect(config.mailer.urlPaths.recovery == "/r")
        // Unset: the CLI's link path, so links go through the gateway prefix as `supabase start`'s do.
        #expect(config.mailer.urlPaths.invite == "/auth/v1/verify")
        #expect(config.mailer.rateLimitEmailSent == SendRate(events: 10, seconds: 60, kind: .burst))
        #expect(config.sms.rateLimitSMSSent == SendRate(events: 5))
        #expect(config.mailer.testOTP == ["alice@example.com": "123456", "bob@example.com": "654321"])
        // GoTrue raises a flow-state lifetime below five minutes to five minutes.
        #expect(config.external.flowStateExpirySeconds == 300)
    }

    @Test func notificationsAndSubjects() throws {
        var options = EmulatorOptions()
        let unused = try EnvironmentConfiguration.apply([
            "GOTRUE_MAILER_NOTIFICATIONS_PASSWORD_CHANGED_ENABLED": "true",
            "GOTRUE_MAILER_NOTIFICATIONS_MFA_FACTOR_ENROLLED_ENABLED": "false",
            "GOTRUE_MAILER_SUBJECTS_PASSWORD_CHANGED_NOTIFICATION": "Changed!",
            "GOTRUE_MAILER_SUBJECTS_MAGIC_LINK": "Sign in to {{ .SiteURL }}",
        ], to: &options)
        #expect(unused.isEmpty, "\(unused)")
        #expect(options.configuration.mailer.notifications == [.passwordChanged])
        #expect(options.configuration.mailer.subjects == ["password_changed_notification": "Changed!",
                                                          "magic_link": "Sign in to {{ .SiteURL }}"])
        #expect(throws: EmulatorError.self) {
            var bad = EmulatorOptions()
            try EnvironmentConfiguration.apply(["GOTRUE_MAILER_NOTIFICATIONS_EMAIL_CHANGED_ENABLED": "yes please"], to: &bad)
        }

        // As `supabase start` passes them: the subject of a notice only when it is enabled.
        var file = EmulatorOptions()
        try SupabaseConfigFile.apply("""
            [auth.email.template.invite]
            subject = "Join us"
            [auth.email.notification.password_changed]
            enabled = true
            subject = "Password changed"
            [auth.email.notification.email_changed]
            enabled = false
            subject = "Not passed"
            """, environment: [:], to: &file)
        #expect(file.configuration.mailer.notifications == [.passwordChanged])
        #expect(file.configuration.mailer.subjects == ["invite": "Join us", "password_changed_notification": "Password changed"])
        // A name the CLI passes on but GoTrue has no notice for changes nothing, as there.
        var other = EmulatorOptions()
        try SupabaseConfigFile.apply("[auth.email.notification.password_reset]\nenabled = true\n", environment: [:], to: &other)
        #expect(other.configuration.mailer.notifications.isEmpty)
    }

    @Test func smsProviderSettingsFromEveryPlace() throws {
        var options = EmulatorOptions()
        let unused = try EnvironmentConfiguration.apply([
            "GOTRUE_SMS_PROVIDER": "twilio", "GOTRUE_SMS_TWILIO_ACCOUNT_SID": "AC1", "GOTRUE_SMS_TWILIO_AUTH_TOKEN": "t",
        ], to: &options)
        #expect(unused.isEmpty, "\(unused)")
        #expect(options.configuration.sms.providerProblem == "missing Twilio message service SID or Twilio phone number")

        var file = EmulatorOptions()
        try SupabaseConfigFile.apply("""
            [auth.sms.vonage]
            enabled = true
            from = "Acme"
            api_key = "k"
            api_secret = "s"
            """, environment: [:], to: &file)
        #expect(file.configuration.sms.provider == "vonage")
        #expect(file.configuration.sms.providerProblem == nil)

        var capture = EmulatorOptions()
        try EnvironmentConfiguration.apply(["GOTRUE_SMS_PROVIDER": "twilio", "AUTH_EMULATOR_SMS": "capture"], to: &capture)
        #expect(capture.configuration.sms.providerProblem == nil)
        #expect(throws: EmulatorError.self) {
            var bad = EmulatorOptions()
            try EnvironmentConfiguration.apply(["AUTH_EMULATOR_SMS": "send"], to: &bad)
        }
    }

    @Test func testOTPValidUntil() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply(["GOTRUE_SMS_TEST_OTP_VALID_UNTIL": " 2030-01-01T00:00:00Z "], to: &options)
        #expect(options.configuration.sms.testOTPValidUntil == Timestamp(rfc3339: "2030-01-01T00:00:00Z"))
        var blank = EmulatorOptions()
        try EnvironmentConfiguration.apply(["GOTRUE_SMS_TEST_OTP_VALID_UNTIL": ""], to: &blank)
        #expect(blank.configuration.sms.testOTPValidUntil == nil)
        var bad = EmulatorOptions()
        #expect(throws: EmulatorError.self) {
            try EnvironmentConfiguration.apply(["GOTRUE_SMS_TEST_OTP_VALID_UNTIL": "tomorrow"], to: &bad)
        }
    }

    @Test func emptyURLPathIsGoTruesOwnDefault() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply(["GOTRUE_MAILER_URLPATHS_INVITE": ""], to: &options)
        #expect(options.configuration.mailer.urlPaths.invite == "/verify")
    }

    @Test func defaults() {
        let config = EmulatorOptions().configuration
        // `supabase start` passes 360000 mails an hour (no custom SMTP); GoTrue's own default is 30.
        #expect(config.mailer.rateLimitEmailSent == SendRate(events: 360_000))
        #expect(EmulatorOptions(defaults: .gotrue).configuration.mailer.rateLimitEmailSent == SendRate(events: 30))
        #expect(config.sms.rateLimitSMSSent == SendRate(events: 30))
        #expect(config.mailer.urlPaths == MailerURLPaths())
        #expect(config.mailer.testOTP.isEmpty)
    }

    @Test func gotrueSpellingOfTheEmailTestCodes() throws {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply(["GOTRUE_MAILER_TEST_OTP": "a@example.com:111111"], to: &options)
        #expect(options.configuration.mailer.testOTP == ["a@example.com": "111111"])
    }

    @Test(arguments: ["ten", "10/", "/1m", "10/1x", "-1/1m"])
    func malformedRateNamesTheVariable(_ value: String) {
        var options = EmulatorOptions()
        #expect(throws: EmulatorError.self) {
            try EnvironmentConfiguration.apply(["GOTRUE_RATE_LIMIT_EMAIL_SENT": value], to: &options)
        }
    }

    @Test func configFileSMSSent() throws {
        var options = EmulatorOptions()
        _ = try SupabaseConfigFile.apply("""
            [auth.rate_limit]
            email_sent = 2
            sms_sent = 7
            """, environment: [:], to: &options)
        #expect(options.configuration.sms.rateLimitSMSSent == SendRate(events: 7))
        // email_sent reaches GoTrue only with SMTP configured, which the emulator never is.
        #expect(options.configuration.mailer.rateLimitEmailSent == SendRate(events: 360_000))
    }
}

// `GOTRUE_MFA_*` and `[auth.mfa]` as GoTrue's envconfig and the CLI read them.
@Suite struct MFAConfigurationTests {
    @Test func environmentVariables() throws {
        var options = EmulatorOptions()
        #expect(options.configuration.mfa.totp == MFASettings.Toggles(enroll: false, verify: false))
        let unused = try EnvironmentConfiguration.apply([
            "GOTRUE_MFA_TOTP_ENROLL_ENABLED": "true", "GOTRUE_MFA_TOTP_VERIFY_ENABLED": "true",
            "GOTRUE_MFA_PHONE_VERIFY_ENABLED": "true", "GOTRUE_MFA_MAX_ENROLLED_FACTORS": "3",
            "GOTRUE_MFA_MAX_VERIFIED_FACTORS": "2", "GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION": "60",
            "GOTRUE_MFA_FACTOR_EXPIRY_DURATION": "10m", "GOTRUE_MFA_PHONE_OTP_LENGTH": "12",
            "GOTRUE_MFA_PHONE_MAX_FREQUENCY": "0s", "GOTRUE_MFA_PHONE_TEMPLATE": "Code: {{ .Code }}",
        ], to: &options)
        #expect(unused.isEmpty, "\(unused)")
        let mfa = options.configuration.mfa
        #expect(mfa.totp == MFASettings.Toggles(enroll: true, verify: true))
        #expect(mfa.phone == MFASettings.Toggles(enroll: false, verify: true))
        #expect(mfa.maxEnrolledFactors == 3 && mfa.maxVerifiedFactors == 2)
        // GoTrue's ApplyDefaults: at least 300 s, 6 digits outside 6-10, a zero frequency is a minute.
        #expect(mfa.challengeExpirySeconds == 300 && mfa.factorExpirySeconds == 600)
        #expect(mfa.phoneOTPLength == 6 && mfa.phoneMaxFrequencySeconds == 60)
        #expect(mfa.phoneTemplate == "Code: {{ .Code }}")
        #expect(throws: EmulatorError.self) {
            var bad = EmulatorOptions()
            try EnvironmentConfiguration.apply(["GOTRUE_MFA_FACTOR_EXPIRY_DURATION": "300"], to: &bad)
        }
    }

    @Test func configFile() throws {
        var options = EmulatorOptions()
        try SupabaseConfigFile.apply("""
            [auth.mfa]
            max_enrolled_factors = 4
            [auth.mfa.totp]
            enroll_enabled = true
            verify_enabled = true
            [auth.mfa.phone]
            enroll_enabled = false
            verify_enabled = true
            otp_length = 8
            template = "Your code is {{ .Code }}"
            max_frequency = "10s"
            """, environment: [:], to: &options)
        let mfa = options.configuration.mfa
        #expect(mfa.totp == MFASettings.Toggles(enroll: true, verify: true))
        #expect(mfa.phone == MFASettings.Toggles(enroll: false, verify: true))
        #expect(mfa.maxEnrolledFactors == 4 && mfa.phoneOTPLength == 8 && mfa.phoneMaxFrequencySeconds == 10)

        // The CLI's own check: enrolling needs verifying.
        var bad = EmulatorOptions()
        #expect {
            try SupabaseConfigFile.apply("[auth.mfa.totp]\nenroll_enabled = true\nverify_enabled = false\n",
                                         environment: [:], to: &bad)
        } throws: { error in
            "\(error)".contains("config.toml:2: auth.mfa.totp.enroll_enabled: requires verify_enabled")
        }
    }
}

// `GOTRUE_HOOK_*` and `[auth.hook.*]` as `supabase start` passes them.
@Suite struct HookConfigurationTests {
    static let secret = "v1,whsec_" + String(repeating: "A", count: 40)

    @Test func environmentAndConfigFile() throws {
        var options = EmulatorOptions()
        let unused = try EnvironmentConfiguration.apply([
            "GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED": "true",
            "GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI": "http://host.docker.internal:54321/functions/v1/claims",
            "GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_SECRETS": Self.secret + "|" + Self.secret,
            "GOTRUE_HOOK_AFTER_USER_CREATED_ENABLED": "false",
        ], to: &options)
        #expect(unused.isEmpty, "\(unused)")
        let hook = options.configuration.hooks.customAccessToken
        #expect(hook.enabled && hook.callable && hook.secrets.count == 2)

        var file = EmulatorOptions()
        try SupabaseConfigFile.apply("""
            [auth.hook.before_user_created]
            enabled = true
            uri = "http://127.0.0.1:8000/before"
            secrets = "\(Self.secret)"
            """, environment: [:], to: &file)
        #expect(file.configuration.hooks.beforeUserCreated.uri == "http://127.0.0.1:8000/before")
        #expect(file.configuration.hooks.beforeUserCreated.secrets == [Self.secret])
    }

    func run(_ arguments: [String], environment: [String: String]) -> (status: Int32, error: String) {
        let captured = CapturedConsole()
        let status = CLI.run(arguments, environment: environment, console: captured.console)
        return (status, captured.standardError)
    }

    @Test func invalidHooksStopTheStartAndPostgresHooksWarn() {
        let bad = run(["serve", "--port", "0", "--db", ":memory:"],
                                 environment: ["GOTRUE_HOOK_SEND_EMAIL_ENABLED": "true",
                                               "GOTRUE_HOOK_SEND_EMAIL_URI": "http://example.com/send"])
        #expect(bad.status == 78)
        #expect(bad.error.contains("GOTRUE_HOOK_SEND_EMAIL_URI: only localhost, 127.0.0.1, and ::1 are supported with http"))
        let strict = run(["serve", "--port", "0", "--db", ":memory:", "--strict-hooks"],
                                    environment: ["GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED": "true",
                                                  "GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI": "pg-functions://postgres/public/claims"])
        #expect(strict.status == 78)
        #expect(strict.error.contains("hook custom_access_token: pg-functions://postgres/public/claims is a Postgres function"))
    }
}

@Suite struct StrictIDTokenDefaultTests {
    func options(_ arguments: [String], environment: [String: String] = [:]) throws -> (EmulatorOptions, String) {
        let captured = CapturedConsole()
        let flags = try CLI.parseOptions(arguments, values: CLI.serveValueOptions, switches: CLI.serveSwitches)
        let context = CLI.Context(environment: environment, console: captured.console)
        return (try CLI.options(from: flags, context: context), captured.standardError)
    }

    @Test func offLoopbackTheDefaultIsStrict() throws {
        let (loopback, quiet) = try options(["--host", "127.0.0.1"])
        #expect(!loopback.configuration.identityProviders.strictIDTokens)
        #expect(quiet.isEmpty)
        let (lan, warning) = try options(["--host", "0.0.0.0"])
        #expect(lan.configuration.identityProviders.strictIDTokens)
        #expect(warning.contains("not loopback"))
        // An explicit choice wins, by flag or environment.
        #expect(try !options(["--host", "0.0.0.0", "--no-strict-id-tokens"]).0.configuration.identityProviders.strictIDTokens)
        #expect(try !options(["--host", "192.168.1.10"], environment: ["AUTH_EMULATOR_STRICT_ID_TOKENS": "false"])
            .0.configuration.identityProviders.strictIDTokens)
    }
}
