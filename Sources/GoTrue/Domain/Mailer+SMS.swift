import AuthCrypto
import AuthJSON
import AuthStore
import GoFormats

extension Mailer {
    // MARK: SMS

    enum SMSPurpose {
        case confirmation, phoneChange, reauthentication

        var outboxType: String {
            switch self {
            case .confirmation: return "sms"
            case .phoneChange: return "phone_change"
            case .reauthentication: return "reauthentication"
            }
        }

        /// Where the user row keeps the code's token hash, when it was sent, and the token's
        /// `one_time_tokens` type.
        var slots: (token: WritableKeyPath<UserRecord, String?>, sentAt: WritableKeyPath<UserRecord, Int64?>, type: String) {
            switch self {
            case .confirmation: return (\.confirmationToken, \.confirmationSentAt, "confirmation_token")
            case .phoneChange: return (\.phoneChangeToken, \.phoneChangeSentAt, "phone_change_token")
            case .reauthentication: return (\.reauthenticationToken, \.reauthenticationSentAt, "reauthentication_token")
            }
        }
    }

    /// `sendPhoneConfirmation`: returns the message id (`test-otp` for a fixed test code, which
    /// sends nothing; otherwise the captured message's id, standing in for the provider's).
    /// `channel` is the one the provider would send on (`sms`, or `whatsapp` through Twilio):
    /// sign-up, `/otp` and `PUT /user` pass the request's, `/resend` and `/reauthenticate` SMS,
    /// as phone.go's callers do. The outbox records it.
    func sendPhoneOTP(_ conn: Connection, user: inout UserRecord, phone: String, purpose: SMSPurpose, channel: String,
                      round: inout WriteRound) throws -> String {
        let now = project.environment.now()
        let slots = purpose.slots
        // Checked before the test code, so fixed codes throttle like real ones.
        try FrequencyLimit.check(sentAt: user[keyPath: slots.sentAt], frequencySeconds: config.sms.maxFrequencySeconds, now: now,
                                 code: .overSmsSendRateLimit)
        if purpose == .phoneChange { user.phoneChange = phone }
        let otp: String
        let messageID: String
        if let fixed = config.sms.testOTP(for: phone, now: now) {
            otp = fixed
            messageID = "test-otp"
        } else {
            if !config.sms.autoconfirm && !project.outbox.allowSMS(config.sms.rateLimitSMSSent, now: now) {
                throw AuthError(429, .overSmsSendRateLimit, "SMS rate limit exceeded")
            }
            let hooks = Hooks(api: api, request: context.request)
            // `GetSmsProvider` before sending: a named provider with missing settings fails
            // the send, and the caller's transaction (a sign-up's new user too) rolls back. The
            // send-SMS hook replaces the provider.
            if let problem = config.sms.providerProblem, !hooks.enabled(.sendSMS) {
                logError("sms: \(problem)")
                throw AuthError(500, .unexpectedFailure, "Unable to get SMS provider")
            }
            otp = OneTimeTokens(project: project).otp(length: config.sms.otpLength)
            let text = try MailTemplates.sms(config.sms.template, code: otp)
            let captured = try capture(conn, channel: channel.isEmpty ? "sms" : channel, to: phone, type: purpose.outboxType, subject: "", html: "",
                                       text: text, otp: otp, tokenHash: OneTimeTokens.tokenHash(phone, otp), link: "",
                                       userID: user.id, round: &round).id
            if hooks.enabled(.sendSMS) {
                // The user as the handler loaded it (`findUser`, `FindUserByID`: `tx.Eager()`),
                // with its identities and factors.
                try hooks.invoke(.sendSMS, ["user": Models.user(user, identities: try conn.identities(userID: user.id),
                                                                factors: try conn.factors(userID: user.id)),
                                            "sms": ["otp": .string(otp), "phone": .string(phone)]])
            }
            _ = captured
            // Only a test OTP has a message id: phone.go declares the provider's id anew inside
            // its send branch (`messageID, err := ...`), so GoTrue never answers it.
            messageID = ""
        }
        // The confirmation and reauthentication tokens relate to the user's own phone.
        try OneTimeTokens(project: project).store(conn, user: &user, token: OneTimeTokens.tokenHash(phone, otp), slot: slots.token,
                                                  sentAt: slots.sentAt, type: slots.type,
                                                  relatesTo: purpose == .phoneChange ? phone : user.phone ?? phone, at: now)
        return messageID
    }

    /// `challengePhoneFactor`'s message: the provider is checked as for every SMS ("Failed to
    /// get SMS provider" here), then the code is captured with outbox type `mfa` on the channel
    /// asked for. The real server applies neither test codes nor the global SMS limit to it.
    func sendMFAPhoneCode(_ conn: Connection, userID: String, phone: String, code: String, channel: String,
                          round: inout WriteRound) throws {
        let hooks = Hooks(api: api, request: context.request)
        if hooks.enabled(.sendSMS) {
            // The hook replaces the provider; a failing hook is the real "error invoking hook".
            // The user as `requireAuthentication` loaded it (`FindUserByID`): identities and factors.
            let user = try conn.user(id: userID)
            let shown = try user.map { Models.user($0, identities: try conn.identities(userID: $0.id), factors: try conn.factors(userID: $0.id)) }
            do {
                try hooks.invoke(.sendSMS, ["user": shown ?? .null,
                                            "sms": ["otp": .string(code), "sms_type": "mfa", "phone": .string(phone)]])
            } catch {
                throw AuthError(500, .unexpectedFailure, "error invoking hook")
            }
        } else if let problem = config.sms.providerProblem {
            logError("sms: \(problem)")
            throw AuthError(500, .unexpectedFailure, "Failed to get SMS provider")
        }
        _ = try capture(conn, channel: channel, to: phone, type: "mfa", subject: "", html: "",
                        text: try MailTemplates.sms(config.mfa.phoneTemplate, code: code), otp: code, tokenHash: "",
                        link: "", userID: userID, round: &round)
    }
}
