import AuthCrypto
import AuthJSON
import AuthJWT
import GoTrue

/// Reads the real server's environment variables (reference §15 and §20) into options, with the
/// real names, units and syntax: GoTrue loads them with `envconfig`, so booleans follow Go's
/// `strconv.ParseBool`, durations Go's `time.ParseDuration` (`10s`, `1h30m`, `500ms`), lists are
/// comma-separated and maps are `key:value,key:value`. Values GoTrue takes as plain seconds
/// (`GOTRUE_JWT_EXP`, `GOTRUE_MAILER_OTP_EXP`, `GOTRUE_SMS_OTP_EXP`,
/// `GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL`) are plain seconds here too.
///
/// A malformed value is an error naming the variable. Unknown `GOTRUE_*` names are not an error
/// (GoTrue ignores them, and real env files carry database, SMTP and hook settings the emulator
/// has no use for): `apply` returns them so the caller can mention them once.
public enum EnvironmentConfiguration {
    /// Emulator-only variables.
    public static let databaseVariable = "AUTH_EMULATOR_DB"
    public static let passwordIterationsVariable = "AUTH_EMULATOR_PASSWORD_ITERATIONS"
    public static let anonKeyVariable = "AUTH_EMULATOR_ANON_KEY"
    public static let serviceRoleKeyVariable = "AUTH_EMULATOR_SERVICE_ROLE_KEY"
    public static let publishableKeyVariable = "AUTH_EMULATOR_PUBLISHABLE_KEY"
    public static let secretKeyVariable = "AUTH_EMULATOR_SECRET_KEY"
    /// Fixed email OTPs, `email:code,...` (also read as `GOTRUE_MAILER_TEST_OTP`).
    public static let mailerTestOTPVariable = "AUTH_EMULATOR_MAILER_TEST_OTP"
    public static let rateLimitsVariable = "AUTH_EMULATOR_RATE_LIMITS"
    public static let rateLimitPeerVariable = "AUTH_EMULATOR_RATE_LIMIT_PEER"
    public static let journalSizeVariable = "AUTH_EMULATOR_JOURNAL_SIZE"
    public static let shutdownTimeoutVariable = "AUTH_EMULATOR_SHUTDOWN_TIMEOUT"
    public static let maxConnectionsVariable = "AUTH_EMULATOR_MAX_CONNECTIONS"
    /// `--max-connections`: at least one; a million is far beyond any descriptor limit.
    public static let maxConnectionsRange = 1...1_000_000
    public static let idpAutoApproveVariable = "AUTH_EMULATOR_IDP_AUTO_APPROVE"
    public static let strictIDTokensVariable = "AUTH_EMULATOR_STRICT_ID_TOKENS"
    public static let dashboardVariable = "AUTH_EMULATOR_DASHBOARD"
    /// Benchmark instrument (bench/cost.sh): trace every SQL statement to this file.
    public static let statementTraceVariable = "AUTH_EMULATOR_SQL_TRACE"

    /// Read by the project's test scripts (`scripts/test`, `Tests/python`), never by `serve`; a
    /// server those tests start inherits them, so they are not reported as unknown settings.
    public static let testHarnessVariables: Set<String> = ["AUTH_EMULATOR_BIN", "AUTH_EMULATOR_PYTHON", "AUTH_EMULATOR_VENV"]

    /// The range accepted for PBKDF2 iterations: below 1000 is not a password hash any more
    /// (NIST SP 800-132 §5.2 recommends at least 1000); above 10 million one sign-in takes seconds.
    public static let passwordIterationsRange = 1000...10_000_000

    /// OAuth providers configurable through `GOTRUE_EXTERNAL_<PROVIDER>_*`: the ones `/settings`
    /// lists, plus the ones GoTrue accepts without listing them.
    public static let externalProviders = ExternalSettings.settingsProviders + ["x", "zoom", "vercel_marketplace"]

