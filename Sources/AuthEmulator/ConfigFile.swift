import AuthTOML
import GoTrue

/// The `[auth]` section of the Supabase CLI's `supabase/config.toml`, mapped onto the
/// configuration the way `supabase start` turns it into the auth container's `GOTRUE_*`
/// variables (Supabase CLI `internal/start/start.go`, `pkg/config/auth.go`), so a project's own
/// config file drives the emulator unchanged.
///
/// - Other top-level sections (`[api]`, `[db]`, `[studio]`, ...) are not the emulator's business
///   and are skipped without looking inside.
/// - Every key of the CLI's `[auth]` schema is known. Those with a counterpart in the emulator
///   are applied; the rest (captcha, SMTP, custom email bodies, third-party auth,
///   web3, ...) are accepted and ignored, so an unmodified `supabase init` file
///   loads. A key the CLI does not know either is an error naming the key and its line,
///   like the CLI's own strict decoding.
/// - `"env(NAME)"` values are replaced by the environment variable `NAME` when it is set and
///   non-empty, and kept as written otherwise (the CLI's `LoadEnvHook`).
/// - Values are converted as the CLI's decoder does (weakly typed): a boolean or number may also
///   be given as a string (useful with `env(...)`), a list as a comma-separated string.
public enum SupabaseConfigFile {
    /// Reads the file at `path` and applies its `[auth]` section; returns warnings to show.
    @discardableResult
    public static func apply(path: String, environment: [String: String], to options: inout EmulatorOptions) throws(EmulatorError) -> [String] {
        let bytes = try Platform.readFile(path)
        return try apply(bytes, file: path, environment: environment, to: &options)
    }

    /// Applies the `[auth]` section of a config file's contents; `file` names it in messages.
    @discardableResult
    public static func apply(_ text: String, file: String = "config.toml", environment: [String: String], to options: inout EmulatorOptions) throws(EmulatorError) -> [String] {
        try apply(Array(text.utf8), file: file, environment: environment, to: &options)
    }

    static func apply(_ bytes: [UInt8], file: String, environment: [String: String], to options: inout EmulatorOptions) throws(EmulatorError) -> [String] {
        let document: TOMLTable
        do {
            document = try TOML.parse(bytes, file: file)
        } catch {
            throw EmulatorError(error.description)
        }
        guard let authValue = document["auth"] else { return [] }
        guard case .table(let auth) = authValue else {
            throw EmulatorError("\(file):\(document.line(of: "auth") ?? 1): auth: expected a table, found \(authValue.kindName)")
        }
        var mapper = Mapper(file: file, environment: environment, config: options.configuration)
        try mapper.walk(auth, node: schema, path: ["auth"])
        try mapper.finish()
        options.configuration = mapper.config
        return mapper.warnings
    }

    // MARK: The CLI's [auth] schema

    /// A node of the `[auth]` schema.
    indirect enum Node: Sendable {
        /// A key the emulator applies.
        case setting(@Sendable (inout Mapper, Field) throws(EmulatorError) -> Void)
        /// A key the CLI knows whose feature the emulator does not model: accepted, unused.
        case ignored
        /// A table with a fixed set of keys.
        case section([String: Node])
        /// A table whose keys are names (providers, templates, phone numbers); `allowed` limits
        /// them when the set is closed.
        case map(allowed: Set<String>?, Node)
    }

    static func ignoredSection(_ keys: String...) -> Node {
        .section(Dictionary(uniqueKeysWithValues: keys.map { ($0, Node.ignored) }))
    }

    /// The SMS providers in the order the CLI picks the first enabled one.
    static let smsProviders = ["twilio", "twilio_verify", "messagebird", "textlocal", "vonage"]

    /// The CLI's `password_requirements` levels and the `GOTRUE_PASSWORD_REQUIRED_CHARACTERS`
    /// values it sends for them (Supabase CLI `PasswordRequirements.ToChar`, through the
    /// Management API's `password_required_characters` enum), decoded as GoTrue decodes them.
    static let passwordRequirements: [String: String] = [
        "": "",
        "letters_digits": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789",
        "lower_upper_letters_digits": "abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789",
        "lower_upper_letters_digits_symbols": #"abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789:!@#$%^&*()_+-=[]{};'\\:"|<>?,./`~"#,
    ]

