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