    /// Applies every variable that maps onto `options`; returns the `GOTRUE_*` and
    /// `AUTH_EMULATOR_*` names present in `environment` that were not used (sorted).
    @discardableResult
    public static func apply(_ environment: [String: String], to options: inout EmulatorOptions) throws(EmulatorError) -> [String] {
        var env = Reader(environment: environment)

        if let host = env.string("GOTRUE_API_HOST") { options.host = host }
        // envconfig reads GOTRUE_API_PORT first and falls back to the unprefixed alias PORT.
        for name in ["GOTRUE_API_PORT", "PORT"] {
            if let port = try env.integer(name, in: 0...65535) {
                options.port = port
                break
            }
        }
        if let db = env.string(databaseVariable) { options.databasePath = db }

        var config = options.configuration
        try applyCore(&env, &config)
        try applyJWT(&env, &config)
        try applyExternal(&env, &config)
        try applyMailer(&env, &config)
        try applySMS(&env, &config)
        try applyMFA(&env, &config)
        try applyPasskeys(&env, &config)
        try applyHooks(&env, &config)
        try applyOAuthServer(&env, &config)
        try applySecurity(&env, &config)
        try applyRateLimits(&env, &config)
        if let size = try env.integer(journalSizeVariable, in: 0...1_000_000) { options.journalCapacity = size }
        if let seconds = try env.integer(shutdownTimeoutVariable, in: 0...3600, unit: "seconds") {
            options.shutdownTimeoutSeconds = Double(seconds)
        }
        if let cap = try env.integer(maxConnectionsVariable, in: maxConnectionsRange) { options.maxConnections = cap }
        if let mode = env.raw(dashboardVariable) {
            switch mode {
            case "on": options.dashboard = true
            case "off": options.dashboard = false
            default:
                guard let on = try env.boolean(dashboardVariable) else { break }
                options.dashboard = on
            }
        }

        if let path = env.string(statementTraceVariable) { options.statementTracePath = path }
        if let iterations = try env.integer(passwordIterationsVariable, in: passwordIterationsRange) {
            config.passwordHashIterations = iterations
        }
        if let key = env.string(anonKeyVariable) { config.apiKeys.anon = key }
        if let key = env.string(serviceRoleKeyVariable) { config.apiKeys.serviceRole = key }
        if let key = env.string(publishableKeyVariable) { config.apiKeys.publishable = key }
        if let key = env.string(secretKeyVariable) { config.apiKeys.secret = key }

        options.configuration = config
        return environment.keys
            .filter { ($0.hasPrefix("GOTRUE_") || $0.hasPrefix("AUTH_EMULATOR_")) && !env.known.contains($0) }
            .filter { !testHarnessVariables.contains($0) }
            .sorted()
    }

    private static func applyCore(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        if let site = env.string("GOTRUE_SITE_URL") { config.siteURL = site }
        for name in ["API_EXTERNAL_URL", "GOTRUE_API_EXTERNAL_URL"] {
            if let external = env.string(name) {
                config.externalURL = external
                break
            }
        }
        if let list = env.list("GOTRUE_URI_ALLOW_LIST") { config.uriAllowList = list }
        if let disable = try env.boolean("GOTRUE_DISABLE_SIGNUP") { config.disableSignup = disable }
        if let headers = env.list("GOTRUE_CORS_ALLOWED_HEADERS") { config.corsAllowedHeaders = headers }
    }

    private static func applyJWT(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        if let secret = env.string("GOTRUE_JWT_SECRET") { config.setJWTSecret(secret) }
        // GoTrue: "if config.JWT.Exp == 0 { config.JWT.Exp = 3600 }".
        if let exp = try env.integer("GOTRUE_JWT_EXP", in: 0...Int(Int32.max), unit: "seconds") { config.jwt.expirySeconds = Configuration.jwtExpiry(exp) }
        if let aud = env.raw("GOTRUE_JWT_AUD") { config.jwt.audience = aud }
        if let roles = env.list("GOTRUE_JWT_ADMIN_ROLES") {
            // GoTrue restores the default when the list is empty.
            config.jwt.adminRoles = roles.isEmpty ? ["service_role", "supabase_admin"] : roles
        }
        if let group = env.raw("GOTRUE_JWT_ADMIN_GROUP_NAME") { config.jwt.adminGroupName = group.isEmpty ? "admin" : group }
        if let group = env.raw("GOTRUE_JWT_DEFAULT_GROUP_NAME") { config.jwt.defaultGroupName = group }
        if let issuer = env.raw("GOTRUE_JWT_ISSUER") { config.jwt.issuer = issuer }
        if let kid = env.raw("GOTRUE_JWT_KEY_ID") { config.jwt.keyID = kid }
        if let keys = env.string("GOTRUE_JWT_KEYS") { config.jwt.keys = try JWTKeys.parse(keys, setting: "GOTRUE_JWT_KEYS") }
        // envconfig reads the split name; `supabase start` also sets the unsplit one.
        for name in ["GOTRUE_JWT_VALIDMETHODS", "GOTRUE_JWT_VALID_METHODS"] {
            if let methods = env.list(name) { config.jwt.validMethods = methods.isEmpty ? nil : methods }
        }
    }

