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
    /// `GOTRUE_AUDIT_LOG_DISABLE_POSTGRES`: no row in `audit_log_entries` (GoTrue then only logs
    /// the event), so `GET /admin/audit` lists nothing new.
    public var auditLogDisablePostgres = false

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
    /// `GOTRUE_EXPERIMENTAL_*`: GoTrue's behaviours behind a flag, off unless set.
    public var experimental = ExperimentalSettings()

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

/// `GOTRUE_CUSTOM_OAUTH_*`: providers managed at run time through `/admin/custom-providers`.
/// On by default in GoTrue (`default:"true"`); the CLI passes neither variable.
public struct CustomOAuthSettings: Sendable, Equatable {
    public var enabled = true
    /// `GOTRUE_CUSTOM_OAUTH_MAX_PROVIDERS`: 0 means no limit.
    public var maxProviders = 0
    /// `GOTRUE_CUSTOM_OAUTH_EXTERNAL_URL`: the base of the `redirect_uri` custom providers are
    /// sent (`<url>/callback`) in place of the server's own; empty, the server's.
    public var externalURL = ""
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

/// `GOTRUE_EXPERIMENTAL_*`.
public struct ExperimentalSettings: Sendable {
    /// `GOTRUE_EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED`: a first password on
    /// an account with a confirmed email and no email identity adds one
    /// (`ensureEmailIdentityForPassword`).
    public var createEmailIdentityOnPasswordSet = false
    public init() {}
}

/// `GOTRUE_SESSIONS_*`.
public struct SessionSettings: Sendable {
    /// `GOTRUE_SESSIONS_TIMEBOX` seconds; nil = unlimited.
    public var timeboxSeconds: Double?
    /// `GOTRUE_SESSIONS_INACTIVITY_TIMEOUT` seconds; nil = unlimited.
    public var inactivityTimeoutSeconds: Double?
    /// `GOTRUE_SESSIONS_ALLOW_LOW_AAL` seconds; nil = unlimited. A session below the user's
    /// highest possible level (aal1 with a verified factor) lasts this long: its access tokens
    /// expire by then and it no longer refreshes (`SessionLowAAL`).
    public var allowLowAALSeconds: Double?
    /// `GOTRUE_SESSIONS_SINGLE_PER_USER`.
    public var singlePerUser = false
    /// `GOTRUE_SESSIONS_TAGS`.
    public var tags: [String] = []
    public init() {}
}

extension SessionSettings {
    /// When a session made at `createdAt` stops being allowed below the user's highest level:
    /// nil when `GOTRUE_SESSIONS_ALLOW_LOW_AAL` is off, the session is at that level already
    /// (`aal` not below it), or the user has no verified factor (`HighestPossibleAAL` is aal1).
    public func lowAALDeadline(createdAt: Int64, aal: String, userHasVerifiedFactor: Bool) -> Int64? {
        guard let window = allowLowAALSeconds, window > 0, userHasVerifiedFactor, aal != "aal2" else { return nil }
        return createdAt + Int64(window * 1_000_000)
    }
}
