import AuthJSON
import AuthJWT

/// The live configuration of one emulated project. Names follow the real server's `GOTRUE_*`
/// variables (reference §15); defaults follow `supabase start` (the Supabase CLI's local
/// `config.toml` defaults) so existing local setups work unchanged.
public struct Configuration: Sendable {
    /// `GOTRUE_SITE_URL`: default redirect target.
    public var siteURL: String = "http://127.0.0.1:3000"
    /// `GOTRUE_URI_ALLOW_LIST`: extra redirect URL globs.
    public var uriAllowList: [String] = ["https://127.0.0.1:3000"]
    /// `API_EXTERNAL_URL`: the public base URL used in links.
    public var externalURL: String = Configuration.defaultExternalURL
    /// `GOTRUE_DISABLE_SIGNUP`.
    public var disableSignup = false
    /// The `/auth/v1` gateway's API-key check. Off by default, as under `supabase start`, whose
    /// Kong routes to GoTrue have no key check; on (`--require-apikey`) it refuses requests as
    /// the hosted platform's gateway does.
    public var requireAPIKey = false
    /// `GOTRUE_CORS_ALLOWED_HEADERS`: added to the built-in allowed request headers.
    public var corsAllowedHeaders: [String] = []

    public var jwt = JWTSettings()
    public var external = ExternalSettings()
    public var mailer = MailerSettings()
    public var sms = SMSSettings()
    public var password = PasswordSettings()
    public var security = SecuritySettings()
    public var sessions = SessionSettings()
    public var mfa = MFASettings()
    /// `GOTRUE_PASSKEY_*` and `GOTRUE_WEBAUTHN_*` (`Domain/WebAuthnSettings.swift`).
    public var passkey = PasskeySettings()
    public var webAuthn = WebAuthnSettings()
    public var hooks = HookSettings()
    public var oauthServer = OAuthServerSettings()
    public var customOAuth = CustomOAuthSettings()
    /// `GOTRUE_RATE_LIMIT_*` per-client limits and the emulator's presets (`Domain/RateLimits.swift`).
    public var rateLimits = RateLimitSettings()
    /// The emulator's own behaviour around social sign-in (no GoTrue equivalent).
    public var identityProviders = IdentityProviderSettings()

    /// The keys the gateway (`/auth/v1/...`) accepts in `apikey`; derived from the JWT secret
    /// unless given explicitly.
    public var apiKeys: APIKeys
    /// Emulator-only: PBKDF2 iterations for new password hashes (existing hashes keep theirs).
    public var passwordHashIterations: Int = 100_000
    /// Postgres mode: new hashes are bcrypt at this cost, as GoTrue stores them (`$2a$`), so
    /// pgcrypto's `crypt()`, seed SQL and a real GoTrue on the same database read them; nil
    /// (SQLite) keeps PBKDF2. Set by the server from the database, never by a setting.
    public var bcryptPasswordCost: Int? = nil
    /// GoTrue's cost (`bcrypt.DefaultCost`), and the cheapest bcrypt allows, used when the
    /// PBKDF2 iterations were lowered below the default (test suites that make many users).
    public static func bcryptCost(forIterations iterations: Int) -> Int { iterations >= 100_000 ? 10 : 4 }
    /// The iterations accepted: below 1000 is not a password hash any more (NIST SP 800-132
    /// §5.2 recommends at least 1000); above 10 million one sign-in takes seconds.
    public static let passwordIterationsRange = 1000...10_000_000
    /// Reported by `GET /health`.
    public var version: String = Configuration.emulatorVersion
    /// Whose defaults filled what no source set (`Configuration(defaults:)`).
    public var defaultsProfile: DefaultsProfile = .cli
    /// Where each setting's value came from, by settings-table key; absent means the default.
    public var settingSources: [String: SettingSource] = [:]

    /// The GoTrue release whose wire behaviour is reproduced, and this emulator's own version.
    /// GoTrue's default `API_EXTERNAL_URL`; the emulator replaces it with its listen address.
    public static let defaultExternalURL = "http://127.0.0.1:9999"

    public static let emulatedGoTrueVersion = "v2.196.0"
    public static let emulatorVersion = "v2.196.0-emulator.0.1.0"

    public init(jwt: JWTSettings = JWTSettings(), apiKeys: APIKeys? = nil) {
        self.jwt = jwt
        self.apiKeys = apiKeys ?? APIKeys.standard(secret: jwt.secret)
    }

    /// Re-derives the standard API keys after the JWT secret changed.
    public mutating func deriveAPIKeys() {
        apiKeys = APIKeys.standard(secret: jwt.secret)
    }
}