    private static func applyExternal(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        if let on = try env.boolean("GOTRUE_EXTERNAL_EMAIL_ENABLED") { config.external.emailEnabled = on }
        if let on = try env.boolean("GOTRUE_EXTERNAL_EMAIL_MAGIC_LINK_ENABLED") { config.external.magicLinkEnabled = on }
        if let list = env.list("GOTRUE_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES") { config.external.emailAuthorizedAddresses = list }
        if let on = try env.boolean("GOTRUE_EXTERNAL_PHONE_ENABLED") { config.external.phoneEnabled = on }
        if let on = try env.boolean("GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED") { config.external.anonymousUsersEnabled = on }
        if let bundle = env.raw("GOTRUE_EXTERNAL_IOS_BUNDLE_ID") { config.external.iosBundleID = bundle }
        // The real name has no underscore inside REDIRECTURL.
        if let url = env.raw("GOTRUE_EXTERNAL_REDIRECTURL") { config.external.redirectURL = url }
        if let issuers = env.list("GOTRUE_EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS"), !issuers.isEmpty {
            config.external.allowedIDTokenIssuers = issuers
        }
        if let on = try env.boolean(idpAutoApproveVariable) { config.identityProviders.autoApprove = on }
        if let on = try env.boolean("AUTH_EMULATOR_REQUIRE_APIKEY") { config.requireAPIKey = on }
        if let on = try env.boolean(strictIDTokensVariable) { config.identityProviders.strictIDTokens = on }
        // GoTrue raises a flow-state lifetime below five minutes to five minutes.
        if let expiry = try env.duration("GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION") { config.external.flowStateExpirySeconds = max(expiry, 300) }
        for provider in externalProviders {
            let prefix = "GOTRUE_EXTERNAL_\(provider.uppercased())_"
            var settings = config.external.providers[provider] ?? OAuthProviderSettings()
            let before = settings
            if let on = try env.boolean(prefix + "ENABLED") { settings.enabled = on }
            if let ids = env.list(prefix + "CLIENT_ID") { settings.clientIDs = ids }
            if let secret = env.raw(prefix + "SECRET") { settings.secret = secret }
            if let uri = env.raw(prefix + "REDIRECT_URI") { settings.redirectURI = uri }
            if let url = env.raw(prefix + "URL") { settings.url = url }
            if let skip = try env.boolean(prefix + "SKIP_NONCE_CHECK") { settings.skipNonceCheck = skip }
            if let optional = try env.boolean(prefix + "EMAIL_OPTIONAL") { settings.emailOptional = optional }
            if settings != before { config.external.providers[provider] = settings }
        }
    }

    private static func applyMailer(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        if let on = try env.boolean("GOTRUE_MAILER_AUTOCONFIRM") { config.mailer.autoconfirm = on }
        if let on = try env.boolean("GOTRUE_MAILER_SECURE_EMAIL_CHANGE_ENABLED") { config.mailer.secureEmailChangeEnabled = on }
        if let hosts = env.list("GOTRUE_MAILER_EXTERNAL_HOSTS") { config.mailer.externalHosts = hosts }
        if let on = try env.boolean("GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS") { config.mailer.allowUnverifiedEmailSignIns = on }
        // GoTrue: OTP_EXP 0 means the default of one day; an OTP length outside 6...10 means 6.
        if let exp = try env.integer("GOTRUE_MAILER_OTP_EXP", in: 0...Int(UInt32.max), unit: "seconds") { config.mailer.otpExpirySeconds = exp == 0 ? 86_400 : exp }
        if let length = try env.integer("GOTRUE_MAILER_OTP_LENGTH", in: Int(Int32.min)...Int(Int32.max)) { config.mailer.otpLength = Configuration.otpLength(length) }
        // GoTrue: a zero SMTP_MAX_FREQUENCY means one minute.
        if let frequency = try env.duration("GOTRUE_SMTP_MAX_FREQUENCY") { config.mailer.maxFrequencySeconds = frequency == 0 ? 60 : frequency }
        for (name, path) in [("INVITE", \MailerURLPaths.invite), ("CONFIRMATION", \MailerURLPaths.confirmation),
                             ("RECOVERY", \MailerURLPaths.recovery), ("EMAIL_CHANGE", \MailerURLPaths.emailChange)] {
            // Set but empty is GoTrue's own ApplyDefaults value, `/verify`.
            if let value = env.raw("GOTRUE_MAILER_URLPATHS_" + name) { config.mailer.urlPaths[keyPath: path] = value.isEmpty ? "/verify" : value }
        }
        if let rate = try env.sendRate("GOTRUE_RATE_LIMIT_EMAIL_SENT") { config.mailer.rateLimitEmailSent = rate }
        for kind in MailNotification.allCases {
            guard let on = try env.boolean("GOTRUE_MAILER_NOTIFICATIONS_\(kind.rawValue.uppercased())_ENABLED") else { continue }
            if on { config.mailer.notifications.insert(kind) } else { config.mailer.notifications.remove(kind) }
        }
        for id in MailTemplateID.all {
            if let subject = env.string("GOTRUE_MAILER_SUBJECTS_" + id.uppercased()) { config.mailer.subjects[id] = subject }
        }
        // Emulator-only fixed email codes, `email:code,...` like GOTRUE_SMS_TEST_OTP; either name works.
        for name in [mailerTestOTPVariable, "GOTRUE_MAILER_TEST_OTP"] {
            guard let otps = try env.map(name) else { continue }
            config.mailer.testOTP = [:]
            for (email, code) in otps { config.mailer.testOTP[email.lowercased()] = code }
        }
    }