    static let schema: Node = .section([
        "enabled": .ignored,
        "site_url": .setting { m, f throws(EmulatorError) in m.config.siteURL = try f.string() },
        // The public URL links are built from (API_EXTERNAL_URL); empty means the default.
        "external_url": .setting { m, f throws(EmulatorError) in
            let url = try f.string()
            if !url.isEmpty {
                m.config.externalURL = url
                m.externalURL = url
            }
        },
        "additional_redirect_urls": .setting { m, f throws(EmulatorError) in m.config.uriAllowList = try f.strings() },
        // GoTrue treats 0 as its default of 3600.
        "jwt_expiry": .setting { m, f throws(EmulatorError) in
            let seconds = try f.unsigned()
            m.config.jwt.expirySeconds = Configuration.jwtExpiry(seconds)
        },
        "jwt_issuer": .setting { m, f throws(EmulatorError) in m.issuer = try f.string() },
        "enable_refresh_token_rotation": .setting { m, f throws(EmulatorError) in m.config.security.refreshTokenRotationEnabled = try f.boolean() },
        "refresh_token_reuse_interval": .setting { m, f throws(EmulatorError) in m.config.security.refreshTokenReuseInterval = try f.unsigned() },
        "enable_manual_linking": .setting { m, f throws(EmulatorError) in m.config.security.manualLinkingEnabled = try f.boolean() },
        "enable_signup": .setting { m, f throws(EmulatorError) in m.config.disableSignup = try !f.boolean() },
        "enable_anonymous_sign_ins": .setting { m, f throws(EmulatorError) in m.config.external.anonymousUsersEnabled = try f.boolean() },
        // GoTrue raises anything below 6 to 6.
        "minimum_password_length": .setting { m, f throws(EmulatorError) in m.config.password.minLength = try Configuration.passwordMinLength(f.unsigned()) },
        "password_requirements": .setting { m, f throws(EmulatorError) in
            let level = try f.string()
            guard let characters = passwordRequirements[level] else {
                throw f.failure("must be one of \"\", \"letters_digits\", \"lower_upper_letters_digits\", \"lower_upper_letters_digits_symbols\" (found \"\(level)\")")
            }
            m.config.password.requiredCharacters = GoValue.requiredCharacters(characters)
        },
        "signing_keys_path": .setting { m, f throws(EmulatorError) in
            let path = try f.string()
            if !path.isEmpty { m.signingKeysPath = (path, f) }
        },
        // Custom secrets (the CLI reads these from supabase/.env through env(...)).
        "jwt_secret": .setting { m, f throws(EmulatorError) in
            let secret = try f.string()
            guard !secret.isEmpty else { return }
            // The CLI's own check (apikeys.go generateAPIKeys).
            guard secret.utf8.count >= 16 else { throw f.failure("must be at least 16 characters") }
            m.jwtSecret = secret
        },
        "anon_key": .setting { m, f throws(EmulatorError) in m.anonKey = try f.nonEmptyString() },
        "service_role_key": .setting { m, f throws(EmulatorError) in m.serviceRoleKey = try f.nonEmptyString() },
        "publishable_key": .setting { m, f throws(EmulatorError) in m.publishableKey = try f.nonEmptyString() },
        "secret_key": .setting { m, f throws(EmulatorError) in m.secretKey = try f.nonEmptyString() },

        // The CLI's appendGotruePasskeyEnv: GOTRUE_PASSKEY_ENABLED and GOTRUE_WEBAUTHN_RP_*.
        "passkey": .section([
            "enabled": .setting { m, f throws(EmulatorError) in m.config.passkey.enabled = try f.boolean() },
        ]),
        "webauthn": .section([
            "rp_display_name": .setting { m, f throws(EmulatorError) in m.config.webAuthn.rpDisplayName = try f.string() },
            "rp_id": .setting { m, f throws(EmulatorError) in m.config.webAuthn.rpID = try f.string() },
            "rp_origins": .setting { m, f throws(EmulatorError) in m.config.webAuthn.rpOrigins = try f.strings() },
        ]),
        // The CLI's start.go: anonymous_users, token_refresh, sign_in_sign_ups (GOTRUE_RATE_LIMIT_OTP),
        // token_verifications (GOTRUE_RATE_LIMIT_VERIFY) and web3 become the per-client limits.
        "rate_limit": .section([
            "anonymous_users": .setting { m, f throws(EmulatorError) in m.config.rateLimits.anonymousUsers = Double(try f.unsigned()) },
            "token_refresh": .setting { m, f throws(EmulatorError) in m.config.rateLimits.tokenRefresh = Double(try f.unsigned()) },
            "sign_in_sign_ups": .setting { m, f throws(EmulatorError) in m.config.rateLimits.otp = Double(try f.unsigned()) },
            "token_verifications": .setting { m, f throws(EmulatorError) in m.config.rateLimits.verify = Double(try f.unsigned()) },
            "web3": .setting { m, f throws(EmulatorError) in m.config.rateLimits.web3 = Double(try f.unsigned()) },
            // The CLI passes email_sent only with [auth.email.smtp] enabled (the emulator sends no
            // mail, so GoTrue's default of 30 per hour applies); sms_sent always.
            "email_sent": .ignored,
            "sms_sent": .setting { m, f throws(EmulatorError) in m.config.sms.rateLimitSMSSent = SendRate(events: Double(try f.unsigned())) },
        ]),
        "captcha": ignoredSection("enabled", "provider", "secret"),
        // `supabase start` passes an enabled hook as GOTRUE_HOOK_<NAME>_ENABLED, _URI, _SECRETS.
        "hook": .section(Dictionary(uniqueKeysWithValues: [
            "mfa_verification_attempt", "password_verification_attempt", "custom_access_token", "send_sms", "send_email",
            "before_user_created",
        ].map { ($0, Node.section([
            "enabled": .setting { m, f throws(EmulatorError) in
                let on = try f.boolean()
                m.updateHook(f.path[f.path.count - 2]) { $0.enabled = on }
            },
            "uri": .setting { m, f throws(EmulatorError) in
                let uri = try f.string()
                m.updateHook(f.path[f.path.count - 2]) { $0.uri = uri }
            },
            "secrets": .setting { m, f throws(EmulatorError) in
                let secrets = try f.string().split(separator: "|").map(String.init).filter { !$0.isEmpty }
                m.updateHook(f.path[f.path.count - 2]) { $0.secrets = secrets }
            },
        ])) })),
        "mfa": .section([
            "max_enrolled_factors": .setting { m, f throws(EmulatorError) in m.config.mfa.maxEnrolledFactors = Int(try f.unsigned()) },
            "totp": .section(mfaToggleKeys),
            "phone": .section(mfaToggleKeys.merging([
                "otp_length": .setting { m, f throws(EmulatorError) in m.config.mfa.phoneOTPLength = Configuration.otpLength(Int(try f.unsigned())) },
                "template": .setting { m, f throws(EmulatorError) in m.config.mfa.phoneTemplate = try f.string() },
                "max_frequency": .setting { m, f throws(EmulatorError) in
                    let seconds = try f.seconds()
                    m.config.mfa.phoneMaxFrequencySeconds = seconds == 0 ? 60 : seconds
                },
            ]) { $1 }),
            "web_authn": .section(mfaToggleKeys),
        ]),
        // `supabase start` sets GOTRUE_SESSIONS_* only for durations above zero.
        "sessions": .section([
            "timebox": .setting { m, f throws(EmulatorError) in
                let seconds = try f.seconds()
                m.config.sessions.timeboxSeconds = seconds > 0 ? seconds : nil
            },
            "inactivity_timeout": .setting { m, f throws(EmulatorError) in
                let seconds = try f.seconds()
                m.config.sessions.inactivityTimeoutSeconds = seconds > 0 ? seconds : nil
            },
        ]),
        "email": .section([
            "enable_signup": .setting { m, f throws(EmulatorError) in m.config.external.emailEnabled = try f.boolean() },
            "double_confirm_changes": .setting { m, f throws(EmulatorError) in m.config.mailer.secureEmailChangeEnabled = try f.boolean() },
            "enable_confirmations": .setting { m, f throws(EmulatorError) in m.config.mailer.autoconfirm = try !f.boolean() },
            "secure_password_change": .setting { m, f throws(EmulatorError) in
                m.config.security.updatePasswordRequireReauthentication = try f.boolean()
            },
            // GoTrue: a zero SMTP_MAX_FREQUENCY means one minute.
            "max_frequency": .setting { m, f throws(EmulatorError) in
                let seconds = try f.seconds()
                m.config.mailer.maxFrequencySeconds = seconds == 0 ? 60 : seconds
            },
            "otp_length": .setting { m, f throws(EmulatorError) in m.config.mailer.otpLength = try Configuration.otpLength(f.unsigned()) },
            // GoTrue: 0 means one day.
            "otp_expiry": .setting { m, f throws(EmulatorError) in
                let seconds = try f.unsigned()
                m.config.mailer.otpExpirySeconds = seconds == 0 ? 86_400 : seconds
            },
            // The CLI passes each template's subject as GOTRUE_MAILER_SUBJECTS_<ID>; custom bodies
            // (content_path, served to GoTrue over HTTP) are not modelled: the built-in ones apply.
            // Any name is accepted, as by the CLI (GoTrue ignores a subject it has no template for).
            "template": .map(allowed: nil, .section([
                "subject": .setting { m, f throws(EmulatorError) in m.config.mailer.subjects[f.path[f.path.count - 2]] = try f.string() },
                "content": .ignored, "content_path": .ignored,
            ])),
            // `enabled` becomes GOTRUE_MAILER_NOTIFICATIONS_<KIND>_ENABLED; the subject is passed
            // only for an enabled notice, under the template id `<kind>_notification`.
            "notification": .map(allowed: nil, .section([
                "enabled": .setting { m, f throws(EmulatorError) in
                    guard let kind = MailNotification(rawValue: f.path[f.path.count - 2]) else { return }
                    if try f.boolean() { m.config.mailer.notifications.insert(kind) } else { m.config.mailer.notifications.remove(kind) }
                },
                "subject": .setting { m, f throws(EmulatorError) in m.notificationSubjects[f.path[f.path.count - 2]] = try f.string() },
                "content": .ignored, "content_path": .ignored,
            ])),
            "smtp": ignoredSection("enabled", "host", "port", "user", "pass", "admin_email", "sender_name"),
        ]),
        "sms": .section([
            "enable_signup": .setting { m, f throws(EmulatorError) in m.config.external.phoneEnabled = try f.boolean() },
            "enable_confirmations": .setting { m, f throws(EmulatorError) in m.config.sms.autoconfirm = try !f.boolean() },
            "template": .setting { m, f throws(EmulatorError) in m.config.sms.template = try f.string() },
            "max_frequency": .setting { m, f throws(EmulatorError) in
                let seconds = try f.seconds()
                m.config.sms.maxFrequencySeconds = seconds == 0 ? 60 : seconds
            },
            "test_otp": .map(allowed: nil, .setting { m, f throws(EmulatorError) in
                if !m.testOTPCleared {
                    m.config.sms.testOTP = [:]
                    m.testOTPCleared = true
                }
                m.config.sms.testOTP[Configuration.testPhone(f.path[f.path.count - 1])] = try f.string()
            }),
            "twilio": smsProvider("account_sid", "message_service_sid", "auth_token"),
            "twilio_verify": smsProvider("account_sid", "message_service_sid", "auth_token"),
            "messagebird": smsProvider("originator", "access_key"),
            "textlocal": smsProvider("sender", "api_key"),
            "vonage": smsProvider("from", "api_key", "api_secret"),
        ]),
        "external": .map(allowed: Set(EnvironmentConfiguration.externalProviders), .section([
            "enabled": .setting { m, f throws(EmulatorError) in
                let value = try f.boolean()
                m.provider(f) { $0.enabled = value }
            },
            // GoTrue takes a comma-separated list of client IDs (several apps, one provider).
            "client_id": .setting { m, f throws(EmulatorError) in
                let value = try f.string().commaSeparated
                m.provider(f) { $0.clientIDs = value }
            },
            "secret": .setting { m, f throws(EmulatorError) in
                let value = try f.string()
                m.provider(f) { $0.secret = value }
            },
            "url": .setting { m, f throws(EmulatorError) in
                let value = try f.string()
                m.provider(f) { $0.url = value }
            },
            "redirect_uri": .setting { m, f throws(EmulatorError) in
                let value = try f.string()
                m.provider(f) { $0.redirectURI = value }
            },
            "skip_nonce_check": .setting { m, f throws(EmulatorError) in
                let value = try f.boolean()
                m.provider(f) { $0.skipNonceCheck = value }
            },
            "email_optional": .setting { m, f throws(EmulatorError) in
                let value = try f.boolean()
                m.provider(f) { $0.emailOptional = value }
            },
        ])),
        "web3": .section(["solana": ignoredSection("enabled"), "ethereum": ignoredSection("enabled")]),
        // `supabase start` passes these only when `enabled` (GOTRUE_OAUTH_SERVER_*).
        "oauth_server": .section([
            "enabled": .setting { m, f throws(EmulatorError) in m.config.oauthServer.enabled = try f.boolean() },
            "allow_dynamic_registration": .setting { m, f throws(EmulatorError) in
                m.config.oauthServer.allowDynamicRegistration = try f.boolean()
            },
            "authorization_url_path": .setting { m, f throws(EmulatorError) in m.config.oauthServer.authorizationPath = try f.string() },
        ]),
        "third_party": .section([
            "firebase": ignoredSection("enabled", "project_id"),
            "auth0": ignoredSection("enabled", "tenant", "tenant_region"),
            "aws_cognito": ignoredSection("enabled", "user_pool_id", "user_pool_region"),
            "clerk": ignoredSection("enabled", "domain"),
            "workos": ignoredSection("enabled", "issuer_url"),
        ]),
    ])