public struct JWTSettings: Sendable {
    /// `GOTRUE_JWT_SECRET`; the `supabase start` default.
    public var secret: String = JWTSettings.defaultSecret
    /// `GOTRUE_JWT_EXP`: access-token lifetime in seconds.
    public var expirySeconds: Int = 3600
    /// `GOTRUE_JWT_AUD`.
    public var audience: String = "authenticated"
    /// `GOTRUE_JWT_ADMIN_ROLES`: token roles accepted by admin endpoints (`supabase start` sets
    /// `service_role` only; GoTrue's own default adds `supabase_admin`).
    public var adminRoles: [String] = ["service_role"]
    /// `GOTRUE_JWT_ADMIN_GROUP_NAME`: the *user* role allowed to set app_metadata via PUT /user.
    public var adminGroupName: String = "admin"
    /// `GOTRUE_JWT_DEFAULT_GROUP_NAME`: the `role` given to new users.
    public var defaultGroupName: String = "authenticated"
    /// `GOTRUE_JWT_ISSUER`: `iss` claim when non-empty. `supabase start` sets the local auth URL.
    public var issuer: String = ""
    /// `GOTRUE_JWT_KEY_ID`: `kid` for the plain secret.
    public var keyID: String = ""
    /// `GOTRUE_JWT_KEYS`: private JWKs (`oct`, `RSA`, `EC` P-256, `OKP` Ed25519); the one whose
    /// `key_ops` has `sign` signs, the others verify only (reference §7.3).
    public var keys: [JWK] = []
    /// `GOTRUE_JWT_VALID_METHODS`: the `alg` values incoming tokens may use; nil means the
    /// algorithms of the configured keys (HS256 alone without keys), as `ApplyDefaults` sets.
    public var validMethods: [String]?

    public static let defaultSecret = "super-secret-jwt-token-with-at-least-32-characters-long"

    /// The `kid` of the Supabase CLI's built-in signing key.
    public static let cliDefaultKeyID = "b81269f1-21d8-4f2e-b719-c2240a840d90"

    /// The ES256 key every `supabase start` project signs user tokens with unless
    /// `signing_keys_path` names others: a fixed, published key of the CLI's default
    /// configuration (`pkg/config`, since CLI 2.70; random per start before), like the demo JWT
    /// secret. The same key here means tokens verify with the JWKS a local stack's other
    /// services are given.
    public static let cliDefaultKey: JWK = {
        let members: JSONObject = [
            "kty": "EC", "kid": .string(cliDefaultKeyID), "use": "sig", "key_ops": ["sign", "verify"],
            "alg": "ES256", "ext": true, "d": "dIhR8wywJlqlua4y_yMq2SLhlFXDZJBCvFrY1DCHyVU", "crv": "P-256",
            "x": "M5Sjqn5zwC9Kl1zVfUUGvv9boQjCGd45G8sdopBExB4",
            "y": "P6IXMvA2WYXSHSOMTBH2jsw_9rrzGy89FjPf6oOsIxQ",
        ]  // in the order the CLI serialises it for GOTRUE_JWT_KEYS
        do {
            return try JWK(members)
        } catch {
            // A fixed key: failing to read it is a bug the tests catch at once.
            preconditionFailure("the CLI's default signing key does not parse: \(error)")
        }
    }()

    public init() {}

    /// The JWK that signs, if `keys` has one (`GetSigningJwk`).
    public var signingJWK: JWK? { keys.first(where: \.canSign) }

    /// The key tokens are signed with: the signing JWK, else the secret as HS256 with
    /// `GOTRUE_JWT_KEY_ID` as its `kid` when set.
    public var signingKey: JWTKey {
        if let jwk = signingJWK { return jwk.key }
        return JWTKey(kid: keyID.isEmpty ? nil : keyID, secret: Array(secret.utf8))
    }

    /// The key role tokens (`auth-emulator token --role`, `/emulator/v1/token`) are signed
    /// with, as the anon and service_role keys are: the signing key, except the CLI's built-in
    /// one, which `supabase start` uses for user tokens only (its API keys stay HS256).
    public var roleTokenKey: JWTKey {
        guard signingJWK?.key.kid == JWTSettings.cliDefaultKeyID else { return signingKey }
        return JWTKey(kid: keyID.isEmpty ? nil : keyID, secret: Array(secret.utf8))
    }

    /// The accepted algorithms in force (`ApplyDefaults`: the keys' algorithms).
    public var acceptedMethods: [String] {
        if let validMethods { return validMethods }
        return keys.isEmpty ? [JWTAlgorithm.hs256.rawValue] : JWTSettings.methods([], adding: keys)
    }