    private static func applySMS(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        if let on = try env.boolean("GOTRUE_SMS_AUTOCONFIRM") { config.sms.autoconfirm = on }
        if let provider = env.raw("GOTRUE_SMS_PROVIDER") { config.sms.provider = provider }
        // The providers' credentials (envconfig's split names), validated before each send.
        for (provider, requirements) in SMSSettings.providerRequirements {
            for (setting, _) in requirements {
                let name = "GOTRUE_SMS_" + provider.uppercased() + "_" + setting.uppercased()
                if let value = env.raw(name) { config.sms.providerSettings[provider + "." + setting] = value }
            }
        }
        if let mode = env.raw("AUTH_EMULATOR_SMS") {
            switch mode {
            case "capture": config.sms.captureOnly = true
            case "provider", "": config.sms.captureOnly = false
            default: throw EmulatorError("AUTH_EMULATOR_SMS: '\(mode)' is not capture or provider")
            }
        }
        if let exp = try env.integer("GOTRUE_SMS_OTP_EXP", in: 0...Int(UInt32.max), unit: "seconds") { config.sms.otpExpirySeconds = exp == 0 ? 60 : exp }
        if let length = try env.integer("GOTRUE_SMS_OTP_LENGTH", in: Int(Int32.min)...Int(Int32.max)) { config.sms.otpLength = Configuration.otpLength(length) }
        if let frequency = try env.duration("GOTRUE_SMS_MAX_FREQUENCY") { config.sms.maxFrequencySeconds = frequency == 0 ? 60 : frequency }
        if let template = env.raw("GOTRUE_SMS_TEMPLATE") { config.sms.template = template }
        if let otps = try env.map("GOTRUE_SMS_TEST_OTP") {
            config.sms.testOTP = [:]
            for (phone, code) in otps { config.sms.testOTP[Configuration.testPhone(phone)] = code }
        }
        if let text = env.raw("GOTRUE_SMS_TEST_OTP_VALID_UNTIL") {
            // GoTrue's conf.Time: blank means no limit, otherwise an RFC 3339 time.
            let trimmed = text.trimmingSpaces
            if trimmed.isEmpty {
                config.sms.testOTPValidUntil = nil
            } else if let until = Timestamp(rfc3339: trimmed) {
                config.sms.testOTPValidUntil = until
            } else {
                throw EmulatorError("GOTRUE_SMS_TEST_OTP_VALID_UNTIL: '\(text)' is not an RFC 3339 time such as 2030-01-01T00:00:00Z")
            }
        }
        if let rate = try env.sendRate("GOTRUE_RATE_LIMIT_SMS_SENT") { config.sms.rateLimitSMSSent = rate }
    }

