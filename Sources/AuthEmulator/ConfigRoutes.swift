import AuthHTTP
import AuthJSON
import AuthJWT
import GoTrue

/// `GET /emulator/v1/config` and `PATCH /emulator/v1/config`: the live settings a test suite
/// flips between cases (confirmations, sign-up, anonymous users, password policy, rate limits)
/// without restarting the emulator. A change applies to the next request; `/settings` reflects
/// it. A PATCH is all or nothing: one bad field and nothing changes (400 naming the field).
enum ConfigRoutes {
    static func routes(project: Project) -> [Route] {
        let path = GoTrueAPI.emulatorPrefix + "/config"
        return [
            Route("GET", path, operation: "emulator.config.get") { context in .json(describe(context.configuration)) },
            Route("PATCH", path, operation: "emulator.config.update") { context in
                let patch = try ControlRequest.body(context.request)
                try project.settings.update { (config: inout Configuration) throws(AuthError) in
                    let old = config
                    try apply(patch, to: &config)
                    // A runtime change is held to the same rules as start-up, and may not strand
                    // the API keys already handed out.
                    if let problem = config.problem(changingFrom: old) { throw AuthError(400, .validationFailed, problem) }
                }
                // New limits start every bucket afresh: counts made under the old limits would
                // otherwise carry over into a window the test did not ask for.
                if patch["rate_limits"] != nil { project.rateLimiter.reset() }
                return .json(describe(project.configuration))
            },
        ]
    }

    static func describe(_ config: Configuration) -> JSON {
        let limits = config.rateLimits
        return [
            "site_url": .string(config.siteURL),
            "uri_allow_list": .array(config.uriAllowList.map(JSON.string)),
            "disable_signup": .bool(config.disableSignup),
            "mailer_autoconfirm": .bool(config.mailer.autoconfirm),
            "sms_autoconfirm": .bool(config.sms.autoconfirm),
            "email_enabled": .bool(config.external.emailEnabled),
            "phone_enabled": .bool(config.external.phoneEnabled),
            "anonymous_users_enabled": .bool(config.external.anonymousUsersEnabled),
            "password_min_length": .number(config.password.minLength),
            "password_required_characters": .array(config.password.requiredCharacters.map(JSON.string)),
            "jwt_expiry": .number(config.jwt.expirySeconds),
            "refresh_token_rotation_enabled": .bool(config.security.refreshTokenRotationEnabled),
            "refresh_token_reuse_interval": .number(config.security.refreshTokenReuseInterval),
            "refresh_token_algorithm_version": .number(config.security.refreshTokenAlgorithmVersion),
            "refresh_token_upgrade_percentage": .number(config.security.refreshTokenUpgradePercentage),
            "refresh_token_allow_reuse": .bool(config.security.refreshTokenAllowReuse),
            "manual_linking_enabled": .bool(config.security.manualLinkingEnabled),
            "idp_auto_approve": .bool(config.identityProviders.autoApprove),
            "strict_id_tokens": .bool(config.identityProviders.strictIDTokens),
            "require_apikey": .bool(config.requireAPIKey),
            "sms_provider": .string(config.sms.provider),
            "sms_capture": .bool(config.sms.captureOnly),
            "oauth_auto_approve": config.oauthServer.autoApproveEmail.map(JSON.string) ?? .null,
            "mailer_notifications": .array(MailNotification.allCases.filter(config.mailer.notifications.contains)
                .map { .string($0.rawValue) }),
            // Public facts only: never key material.
            "jwt_keys": .array(config.jwt.keys.map { jwk in
                ["kid": .string(jwk.key.kid ?? ""), "alg": .string(jwk.key.algorithm.rawValue), "sign": .bool(jwk.canSign)]
            }),
            "jwt_signing_algorithm": .string(config.jwt.signingKey.algorithm.rawValue),
            "jwt_valid_methods": .array(config.jwt.acceptedMethods.map(JSON.string)),
            "mfa": [
                "totp": ["enroll_enabled": .bool(config.mfa.totp.enroll), "verify_enabled": .bool(config.mfa.totp.verify)],
                "phone": ["enroll_enabled": .bool(config.mfa.phone.enroll), "verify_enabled": .bool(config.mfa.phone.verify)],
                "web_authn": ["enroll_enabled": .bool(config.mfa.webAuthn.enroll), "verify_enabled": .bool(config.mfa.webAuthn.verify)],
                "max_enrolled_factors": .number(config.mfa.maxEnrolledFactors),
                "max_verified_factors": .number(config.mfa.maxVerifiedFactors),
                "challenge_expiry_seconds": .number(config.mfa.challengeExpirySeconds),
                "phone_otp_length": .number(config.mfa.phoneOTPLength),
                "phone_max_frequency_seconds": .number(config.mfa.phoneMaxFrequencySeconds),
                "phone_template": .string(config.mfa.phoneTemplate),
            ],
            "passkey": ["enabled": .bool(config.passkey.enabled), "max_passkeys_per_user": .number(config.passkey.maxPasskeysPerUser)],
            // As configured, and the relying party in force (derived from site_url when unset).
            "webauthn": [
                "rp_id": .string(config.webAuthn.rpID),
                "rp_display_name": .string(config.webAuthn.rpDisplayName),
                "rp_origins": .array(config.webAuthn.rpOrigins.map(JSON.string)),
                "challenge_expiry_seconds": .number(config.webAuthn.challengeExpirySeconds),
                "relying_party": {
                    let rp = config.webAuthn.relyingParty(siteURL: config.siteURL)
                    return ["id": .string(rp.id), "name": .string(rp.name), "origins": .array(rp.origins.map(JSON.string))]
                }(),
            ],
            "rate_limits": [
                "preset": .string(limits.preset.rawValue),
                "header": .string(limits.header),
                "sb_forwarded_for_enabled": .bool(limits.sbForwardedForEnabled),
                "key_on_peer_address": .bool(limits.keyOnPeerAddress),
                "otp": .number(limits.otp),
                "anonymous_users": .number(limits.anonymousUsers),
                "token_refresh": .number(limits.tokenRefresh),
                "verify": .number(limits.verify),
                "web3": .number(limits.web3),
                "sso": .number(limits.sso),
                "passkey": .number(limits.passkey),
                "oauth_dynamic_client_register": .number(limits.oauthClientRegister),
                "mfa_challenge_and_verify": .number(limits.mfaChallengeAndVerify),
                "saml_assertion": .number(limits.samlAssertion),
            ],
        ]
    }