    /// `[auth.mfa.<type>] enroll_enabled`, `verify_enabled`: `GOTRUE_MFA_<TYPE>_*_ENABLED`.
    static let mfaToggleKeys: [String: Node] = [
        "enroll_enabled": .setting { m, f throws(EmulatorError) in
            let type = f.path[f.path.count - 2]
            let on = try f.boolean()
            m.updateMFA(type) { $0.enroll = on }
            m.mfaLines[type] = f.line
        },
        "verify_enabled": .setting { m, f throws(EmulatorError) in
            let on = try f.boolean()
            m.updateMFA(f.path[f.path.count - 2]) { $0.verify = on }
        },
    ]

    /// `[auth.sms.<provider>]`: `enabled` selects `GOTRUE_SMS_PROVIDER`; the credentials become
    /// `GOTRUE_SMS_<PROVIDER>_*`, validated before each send as the real server does (the
    /// emulator still never sends a message).
    static func smsProvider(_ credentials: String...) -> Node {
        var keys = Dictionary(uniqueKeysWithValues: credentials.map { name in
            (name, Node.setting { m, f throws(EmulatorError) in
                m.config.sms.providerSettings[f.path[f.path.count - 2] + "." + name] = try f.string()
            })
        })
        keys["enabled"] = .setting { m, f throws(EmulatorError) in m.smsProviderEnabled[f.path[f.path.count - 2]] = try f.boolean() }
        return .section(keys)
    }