    /// `methods`, then the algorithms of `keys` it lacks, in key order.
    public static func methods(_ methods: [String], adding keys: [JWK]) -> [String] {
        var result = methods
        for jwk in keys where !result.contains(jwk.key.algorithm.rawValue) { result.append(jwk.key.algorithm.rawValue) }
        return result
    }

    /// Verification keys as `parseJWTClaims` resolves them: by `kid` among the configured keys
    /// (public halves) or `GOTRUE_JWT_KEY_ID` for the secret; otherwise, for HS256 tokens only,
    /// the plain secret.
    public var verificationKeys: JWTKeySet {
        var set = keys.map { $0.key.publicOnly }
        let secretBytes = Array(secret.utf8)
        if !keyID.isEmpty { set.append(JWTKey(kid: keyID, secret: secretBytes)) }
        return JWTKeySet(keys: set, fallback: JWTKey(secret: secretBytes), unknownKidUsesFallback: true,
                         validMethods: acceptedMethods)
    }

    /// `/.well-known/jwks.json`: the public keys, never a symmetric one.
    public var publicJWKs: [JSONObject] { keys.compactMap(\.publicJSON) }
}

/// `GOTRUE_EXTERNAL_*`.
/// One chain of Web3 sign-in (`SolanaConfiguration` / `EthereumConfiguration` in GoTrue's
/// internal/conf): off by default; a signed message counts only while now is within
/// `maximumValiditySeconds` of its Issued At, either way.
public struct Web3ChainSettings: Sendable, Equatable {
    /// `..._ENABLED`.
    public var enabled = false
    /// `..._MAXIMUM_VALIDITY_DURATION` (Go duration, default `10m`).
    public var maximumValiditySeconds: Double = 600

    public init() {}
}

public struct ExternalSettings: Sendable {
    /// `GOTRUE_EXTERNAL_EMAIL_ENABLED`.
    public var emailEnabled = true
    /// `GOTRUE_EXTERNAL_EMAIL_MAGIC_LINK_ENABLED`.
    public var magicLinkEnabled = true
    /// `GOTRUE_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES`: when set, the only addresses mail may go to.
    public var emailAuthorizedAddresses: [String] = []
    /// `GOTRUE_EXTERNAL_PHONE_ENABLED` (`supabase start`: `[auth.sms] enable_signup = false`).
    public var phoneEnabled = false
    /// `GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED`.
    public var anonymousUsersEnabled = false
    /// `GOTRUE_EXTERNAL_<PROVIDER>_*` for OAuth / id_token providers, keyed by provider name
    /// (`apple`, `google`, ...).
    public var providers: [String: OAuthProviderSettings] = [:]
    /// `GOTRUE_EXTERNAL_IOS_BUNDLE_ID`.
    public var iosBundleID = ""
    /// `GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION` seconds: how long a PKCE flow state waits for
    /// its code exchange (GoTrue raises anything below 300 s to 300 s).
    public var flowStateExpirySeconds: Double = 300
    /// `GOTRUE_EXTERNAL_REDIRECTURL`: when set, overrides where OAuth callbacks send the user.
    public var redirectURL = ""
    /// `GOTRUE_EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS`: issuers the deprecated `issuer` + `client_id`
    /// form of the id_token grant accepts (GoTrue's default when the list is empty).
    public var allowedIDTokenIssuers = ExternalSettings.defaultIDTokenIssuers
    /// `GOTRUE_EXTERNAL_WEB3_SOLANA_*`: Sign in with Solana (`grant_type=web3`).
    public var web3Solana = Web3ChainSettings()
    /// `GOTRUE_EXTERNAL_WEB3_ETHEREUM_*`: Sign in with Ethereum (`grant_type=web3`).
    public var web3Ethereum = Web3ChainSettings()

    public static let defaultIDTokenIssuers = ["https://appleid.apple.com", "https://accounts.google.com"]

    /// The providers `GET /settings` lists, in the real server's serialization order.
    public static let settingsProviders = [
        "apple", "azure", "bitbucket", "discord", "facebook", "snapchat", "figma", "fly", "github",
        "gitlab", "google", "keycloak", "kakao", "linkedin", "linkedin_oidc", "notion", "spotify",
        "slack", "slack_oidc", "workos", "twitch", "twitter",
    ]

    /// Providers configurable through `GOTRUE_EXTERNAL_<PROVIDER>_*`: the ones `/settings`
    /// lists, plus the ones GoTrue accepts without listing them.
    public static let configurableProviders = settingsProviders + ["x", "zoom", "vercel_marketplace"]

