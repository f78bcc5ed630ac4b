import AuthHTTP
import AuthJSON
import AuthStore

/// `GET /reauthenticate` (reauthenticate.go; reference §5.13).
struct ReauthenticateEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [Endpoint("GET", "/reauthenticate", operation: "reauthenticate", guards: [.requireAuthentication]) { g, context in
            try g.reauthenticate(context)
        }]
    }

    private var project: Project { api.project }

    /// `Reauthenticate`: a code for `PUT /user`'s `nonce`, by email when the user has one,
    /// else by SMS.
    func reauthenticate(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        let email = caller.user.email ?? ""
        let phone = caller.user.phone ?? ""
        if email.isEmpty && phone.isEmpty {
            throw AuthError(400, .validationFailed, "Reauthentication requires the user to have an email or a phone number")
        }
        if !email.isEmpty {
            if caller.user.emailConfirmedAt == nil {
                throw AuthError(422, .emailNotConfirmed, "Please verify your email first.")
            }
        } else if caller.user.phoneConfirmedAt == nil {
            throw AuthError(422, .phoneNotConfirmed, "Please verify your phone first.")
        }
        let mailer = Mailer(api: api, context: context)
        let messageID: String = try api.write { conn, round in
            guard var user = try conn.user(id: caller.user.id) else { throw AuthError.unexpected }
            try api.audit(conn, context, actor: user, action: .userReauthenticateRequested)
            if !email.isEmpty {
                try mailer.sendReauthentication(conn, user: &user, round: &round)
                return ""
            }
            return try mailer.sendPhoneOTP(conn, user: &user, phone: phone, purpose: .reauthentication, channel: "sms", round: &round)
        }
        return .json(OtpEndpoints.messageResponse(messageID))
    }
}