    // MARK: Walking the file

    /// One key of the file with its value, where it was written, and the environment for
    /// `env(...)` substitution.
    struct Field {
        let path: [String]
        let line: Int
        let value: TOMLValue
        let file: String
        let environment: [String: String]

        init(path: [String], line: Int, value: TOMLValue, file: String, environment: [String: String]) {
            self.path = path
            self.line = line
            self.value = value
            self.file = file
            self.environment = environment
        }

        var name: String { path.joined(separator: ".") }
        var location: String { "\(file):\(line)" }

        func failure(_ why: String) -> EmulatorError { EmulatorError("\(location): \(name): \(why)") }

        /// The CLI's `LoadEnvHook`: `env(NAME)` becomes `$NAME` when that is set and non-empty.
        func substituted(_ text: String) -> (value: String, unset: String?) {
            guard text.hasPrefix("env("), text.hasSuffix(")"), text.count > 5 else { return (text, nil) }
            let variable = String(text.dropFirst(4).dropLast())
            if let value = environment[variable], !value.isEmpty { return (value, nil) }
            return (text, variable)
        }

        /// A string after substitution; an unset reference in a typed setting is an error.
        func typedText(_ text: String, expecting what: String) throws(EmulatorError) -> String {
            let (value, unset) = substituted(text)
            if let unset { throw failure("\(what) is needed, but the environment variable \(unset) in \"\(text)\" is not set") }
            return value
        }