    public init() {}

    public func isEnabled(_ provider: String) -> Bool { providers[provider]?.enabled ?? false }
}

public struct OAuthProviderSettings: Sendable, Equatable {
    public var enabled = false
    /// `_CLIENT_ID`: a comma-separated list on the real server.
    public var clientIDs: [String] = []
    public var secret = ""
    public var redirectURI = ""
    public var url = ""
    public var skipNonceCheck = false
    public var emailOptional = false
    public init() {}
}

/// `GOTRUE_MAILER_*` and `GOTRUE_SMTP_MAX_FREQUENCY`.
/// How the emulator's fake identity providers and the id_token grant behave. These have no
/// GoTrue counterpart: the real server talks to real providers.
public struct IdentityProviderSettings: Sendable, Equatable {
    /// The fake provider's authorization page approves at once, without showing the page, when
    /// the request carries `login_hint=<email>` (headless tests).
    public var autoApprove = false
    /// Accept only id_tokens the emulator's own issuers signed. Off (the default), tokens from
    /// real providers (whose signature cannot be checked offline) and plain JSON claims are
    /// accepted after their other checks, with a logged warning for the former.
    public var strictIDTokens = false
    public init() {}
}

public struct MailerSettings: Sendable {
    /// `GOTRUE_MAILER_AUTOCONFIRM` (`supabase start`: `[auth.email] enable_confirmations = false`).
    public var autoconfirm = true
    /// `GOTRUE_MAILER_SECURE_EMAIL_CHANGE_ENABLED` (`double_confirm_changes = true`).
    public var secureEmailChangeEnabled = true
    /// `GOTRUE_MAILER_EXTERNAL_HOSTS`: hosts a request may name in `X-Forwarded-Host` to have
    /// its links built on that host instead of `API_EXTERNAL_URL` (`isValidExternalHost`).
    public var externalHosts: [String] = []
    /// `GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS`.
    public var allowUnverifiedEmailSignIns = false
    /// `GOTRUE_MAILER_OTP_EXP` seconds (`supabase start`: `otp_expiry = 3600`).
    public var otpExpirySeconds = 3600
    /// `GOTRUE_MAILER_OTP_LENGTH` (6-10).
    public var otpLength = 6
    /// `GOTRUE_SMTP_MAX_FREQUENCY` seconds (`supabase start`: `max_frequency = "1s"`).
    public var maxFrequencySeconds: Double = 1
    /// `GOTRUE_MAILER_URLPATHS_{INVITE,CONFIRMATION,RECOVERY,EMAIL_CHANGE}`: where email links
    /// point, resolved against `API_EXTERNAL_URL`.
    public var urlPaths = MailerURLPaths()
    /// `GOTRUE_RATE_LIMIT_EMAIL_SENT`: the global email send limit (reference §6.2). GoTrue's
    /// default is 30 per hour; `supabase start` passes 360000 unless custom SMTP is on.
    public var rateLimitEmailSent = SendRate(events: MailerSettings.cliEmailSent)

    public static let cliEmailSent = 360_000.0
    /// Emulator-only (`GOTRUE_MAILER_TEST_OTP` / `AUTH_EMULATOR_MAILER_TEST_OTP`): fixed email
    /// codes per lowercased address, the email counterpart of `GOTRUE_SMS_TEST_OTP`.
    public var testOTP: [String: String] = [:]
    /// `GOTRUE_MAILER_NOTIFICATIONS_<KIND>_ENABLED` (`[auth.email.notification.<kind>] enabled`):
    /// the account-change notices sent; all off by default, as the real server.
    public var notifications: Set<MailNotification> = []
    /// `GOTRUE_MAILER_SUBJECTS_<TEMPLATE>` (`[auth.email.template.<id>] subject`,
    /// `[auth.email.notification.<kind>] subject`): subject lines replacing the defaults, by
    /// template id (`confirmation`, `password_changed_notification`, ...), with the template's
    /// `{{ .Field }}` values filled in.
    public var subjects: [String: String] = [:]
    /// Custom bodies by template id, rendered with Go's html/template as the real server's
    /// templatemailer renders them: `[auth.email.template.<id>] content_path` and
    /// `[auth.email.notification.<kind>] content_path` (read at start), the body fetched from
    /// `GOTRUE_MAILER_TEMPLATES_<ID>`, or set at run time. An id without one uses the built-in body.
    public var templates: [String: MailTemplateSource] = [:]
    /// `GOTRUE_MAILER_TEMPLATES_<ID>`: where each custom body is fetched from at start (and on
    /// `POST /emulator/v1/templates/reload`): an http(s) URL, a `file://` URL, or a path joined
    /// to `GOTRUE_SITE_URL` as the real server joins it.
    public var templateURLs: [String: String] = [:]
    /// Emulator-only (`AUTH_EMULATOR_REMOTE_TEMPLATES`): fetch template URLs on hosts other than
    /// this machine's loopback names too.
    public var remoteTemplates = false
    public init() {}
}

