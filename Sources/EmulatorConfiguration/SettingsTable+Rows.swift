import GoTrue
import GoFormats

/// The rows of the settings table (`SettingsTable.swift`). Defaults: the `gotrue` column is
/// `internal/conf/configuration.go` of the reproduced release after `ApplyDefaults`; the `cli`
/// column is what `supabase start` passes with the `supabase init` template
/// (`internal/start/start.go`, `pkg/config/templates/config.toml`).
///
/// Built group by group with plain appends through one non-generic helper per kind, so the
/// type checker never sees one large literal.
extension Configuration {
    public static let settings: [Setting] = {
        var rows: [Setting] = []
        rows += coreRows()
        rows += jwtRows()
        rows += externalRows()
        rows += mailerRows()
        rows += smsRows()
        rows += securityRows()
        rows += mfaRows()
        rows += passkeyRows()
        rows += hookRows()
        rows += oauthServerRows()
        rows += customOAuthRows()
        rows += rateLimitRows()
        rows += providerRows()
        return rows
    }()

    typealias Path<T> = WritableKeyPath<Configuration, T> & Sendable

    // MARK: Helpers, one per kind

    static func bool(
        _ key: String, _ path: Path<Bool>, env: [String], file: String? = nil, flag: String? = nil,
        gotrue: Bool, cli: Bool, _ help: String
    ) -> Setting {
        Setting(key, .bool, env: env, file: file, flag: flag, gotrue: .bool(gotrue), cli: .bool(cli), help: help,
                read: { .bool($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.bool })
    }

    static func whole(
        _ key: String, _ path: Path<Int>, _ range: ClosedRange<Int>, env: [String], file: String? = nil,
        flag: String? = nil, runtime: Bool = true, gotrue: Int, cli: Int, _ help: String
    ) -> Setting {
        Setting(key, .integer(range), env: env, file: file, flag: flag, runtime: runtime, gotrue: .int(gotrue), cli: .int(cli),
                help: help, read: { .int($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.int })
    }

    static func seconds(
        _ key: String, _ path: Path<Int>, env: [String], file: String? = nil, gotrue: Int, cli: Int, _ help: String
    ) -> Setting {
        Setting(key, .seconds(0...Int(Int32.max)), env: env, file: file, gotrue: .int(gotrue), cli: .int(cli), help: help,
                read: { .int($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.int })
    }

    static func duration(
        _ key: String, _ path: Path<Double>, positive: Bool = false, env: [String], file: String? = nil,
        gotrue: Double, cli: Double, _ help: String
    ) -> Setting {
        Setting(key, .duration(positive: positive), env: env, file: file, gotrue: .number(gotrue), cli: .number(cli),
                help: help, read: { .number($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.number })
    }

    static func number(
        _ key: String, _ path: Path<Double>, env: [String], file: String? = nil, gotrue: Double, cli: Double, _ help: String
    ) -> Setting {
        Setting(key, .number, env: env, file: file, gotrue: .number(gotrue), cli: .number(cli), help: help,
                read: { .number($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.number })
    }

    static func text(
        _ key: String, _ path: Path<String>, emptyIsUnset: Bool = false, env: [String], file: String? = nil,
        flag: String? = nil, runtime: Bool = true, gotrue: String, cli: String, note: String? = nil, placeholder: String? = nil,
        _ help: String
    ) -> Setting {
        Setting(key, .text(emptyIsUnset: emptyIsUnset), env: env, file: file, flag: flag, runtime: runtime,
                gotrue: .string(gotrue), cli: .string(cli), note: note, placeholder: placeholder, help: help,
                read: { .string($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.string })
    }

    static func list(
        _ key: String, _ path: Path<[String]>, env: [String], file: String? = nil, gotrue: [String], cli: [String], _ help: String
    ) -> Setting {
        Setting(key, .list, env: env, file: file, gotrue: .strings(gotrue), cli: .strings(cli), help: help,
                read: { .strings($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.strings })
    }

    // MARK: Groups

    static func coreRows() -> [Setting] {
        var rows: [Setting] = []
        rows.append(text("site_url", \.siteURL, emptyIsUnset: true, env: ["GOTRUE_SITE_URL"], file: "site_url", flag: "site-url",
                         gotrue: "http://127.0.0.1:3000", cli: "http://127.0.0.1:3000",
                         note: "required by GoTrue, which has no default; http://127.0.0.1:3000 in both profiles", placeholder: "<url>",
                         "The app's URL: the default redirect target of email links and OAuth flows."))
        rows.append(list("uri_allow_list", \.uriAllowList, env: ["GOTRUE_URI_ALLOW_LIST"], file: "additional_redirect_urls",
                         gotrue: [], cli: ["https://127.0.0.1:3000"], "Further redirect URLs (globs) a request may name."))
        rows.append(text("external_url", \.externalURL, emptyIsUnset: true, env: ["API_EXTERNAL_URL", "GOTRUE_API_EXTERNAL_URL"],
                         file: "external_url", flag: "external-url", runtime: false,
                         gotrue: Configuration.defaultExternalURL, cli: Configuration.defaultExternalURL,
                         note: "the emulator's own address", placeholder: "<url>",
                         "The public base URL links are built on; one ending in /auth/v1 (the CLI's meaning) names the same server."))
        rows.append(bool("disable_signup", \.disableSignup, env: ["GOTRUE_DISABLE_SIGNUP"], file: "!enable_signup", flag: "!signup",
                         gotrue: false, cli: false, "Refuse new users (sign-up and first sign-in)."))
        rows.append(list("cors_allowed_headers", \.corsAllowedHeaders, env: ["GOTRUE_CORS_ALLOWED_HEADERS"],
                         gotrue: [], cli: [], "Request headers allowed by CORS beyond the built-in ones."))
        rows.append(bool("require_apikey", \.requireAPIKey, env: ["AUTH_EMULATOR_REQUIRE_APIKEY"], flag: "require-apikey",
                         gotrue: false, cli: false, "Emulator: /auth/v1 refuses requests without a valid apikey, as the hosted gateway."))
        rows.append(whole("password_hash_iterations", \.passwordHashIterations, Configuration.passwordIterationsRange,
                          env: ["AUTH_EMULATOR_PASSWORD_ITERATIONS"], flag: "password-iterations", runtime: false,
                          gotrue: 100_000, cli: 100_000, "Emulator: PBKDF2 iterations for new password hashes."))
        rows.append(bool("idp_auto_approve", \.identityProviders.autoApprove, env: ["AUTH_EMULATOR_IDP_AUTO_APPROVE"],
                         flag: "idp-auto-approve", gotrue: false, cli: false,
                         "Emulator: the fake providers approve at once when the request has login_hint."))
        rows.append(bool("strict_id_tokens", \.identityProviders.strictIDTokens, env: ["AUTH_EMULATOR_STRICT_ID_TOKENS"],
                         flag: "strict-id-tokens", gotrue: false, cli: false,
                         "Emulator: the id_token grant accepts only tokens the fake providers signed (on by default beyond loopback)."))
        return rows
    }

    static func jwtRows() -> [Setting] {
        var rows: [Setting] = []
        rows.append(Setting("jwt_secret", .text(emptyIsUnset: true), env: ["GOTRUE_JWT_SECRET"], file: "jwt_secret", flag: "jwt-secret",
                            runtime: false, secret: true, gotrue: .string(JWTSettings.defaultSecret), cli: .string(JWTSettings.defaultSecret),
                            note: "the well-known local secret (a random one beyond loopback)", placeholder: "<secret>",
                            help: "HS256 secret; the anon and service_role keys are derived from it.",
                            read: { .string($0.jwt.secret) }, write: { $0.setJWTSecret($1.string) }))
        rows.append(seconds("jwt_expiry", \.jwt.expirySeconds, env: ["GOTRUE_JWT_EXP"], file: "jwt_expiry",
                            gotrue: 3600, cli: 3600, "Access-token lifetime in seconds (0 means 3600)."))
        rows.append(text("jwt_aud", \.jwt.audience, env: ["GOTRUE_JWT_AUD"], gotrue: "", cli: "authenticated",
                         "The aud claim of access tokens."))
        rows.append(list("jwt_admin_roles", \.jwt.adminRoles, env: ["GOTRUE_JWT_ADMIN_ROLES"],
                         gotrue: ["service_role", "supabase_admin"], cli: ["service_role"],
                         "Token roles the admin API accepts (empty means GoTrue's default)."))
        rows.append(text("jwt_admin_group_name", \.jwt.adminGroupName, env: ["GOTRUE_JWT_ADMIN_GROUP_NAME"],
                         gotrue: "admin", cli: "admin", "The user role allowed to set app_metadata through PUT /user."))
        rows.append(text("jwt_default_group_name", \.jwt.defaultGroupName, env: ["GOTRUE_JWT_DEFAULT_GROUP_NAME"],
                         gotrue: "", cli: "authenticated", "The role claim of new users."))
        rows.append(text("jwt_issuer", \.jwt.issuer, env: ["GOTRUE_JWT_ISSUER"], file: "jwt_issuer",
                         gotrue: "", cli: "", note: "cli: the external URL + /auth/v1 (as supabase start); gotrue: none",
                         "The iss claim of access tokens."))
        rows.append(text("jwt_key_id", \.jwt.keyID, env: ["GOTRUE_JWT_KEY_ID"], runtime: false, gotrue: "", cli: "",
                         "The kid of tokens signed with the JWT secret."))
        // Before the valid methods, so GOTRUE_JWT_VALID_METHODS, when given, is taken as written.
        rows.append(Setting("jwt_keys", .jwks, env: ["GOTRUE_JWT_KEYS"], secret: true, gotrue: .keys([]), cli: .keys([]),
                            note: "cli: the CLI's built-in ES256 key when no source gives keys, as supabase start passes; gotrue: none",
                            help: "Signing keys: the one with sign in its key_ops signs, the others only verify (key rotation). config.toml names a file of them: signing_keys_path.",
                            read: { .keys($0.jwt.keys) },
                            write: { config, value in
                                config.jwt.keys = value.keys
                                // Tokens signed by a key that stays listed keep verifying by their kid.
                                if let methods = config.jwt.validMethods {
                                    config.jwt.validMethods = JWTSettings.methods(methods, adding: value.keys)
                                }
                            }))
        rows.append(Setting("jwt_valid_methods", .list, env: ["GOTRUE_JWT_VALID_METHODS", "GOTRUE_JWT_VALIDMETHODS"], runtime: false,
                            gotrue: .strings([]), cli: .strings([]), note: "the algorithms of the configured keys (HS256 alone without keys); cli: HS256,RS256,ES256, as supabase start passes with its signing key",
                            help: "The alg values incoming tokens may use.",
                            read: { .strings($0.jwt.acceptedMethods) },
                            write: { $0.jwt.validMethods = $1.strings.isEmpty ? nil : $1.strings }))
        for (key, env, path) in [("anon_key", "AUTH_EMULATOR_ANON_KEY", \Configuration.apiKeys.anon),
                                 ("service_role_key", "AUTH_EMULATOR_SERVICE_ROLE_KEY", \Configuration.apiKeys.serviceRole)] {
            rows.append(Setting(key, .text(emptyIsUnset: true), env: [env], file: key, flag: key.replacingUnderscores, runtime: false,
                                secret: true, gotrue: .string(""), cli: .string(""), note: "derived from the JWT secret or the signing key",
                                placeholder: "<key>",
                                help: "The \(key == "anon_key" ? "anon" : "service_role") API key the gateway accepts.",
                                read: { .string($0[keyPath: path]) }, write: { $0[keyPath: path] = $1.string }))
        }
        for (key, env, path) in [("publishable_key", "AUTH_EMULATOR_PUBLISHABLE_KEY", \Configuration.apiKeys.publishable),
                                 ("secret_key", "AUTH_EMULATOR_SECRET_KEY", \Configuration.apiKeys.secret)] {
            rows.append(Setting(key, .text(emptyIsUnset: true), env: [env], file: key, flag: key.replacingUnderscores, runtime: false,
                                secret: true, gotrue: .string(""), cli: .string(""), note: "the CLI's local sb_publishable_/sb_secret_ keys",
                                placeholder: "<key>",
                                help: "The opaque \(key == "secret_key" ? "sb_secret_" : "sb_publishable_") key the gateway accepts.",
                                read: { .string($0[keyPath: path] ?? "") }, write: { $0[keyPath: path] = $1.string }))
        }
        return rows
    }

    static func externalRows() -> [Setting] {
        var rows: [Setting] = []
        rows.append(bool("email_enabled", \.external.emailEnabled, env: ["GOTRUE_EXTERNAL_EMAIL_ENABLED"], file: "email.enable_signup",
                         gotrue: true, cli: true, "Email sign-up and sign-in."))
        rows.append(bool("magic_link_enabled", \.external.magicLinkEnabled, env: ["GOTRUE_EXTERNAL_EMAIL_MAGIC_LINK_ENABLED"],
                         gotrue: true, cli: true, "Magic links (POST /magiclink, /otp with an email)."))
        rows.append(list("email_authorized_addresses", \.external.emailAuthorizedAddresses,
                         env: ["GOTRUE_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES"], gotrue: [], cli: [],
                         "When set, the only addresses mail may go to."))
        rows.append(bool("phone_enabled", \.external.phoneEnabled, env: ["GOTRUE_EXTERNAL_PHONE_ENABLED"], file: "sms.enable_signup",
                         flag: "phone", gotrue: false, cli: false, "Phone sign-up and sign-in."))
        rows.append(bool("anonymous_users_enabled", \.external.anonymousUsersEnabled, env: ["GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED"],
                         file: "enable_anonymous_sign_ins", flag: "anonymous", gotrue: false, cli: false, "Anonymous sign-ins."))
        rows.append(text("ios_bundle_id", \.external.iosBundleID, env: ["GOTRUE_EXTERNAL_IOS_BUNDLE_ID"], gotrue: "", cli: "",
                         "An extra audience accepted in Apple id_tokens."))
        rows.append(duration("flow_state_expiry_seconds", \.external.flowStateExpirySeconds,
                             env: ["GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION"], gotrue: 300, cli: 300,
                             "How long a PKCE flow waits for its code exchange (at least 300 s)."))
        rows.append(text("external_redirect_url", \.external.redirectURL, env: ["GOTRUE_EXTERNAL_REDIRECTURL"], gotrue: "", cli: "",
                         "Where OAuth callbacks send the user, instead of the site URL."))
        rows.append(list("allowed_id_token_issuers", \.external.allowedIDTokenIssuers, env: ["GOTRUE_EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS"],
                         gotrue: ExternalSettings.defaultIDTokenIssuers, cli: ExternalSettings.defaultIDTokenIssuers,
                         "Issuers of the id_token grant's issuer + client_id form (empty means the default)."))
        // Web3 sign-in (internal/conf `Web3Solana`, `Web3Ethereum`). `supabase start` passes only
        // the two `enabled` flags, from `[auth.web3.solana]` / `[auth.web3.ethereum]`.
        rows += web3Rows("solana", "Solana", enabled: \.external.web3Solana.enabled,
                         validity: \.external.web3Solana.maximumValiditySeconds)
        rows += web3Rows("ethereum", "Ethereum", enabled: \.external.web3Ethereum.enabled,
                         validity: \.external.web3Ethereum.maximumValiditySeconds)
        return rows
    }

    static func web3Rows(_ chain: String, _ name: String, enabled: Path<Bool>, validity: Path<Double>) -> [Setting] {
        let upper = chain.uppercased()
        return [
            bool("web3.\(chain).enabled", enabled, env: ["GOTRUE_EXTERNAL_WEB3_\(upper)_ENABLED"], file: "web3.\(chain).enabled",
                 flag: "web3-\(chain)", gotrue: false, cli: false, "Sign in with \(name) (POST /token?grant_type=web3, chain \(chain))."),
            duration("web3.\(chain).maximum_validity_seconds", validity, env: ["GOTRUE_EXTERNAL_WEB3_\(upper)_MAXIMUM_VALIDITY_DURATION"],
                     gotrue: 600, cli: 600, "How far from now a signed \(name) message's Issued At may be, either way."),
        ]
    }

    static func mailerRows() -> [Setting] {
        var rows: [Setting] = []
        rows.append(bool("mailer_autoconfirm", \.mailer.autoconfirm, env: ["GOTRUE_MAILER_AUTOCONFIRM"], file: "!email.enable_confirmations",
                         flag: "autoconfirm", gotrue: false, cli: true, "New email users are confirmed at once (no confirmation mail)."))
        rows.append(bool("email.double_confirm_changes", \.mailer.secureEmailChangeEnabled, env: ["GOTRUE_MAILER_SECURE_EMAIL_CHANGE_ENABLED"],
                         file: "email.double_confirm_changes", gotrue: true, cli: true,
                         "An email change is confirmed from both the old and the new address."))
        rows.append(list("mailer_external_hosts", \.mailer.externalHosts, env: ["GOTRUE_MAILER_EXTERNAL_HOSTS"], gotrue: [], cli: [],
                         "Hosts X-Forwarded-Host may name to have links built on them."))
        rows.append(bool("allow_unverified_email_sign_ins", \.mailer.allowUnverifiedEmailSignIns,
                         env: ["GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS"], gotrue: false, cli: false,
                         "Unconfirmed email users may sign in (needs confirmations on)."))
        rows.append(seconds("email.otp_expiry", \.mailer.otpExpirySeconds, env: ["GOTRUE_MAILER_OTP_EXP"], file: "email.otp_expiry",
                            gotrue: 86_400, cli: 3600, "Email codes and links expire after this many seconds (0 means 86400)."))
        rows.append(whole("email.otp_length", \.mailer.otpLength, Int(Int32.min)...Int(Int32.max), env: ["GOTRUE_MAILER_OTP_LENGTH"],
                          file: "email.otp_length", gotrue: 6, cli: 6, "Digits of email codes (outside 6-10 means 6)."))
        rows.append(duration("email.max_frequency", \.mailer.maxFrequencySeconds, env: ["GOTRUE_SMTP_MAX_FREQUENCY"],
                             file: "email.max_frequency", gotrue: 60, cli: 1,
                             "Least time between two mails of one kind to one user (0 means 1m)."))
        for (name, path) in [("invite", \Configuration.mailer.urlPaths.invite), ("confirmation", \Configuration.mailer.urlPaths.confirmation),
                             ("recovery", \Configuration.mailer.urlPaths.recovery), ("email_change", \Configuration.mailer.urlPaths.emailChange)] {
            rows.append(text("mailer_urlpaths." + name, path, env: ["GOTRUE_MAILER_URLPATHS_" + name.uppercased()],
                             gotrue: "/verify", cli: MailerURLPaths.cliDefault,
                             "Where \(name.spacedWords) links point (empty means /verify)."))
        }
        rows.append(Setting("rate_limit.email_sent", .rate, env: ["GOTRUE_RATE_LIMIT_EMAIL_SENT"], gotrue: .rate(SendRate(events: 30)),
                            cli: .rate(SendRate(events: MailerSettings.cliEmailSent)), help: "Mails sent per hour by the whole project (or N/<duration>).",
                            read: { .rate($0.mailer.rateLimitEmailSent) },
                            write: { if case .rate(let r) = $1 { $0.mailer.rateLimitEmailSent = r } }))
        rows.append(bool("mailer_templates_remote", \.mailer.remoteTemplates, env: ["AUTH_EMULATOR_REMOTE_TEMPLATES"],
                         gotrue: false, cli: false, "Emulator: fetch template URLs on hosts other than this machine's loopback names."))
        rows.append(Setting("mailer_test_otp", .pairs, env: ["AUTH_EMULATOR_MAILER_TEST_OTP", "GOTRUE_MAILER_TEST_OTP"],
                            gotrue: .pairs([:]), cli: .pairs([:]), help: "Emulator: fixed email codes, email:code pairs.",
                            read: { .pairs($0.mailer.testOTP) },
                            write: { config, value in
                                config.mailer.testOTP = [:]
                                for (email, code) in value.pairs { config.mailer.testOTP[email.lowercased()] = code }
                            }))
        for kind in MailNotification.allCases {
            rows.append(Setting("email.notification.\(kind.rawValue).enabled", .bool,
                                env: ["GOTRUE_MAILER_NOTIFICATIONS_\(kind.rawValue.uppercased())_ENABLED"],
                                file: "email.notification.\(kind.rawValue).enabled", gotrue: .bool(false), cli: .bool(false),
                                help: "Send the \(kind.rawValue.spacedWords) notice.",
                                read: { .bool($0.mailer.notifications.contains(kind)) },
                                write: { if $1.bool { $0.mailer.notifications.insert(kind) } else { $0.mailer.notifications.remove(kind) } }))
        }
        for id in MailTemplateID.all {
            rows.append(Setting("mailer_templates.\(id)", .text(emptyIsUnset: false), env: ["GOTRUE_MAILER_TEMPLATES_" + id.uppercased()],
                                runtime: false, gotrue: .string(""), cli: .string(""), note: "the built-in body",
                                help: "URL of the \(id.spacedWords) mail's body template (http(s), file://, or a path on the site URL).",
                                read: { .string($0.mailer.templateURLs[id] ?? "") },
                                write: { $0.mailer.templateURLs[id] = $1.string.isEmpty ? nil : $1.string }))
            rows.append(Setting("email.template.\(id).content", .text(emptyIsUnset: false), env: [],
                                gotrue: .string(""), cli: .string(""), note: "the built-in body",
                                help: "The \(id.spacedWords) mail's body template itself (run time; files use content_path).",
                                read: { .string($0.mailer.templates[id]?.text ?? "") },
                                write: { $0.mailer.templates[id] = $1.string.isEmpty ? nil : MailTemplateSource(text: $1.string, origin: .runtime) }))
            rows.append(Setting("email.template.\(id).subject", .text(emptyIsUnset: true), env: ["GOTRUE_MAILER_SUBJECTS_" + id.uppercased()],
                                gotrue: .string(""), cli: .string(""), note: "the built-in subject",
                                help: "Subject of the \(id.spacedWords) mail.",
                                read: { .string($0.mailer.subjects[id] ?? "") },
                                write: { $0.mailer.subjects[id] = $1.string.isEmpty ? nil : $1.string }))
        }
        return rows
    }

    static func smsRows() -> [Setting] {
        var rows: [Setting] = []
        rows.append(bool("sms_autoconfirm", \.sms.autoconfirm, env: ["GOTRUE_SMS_AUTOCONFIRM"], file: "!sms.enable_confirmations",
                         flag: "sms-autoconfirm", gotrue: false, cli: true, "New phone users are confirmed at once."))
        rows.append(text("sms_provider", \.sms.provider, env: ["GOTRUE_SMS_PROVIDER"], gotrue: "", cli: "",
                         note: "the first enabled [auth.sms.<provider>]", "twilio, twilio_verify, messagebird, textlocal or vonage."))
        rows.append(Setting("sms_delivery", .choice(SMSSettings.Delivery.allCases.map(\.rawValue)), env: ["AUTH_EMULATOR_SMS"],
                            flag: "sms", gotrue: .string(SMSSettings.Delivery.provider.rawValue), cli: .string(SMSSettings.Delivery.auto.rawValue),
                            help: "Emulator: auto captures when no provider is set; capture always; provider fails as GoTrue without one.",
                            read: { .string($0.sms.delivery.rawValue) },
                            write: { $0.sms.delivery = SMSSettings.Delivery(rawValue: $1.string) ?? .auto }))
        rows.append(seconds("sms_otp_exp", \.sms.otpExpirySeconds, env: ["GOTRUE_SMS_OTP_EXP"], gotrue: 60, cli: 6000,
                            "SMS codes expire after this many seconds (0 means 60)."))
        rows.append(whole("sms_otp_length", \.sms.otpLength, Int(Int32.min)...Int(Int32.max), env: ["GOTRUE_SMS_OTP_LENGTH"],
                          gotrue: 6, cli: 6, "Digits of SMS codes (outside 6-10 means 6)."))
        rows.append(duration("sms.max_frequency", \.sms.maxFrequencySeconds, env: ["GOTRUE_SMS_MAX_FREQUENCY"], file: "sms.max_frequency",
                             gotrue: 60, cli: 5, "Least time between two SMS to one user (0 means 1m)."))
        rows.append(text("sms.template", \.sms.template, env: ["GOTRUE_SMS_TEMPLATE"], file: "sms.template",
                         gotrue: "Your code is {{ .Code }}", cli: "Your code is {{ .Code }}", "The SMS text."))
        rows.append(Setting("sms.test_otp", .pairs, env: ["GOTRUE_SMS_TEST_OTP"], gotrue: .pairs([:]), cli: .pairs([:]),
                            help: "Fixed codes by phone number, phone:code pairs.",
                            read: { .pairs($0.sms.testOTP) },
                            write: { config, value in
                                config.sms.testOTP = [:]
                                for (phone, code) in value.pairs { config.sms.testOTP[Configuration.testPhone(phone)] = code }
                            }))
        rows.append(Setting("sms_test_otp_valid_until", .time, env: ["GOTRUE_SMS_TEST_OTP_VALID_UNTIL"], gotrue: .null, cli: .null,
                            help: "After this instant the fixed codes no longer apply.",
                            read: { $0.sms.testOTPValidUntil.map { .string($0.rfc3339) } ?? .null },
                            write: { $0.sms.testOTPValidUntil = $1.optionalString.flatMap(Timestamp.init(rfc3339:)) }))
        rows.append(Setting("rate_limit.sms_sent", .rate, env: ["GOTRUE_RATE_LIMIT_SMS_SENT"], file: "rate_limit.sms_sent",
                            gotrue: .rate(SendRate(events: 30)), cli: .rate(SendRate(events: 30)),
                            help: "SMS sent per hour by the whole project (or N/<duration>).",
                            read: { .rate($0.sms.rateLimitSMSSent) }, write: { if case .rate(let r) = $1 { $0.sms.rateLimitSMSSent = r } }))
        for (provider, requirements) in SMSSettings.providerRequirements.sorted(by: { $0.key < $1.key }) {
            for (setting, _) in requirements {
                let key = "sms.\(provider).\(setting)"
                let secret = setting.contains("token") || setting.contains("secret") || setting.contains("key")
                rows.append(Setting(key, .text(emptyIsUnset: false), env: ["GOTRUE_SMS_\(provider.uppercased())_\(setting.uppercased())"],
                                    file: key, runtime: false, secret: secret, gotrue: .string(""), cli: .string(""),
                                    help: "The \(provider) provider's \(setting.spacedWords).",
                                    read: { .string($0.sms.providerSettings[provider + "." + setting] ?? "") },
                                    write: { $0.sms.providerSettings[provider + "." + setting] = $1.string }))
            }
        }
        return rows
    }

    static func securityRows() -> [Setting] {
        var rows: [Setting] = []
        rows.append(whole("password_min_length", \.password.minLength, Int(Int32.min)...Int(Int32.max), env: ["GOTRUE_PASSWORD_MIN_LENGTH"],
                          file: "minimum_password_length", gotrue: 6, cli: 6, "Shortest password (below 6 means 6)."))
        rows.append(Setting("password_required_characters", .characterSets, env: ["GOTRUE_PASSWORD_REQUIRED_CHARACTERS"], gotrue: .strings([]),
                            cli: .strings([]), help: "Character sets of which a password needs one code point each (':'-separated in the environment).",
                            read: { .strings($0.password.requiredCharacters) },
                            write: { $0.password.requiredCharacters = $1.strings.filter { !$0.isEmpty } }))
        rows.append(bool("refresh_token_rotation_enabled", \.security.refreshTokenRotationEnabled,
                         env: ["GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED"], file: "enable_refresh_token_rotation",
                         gotrue: true, cli: true, "A refresh token is used once; reuse ends the session."))
        rows.append(seconds("refresh_token_reuse_interval", \.security.refreshTokenReuseInterval,
                            env: ["GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL"], file: "refresh_token_reuse_interval",
                            gotrue: 0, cli: 10, "Seconds a used refresh token may be reused (concurrent refreshes)."))
        rows.append(whole("refresh_token_algorithm_version", \.security.refreshTokenAlgorithmVersion, 0...2,
                          env: ["GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION"], gotrue: 0, cli: 0,
                          "2 issues new sessions the signed, session-counter refresh tokens."))
        rows.append(whole("refresh_token_upgrade_percentage", \.security.refreshTokenUpgradePercentage, 0...100,
                          env: ["GOTRUE_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE"], gotrue: 0, cli: 0,
                          "With version 2, the share of sessions whose old token is upgraded on refresh."))
        rows.append(bool("refresh_token_allow_reuse", \.security.refreshTokenAllowReuse, env: ["GOTRUE_SECURITY_REFRESH_TOKEN_ALLOW_REUSE"],
                         gotrue: false, cli: false, "An old new-format token is answered with the session's current one."))
        rows.append(bool("email.secure_password_change", \.security.updatePasswordRequireReauthentication,
                         env: ["GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION"], file: "email.secure_password_change",
                         gotrue: false, cli: false, "A password change needs a recent sign-in or a nonce."))
        rows.append(bool("update_password_require_current_password", \.security.updatePasswordRequireCurrentPassword,
                         env: ["GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD"], gotrue: false, cli: false,
                         "A password change needs the current password."))
        rows.append(bool("manual_linking_enabled", \.security.manualLinkingEnabled, env: ["GOTRUE_SECURITY_MANUAL_LINKING_ENABLED"],
                         file: "enable_manual_linking", gotrue: false, cli: false, "Users may link identities themselves."))
        rows.append(bool("audit_log.disable_postgres", \.auditLogDisablePostgres, env: ["GOTRUE_AUDIT_LOG_DISABLE_POSTGRES"],
                         gotrue: false, cli: false, "Audit events are not stored (GET /admin/audit lists none)."))
        rows.append(bool("experimental.create_email_identity_on_password_set_enabled", \.experimental.createEmailIdentityOnPasswordSet,
                         env: ["GOTRUE_EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED"], gotrue: false, cli: false,
                         "A first password on an account with a confirmed email and no email identity adds one."))
        let sessionDurations: [(String, String, Path<Double?>, String?, String)] = [
            ("sessions.timebox", "GOTRUE_SESSIONS_TIMEBOX", \Configuration.sessions.timeboxSeconds, "sessions.timebox",
             "Sessions end this long after sign-in (unset: never)."),
            ("sessions.inactivity_timeout", "GOTRUE_SESSIONS_INACTIVITY_TIMEOUT", \Configuration.sessions.inactivityTimeoutSeconds,
             "sessions.inactivity_timeout", "Sessions end after this long without a refresh (unset: never)."),
            ("sessions.allow_low_aal", "GOTRUE_SESSIONS_ALLOW_LOW_AAL", \Configuration.sessions.allowLowAALSeconds, nil,
             "An aal1 session of a user with a verified factor ends this long after sign-in (unset: never)."),
        ]
        for (key, env, path, file, help) in sessionDurations {
            rows.append(Setting(key, .optionalDuration, env: [env], file: file, gotrue: .null, cli: .null,
                                help: help,
                                read: { $0[keyPath: path].map(SettingValue.number) ?? .null },
                                write: { $0[keyPath: path] = $1.optionalNumber }))
        }
        rows.append(bool("sessions.single_per_user", \.sessions.singlePerUser, env: ["GOTRUE_SESSIONS_SINGLE_PER_USER"],
                         gotrue: false, cli: false, "A new sign-in ends the user's other sessions."))
        rows.append(list("sessions.tags", \.sessions.tags, env: ["GOTRUE_SESSIONS_TAGS"], gotrue: [], cli: [], "Session tags."))
        return rows
    }

    static func mfaRows() -> [Setting] {
        var rows: [Setting] = []
        for (type, env, path) in [("totp", "TOTP", \Configuration.mfa.totp), ("phone", "PHONE", \Configuration.mfa.phone),
                                  ("web_authn", "WEB_AUTHN", \Configuration.mfa.webAuthn)] {
            // TOTP is on in GoTrue and off in the CLI's template; phone and WebAuthn off in both.
            let onInGoTrue = type == "totp"
            let what = type == "totp" ? "TOTP" : type == "phone" ? "Phone" : "WebAuthn"
            rows.append(Setting("mfa.\(type).enroll_enabled", .bool, env: ["GOTRUE_MFA_\(env)_ENROLL_ENABLED"],
                                file: "mfa.\(type).enroll_enabled", gotrue: .bool(onInGoTrue), cli: .bool(false),
                                help: "\(what) factors: enrolling.",
                                read: { .bool($0[keyPath: path].enroll) }, write: { $0[keyPath: path].enroll = $1.bool }))
            rows.append(Setting("mfa.\(type).verify_enabled", .bool, env: ["GOTRUE_MFA_\(env)_VERIFY_ENABLED"],
                                file: "mfa.\(type).verify_enabled", gotrue: .bool(onInGoTrue), cli: .bool(false),
                                help: "\(what) factors: verifying.",
                                read: { .bool($0[keyPath: path].verify) }, write: { $0[keyPath: path].verify = $1.bool }))
        }
        rows.append(whole("mfa.max_enrolled_factors", \.mfa.maxEnrolledFactors, 0...Int(Int32.max), env: ["GOTRUE_MFA_MAX_ENROLLED_FACTORS"],
                          file: "mfa.max_enrolled_factors", gotrue: 10, cli: 10, "Factors a user may enroll."))
        rows.append(whole("mfa.max_verified_factors", \.mfa.maxVerifiedFactors, 0...Int(Int32.max), env: ["GOTRUE_MFA_MAX_VERIFIED_FACTORS"],
                          gotrue: 10, cli: 10, "Verified factors a user may have."))
        rows.append(number("mfa.challenge_expiry_seconds", \.mfa.challengeExpirySeconds, env: ["GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION"],
                           gotrue: 300, cli: 300, "Seconds a challenge stays valid (plain seconds; at least 300)."))
        rows.append(duration("mfa.factor_expiry_seconds", \.mfa.factorExpirySeconds, env: ["GOTRUE_MFA_FACTOR_EXPIRY_DURATION"],
                             gotrue: 300, cli: 300, "Unverified, never challenged factors older than this are purged (at least 300 s)."))
        rows.append(whole("mfa.phone_otp_length", \.mfa.phoneOTPLength, Int(Int32.min)...Int(Int32.max), env: ["GOTRUE_MFA_PHONE_OTP_LENGTH"],
                          file: "mfa.phone.otp_length", gotrue: 6, cli: 6, "Digits of phone factor codes (outside 6-10 means 6)."))
        rows.append(duration("mfa.phone_max_frequency_seconds", \.mfa.phoneMaxFrequencySeconds, env: ["GOTRUE_MFA_PHONE_MAX_FREQUENCY"],
                             file: "mfa.phone.max_frequency", gotrue: 60, cli: 5, "Least time between two factor SMS (0 means 1m)."))
        rows.append(text("mfa.phone_template", \.mfa.phoneTemplate, emptyIsUnset: true, env: ["GOTRUE_MFA_PHONE_TEMPLATE"],
                         file: "mfa.phone.template", gotrue: "Your code is {{ .Code }}", cli: "Your code is {{ .Code }}",
                         "The phone factor's SMS text."))
        return rows
    }

    static func passkeyRows() -> [Setting] {
        var rows: [Setting] = []
        rows.append(bool("passkey.enabled", \.passkey.enabled, env: ["GOTRUE_PASSKEY_ENABLED"], file: "passkey.enabled",
                         gotrue: false, cli: false, "Passkey sign-in."))
        rows.append(whole("passkey.max_passkeys_per_user", \.passkey.maxPasskeysPerUser, 0...Int(Int32.max),
                          env: ["GOTRUE_PASSKEY_MAX_PASSKEYS_PER_USER"], gotrue: 10, cli: 10, "Passkeys a user may register."))
        rows.append(text("webauthn.rp_id", \.webAuthn.rpID, emptyIsUnset: true, env: ["GOTRUE_WEBAUTHN_RP_ID"], file: "webauthn.rp_id",
                         gotrue: "", cli: "", note: "the site URL's host", "The WebAuthn relying party id."))
        rows.append(text("webauthn.rp_display_name", \.webAuthn.rpDisplayName, emptyIsUnset: true, env: ["GOTRUE_WEBAUTHN_RP_DISPLAY_NAME"],
                         file: "webauthn.rp_display_name", gotrue: "", cli: "", note: "Supabase", "The relying party's name."))
        rows.append(Setting("webauthn.rp_origins", .list, env: ["GOTRUE_WEBAUTHN_RP_ORIGINS"], file: "webauthn.rp_origins",
                            gotrue: .strings([]), cli: .strings([]), note: "the site URL's origin and its localhost twin",
                            help: "Origins ceremonies may come from.",
                            read: { .strings($0.webAuthn.rpOrigins) }, write: { $0.webAuthn.rpOrigins = $1.strings.filter { !$0.isEmpty } }))
        rows.append(duration("webauthn.challenge_expiry_seconds", \.webAuthn.challengeExpirySeconds,
                             env: ["GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION"], gotrue: 300, cli: 300, "Seconds a ceremony stays valid."))
        return rows
    }

    static func hookRows() -> [Setting] {
        var rows: [Setting] = []
        for (name, path) in HookSettings.names {
            // The CLI's [auth.hook.*] tables know every hook but after_user_created.
            let file: String? = name == "after_user_created" ? nil : "hook.\(name)"
            let env = "GOTRUE_HOOK_" + name.uppercased()
            let what = name.spacedWords
            rows.append(Setting("hook.\(name).enabled", .bool, env: [env + "_ENABLED"], file: file.map { $0 + ".enabled" },
                                gotrue: .bool(false), cli: .bool(false), help: "Call the \(what) hook.",
                                read: { .bool($0.hooks[keyPath: path].enabled) }, write: { $0.hooks[keyPath: path].enabled = $1.bool }))
            rows.append(Setting("hook.\(name).uri", .text(emptyIsUnset: false), env: [env + "_URI"], file: file.map { $0 + ".uri" },
                                runtime: false, gotrue: .string(""), cli: .string(""), help: "The \(what) hook's http(s) URL.",
                                read: { .string($0.hooks[keyPath: path].uri) }, write: { $0.hooks[keyPath: path].uri = GoStrings.trim($1.string, " \t") }))
            rows.append(Setting("hook.\(name).secrets", .text(emptyIsUnset: false), env: [env + "_SECRETS"], file: file.map { $0 + ".secrets" },
                                runtime: false, secret: true, gotrue: .string(""), cli: .string(""),
                                help: "The \(what) hook's Standard Webhooks secrets, separated by |.",
                                read: { .string($0.hooks[keyPath: path].secrets.joined(separator: "|")) },
                                write: { $0.hooks[keyPath: path].secrets = $1.string.split(separator: "|").map(String.init).filter { !$0.isEmpty } }))
        }
        return rows
    }

    static func oauthServerRows() -> [Setting] {
        var rows: [Setting] = []
        rows.append(bool("oauth_server.enabled", \.oauthServer.enabled, env: ["GOTRUE_OAUTH_SERVER_ENABLED"], file: "oauth_server.enabled",
                         gotrue: false, cli: false, "Supabase Auth as an OAuth 2.1 / OpenID Connect provider."))
        rows.append(bool("oauth_server.allow_dynamic_registration", \.oauthServer.allowDynamicRegistration,
                         env: ["GOTRUE_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION"], file: "oauth_server.allow_dynamic_registration",
                         gotrue: false, cli: false, "POST /oauth/clients/register (RFC 7591)."))
        rows.append(text("oauth_server.authorization_url_path", \.oauthServer.authorizationPath,
                         env: ["GOTRUE_OAUTH_SERVER_AUTHORIZATION_PATH"], file: "oauth_server.authorization_url_path",
                         gotrue: "", cli: "", "The app's consent page, joined to the site URL."))
        rows.append(duration("oauth_server.authorization_ttl", \.oauthServer.authorizationTTLSeconds, positive: true,
                             env: ["GOTRUE_OAUTH_SERVER_AUTHORIZATION_TTL"], gotrue: 600, cli: 600, "How long an authorization waits for consent."))
        rows.append(text("oauth_server.default_scope", \.oauthServer.defaultScope, emptyIsUnset: true,
                         env: ["GOTRUE_OAUTH_SERVER_DEFAULT_SCOPE"], gotrue: "email", cli: "email", "Scope of requests that name none."))
        rows.append(Setting("oauth_auto_approve", .optionalText, env: ["AUTH_EMULATOR_OAUTH_AUTO_APPROVE"], gotrue: .null, cli: .null,
                            help: "Emulator: /oauth/authorize approves at once on behalf of the user with this email.",
                            read: { $0.oauthServer.autoApproveEmail.map(SettingValue.string) ?? .null },
                            write: { $0.oauthServer.autoApproveEmail = $1.optionalString.flatMap { $0.isEmpty ? nil : $0.lowercased() } }))
        return rows
    }

    static func customOAuthRows() -> [Setting] {
        [
            bool("custom_oauth.enabled", \.customOAuth.enabled, env: ["GOTRUE_CUSTOM_OAUTH_ENABLED"], gotrue: true, cli: true,
                 "Custom OAuth2/OIDC providers (/admin/custom-providers, provider=custom:<name>)."),
            whole("custom_oauth.max_providers", \.customOAuth.maxProviders, Int(Int32.min)...Int(Int32.max), env: ["GOTRUE_CUSTOM_OAUTH_MAX_PROVIDERS"],
                  gotrue: 0, cli: 0, "How many custom providers may exist; 0 (or less) for no limit."),
            text("custom_oauth.external_url", \.customOAuth.externalURL, emptyIsUnset: true, env: ["GOTRUE_CUSTOM_OAUTH_EXTERNAL_URL"],
                 gotrue: "", cli: "", placeholder: "<url>", "The base of custom providers' redirect_uri (<url>/callback); unset, the server's."),
        ]
    }

    static func rateLimitRows() -> [Setting] {
        var rows: [Setting] = []
        rows.append(Setting("rate_limits.preset", .choice(RateLimitSettings.Preset.allCases.map(\.rawValue)), env: ["AUTH_EMULATOR_RATE_LIMITS"],
                            flag: "rate-limits", gotrue: .string("default"), cli: .string("default"),
                            help: "Emulator: default (as GoTrue), off, real (keyed on the peer) or tiny (3 per window).",
                            read: { .string($0.rateLimits.preset.rawValue) },
                            write: { $0.rateLimits.preset = RateLimitSettings.Preset(rawValue: $1.string) ?? .standard }))
        rows.append(text("rate_limits.header", \.rateLimits.header, env: ["GOTRUE_RATE_LIMIT_HEADER"], gotrue: "", cli: "",
                         "The header whose first value keys the per-client limits."))
        rows.append(bool("rate_limits.sb_forwarded_for_enabled", \.rateLimits.sbForwardedForEnabled,
                         env: ["GOTRUE_SECURITY_SB_FORWARDED_FOR_ENABLED"], gotrue: false, cli: false, "Key on Sb-Forwarded-For first."))
        rows.append(bool("rate_limits.key_on_peer_address", \.rateLimits.keyOnPeerAddress, env: ["AUTH_EMULATOR_RATE_LIMIT_PEER"],
                         gotrue: false, cli: false, "Emulator: key on the peer address when no header gives a key."))
        let limits: [(String, String, String?, Path<Double>, Double, String)] = [
            ("otp", "GOTRUE_RATE_LIMIT_OTP", "rate_limit.sign_in_sign_ups", \.rateLimits.otp, 30, "per 5 minutes: sign-ups, OTP, magic links, recovery"),
            ("anonymous_users", "GOTRUE_RATE_LIMIT_ANONYMOUS_USERS", "rate_limit.anonymous_users", \.rateLimits.anonymousUsers, 30, "per hour: anonymous sign-ins"),
            ("token_refresh", "GOTRUE_RATE_LIMIT_TOKEN_REFRESH", "rate_limit.token_refresh", \.rateLimits.tokenRefresh, 150, "per 5 minutes: /token"),
            ("verify", "GOTRUE_RATE_LIMIT_VERIFY", "rate_limit.token_verifications", \.rateLimits.verify, 30, "per 5 minutes: /verify"),
            ("web3", "GOTRUE_RATE_LIMIT_WEB3", "rate_limit.web3", \.rateLimits.web3, 30, "per 5 minutes: web3 sign-ins"),
            ("sso", "GOTRUE_RATE_LIMIT_SSO", nil, \.rateLimits.sso, 30, "per 5 minutes: /sso"),
            ("passkey", "GOTRUE_RATE_LIMIT_PASSKEY", nil, \.rateLimits.passkey, 30, "per 5 minutes: passkey sign-ins"),
            ("oauth_dynamic_client_register", "GOTRUE_RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER", nil, \.rateLimits.oauthClientRegister, 10,
             "per 5 minutes: OAuth client registration"),
            ("mfa_challenge_and_verify", "GOTRUE_MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY", nil, \.rateLimits.mfaChallengeAndVerify, 15,
             "per minute: MFA challenges and verifications"),
            ("saml_assertion", "GOTRUE_SAML_RATE_LIMIT_ASSERTION", nil, \.rateLimits.samlAssertion, 15, "per 5 minutes: SAML assertions"),
        ]
        for (key, env, file, path, value, help) in limits {
            rows.append(number("rate_limits." + key, path, env: [env], file: file, gotrue: value, cli: value, "Requests " + help + "."))
        }
        return rows
    }

    /// `GOTRUE_EXTERNAL_<PROVIDER>_*` / `[auth.external.<provider>]`, one family per provider.
    static func providerRows() -> [Setting] {
        var rows: [Setting] = []
        for provider in ExternalSettings.configurableProviders {
            let env = "GOTRUE_EXTERNAL_\(provider.uppercased())_"
            let base = "external.\(provider)."
            func row(_ field: String, _ kind: SettingKind, _ empty: SettingValue, secret: Bool = false, _ help: String,
                     read: @escaping @Sendable (OAuthProviderSettings) -> SettingValue,
                     write: @escaping @Sendable (inout OAuthProviderSettings, SettingValue) -> Void) -> Setting {
                Setting(base + field, kind, env: [env + field.uppercased()], file: base + field, runtime: false, secret: secret,
                        gotrue: empty, cli: empty, help: help,
                        read: { read($0.external.providers[provider] ?? OAuthProviderSettings()) },
                        write: { config, value in
                            var settings = config.external.providers[provider] ?? OAuthProviderSettings()
                            write(&settings, value)
                            config.external.providers[provider] = settings
                        })
            }
            rows.append(row("enabled", .bool, .bool(false), "Sign-in with \(provider).", read: { .bool($0.enabled) }, write: { $0.enabled = $1.bool }))
            rows.append(row("client_id", .list, .strings([]), "Client ids (several apps, one provider).",
                            read: { .strings($0.clientIDs) }, write: { $0.clientIDs = $1.strings }))
            rows.append(row("secret", .text(emptyIsUnset: false), .string(""), secret: true, "Client secret.",
                            read: { .string($0.secret) }, write: { $0.secret = $1.string }))
            rows.append(row("redirect_uri", .text(emptyIsUnset: false), .string(""), "The callback registered with the provider.",
                            read: { .string($0.redirectURI) }, write: { $0.redirectURI = $1.string }))
            rows.append(row("url", .text(emptyIsUnset: false), .string(""), "A self-hosted provider's base URL (not used by the fake providers).",
                            read: { .string($0.url) }, write: { $0.url = $1.string }))
            rows.append(row("skip_nonce_check", .bool, .bool(false), "Accept id_tokens without a nonce check.",
                            read: { .bool($0.skipNonceCheck) }, write: { $0.skipNonceCheck = $1.bool }))
            rows.append(row("email_optional", .bool, .bool(false), "Accept provider users without an email.",
                            read: { .bool($0.emailOptional) }, write: { $0.emailOptional = $1.bool }))
        }
        return rows
    }
}
