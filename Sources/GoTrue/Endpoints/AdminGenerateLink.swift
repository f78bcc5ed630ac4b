import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /admin/generate_link` (reference §12.7; `adminGenerateLink` in mail.go): makes the
/// token an email would carry and returns it instead of sending anything. The tokens are stored
/// exactly as the email flows store theirs (user row column plus `one_time_tokens` row), so
/// `/verify` accepts them the same way.
extension AdminEndpoints {
    func generateLink(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.adminCaller(context)
        let body = try RequestBody(context.request, as: "GenerateLinkParams").checking([
            "type": .string, "email": .string, "new_email": .string, "password": .string, "data": .map,
            "redirect_to": .string,
        ])
        var type = try body.string("type") ?? ""
        let email = try Validation.email(try body.string("email") ?? "")
        var newEmail = try body.string("new_email") ?? ""
        var password = try body.string("password") ?? ""
        let data = try body.map("data")
        let requested = try body.string("redirect_to") ?? ""
        let policy = RedirectPolicy(configuration: config)
        // A valid body `redirect_to` wins, else `GetReferrer`: a non-empty `redirect_to` header
        // is the only candidate (the query is then not read, even when the header is refused),
        // then Referer, then SITE_URL.
        let referrer = policy.resolve(requested, Mailer.referrer(context, config))
        let aud = api.requestAudience(context, claims: caller.claims)

        let existing = try api.read { conn in try conn.user(email: email, aud: aud) }
        if existing == nil {
            switch type {
            case "magiclink":
                // No account yet: the link signs the address up, with a password nobody knows.
                type = "signup"
                password = randomPassword(symbols: 1)
            case "recovery", "email_change_current", "email_change_new":
                throw AuthError(404, .userNotFound, "User with this email not found")
            default:
                break
            }
        }

        let codes = OneTimeTokens(project: project)
        let otp = codes.otp(length: config.mailer.otpLength)
        let hashedToken = OneTimeTokens.tokenHash(email, otp)

        // A new user's password is checked and hashed before the write lock, as `/signup` does.
        var newUserHash: String?
        if type == "signup" && existing == nil {
            if password.isEmpty { throw AuthError(400, .validationFailed, "Signup requires a valid password") }
            let passwords = Passwords(configuration: config, environment: project.environment)
            try passwords.checkStrength(password)
            newUserHash = passwords.hash(password)
        }
        if type == "email_change_current" || type == "email_change_new" {
            if !config.mailer.secureEmailChangeEnabled && type == "email_change_current" {
                throw AuthError(400, .validationFailed, "Enable secure email change to generate link for current email")
            }
            newEmail = try Validation.email(newEmail)
        }

        let now = project.environment.now()
        // mail.go: a sign-up or invitation link for a new address shows the user it will create to
        // the before-user-created hook, outside the transaction; a refusal stores nothing.
        var prospect = UserRecord(id: project.environment.uuid(), createdAt: now.microseconds)
        prospect.aud = aud
        prospect.role = config.jwt.defaultGroupName
        prospect.email = email
        prospect.encryptedPassword = newUserHash ?? ""
        prospect.userMetadata = Models.text(data ?? JSONObject())
        prospect.appMetadata = Models.text(["provider": "email", "providers": ["email"]])
        if existing == nil && (type == "signup" || type == "invite") {
            let hooks = Hooks(api: api, request: context.request)
            if hooks.enabled(.beforeUserCreated) { try hooks.beforeUserCreated(prospect) }
        }
        let (user, identities, factors, token) = try api.write { [type, newEmail, prospect] conn in
            var user: UserRecord
            let token: String
            switch type {
            case "magiclink", "recovery":
                guard var found = existing else { throw AuthError.unexpected }
                try api.audit(conn, context, actor: found, action: .userRecoveryRequested)
                try codes.store(conn, user: &found, token: hashedToken, slot: \.recoveryToken, sentAt: \.recoverySentAt,
                                type: "recovery_token", relatesTo: found.email ?? email, at: now)
                user = found
                token = hashedToken
            case "invite", "signup":
                // Both confirm an address not confirmed yet, of a new user or an existing one. An
                // invited user has no password (`newUserHash` is only made for a sign-up); only a
                // sign-up merges `data` into an existing user's metadata; only an invitation is
                // audited and stamps `invited_at`.
                let invite = type == "invite"
                if let found = existing {
                    if found.emailConfirmedAt != nil {
                        throw AuthError.duplicateEmail
                    }
                    user = found
                    if !invite, let data { user.userMetadata = Models.merge(data, into: user.userMetadata) }
                } else {
                    user = try createUser(conn, prospect, now: now)
                }
                if invite {
                    try api.audit(conn, context, actor: caller.actor, action: .userInvited,
                                  traits: ["user_id": .string(user.id), "user_email": .string(user.email ?? "")])
                    user.invitedAt = now.microseconds
                }
                try codes.store(conn, user: &user, token: hashedToken, slot: \.confirmationToken, sentAt: \.confirmationSentAt,
                                type: "confirmation_token", relatesTo: user.email ?? email, at: now)
                token = hashedToken
            case "email_change_current", "email_change_new":
                guard var found = existing else { throw AuthError.unexpected }
                if try api.isDuplicatedEmail(conn, newEmail, aud: found.aud, excluding: found.id) {
                    throw AuthError.duplicateEmail
                }
                found.emailChangeSentAt = now.microseconds
                // `UpdateOnly` writes `updated_at` too, as for every other link type.
                found.updatedAt = now.microseconds
                found.emailChange = newEmail
                found.emailChangeConfirmStatus = 0
                if type == "email_change_current" {
                    found.emailChangeTokenCurrent = hashedToken
                } else {
                    // The link and the stored token use the new address; `hashed_token` in the
                    // response stays the one made with the current address (as coded upstream).
                    found.emailChangeTokenNew = OneTimeTokens.tokenHash(newEmail, otp)
                }
                try conn.updateUser(found)
                try codes.recordEmailChange(conn, user: found, current: found.email ?? email, new: newEmail,
                                            at: now.microseconds)
                user = found
                token = (type == "email_change_current" ? found.emailChangeTokenCurrent : found.emailChangeTokenNew) ?? ""
            default:
                throw AuthError(400, .validationFailed, "Invalid email action link type requested: \(type)")
            }
            return (user, try conn.identities(userID: user.id), try conn.factors(userID: user.id), token)
        }

        let linkType = type.hasPrefix("email_change") ? "email_change" : type
        let actionLink = Mailer.actionLink(externalURL: config.externalURL, path: AdminEndpoints.urlPath(type, config),
                                           token: token, type: linkType, redirectTo: referrer)

        let shown = userJSON(user, identities: identities, factors: factors)
        // mail.go: after the commit, for a sign-up or invitation link that created the user.
        if existing == nil && (type == "signup" || type == "invite") {
            try Hooks(api: api, request: context.request).afterUserCreated(shown)
        }
        guard case .object(var response) = shown else {
            throw AuthError.unexpected
        }
        response["action_link"] = .string(actionLink)
        response["email_otp"] = .string(otp)
        response["hashed_token"] = .string(hashedToken)
        response["verification_type"] = .string(type)
        response["redirect_to"] = .string(referrer)
        return .json(.object(response))
    }

    /// `signupNewUser` for the email provider, plus its identity: role from the default group,
    /// `app_metadata` naming the email provider, `data` as user_metadata.
    private func createUser(_ conn: Connection, _ prospect: UserRecord, now: Timestamp) throws -> UserRecord {
        // mail.go's sign-up and invite links go through `signupNewUser`.
        let user = try AuthError.whenDatabaseFails("Database error saving new user", writing: prospect) { try conn.insertUser(prospect) }
        try conn.insertIdentity(IdentityRecord(id: project.environment.uuid(), providerID: user.id, userID: user.id,
                                               identityData: Models.text(AdminEndpoints.identityData(userID: user.id, email: user.email)),
                                               provider: "email", at: now.microseconds))
        return user
    }

    /// The URL path setting of each link type (`GetEmailActionLink`).
    static func urlPath(_ type: String, _ config: Configuration) -> String {
        switch type {
        case "magiclink", "recovery": config.mailer.urlPaths.recovery
        case "invite": config.mailer.urlPaths.invite
        case "signup": config.mailer.urlPaths.confirmation
        default: config.mailer.urlPaths.emailChange
        }
    }
}