/// A custom email body and where it was read, so it can be read again and named in messages.
public struct MailTemplateSource: Sendable, Equatable {
    public enum Origin: Sendable, Equatable {
        /// A file (`content_path`, a `file://` URL), read again on reload.
        case file(String)
        /// `GOTRUE_MAILER_TEMPLATES_<ID>`, fetched again on reload.
        case url(String)
        /// `PATCH /emulator/v1/config`.
        case runtime
    }
    public var text: String
    public var origin: Origin
    public init(text: String, origin: Origin) {
        self.text = text
        self.origin = origin
    }

    /// The name parse and execution errors carry, as Go's template name (the URL there).
    public var name: String {
        switch origin {
        case .file(let path): path
        case .url(let url): url
        case .runtime: "runtime"
        }
    }
}

/// `GOTRUE_CUSTOM_OAUTH_*`: providers managed at run time through `/admin/custom-providers`.
/// On by default in GoTrue (`default:"true"`); the CLI passes neither variable.
public struct CustomOAuthSettings: Sendable, Equatable {
    public var enabled = true
    /// `GOTRUE_CUSTOM_OAUTH_MAX_PROVIDERS`: 0 means no limit.
    public var maxProviders = 0
}

/// `GOTRUE_OAUTH_SERVER_*` (`[auth.oauth_server]`): Supabase Auth as an OAuth 2.1 / OpenID
/// Connect provider for third-party apps. Off by default, as the real server and the CLI.
public struct OAuthServerSettings: Sendable, Equatable {
    public var enabled = false
    /// `GOTRUE_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION`: `POST /oauth/clients/register` (RFC 7591).
    public var allowDynamicRegistration = false
    /// `GOTRUE_OAUTH_SERVER_AUTHORIZATION_PATH`: the app's consent page, joined to `SITE_URL`
    /// (`[auth.oauth_server] authorization_url_path`, `/oauth/consent` in the CLI's template).
    public var authorizationPath = ""
    /// `GOTRUE_OAUTH_SERVER_AUTHORIZATION_TTL` seconds (10 minutes).
    public var authorizationTTLSeconds: Double = 600
    /// `GOTRUE_OAUTH_SERVER_DEFAULT_SCOPE`.
    public var defaultScope = "email"
    /// Emulator-only (`AUTH_EMULATOR_OAUTH_AUTO_APPROVE`, `"oauth_auto_approve"` at runtime): the
    /// email of a user on whose behalf `/oauth/authorize` approves at once, redirecting straight
    /// back to the client with a code, so a headless test needs no consent page.
    public var autoApproveEmail: String?
    public init() {}
}

/// `GOTRUE_HOOK_<NAME>_ENABLED`, `_URI`, `_SECRETS` (`[auth.hook.<name>]`): the auth hooks.
public struct HookSettings: Sendable, Equatable {
    /// One extensibility point (`conf.ExtensibilityPointConfiguration`).
    public struct Point: Sendable, Equatable {
        public var enabled = false
        public var uri = ""
        /// Standard Webhooks secrets, `v1,whsec_<base64>`; `GOTRUE_HOOK_*_SECRETS` separates them with `|`.
        public var secrets: [String] = []
        public init() {}

        /// Called over HTTP: enabled with an `http:` or `https:` URI. A `pg-functions:` hook
        /// needs Postgres and is treated as off (the emulator says so at start-up).
        public var callable: Bool { enabled && (uri.hasPrefix("http:") || uri.hasPrefix("https:")) }
    }

    public var customAccessToken = Point()
    public var sendEmail = Point()
    public var sendSMS = Point()
    public var beforeUserCreated = Point()
    public var afterUserCreated = Point()
    public var passwordVerificationAttempt = Point()
    public var mfaVerificationAttempt = Point()
    public init() {}

    /// Asked on every write (`Core.write`): the seven points spelled out, since a key-path
    /// subscript costs about a thousand instructions each.
    var anyCallable: Bool {
        customAccessToken.callable || sendEmail.callable || sendSMS.callable || beforeUserCreated.callable
            || afterUserCreated.callable || passwordVerificationAttempt.callable || mfaVerificationAttempt.callable
    }

