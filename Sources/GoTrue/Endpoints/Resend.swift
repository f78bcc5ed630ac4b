import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /resend` (resend.go; reference §5.11).
struct ResendEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("POST", "/resend", operation: "resend", guards: [.limit(.resend)]) { g, context in try g.resend(context) },
        ]
    }

    private var project: Project { api.project }

    /// `Resend`: the last signup, SMS, email-change or phone-change message again, with a new
    /// code. Nothing pending (or an unknown user) answers `{}`.
    func resend(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let config = api.snapshot.configuration
        let body = try RequestBody(context.request, as: "ResendConfirmationParams")
        let type = try body.string("type") ?? ""
        var email = try body.string("email") ?? ""
        var phone = try body.string("phone") ?? ""
        let challenge = try body.string("code_challenge") ?? ""
        let challengeMethod = try body.string("code_challenge_method") ?? ""

        // ResendConfirmationParams.Validate
        switch type {
        case "signup", "email_change":
            try PKCE.validateParameters(method: challengeMethod, challenge: challenge)
        case "sms", "phone_change":
            break
        default:
            throw AuthError(400, .validationFailed, "Missing one of these types: signup, email_change, sms, phone_change")
        }
        if email.isEmpty && type == "signup" {
            throw AuthError(400, .validationFailed, "Type provided requires an email address")
        }
        if phone.isEmpty && type == "sms" {
            throw AuthError(400, .validationFailed, "Type provided requires a phone number")
        }
        if !email.isEmpty && !phone.isEmpty {
            throw AuthError(400, .validationFailed, "Only an email address or phone number should be provided.")
        } else if !email.isEmpty {
            guard config.external.emailEnabled else { throw AuthError(400, .emailProviderDisabled, "Email logins are disabled") }
            email = try Validation.email(email)
        } else if !phone.isEmpty {
            guard config.external.phoneEnabled else { throw AuthError(400, .phoneProviderDisabled, "Phone logins are disabled") }
            phone = try Validation.phone(phone)
        } else {
            throw AuthError(400, .validationFailed, "Missing email address or phone number")
        }

        let aud = api.requestAudience(context)
        let mailer = Mailer(api: api, context: context)
        let pkce = !challenge.isEmpty
        let messageID: String = try api.write { [email, phone] conn, round in
            let found = !email.isEmpty ? try conn.user(email: email, aud: aud) : try conn.user(phone: phone, aud: aud)
            guard var user = found else { return "" }
            switch type {
            case "signup":
                if user.emailConfirmedAt != nil { return "" }
                try api.audit(conn, context, actor: user, action: .userConfirmationRequested)
                if pkce {
                    try FlowStates.create(conn, project: project, userID: user.id, providerType: FlowStates.emailSignup,
                                          authenticationMethod: FlowStates.emailSignup, codeChallengeMethod: challengeMethod,
                                          codeChallenge: challenge)
                }
                try mailer.sendConfirmation(conn, user: &user, pkce: pkce, round: &round)
                return ""
            case "sms":
                if user.phoneConfirmedAt != nil { return "" }
                try api.audit(conn, context, actor: user, action: .userRecoveryRequested)
                return try mailer.sendPhoneOTP(conn, user: &user, phone: phone, purpose: .confirmation, channel: "sms", round: &round)
            case "email_change":
                guard let newEmail = user.emailChange, !newEmail.isEmpty else { return "" }
                if pkce {
                    try FlowStates.create(conn, project: project, userID: user.id, providerType: FlowStates.emailChange,
                                          authenticationMethod: FlowStates.emailChange, codeChallengeMethod: challengeMethod,
                                          codeChallenge: challenge)
                }
                try mailer.sendEmailChange(conn, user: &user, to: newEmail, pkce: pkce, round: &round)
                return ""
            default:  // phone_change
                guard let newPhone = user.phoneChange, !newPhone.isEmpty else { return "" }
                return try mailer.sendPhoneOTP(conn, user: &user, phone: newPhone, purpose: .phoneChange, channel: "sms", round: &round)
            }
        }
        return .json(OtpEndpoints.messageResponse(messageID))
    }
}
