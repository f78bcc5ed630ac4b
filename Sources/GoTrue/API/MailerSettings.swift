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