    private static func applySecurity(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        if let length = try env.integer("GOTRUE_PASSWORD_MIN_LENGTH", in: Int(Int32.min)...Int(Int32.max)) { config.password.minLength = Configuration.passwordMinLength(length) }
        if let required = env.raw("GOTRUE_PASSWORD_REQUIRED_CHARACTERS") { config.password.requiredCharacters = GoValue.requiredCharacters(required) }
        if let on = try env.boolean("GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED") { config.security.refreshTokenRotationEnabled = on }
        if let interval = try env.integer("GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL", in: 0...Int(Int32.max), unit: "seconds") { config.security.refreshTokenReuseInterval = interval }
        if let version = try env.integer("GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION", in: 0...2) { config.security.refreshTokenAlgorithmVersion = version }
        if let share = try env.integer("GOTRUE_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE", in: 0...100) { config.security.refreshTokenUpgradePercentage = share }
        if let on = try env.boolean("GOTRUE_SECURITY_REFRESH_TOKEN_ALLOW_REUSE") { config.security.refreshTokenAllowReuse = on }
        if let on = try env.boolean("GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION") { config.security.updatePasswordRequireReauthentication = on }
        if let on = try env.boolean("GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD") { config.security.updatePasswordRequireCurrentPassword = on }
        if let on = try env.boolean("GOTRUE_SECURITY_MANUAL_LINKING_ENABLED") { config.security.manualLinkingEnabled = on }
        // GoTrue rejects a non-positive timebox or inactivity timeout ("must be positive when set").
        if let timebox = try env.duration("GOTRUE_SESSIONS_TIMEBOX", positive: true) { config.sessions.timeboxSeconds = timebox }
        if let timeout = try env.duration("GOTRUE_SESSIONS_INACTIVITY_TIMEOUT", positive: true) { config.sessions.inactivityTimeoutSeconds = timeout }
        if let single = try env.boolean("GOTRUE_SESSIONS_SINGLE_PER_USER") { config.sessions.singlePerUser = single }
        if let tags = env.list("GOTRUE_SESSIONS_TAGS") { config.sessions.tags = tags }
    }

    /// Reference §6.1: the per-client limits are Go `float64` events per window; the key header;
    /// `Sb-Forwarded-For`. Plus the emulator's preset and peer-address keying.
    /// `GOTRUE_MFA_*` with GoTrue's normalisations (`conf.ApplyDefaults`): challenge and factor
    /// lifetimes of at least 300 s, a zero phone frequency meaning one minute, a phone code
    /// length outside 6-10 meaning 6.
    /// `GOTRUE_PASSKEY_*` (conf.PasskeyConfiguration) and `GOTRUE_WEBAUTHN_*`
    /// (conf.WebAuthnConfiguration; `RP_ORIGINS` is a comma-separated list, as envconfig reads
    /// a `[]string`).
    private static func applyPasskeys(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        if let on = try env.boolean("GOTRUE_PASSKEY_ENABLED") { config.passkey.enabled = on }
        if let count = try env.integer("GOTRUE_PASSKEY_MAX_PASSKEYS_PER_USER", in: 0...Int(Int32.max)) {
            config.passkey.maxPasskeysPerUser = count
        }
        if let id = env.string("GOTRUE_WEBAUTHN_RP_ID") { config.webAuthn.rpID = id }
        if let name = env.string("GOTRUE_WEBAUTHN_RP_DISPLAY_NAME") { config.webAuthn.rpDisplayName = name }
        if let origins = env.list("GOTRUE_WEBAUTHN_RP_ORIGINS") { config.webAuthn.rpOrigins = origins.filter { !$0.isEmpty } }
        if let seconds = try env.duration("GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION") { config.webAuthn.challengeExpirySeconds = seconds }
    }

    private static func applyMFA(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        let toggles: [(String, WritableKeyPath<MFASettings, MFASettings.Toggles>)] = [
            ("TOTP", \.totp), ("PHONE", \.phone), ("WEB_AUTHN", \.webAuthn),
        ]
        for (name, path) in toggles {
            if let on = try env.boolean("GOTRUE_MFA_\(name)_ENROLL_ENABLED") { config.mfa[keyPath: path].enroll = on }
            if let on = try env.boolean("GOTRUE_MFA_\(name)_VERIFY_ENABLED") { config.mfa[keyPath: path].verify = on }
        }
        if let count = try env.integer("GOTRUE_MFA_MAX_ENROLLED_FACTORS", in: 0...Int(Int32.max)) { config.mfa.maxEnrolledFactors = count }
        if let count = try env.integer("GOTRUE_MFA_MAX_VERIFIED_FACTORS", in: 0...Int(Int32.max)) { config.mfa.maxVerifiedFactors = count }
        if let text = env.string("GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION") {
            guard let seconds = Double(text.trimmingSpaces), seconds.isFinite else {
                throw EmulatorError("GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: '\(text)' is not a number of seconds")
            }
            config.mfa.challengeExpirySeconds = max(300, seconds)
        }
        if let seconds = try env.duration("GOTRUE_MFA_FACTOR_EXPIRY_DURATION") { config.mfa.factorExpirySeconds = max(300, seconds) }
        if let length = try env.integer("GOTRUE_MFA_PHONE_OTP_LENGTH", in: Int(Int32.min)...Int(Int32.max)) {
            config.mfa.phoneOTPLength = Configuration.otpLength(length)
        }
        if let seconds = try env.duration("GOTRUE_MFA_PHONE_MAX_FREQUENCY") { config.mfa.phoneMaxFrequencySeconds = seconds == 0 ? 60 : seconds }
        if let template = env.string("GOTRUE_MFA_PHONE_TEMPLATE") { config.mfa.phoneTemplate = template }
    }