        func string() throws(EmulatorError) -> String {
            switch value {
            case .string(let text): return substituted(text).value
            // The CLI's decoder is weakly typed: scalars become their text.
            case .integer(let n): return String(n)
            case .boolean(let b): return b ? "1" : "0"
            default: throw failure("expected a string, found \(value.kindName)")
            }
        }

        func nonEmptyString() throws(EmulatorError) -> String? {
            let text = try string()
            return text.isEmpty || text.hasPrefix("env(") ? nil : text
        }

        func boolean() throws(EmulatorError) -> Bool {
            switch value {
            case .boolean(let b): return b
            case .integer(let n): return n != 0
            case .string(let text):
                let text = try typedText(text, expecting: "a boolean")
                // Weak decoding: an empty string is false.
                if text.isEmpty { return false }
                guard let b = GoValue.parseBool(text) else { throw failure("expected true or false, found \"\(text)\"") }
                return b
            default: throw failure("expected a boolean, found \(value.kindName)")
            }
        }

        /// A Go `uint` setting.
        func unsigned() throws(EmulatorError) -> Int {
            let n: Int64
            switch value {
            case .integer(let i): n = i
            case .string(let text):
                let text = try typedText(text, expecting: "a whole number")
                guard let i = Int64(text.trimmingSpaces) else { throw failure("expected a whole number, found \"\(text)\"") }
                n = i
            default: throw failure("expected a whole number, found \(value.kindName)")
            }
            guard n >= 0, n <= Int64(Int32.max) else { throw failure("\(n) is out of range (0...\(Int32.max))") }
            return Int(n)
        }

