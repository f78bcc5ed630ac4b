import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /invite` (invite.go; reference §5.20): an admin invites an address; the invitation
/// link confirms it and signs the user in.
struct InviteEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [Endpoint("POST", "/invite", operation: "invite", guards: [.requireAdminCredentials]) { g, context in
            try g.invite(context)
        }]
    }

    private var project: Project { api.project }

    func invite(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.adminCaller(context)
        let body = try RequestBody(context.request, as: "InviteParams").checking(["email": .string, "data": .map])
        let email = try Validation.email(try body.string("email") ?? "")
        let data = try body.map("data") ?? JSONObject()
        let aud = api.requestAudience(context, claims: caller.claims)
        let config = api.snapshot.configuration

        // The invited user (`ToUserModel`), shown to the before-user-created hook outside any
        // transaction when the address is new (invite.go).
        var prospect = UserRecord(id: project.environment.uuid(), createdAt: project.environment.now().microseconds)
        prospect.aud = aud
        prospect.role = config.jwt.defaultGroupName
        prospect.email = email
        prospect.encryptedPassword = ""  // models.NewUser without a password: an empty hash, never NULL
        prospect.appMetadata = Models.text(["provider": "email", "providers": ["email"]])
        prospect.userMetadata = Models.text(data)
        let hooks = Hooks(api: api, request: context.request)
        if hooks.enabled(.beforeUserCreated), try api.read({ conn in try conn.user(email: email, aud: aud) }) == nil {
            try hooks.beforeUserCreated(prospect)
        }

        let mailer = Mailer(api: api, context: context)
        let (user, identities) = try api.write { [prospect] conn, round in
            let now = project.environment.now().microseconds
            var user: UserRecord
            if let existing = try conn.user(email: email, aud: aud) {
                if existing.emailConfirmedAt != nil {
                    throw AuthError.duplicateEmail
                }
                user = existing
            } else {
                // `signupNewUser` without a password, plus its email identity.
                user = prospect
                user.createdAt = now
                user.updatedAt = now
                user = try AuthError.whenDatabaseFails("Database error saving new user", writing: user) { try conn.insertUser(user) }
                let identityData: JSONObject = ["sub": .string(user.id), "email": .string(email),
                                                "email_verified": false, "phone_verified": false]
                try conn.insertIdentity(IdentityRecord(id: project.environment.uuid(), providerID: user.id, userID: user.id,
                                                       identityData: Models.text(identityData), provider: "email", at: now))
            }
            try api.audit(conn, context, actor: caller.actor, action: .userInvited,
                          traits: ["user_id": .string(user.id), "user_email": .string(user.email ?? "")])
            try mailer.sendInvite(conn, user: &user, round: &round)
            return (try conn.user(id: user.id) ?? user, try conn.identities(userID: user.id))
        }
        let invited = Models.user(user, identities: identities)
        // invite.go calls after-user-created after the commit for every invitation, a repeated
        // one of an unconfirmed user too; a refusal is the answer, the invitation stays.
        try Hooks(api: api, request: context.request).afterUserCreated(invited)
        return .json(invited)
    }
}