    /// `GOTRUE_HOOK_<NAME>_ENABLED`, `_URI`, `_SECRETS` (secrets separated by `|`).
    private static func applyHooks(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        for (name, path) in HookSettings.names {
            let prefix = "GOTRUE_HOOK_" + name.uppercased()
            if let on = try env.boolean(prefix + "_ENABLED") { config.hooks[keyPath: path].enabled = on }
            if let uri = env.raw(prefix + "_URI") { config.hooks[keyPath: path].uri = uri.trimmingSpaces }
            if let secrets = env.raw(prefix + "_SECRETS") {
                config.hooks[keyPath: path].secrets = secrets.split(separator: "|").map(String.init).filter { !$0.isEmpty }
            }
        }
    }

    /// `GOTRUE_OAUTH_SERVER_*`.
    private static func applyOAuthServer(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        if let on = try env.boolean("GOTRUE_OAUTH_SERVER_ENABLED") { config.oauthServer.enabled = on }
        if let on = try env.boolean("GOTRUE_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION") { config.oauthServer.allowDynamicRegistration = on }
        if let path = env.raw("GOTRUE_OAUTH_SERVER_AUTHORIZATION_PATH") { config.oauthServer.authorizationPath = path }
        if let ttl = try env.duration("GOTRUE_OAUTH_SERVER_AUTHORIZATION_TTL", positive: true) { config.oauthServer.authorizationTTLSeconds = ttl }
        if let scope = env.string("GOTRUE_OAUTH_SERVER_DEFAULT_SCOPE") { config.oauthServer.defaultScope = scope }
        if let email = env.string("AUTH_EMULATOR_OAUTH_AUTO_APPROVE") { config.oauthServer.autoApproveEmail = email.lowercased() }
    }

    private static func applyRateLimits(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        if let header = env.raw("GOTRUE_RATE_LIMIT_HEADER") { config.rateLimits.header = header.trimmingSpaces }
        if let on = try env.boolean("GOTRUE_SECURITY_SB_FORWARDED_FOR_ENABLED") { config.rateLimits.sbForwardedForEnabled = on }
        let values: [(String, WritableKeyPath<RateLimitSettings, Double>)] = [
            ("GOTRUE_RATE_LIMIT_OTP", \.otp),
            ("GOTRUE_RATE_LIMIT_ANONYMOUS_USERS", \.anonymousUsers),
            ("GOTRUE_RATE_LIMIT_TOKEN_REFRESH", \.tokenRefresh),
            ("GOTRUE_RATE_LIMIT_VERIFY", \.verify),
            ("GOTRUE_RATE_LIMIT_WEB3", \.web3),
            ("GOTRUE_RATE_LIMIT_SSO", \.sso),
            ("GOTRUE_RATE_LIMIT_PASSKEY", \.passkey),
            ("GOTRUE_RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER", \.oauthClientRegister),
            ("GOTRUE_MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY", \.mfaChallengeAndVerify),
            ("GOTRUE_SAML_RATE_LIMIT_ASSERTION", \.samlAssertion),
        ]
        for (name, path) in values {
            guard let text = env.string(name) else { continue }
            guard let value = Double(text.trimmingSpaces), value >= 0, value.isFinite else {
                throw EmulatorError("\(name): '\(text)' is not a number of requests (0 or more)")
            }
            config.rateLimits[keyPath: path] = value
        }
        if let text = env.string(rateLimitsVariable) {
            guard let preset = RateLimitSettings.Preset(rawValue: text) else {
                throw EmulatorError("\(rateLimitsVariable): '\(text)' is not a preset (use off, real or tiny)")
            }
            config.rateLimits.preset = preset
        }
        if let on = try env.boolean(rateLimitPeerVariable) { config.rateLimits.keyOnPeerAddress = on }
    }

