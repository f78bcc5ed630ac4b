import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /otp` and `POST /magiclink` (otp.go, magic_link.go).
struct OtpEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            // The per-client limiters are route middleware in GoTrue: internal re-entries
            // (`/otp` running the magic-link flow, which runs sign-up) are not limited again.
            Endpoint("POST", "/otp", operation: "otp", guards: [.limit(.otp)]) { g, context in try g.otp(context) },
            Endpoint("POST", "/magiclink", operation: "magiclink", guards: [.limit(.magicLink)]) { g, context in
                try g.magicLink(context)
            },
        ]
    }

    private var project: Project { api.project }

    /// `Otp`: validation, the `create_user` check, then the magic-link or SMS flow.
    func otp(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "OtpParams")
        let email = try body.string("email") ?? ""
        let phone = try body.string("phone") ?? ""
        // `create_user` defaults to true; JSON null leaves the default, as `json.Unmarshal`.
        let createUser = try body.bool("create_user") ?? true
        _ = try body.map("data")
        let channel = try body.string("channel") ?? ""
        let challenge = try body.string("code_challenge") ?? ""
        let challengeMethod = try body.string("code_challenge_method") ?? ""

        if !email.isEmpty && !phone.isEmpty {
            throw AuthError(400, .validationFailed, "Only an email address or phone number should be provided")
        }
        if !email.isEmpty && !channel.isEmpty {
            throw AuthError(400, .validationFailed, "Channel should only be specified with Phone OTP")
        }
        try PKCE.validateParameters(method: challengeMethod, challenge: challenge)

        // shouldCreateUser
        if !createUser {
            let aud = api.requestAudience(context)
            var exists = true
            // `shouldCreateUser` answers (false, err) for an address that does not validate, and
            // Otp tests `!ok` first: the validation error becomes this 422 too.
            if !email.isEmpty {
                if let address = try? Validation.email(email) {
                    exists = try api.read { conn in try conn.user(email: address, aud: aud) } != nil
                } else {
                    exists = false
                }
            } else if !phone.isEmpty {
                if let number = try? Validation.phone(phone) {
                    exists = try api.read { conn in try conn.user(phone: number, aud: aud) } != nil
                } else {
                    exists = false
                }
            }
            if !exists { throw AuthError(422, .otpDisabled, "Signups not allowed for otp") }
        }

        if !email.isEmpty { return try magicLink(context) }
        if !phone.isEmpty { return try smsOTP(context) }
        throw AuthError(400, .validationFailed, "One of email or phone must be set")
    }

    /// `MagicLink`: a sign-in link (and code) for a confirmed user; an unknown or unconfirmed
    /// address goes through sign-up with a throwaway password instead, whose confirmation email
    /// doubles as the link (or, with autoconfirm on, is followed by the magic link).
    func magicLink(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let config = api.snapshot.configuration
        guard config.external.emailEnabled else {
            throw AuthError(422, .emailProviderDisabled, "Email logins are disabled")
        }
        guard config.external.magicLinkEnabled else {
            throw AuthError(422, .emailProviderDisabled, "Login with magic link is disabled")
        }
        // MagicLink decodes its body with a json.Decoder, not retrieveRequestParams.
        let body = try RequestBody(decoding: context.request, as: "MagicLinkParams", prefix: "Could not read verification params: ")
        var email = try body.string("email") ?? ""
        let data = try body.map("data") ?? JSONObject()
        let challenge = try body.string("code_challenge") ?? ""
        let challengeMethod = try body.string("code_challenge_method") ?? ""
        if email.isEmpty { throw AuthError(422, .validationFailed, "Password recovery requires an email") }
        email = try Validation.email(email)
        try PKCE.validateParameters(method: challengeMethod, challenge: challenge)

        let aud = api.requestAudience(context)
        let existing = try api.read { conn in try conn.user(email: email, aud: aud) }
        if existing == nil || existing?.emailConfirmedAt == nil {
            let password = Mailer.randomPassword(project.environment, requiredCharacters: config.password.requiredCharacters,
                                                 length: 33)
            var signup: JSONObject = ["email": .string(email), "password": .string(password), "data": .object(data)]
            if !challenge.isEmpty {
                signup["code_challenge"] = .string(challenge)
                signup["code_challenge_method"] = .string(challengeMethod)
            }
            _ = try SignupEndpoints(api: api).signup(OtpEndpoints.with(context, body: signup), limited: false)
            if config.mailer.autoconfirm {
                signup["password"] = nil
                return try magicLink(OtpEndpoints.with(context, body: signup))
            }
            return .json(.object([:]))
        }

        let mailer = Mailer(api: api, context: context)
        try api.write { conn, round in
            guard var user = try conn.user(id: existing!.id) else { throw AuthError.unexpected }
            try RecoverEndpoints(api: api).requestRecovery(conn, context, user: &user, magicLink: true, challenge: challenge,
                                                           challengeMethod: challengeMethod, mailer: mailer, round: &round)
        }
        return .json(.object([:]))
    }

    /// `SmsOtp`: a code by SMS to a confirmed number; an unknown or unconfirmed number is signed
    /// up first (its confirmation SMS is the code).
    func smsOTP(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let config = api.snapshot.configuration
        guard config.external.phoneEnabled else {
            throw AuthError(400, .phoneProviderDisabled, "Unsupported phone provider")
        }
        let body = try RequestBody(context.request, as: "SmsParams")
        var phone = try body.string("phone") ?? ""
        var channel = try body.string("channel") ?? ""
        let data = try body.map("data") ?? JSONObject()
        if !phone.isEmpty && channel.isEmpty { channel = "sms" }
        phone = try Validation.phone(phone)
        guard SignupEndpoints.isValidChannel(channel, config) else {
            throw AuthError(400, .validationFailed, SignupEndpoints.invalidChannelMessage)
        }

        let aud = api.requestAudience(context)
        let existing = try api.read { conn in try conn.user(phone: phone, aud: aud) }
        if existing == nil || existing?.phoneConfirmedAt == nil {
            let password = Mailer.randomPassword(project.environment, requiredCharacters: config.password.requiredCharacters,
                                                 length: 64)
            let signup: JSONObject = ["phone": .string(phone), "password": .string(password), "data": .object(data),
                                      "channel": .string(channel)]
            _ = try SignupEndpoints(api: api).signup(OtpEndpoints.with(context, body: signup), limited: false)
            if config.sms.autoconfirm {
                return try smsOTP(OtpEndpoints.with(context, body: ["phone": .string(phone), "channel": .string(channel)]))
            }
            return .json(.object([:]))
        }

        let mailer = Mailer(api: api, context: context)
        let messageID: String = try api.write { [channel, phone] conn, round in
            guard var user = try conn.user(id: existing!.id) else { throw AuthError.unexpected }
            try api.audit(conn, context, actor: user, action: .userRecoveryRequested,
                          traits: ["channel": .string(channel)])
            return try mailer.sendPhoneOTP(conn, user: &user, phone: phone, purpose: .confirmation, channel: channel, round: &round)
        }
        return .json(OtpEndpoints.messageResponse(messageID))
    }

    /// `SmsOtpResponse`: `message_id` omitted when empty.
    static func messageResponse(_ messageID: String) -> JSON {
        messageID.isEmpty ? .object([:]) : .object(["message_id": .string(messageID)])
    }

    /// The real server re-runs its handlers with a rewritten body (`r.Body = ...`); so does this.
    static func with(_ context: RequestContext, body: JSONObject) -> RequestContext {
        var copy = context
        copy.request.body = JSON.object(body).serializedBytes()
        return copy
    }
}