    /// The points by their configuration name (`GOTRUE_HOOK_<NAME>_*`, `[auth.hook.<name>]`).
    public static let names: [(name: String, path: WritableKeyPath<HookSettings, Point> & Sendable)] = [
        ("custom_access_token", \.customAccessToken), ("send_email", \.sendEmail), ("send_sms", \.sendSMS),
        ("before_user_created", \.beforeUserCreated), ("after_user_created", \.afterUserCreated),
        ("password_verification_attempt", \.passwordVerificationAttempt),
        ("mfa_verification_attempt", \.mfaVerificationAttempt),
    ]
}

/// `GOTRUE_MFA_*` (reference §14, §15.6). TOTP is off as under `supabase start`, whose
/// `config.toml` template sets `[auth.mfa.totp] enroll_enabled = false` (GoTrue's own default is
/// on); phone and WebAuthn are off in both.
public struct MFASettings: Sendable, Equatable {
    public struct Toggles: Sendable, Equatable {
        public var enroll: Bool
        public var verify: Bool
        public init(enroll: Bool = false, verify: Bool = false) {
            self.enroll = enroll
            self.verify = verify
        }
    }

    /// `GOTRUE_MFA_TOTP_ENROLL_ENABLED`, `GOTRUE_MFA_TOTP_VERIFY_ENABLED`.
    public var totp = Toggles()
    /// `GOTRUE_MFA_PHONE_ENROLL_ENABLED`, `GOTRUE_MFA_PHONE_VERIFY_ENABLED`.
    public var phone = Toggles()
    /// `GOTRUE_MFA_WEB_AUTHN_ENROLL_ENABLED`, `..._VERIFY_ENABLED` (`Endpoints/MFAWebAuthn.swift`).
    public var webAuthn = Toggles()
    /// `GOTRUE_MFA_MAX_ENROLLED_FACTORS`.
    public var maxEnrolledFactors = 10
    /// `GOTRUE_MFA_MAX_VERIFIED_FACTORS`.
    public var maxVerifiedFactors = 10
    /// `GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION` seconds (at least 300).
    public var challengeExpirySeconds: Double = 300
    /// `GOTRUE_MFA_FACTOR_EXPIRY_DURATION`: unverified, never challenged factors older than this
    /// are purged before an enrollment (at least 300 s).
    public var factorExpirySeconds: Double = 300
    /// `GOTRUE_MFA_PHONE_OTP_LENGTH` (6-10).
    public var phoneOTPLength = 6
    /// `GOTRUE_MFA_PHONE_MAX_FREQUENCY` seconds (`supabase start`: `max_frequency = "5s"`).
    public var phoneMaxFrequencySeconds: Double = 5
    /// `GOTRUE_MFA_PHONE_TEMPLATE`.
    public var phoneTemplate = "Your code is {{ .Code }}"
    public init() {}
}

/// The account-change notices of `internal/mailer` (`PasswordChangedNotification`, ...): sent
/// to the account's email address after the change, never failing the request that made it.
public enum MailNotification: String, Sendable, CaseIterable, Hashable {
    case passwordChanged = "password_changed"
    case emailChanged = "email_changed"
    case phoneChanged = "phone_changed"
    case identityLinked = "identity_linked"
    case identityUnlinked = "identity_unlinked"
    case mfaFactorEnrolled = "mfa_factor_enrolled"
    case mfaFactorUnenrolled = "mfa_factor_unenrolled"

    /// The template id, also the outbox `type` of the captured message.
    public var templateID: String { rawValue + "_notification" }
}

/// The template ids of `GOTRUE_MAILER_SUBJECTS_*` and `GOTRUE_MAILER_TEMPLATES_*`.
public enum MailTemplateID {
    public static let all = ["invite", "confirmation", "recovery", "email_change", "magic_link", "reauthentication"]
        + MailNotification.allCases.map(\.templateID)
}