    /// Typed access to the environment that remembers every name it was asked about, so the
    /// names nobody asked about can be reported as ignored.
    struct Reader {
        let environment: [String: String]
        var known: Set<String> = []

        /// The value as set, even when empty (an empty string or list is a real value).
        mutating func raw(_ name: String) -> String? {
            known.insert(name)
            return environment[name]
        }

        /// A non-empty value; an empty one counts as unset (for required-looking settings such
        /// as URLs, the host and secrets, where empty is never meant).
        mutating func string(_ name: String) -> String? {
            guard let value = raw(name), !value.isEmpty else { return nil }
            return value
        }

        mutating func boolean(_ name: String) throws(EmulatorError) -> Bool? {
            guard let text = string(name) else { return nil }
            guard let value = GoValue.parseBool(text) else {
                throw EmulatorError("\(name): '\(text)' is not a boolean (use true or false)")
            }
            return value
        }

        mutating func integer(_ name: String, in range: ClosedRange<Int>, unit: String? = nil) throws(EmulatorError) -> Int? {
            guard let text = string(name) else { return nil }
            guard let value = GoValue.parseInt(text), range.contains(value) else {
                let what = unit.map { "a whole number of \($0)" } ?? "a whole number"
                // Quote the range only where it is a real limit, not the width of an integer.
                let limits = range.upperBound < Int(Int32.max) ? " in \(range.lowerBound)...\(range.upperBound)" : range.lowerBound == 0 ? " (0 or more)" : ""
                throw EmulatorError("\(name): '\(text)' is not \(what)\(limits)")
            }
            return value
        }

        /// GoTrue's `conf.Rate` (`30` or `10/1m`).
        mutating func sendRate(_ name: String) throws(EmulatorError) -> SendRate? {
            guard let text = string(name) else { return nil }
            guard let rate = SendRate.parse(text.trimmingSpaces, parseDuration: GoValue.parseDuration) else {
                throw EmulatorError("\(name): '\(text)' is not a rate (a number per hour, or N/<duration> such as 10/1m)")
            }
            return rate
        }

        /// Seconds from a Go duration (`1m30s`).
        mutating func duration(_ name: String, positive: Bool = false) throws(EmulatorError) -> Double? {
            guard let text = string(name) else { return nil }
            guard let seconds = GoValue.parseDuration(text) else {
                throw EmulatorError("\(name): '\(text)' is not a duration (Go syntax such as 10s, 1m, 1h30m, 500ms)")
            }
            if positive && seconds <= 0 { throw EmulatorError("\(name): '\(text)' must be a positive duration") }
            if !positive && seconds < 0 { throw EmulatorError("\(name): '\(text)' must not be negative") }
            return seconds
        }

        mutating func list(_ name: String) -> [String]? {
            raw(name).map(\.commaSeparated)
        }

        mutating func map(_ name: String) throws(EmulatorError) -> [String: String]? {
            guard let text = raw(name) else { return nil }
            var result: [String: String] = [:]
            // envconfig: pairs split on ',', key and value on the first ':'.
            for pair in text.split(separator: ",", omittingEmptySubsequences: true) {
                guard let colon = pair.firstIndex(of: ":") else {
                    throw EmulatorError("\(name): '\(pair)' is not a key:value pair (expected key:value,key:value)")
                }
                result[String(pair[..<colon]).trimmingSpaces] = String(pair[pair.index(after: colon)...]).trimmingSpaces
            }
            return result
        }
    }
}

/// The Go value syntaxes GoTrue and the Supabase CLI accept, shared by the environment and the
/// config file readers.
enum GoValue {
    /// Go's `strconv.ParseBool`.
    static func parseBool(_ text: String) -> Bool? {
        switch text {
        case "1", "t", "T", "TRUE", "true", "True": true
        case "0", "f", "F", "FALSE", "false", "False": false
        default: nil
        }
    }

    /// A decimal integer with an optional sign, surrounding spaces tolerated.
    static func parseInt(_ text: String) -> Int? {
        Int(text.trimmingSpaces)
    }

