import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /invite` (invite.go; reference §5.20): an admin invites an address; the invitation
/// link confirms it and signs the user in.
struct InviteEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [Endpoint("POST", "/invite", operation: "invite") { g, context in try g.invite(context) }]
    }

    private var project: Project { api.project }

    func invite(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.requireAdmin(context)
        let body = try RequestBody(context.request, as: "InviteParams")
        let email = try Validation.email(try body.string("email") ?? "")
        let data = try body.map("data") ?? JSONObject()
        let aud = api.requestAudience(context, claims: caller.claims)
        let config = api.config

        var sent: [OutboxRecord] = []
        let mailer = Mailer(api: api, context: context)
        let (user, identities) = try api.write { conn in
            let now = project.environment.now().microseconds
            var user: UserRecord
            if let existing = try conn.user(email: email, aud: aud) {
                if existing.emailConfirmedAt != nil {
                    throw AuthError(422, .emailExists, "A user with this email address has already been registered")
                }
                user = existing
            } else {
                // `signupNewUser` without a password, plus its email identity.
                user = UserRecord(id: project.environment.uuid(), createdAt: now)
                user.aud = aud
                user.role = config.jwt.defaultGroupName
                user.email = email
                user.appMetadata = Models.text(["provider": "email", "providers": ["email"]])
                user.userMetadata = Models.text(data)
                // invite.go: the before-user-created hook may refuse the invited user.
                try Hooks(api: api, request: context.request).beforeUserCreated(Models.user(user, identities: []))
                try conn.insertUser(user)
                let identityData: JSONObject = ["sub": .string(user.id), "email": .string(email),
                                                "email_verified": false, "phone_verified": false]
                try conn.insertIdentity(IdentityRecord(id: project.environment.uuid(), providerID: user.id, userID: user.id,
                                                       identityData: Models.text(identityData), provider: "email", at: now))
            }
            try api.audit(conn, context, actor: caller.actor, action: "user_invited", logType: "team",
                          traits: ["user_id": .string(user.id), "user_email": .string(user.email ?? "")])
            try mailer.sendInvite(conn, user: &user, sent: &sent)
            return (try conn.user(id: user.id) ?? user, try conn.identities(userID: user.id))
        }
        project.outbox.delivered(sent)
        return .json(Models.user(user, identities: identities))
    }
}