        /// A Go `time.Duration` setting, given as a duration string (`"1s"`, `"24h"`).
        func seconds() throws(EmulatorError) -> Double {
            guard case .string(let raw) = value else {
                throw failure("expected a duration string such as \"5s\" or \"1h30m\", found \(value.kindName)")
            }
            let text = try typedText(raw, expecting: "a duration")
            guard let seconds = GoValue.parseDuration(text) else {
                throw failure("\"\(text)\" is not a duration (Go syntax such as \"10s\", \"1m\", \"1h30m\", \"500ms\")")
            }
            guard seconds >= 0 else { throw failure("\"\(text)\" must not be negative") }
            return seconds
        }

        /// A list of strings, or one comma-separated string (the CLI's `StringToSliceHookFunc`).
        func strings() throws(EmulatorError) -> [String] {
            switch value {
            case .array(let elements):
                var result: [String] = []
                for (position, element) in elements.enumerated() {
                    guard case .string(let text) = element else {
                        throw failure("element \(position + 1) is \(element.kindName); expected strings")
                    }
                    result.append(substituted(text).value)
                }
                return result
            case .string(let text):
                let text = substituted(text).value
                return text.isEmpty ? [] : text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            default:
                throw failure("expected an array of strings, found \(value.kindName)")
            }
        }