    /// Go's `time.ParseDuration`, in seconds: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or a bare `0`,
    /// with the units ns, us (µs, μs), ms, s, m and h.
    static func parseDuration(_ text: String) -> Double? {
        let scalars = Array(text.unicodeScalars)
        var i = 0
        var sign = 1.0
        if i < scalars.count, scalars[i] == "-" || scalars[i] == "+" {
            sign = scalars[i] == "-" ? -1 : 1
            i += 1
        }
        if scalars.count - i == 1, scalars[i] == "0" { return 0 }
        guard i < scalars.count else { return nil }
        func isDigit(_ c: Unicode.Scalar) -> Bool { c.value >= 0x30 && c.value <= 0x39 }
        var total = 0.0
        while i < scalars.count {
            var number = ""
            var sawDigit = false
            var sawDot = false
            while i < scalars.count, isDigit(scalars[i]) || scalars[i] == "." {
                if scalars[i] == "." {
                    if sawDot { return nil }
                    sawDot = true
                } else {
                    sawDigit = true
                }
                number.unicodeScalars.append(scalars[i])
                i += 1
            }
            guard sawDigit else { return nil }
            if number.hasPrefix(".") { number = "0" + number }
            if number.hasSuffix(".") { number += "0" }
            guard let value = Double(number) else { return nil }
            var unit = ""
            while i < scalars.count, !isDigit(scalars[i]), scalars[i] != "." {
                unit.unicodeScalars.append(scalars[i])
                i += 1
            }
            let multiplier: Double
            switch unit {
            case "ns": multiplier = 1e-9
            case "us", "\u{00B5}s", "\u{03BC}s": multiplier = 1e-6
            case "ms": multiplier = 1e-3
            case "s": multiplier = 1
            case "m": multiplier = 60
            case "h": multiplier = 3600
            default: return nil
            }
            total += value * multiplier
        }
        return sign * total
    }

    /// GoTrue's `PasswordRequiredCharacters.Decode`: sets separated by `:`, where `\:` stands for
    /// a literal colon inside a set; empty sets are dropped.
    static func requiredCharacters(_ value: String) -> [String] {
        var parts = value.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var i = 0
        while i < parts.count - 1 {
            if parts[i].hasSuffix("\\") {
                parts[i] = String(parts[i].dropLast()) + ":" + parts[i + 1]
                parts[i + 1] = ""
            }
            i += 1
        }
        return parts.filter { !$0.isEmpty }
    }
}

/// `GOTRUE_JWT_KEYS` (and the CLI's `signing_keys.json`): a JSON array of private JWKs of which
/// exactly one has `sign` in its `key_ops` (reference §7.3, conf/jwk.go). `null` or `[]` means
/// none, as `supabase start` passes when no signing keys are configured.
enum JWTKeys {
    static func parse(_ text: String, setting: String) throws(EmulatorError) -> [JWK] {
        let json: JSON
        do {
            json = try JSON(parsing: text)
        } catch {
            throw EmulatorError("\(setting): not valid JSON (\(error))")
        }
        if json.isNull { return [] }
        guard let array = json.arrayValue else { throw EmulatorError("\(setting): expected a JSON array of JWKs") }
        return try parse(array, setting: setting)
    }

    static func parse(_ array: [JSON], setting: String) throws(EmulatorError) -> [JWK] {
        var keys: [JWK] = []
        for (position, element) in array.enumerated() {
            let which = "\(setting)[\(position)]"
            guard let object = element.objectValue else { throw EmulatorError("\(which): expected a JWK object") }
            let jwk: JWK
            do {
                jwk = try JWK(object)
            } catch {
                throw EmulatorError("\(which): \(error)")
            }
            let kid = jwk.key.kid ?? ""
            if keys.contains(where: { ($0.key.kid ?? "") == kid }) { throw EmulatorError("\(which): duplicate \"kid\" \"\(kid)\"") }
            keys.append(jwk)
        }
        // GoTrue's JwtKeysDecoder.Validate messages.
        let signing = keys.filter(\.canSign).count
        if !keys.isEmpty && signing == 0 { throw EmulatorError("\(setting): no signing key detected (one key needs \"key_ops\": [\"sign\", \"verify\"])") }
        if signing > 1 { throw EmulatorError("\(setting): multiple signing keys detected, only 1 signing key is supported") }
        return keys
    }
}

/// Checks that hold across settings: `Configuration.problem()`, as the emulator reports it.
enum Validation {
    static func check(_ config: Configuration) throws(EmulatorError) {
        if let problem = config.problem() { throw EmulatorError(problem) }
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }

    /// Go's `envconfig` list syntax: comma-separated; entries are trimmed and empty entries
    /// dropped, so `a, b,` is `["a", "b"]` and an empty value is an empty list.
    var commaSeparated: [String] {
        split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
    }
}
