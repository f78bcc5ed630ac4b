import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /recover` (recover.go; reference §5.10).
struct RecoverEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("POST", "/recover", operation: "recover", guards: [.limit(.recover), .requireEmailProvider]) { g, context in
                try g.recover(context)
            },
        ]
    }

    private var project: Project { api.project }

    /// `Recover`: an unknown address answers `{}` like a known one, so accounts cannot be probed.
    func recover(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "RecoverParams")
        var email = try body.string("email") ?? ""
        let challenge = try body.string("code_challenge") ?? ""
        let challengeMethod = try body.string("code_challenge_method") ?? ""
        if email.isEmpty { throw AuthError(400, .validationFailed, "Password recovery requires an email") }
        email = try Validation.email(email)
        try PKCE.validateParameters(method: challengeMethod, challenge: challenge)

        let aud = api.requestAudience(context)
        let mailer = Mailer(api: api, context: context)
        try api.write { [email] conn, round in
            guard var user = try conn.user(email: email, aud: aud) else { return }
            try requestRecovery(conn, context, user: &user, magicLink: false, challenge: challenge,
                                challengeMethod: challengeMethod, mailer: mailer, round: &round)
        }
        return .json(.object([:]))
    }

    /// What `Recover` and `MagicLink` do for a known user, in the same order: a PKCE request's
    /// flow state (named after the flow), the `user_recovery_requested` audit entry, then the
    /// email through the recovery token slot.
    func requestRecovery(_ conn: Connection, _ context: RequestContext, user: inout UserRecord, magicLink: Bool,
                         challenge: String, challengeMethod: String, mailer: Mailer, round: inout WriteRound) throws {
        if !challenge.isEmpty {
            let flow = magicLink ? FlowStates.magicLink : FlowStates.recovery
            try FlowStates.create(conn, project: project, userID: user.id, providerType: flow, authenticationMethod: flow,
                                  codeChallengeMethod: challengeMethod, codeChallenge: challenge)
        }
        try api.audit(conn, context, actor: user, action: .userRecoveryRequested)
        try mailer.sendRecovery(conn, user: &user, magicLink: magicLink, pkce: !challenge.isEmpty, round: &round)
    }
}