    private static func invalid(_ field: String, _ why: String) -> AuthError {
        AuthError(400, .validationFailed, "\(field): \(why)")
    }

    private static func bool(_ value: JSON, _ field: String) throws(AuthError) -> Bool {
        guard let flag = value.boolValue else { throw invalid(field, "expected true or false") }
        return flag
    }

    private static func count(_ value: JSON, _ field: String, max: Double = Double(Int32.max)) throws(AuthError) -> Int {
        guard let n = value.doubleValue, n == n.rounded(), n >= 0, n <= max else {
            throw invalid(field, max < Double(Int32.max) ? "expected a whole number in 0...\(Int(max))" : "expected a whole number (0 or more)")
        }
        return Int(n)
    }

    private static func strings(_ value: JSON, _ field: String) throws(AuthError) -> [String] {
        guard let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
            throw invalid(field, "expected an array of strings")
        }
        return array.compactMap(\.stringValue)
    }

    static func apply(_ patch: JSONObject, to config: inout Configuration) throws(AuthError) {
        for (key, value) in patch {
            switch key {
            case "site_url":
                guard let url = value.stringValue, !url.isEmpty else { throw invalid(key, "expected a URL") }
                config.siteURL = url
            case "uri_allow_list": config.uriAllowList = try strings(value, key)
            case "disable_signup": config.disableSignup = try bool(value, key)
            case "mailer_autoconfirm": config.mailer.autoconfirm = try bool(value, key)
            case "sms_autoconfirm": config.sms.autoconfirm = try bool(value, key)
            case "email_enabled": config.external.emailEnabled = try bool(value, key)
            case "phone_enabled": config.external.phoneEnabled = try bool(value, key)
            case "anonymous_users_enabled": config.external.anonymousUsersEnabled = try bool(value, key)
            // GoTrue raises a minimum below 6 to 6.
            case "password_min_length": config.password.minLength = Configuration.passwordMinLength(try count(value, key, max: 1000))
            case "password_required_characters": config.password.requiredCharacters = try strings(value, key).filter { !$0.isEmpty }
            case "jwt_expiry":
                let seconds = try count(value, key)
                config.jwt.expirySeconds = Configuration.jwtExpiry(seconds)
            case "refresh_token_rotation_enabled": config.security.refreshTokenRotationEnabled = try bool(value, key)
            case "refresh_token_reuse_interval": config.security.refreshTokenReuseInterval = try count(value, key)
            case "refresh_token_algorithm_version": config.security.refreshTokenAlgorithmVersion = try count(value, key, max: 2)
            case "refresh_token_upgrade_percentage": config.security.refreshTokenUpgradePercentage = try count(value, key, max: 100)
            case "refresh_token_allow_reuse": config.security.refreshTokenAllowReuse = try bool(value, key)
            case "rate_limits": try applyRateLimits(value, to: &config.rateLimits)
            case "mfa": try applyMFA(value, to: &config.mfa)
            case "passkey":
                guard let object = value.objectValue else { throw invalid(key, "expected an object") }
                for (field, v) in object {
                    switch field {
                    case "enabled": config.passkey.enabled = try bool(v, "passkey.enabled")
                    case "max_passkeys_per_user": config.passkey.maxPasskeysPerUser = try count(v, "passkey.max_passkeys_per_user")
                    default: throw invalid("passkey." + field, "unknown field (expected enabled, max_passkeys_per_user)")
                    }
                }
            case "webauthn":
                guard let object = value.objectValue else { throw invalid(key, "expected an object") }
                for (field, v) in object {
                    let name = "webauthn." + field
                    switch field {
                    case "rp_id":
                        // null goes back to the RP derived from site_url; "" is no domain at all.
                        if v.isNull { config.webAuthn.rpID = ""; continue }
                        guard let text = v.stringValue, !text.isEmpty else {
                            throw invalid(name, "expected a domain such as localhost (null derives it from site_url)")
                        }
                        config.webAuthn.rpID = text
                    case "rp_display_name":
                        guard let text = v.stringValue else { throw invalid(name, "expected a string") }
                        config.webAuthn.rpDisplayName = text
                    case "rp_origins": config.webAuthn.rpOrigins = try strings(v, name).filter { !$0.isEmpty }
                    case "challenge_expiry_seconds": config.webAuthn.challengeExpirySeconds = Double(try count(v, name))
                    default: throw invalid(name, "unknown field (expected rp_id, rp_display_name, rp_origins, challenge_expiry_seconds)")
                    }
                }
            case "manual_linking_enabled": config.security.manualLinkingEnabled = try bool(value, key)
            case "idp_auto_approve": config.identityProviders.autoApprove = try bool(value, key)
            case "strict_id_tokens": config.identityProviders.strictIDTokens = try bool(value, key)
            case "require_apikey": config.requireAPIKey = try bool(value, key)
            case "sms_capture": config.sms.captureOnly = try bool(value, key)
            case "oauth_auto_approve":
                if value.isNull {
                    config.oauthServer.autoApproveEmail = nil
                } else if let email = value.stringValue, !email.isEmpty {
                    config.oauthServer.autoApproveEmail = email.lowercased()
                } else {
                    throw invalid(key, "expected a user's email or null")
                }
            case "mailer_notifications":
                var kinds: Set<MailNotification> = []
                for name in try strings(value, key) {
                    guard let kind = MailNotification(rawValue: name) else {
                        throw invalid(key, "unknown notification '\(name)' (expected one of: \(MailNotification.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    kinds.insert(kind)
                }
                config.mailer.notifications = kinds
            case "jwt_keys":
                // Key rotation: the same rules as GOTRUE_JWT_KEYS. Tokens signed by a key that stays
                // listed (verify-only) keep verifying by their kid.
                guard let array = value.arrayValue else { throw invalid(key, "expected an array of private JWKs") }
                let keys: [JWK]
                do {
                    keys = try JWTKeys.parse(array, setting: key)
                } catch {
                    throw AuthError(400, .validationFailed, error.description)
                }
                config.jwt.keys = keys
                if let methods = config.jwt.validMethods {
                    config.jwt.validMethods = JWTSettings.methods(methods, adding: keys)
                }
            default:
                throw invalid(key, "unknown or read-only setting")
            }
        }
        if config.mailer.autoconfirm && config.mailer.allowUnverifiedEmailSignIns {
            throw invalid("mailer_autoconfirm", "cannot be enabled together with unverified email sign-ins")
        }
    }

    /// `"rate_limits": "tiny"` or an object of the fields `describe` shows.
    static func applyRateLimits(_ value: JSON, to limits: inout RateLimitSettings) throws(AuthError) {
        func preset(_ text: String?) throws(AuthError) -> RateLimitSettings.Preset {
            guard let text, let preset = RateLimitSettings.Preset(rawValue: text) else {
                throw invalid("rate_limits.preset", "expected default, off, real or tiny")
            }
            return preset
        }
        if value.stringValue != nil {
            limits.preset = try preset(value.stringValue)
            return
        }
        guard let object = value.objectValue else { throw invalid("rate_limits", "expected a preset name or an object") }
        let numbers: [String: WritableKeyPath<RateLimitSettings, Double>] = [
            "otp": \.otp, "anonymous_users": \.anonymousUsers, "token_refresh": \.tokenRefresh, "verify": \.verify,
            "web3": \.web3, "sso": \.sso, "passkey": \.passkey, "oauth_dynamic_client_register": \.oauthClientRegister,
            "mfa_challenge_and_verify": \.mfaChallengeAndVerify, "saml_assertion": \.samlAssertion,
        ]
        for (key, field) in object {
            let name = "rate_limits." + key
            switch key {
            case "preset": limits.preset = try preset(field.stringValue)
            case "header":
                guard let header = field.stringValue else { throw invalid(name, "expected a header name (or \"\")") }
                limits.header = header
            case "sb_forwarded_for_enabled": limits.sbForwardedForEnabled = try bool(field, name)
            case "key_on_peer_address": limits.keyOnPeerAddress = try bool(field, name)
            default:
                guard let path = numbers[key] else { throw invalid(name, "unknown setting") }
                guard let n = field.doubleValue, n >= 0, n.isFinite else { throw invalid(name, "expected a number of requests (0 or more)") }
                limits[keyPath: path] = n
            }
        }
    }

    /// `"mfa"`: the fields `describe` shows; toggles as `{"totp": {"enroll_enabled": true}}`.
    static func applyMFA(_ value: JSON, to mfa: inout MFASettings) throws(AuthError) {
        guard let object = value.objectValue else { throw invalid("mfa", "expected an object") }
        for (key, field) in object {
            let name = "mfa." + key
            switch key {
            case "totp", "phone", "web_authn":
                guard let toggles = field.objectValue else { throw invalid(name, "expected an object") }
                var current = key == "totp" ? mfa.totp : key == "phone" ? mfa.phone : mfa.webAuthn
                for (toggle, flag) in toggles {
                    switch toggle {
                    case "enroll_enabled": current.enroll = try bool(flag, name + "." + toggle)
                    case "verify_enabled": current.verify = try bool(flag, name + "." + toggle)
                    default: throw invalid(name + "." + toggle, "unknown setting")
                    }
                }
                switch key {
                case "totp": mfa.totp = current
                case "phone": mfa.phone = current
                default: mfa.webAuthn = current
                }
            case "max_enrolled_factors": mfa.maxEnrolledFactors = try count(field, name)
            case "max_verified_factors": mfa.maxVerifiedFactors = try count(field, name)
            case "challenge_expiry_seconds":
                // GoTrue raises anything below 300 s to 300 s.
                mfa.challengeExpirySeconds = max(300, Double(try count(field, name)))
            case "phone_otp_length": mfa.phoneOTPLength = Configuration.otpLength(try count(field, name))
            case "phone_max_frequency_seconds":
                guard let n = field.doubleValue, n >= 0, n.isFinite else { throw invalid(name, "expected a number of seconds") }
                mfa.phoneMaxFrequencySeconds = n == 0 ? 60 : n
            case "phone_template":
                guard let text = field.stringValue else { throw invalid(name, "expected a string") }
                mfa.phoneTemplate = text
            default:
                throw invalid(name, "unknown setting")
            }
        }
    }
}