/// `GOTRUE_SMS_*`.
public struct SMSSettings: Sendable {
    /// `GOTRUE_SMS_AUTOCONFIRM` (`supabase start`: `[auth.sms] enable_confirmations = false`).
    public var autoconfirm = true
    /// `GOTRUE_SMS_PROVIDER`. Empty: messages are captured in the outbox. Named: the provider's
    /// settings are validated as the real server validates them before each send (missing
    /// credentials fail the send), then the message is captured; nothing leaves the machine.
    public var provider = ""
    /// The named providers' settings, by `<provider>.<setting>` (`twilio.account_sid`, ...):
    /// `GOTRUE_SMS_<PROVIDER>_<SETTING>` or `[auth.sms.<provider>]`.
    public var providerSettings: [String: String] = [:]
    /// Emulator-only (`--sms`, `AUTH_EMULATOR_SMS`, `"sms_delivery"` at runtime): what happens
    /// to a message.
    public enum Delivery: String, Sendable, CaseIterable {
        /// A named provider is validated as the real server does; with none, the message is
        /// captured (the friendly default of the `cli` profile).
        case auto
        /// Every message is captured, whatever the provider settings say.
        case capture
        /// As the real server: with no provider named, every send fails (`gotrue` profile).
        case provider
    }
    public var delivery = Delivery.auto
    /// `GOTRUE_SMS_OTP_EXP` seconds (`supabase start` sets 6000; GoTrue's own default is 60).
    public var otpExpirySeconds = 6000
    /// `GOTRUE_SMS_OTP_LENGTH` (6-10).
    public var otpLength = 6
    /// `GOTRUE_SMS_MAX_FREQUENCY` seconds (`supabase start`: `max_frequency = "5s"`).
    public var maxFrequencySeconds: Double = 5
    /// `GOTRUE_SMS_TEMPLATE`.
    public var template = "Your code is {{ .Code }}"
    /// `GOTRUE_SMS_TEST_OTP`: fixed codes per phone (digits only).
    public var testOTP: [String: String] = [:]
    /// `GOTRUE_SMS_TEST_OTP_VALID_UNTIL`: after this instant the fixed codes no longer apply.
    public var testOTPValidUntil: Timestamp?

    /// `GetTestOTP`: the fixed code of `phone` while the test codes are valid at `now`.
    public func testOTP(for phone: String, now: Timestamp) -> String? {
        if let until = testOTPValidUntil, !(now < until) { return nil }
        return testOTP[phone]
    }
    /// `GOTRUE_RATE_LIMIT_SMS_SENT`: the global SMS send limit (reference §6.2).
    public var rateLimitSMSSent = SendRate(events: 30)
    public init() {}

    /// Each provider's settings (snake case, as in `config.toml`) and the real server's
    /// `Validate` message for a missing one, in its order (conf/configuration.go).
    public static let providerRequirements: [String: [(setting: String, missing: String)]] = {
        let twilio: [(String, String)] = [
            ("account_sid", "missing Twilio account SID"), ("auth_token", "missing Twilio auth token"),
            ("message_service_sid", "missing Twilio message service SID or Twilio phone number"),
        ]
        return [
            "twilio": twilio, "twilio_verify": twilio,
            "messagebird": [("access_key", "missing Messagebird access key"), ("originator", "missing Messagebird originator")],
            "textlocal": [("api_key", "missing Textlocal API key"), ("sender", "missing Textlocal sender")],
            "vonage": [("api_key", "missing Vonage API key"), ("api_secret", "missing Vonage API secret"),
                       ("from", "missing Vonage 'from' parameter")],
        ]
    }()

    /// `sms_provider.GetSmsProvider`: nil when the named provider could be built, else the
    /// reason (an unknown name, the empty name included, or the first missing setting). Nil
    /// when capture is forced, or when no provider is named and delivery is `auto`: the
    /// emulator then captures.
    public var providerProblem: String? {
        if delivery == .capture || provider.isEmpty && delivery == .auto { return nil }
        guard let requirements = SMSSettings.providerRequirements[provider] else {
            return "sms Provider \(provider) could not be found"
        }
        return requirements.first { (providerSettings[provider + "." + $0.setting] ?? "").isEmpty }?.missing
    }
}


/// `GOTRUE_MAILER_URLPATHS_*`: where email links point, resolved against the external URL.
/// GoTrue's own default is `/verify`; `supabase start` sets every one to
/// `<API_EXTERNAL_URL>/auth/v1/verify`, which the default `/auth/v1/verify` reproduces for the
/// emulator's own address, so links go through the gateway prefix as the CLI's do.
public struct MailerURLPaths: Sendable, Equatable {
    public var invite = MailerURLPaths.cliDefault
    public var confirmation = MailerURLPaths.cliDefault
    public var recovery = MailerURLPaths.cliDefault
    public var emailChange = MailerURLPaths.cliDefault
    public init() {}

    public static let cliDefault = "/auth/v1/verify"
}

/// `GOTRUE_PASSWORD_*`.
public struct PasswordSettings: Sendable {
    /// `GOTRUE_PASSWORD_MIN_LENGTH` (values below 6 are raised to 6, as the real server).
    public var minLength = 6
    /// `GOTRUE_PASSWORD_REQUIRED_CHARACTERS`: character sets of which each must appear.
    public var requiredCharacters: [String] = []
    public init() {}
}