        /// `env(NAME)` references in this value whose variable is unset.
        var unsetVariables: [String] {
            switch value {
            case .string(let text): return substituted(text).unset.map { [$0] } ?? []
            case .array(let elements):
                return elements.compactMap { element in
                    if case .string(let text) = element { return substituted(text).unset }
                    return nil
                }
            default: return []
            }
        }
    }

    /// The state of one file's application: the configuration being built and the values that
    /// are resolved once the whole section has been read.
    struct Mapper {
        let file: String
        let environment: [String: String]
        var config: Configuration
        var warnings: [String] = []

        var externalURL: String?
        var issuer: String?
        var jwtSecret: String?
        var anonKey: String?
        var serviceRoleKey: String?
        var publishableKey: String?
        var secretKey: String?
        var smsProviderEnabled: [String: Bool] = [:]
        var signingKeysPath: (path: String, field: Field)?
        var testOTPCleared = false
        /// Lines of `[auth.mfa.<type>] enroll_enabled`, for the CLI's check of the pair.
        var mfaLines: [String: Int] = [:]
        /// `[auth.email.notification.<kind>] subject`, applied only for enabled notices.
        var notificationSubjects: [String: String] = [:]
        /// Lines of `[auth.external.<provider>]` tables, for messages about them.
        var providerLines: [String: Int] = [:]
        /// `(setting, variable)` for `env(...)` values left unresolved.
        var unresolved: [(field: Field, variable: String)] = []

        init(file: String, environment: [String: String], config: Configuration) {
            self.file = file
            self.environment = environment
            self.config = config
        }

        mutating func updateHook(_ name: String, _ change: (inout HookSettings.Point) -> Void) {
            guard let path = HookSettings.names.first(where: { $0.name == name })?.path else { return }
            change(&config.hooks[keyPath: path])
        }

        mutating func updateMFA(_ type: String, _ change: (inout MFASettings.Toggles) -> Void) {
            switch type {
            case "totp": change(&config.mfa.totp)
            case "phone": change(&config.mfa.phone)
            default: change(&config.mfa.webAuthn)
            }
        }

        mutating func provider(_ field: Field, _ body: (inout OAuthProviderSettings) -> Void) {
            let name = field.path[field.path.count - 2]
            var settings = config.external.providers[name] ?? OAuthProviderSettings()
            body(&settings)
            config.external.providers[name] = settings
        }

        mutating func walk(_ table: TOMLTable, node: Node, path: [String]) throws(EmulatorError) {
            for key in table.keys {
                guard let value = table[key] else { continue }
                let line = table.line(of: key) ?? 1
                let childPath = path + [key]
                let child: Node
                switch node {
                case .section(let children):
                    guard let known = children[key] else {
                        throw EmulatorError("\(file):\(line): \(childPath.joined(separator: ".")): unknown setting (not part of the Supabase CLI's [\(path.joined(separator: "."))] section)")
                    }
                    child = known
                case .map(let allowed, let element):
                    if let allowed, !allowed.contains(key) {
                        throw EmulatorError("\(file):\(line): \(childPath.joined(separator: ".")): unknown name '\(key)' (expected one of: \(allowed.sorted().joined(separator: ", ")))")
                    }
                    child = element
                    if path.last == "external" { providerLines[key] = line }
                case .setting, .ignored:
                    continue
                }
                try visit(value, node: child, path: childPath, line: line)
            }
        }

        mutating func visit(_ value: TOMLValue, node: Node, path: [String], line: Int) throws(EmulatorError) {
            switch node {
            case .ignored:
                return
            case .setting(let apply):
                let field = Field(path: path, line: line, value: value, file: file, environment: environment)
                if case .table = value { throw field.failure("expected a value, found a table") }
                for variable in field.unsetVariables { unresolved.append((field, variable)) }
                try apply(&self, field)
            case .section, .map:
                guard case .table(let table) = value else {
                    throw EmulatorError("\(file):\(line): \(path.joined(separator: ".")): expected a table, found \(value.kindName)")
                }
                try walk(table, node: node, path: path)
            }
        }