/// `GOTRUE_SECURITY_*`.
public struct SecuritySettings: Sendable {
    /// `GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED`.
    public var refreshTokenRotationEnabled = true
    /// `GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL` seconds (`supabase start`: 10).
    public var refreshTokenReuseInterval = 10
    /// `GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION` (0, 1 or 2; reference §7.5): 2 issues
    /// new sessions the signed, session-counter format; 0 and 1 the 12-character one.
    public var refreshTokenAlgorithmVersion = 0
    /// `GOTRUE_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE` (0-100): with version 2, the share of
    /// sessions (chosen by session id, not per request) whose legacy token is swapped for the
    /// new format on their next refresh.
    public var refreshTokenUpgradePercentage = 0
    /// `GOTRUE_SECURITY_REFRESH_TOKEN_ALLOW_REUSE`: an old new-format token is always answered
    /// with the session's current one instead of ending the session.
    public var refreshTokenAllowReuse = false
    /// `GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION` (`secure_password_change`).
    public var updatePasswordRequireReauthentication = false
    /// `GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD`.
    public var updatePasswordRequireCurrentPassword = false
    /// `GOTRUE_SECURITY_MANUAL_LINKING_ENABLED`.
    public var manualLinkingEnabled = false
    public init() {}
}

/// `GOTRUE_SESSIONS_*`.
public struct SessionSettings: Sendable {
    /// `GOTRUE_SESSIONS_TIMEBOX` seconds; nil = unlimited.
    public var timeboxSeconds: Double?
    /// `GOTRUE_SESSIONS_INACTIVITY_TIMEOUT` seconds; nil = unlimited.
    public var inactivityTimeoutSeconds: Double?
    /// `GOTRUE_SESSIONS_SINGLE_PER_USER`.
    public var singlePerUser = false
    /// `GOTRUE_SESSIONS_TAGS`.
    public var tags: [String] = []
    public init() {}
}

/// The project's API keys, as the Supabase CLI mints them for local development: HS256 JWTs
/// `{"iss":"supabase-demo","role":<role>,"exp":1983812996}` signed with the JWT secret. With the
/// default secret these are byte-for-byte the well-known local `anon` and `service_role` keys.
/// The newer opaque keys (`sb_publishable_...`, `sb_secret_...`) are accepted too, when set.
public struct APIKeys: Sendable, Equatable {
    public var anon: String
    public var serviceRole: String
    /// `sb_publishable_...`: behaves as the anon key at the gateway.
    public var publishable: String?
    /// `sb_secret_...`: behaves as the service_role key at the gateway.
    public var secret: String?

    public init(anon: String, serviceRole: String, publishable: String? = nil, secret: String? = nil) {
        self.anon = anon
        self.serviceRole = serviceRole
        self.publishable = publishable
        self.secret = secret
    }

    /// The opaque keys `supabase start` prints for every local project.
    public static let localPublishable = "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH"
    public static let localSecret = "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz"

    public static func standard(secret: String) -> APIKeys {
        func key(_ role: String) -> String {
            let claims: JSONObject = ["iss": "supabase-demo", "role": .string(role), "exp": 1_983_812_996]
            return JWTSigner.sign(claims: claims, key: JWTKey(kid: nil, secret: Array(secret.utf8)))
        }
        return APIKeys(anon: key("anon"), serviceRole: key("service_role"),
                       publishable: APIKeys.localPublishable, secret: APIKeys.localSecret)
    }

    /// The anon and service_role keys as the Supabase CLI derives them when signing keys are
    /// configured (`generateJWT` with `GenerateAsymmetricJWT`): `{"iss":"supabase-demo",
    /// "role":...,"exp":...}` signed by the first key, its `kid` in the header. The CLI sets
    /// `exp` ten years from now; here it is the well-known keys' fixed `exp` (2032), so with
    /// deterministic signatures (RFC 6979, Ed25519, PKCS #1 v1.5) a restart prints the same keys
    /// and apps configured with them keep working.
    /// - Precondition: `key.canSign`.
    public static func derived(from key: JWTKey) -> APIKeys {
        func token(_ role: String) -> String {
            let claims: JSONObject = ["iss": "supabase-demo", "role": .string(role), "exp": 1_983_812_996]
            return JWTSigner.sign(claims: claims, key: key)
        }
        return APIKeys(anon: token("anon"), serviceRole: token("service_role"),
                       publishable: APIKeys.localPublishable, secret: APIKeys.localSecret)
    }
}