        /// `signing_keys_path`: the CLI resolves a relative path against the `supabase/` folder
        /// (the config file's), passes the keys to GoTrue as `GOTRUE_JWT_KEYS`, and signs the
        /// anon and service_role keys with the first of them.
        mutating func applySigningKeys(_ path: String, _ field: Field) throws(EmulatorError) {
            var resolved = path
            if !path.hasPrefix("/") {
                let folder = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
                resolved = folder + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
            }
            let bytes: [UInt8]
            do {
                bytes = try Platform.readFile(resolved)
            } catch {
                throw field.failure("failed to read signing keys: \(error)")
            }
            let keys = try JWTKeys.parse(String(decoding: bytes, as: UTF8.self), setting: "\(field.location): \(field.name) (\(resolved))")
            if !config.adoptSigningKeys(keys), let first = keys.first {
                warnings.append("\(field.location): \(field.name): the first key (\(first.key.kid ?? "no kid")) has no private part, so the anon and service_role keys stay signed with the JWT secret")
            }
        }

        /// Settings that depend on several keys, resolved after the whole section was read.
        mutating func finish() throws(EmulatorError) {
            if let jwtSecret { config.setJWTSecret(jwtSecret) }
            if let (path, field) = signingKeysPath { try applySigningKeys(path, field) }
            if let anonKey { config.apiKeys.anon = anonKey }
            if let serviceRoleKey { config.apiKeys.serviceRole = serviceRoleKey }
            if let publishableKey { config.apiKeys.publishable = publishableKey }
            if let secretKey { config.apiKeys.secret = secretKey }

            // The CLI defaults jwt_issuer to the auth external URL.
            if let issuer, !issuer.isEmpty {
                config.jwt.issuer = issuer
            } else if let externalURL {
                config.jwt.issuer = externalURL
            }

            for (kind, subject) in notificationSubjects {
                guard let notice = MailNotification(rawValue: kind), config.mailer.notifications.contains(notice) else { continue }
                config.mailer.subjects[notice.templateID] = subject
            }

            if smsProviderEnabled.values.contains(true) {
                config.sms.provider = SupabaseConfigFile.smsProviders.first { smsProviderEnabled[$0] == true } ?? ""
            }

            // The CLI's `mfa.validate`: enrolling a type needs verifying it too.
            for (type, toggles) in [("totp", config.mfa.totp), ("phone", config.mfa.phone), ("web_authn", config.mfa.webAuthn)]
            where toggles.enroll && !toggles.verify {
                throw EmulatorError("\(file):\(mfaLines[type] ?? 1): auth.mfa.\(type).enroll_enabled: requires verify_enabled (Invalid MFA config)")
            }

            // The CLI's `external.validate`: an enabled provider needs a client ID, and a secret
            // except for Apple and Google (whose native sign-in uses ID tokens only).
            for (name, settings) in config.external.providers.sorted(by: { $0.key < $1.key }) where settings.enabled {
                guard let line = providerLines[name] else { continue }
                if settings.clientIDs.isEmpty {
                    throw EmulatorError("\(file):\(line): auth.external.\(name).client_id: required when the provider is enabled")
                }
                if !["apple", "google"].contains(name) && settings.secret.isEmpty {
                    throw EmulatorError("\(file):\(line): auth.external.\(name).secret: required when the provider is enabled")
                }
            }

            // Like the CLI, warn about unresolved env(...) only where the value is used: not for
            // the credentials of a disabled provider (the `supabase init` template has those).
            for (field, variable) in unresolved {
                if field.path.count == 4, field.path[1] == "external", !config.external.isEnabled(field.path[2]) { continue }
                if field.path.count == 4, field.path[1] == "sms", smsProviderEnabled[field.path[2]] != true { continue }
                warnings.append("\(field.location): \(field.name): environment variable \(variable) is not set; using \"env(\(variable))\" as written")
            }
        }
    }
}
