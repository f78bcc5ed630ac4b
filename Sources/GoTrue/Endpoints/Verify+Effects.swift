import AuthHTTP
import AuthJSON
import AuthStore

extension VerifyEndpoints {
    // MARK: effects

    /// What a verified token of `params.type` does to its user (links, `GET /verify`, carry no
    /// SMS types), then `app_metadata.providers` brought up to date. False when only one of a
    /// secure email change's two links has been confirmed so far.
    func applyVerification(_ conn: Connection, _ context: RequestContext, _ params: Params,
                                   _ user: inout UserRecord, smsAllowed: Bool, round: inout WriteRound) throws -> Bool {
        switch params.type {
        case "signup", "invite":
            try signupVerify(conn, context, &user)
        case "recovery", "magiclink":
            try recoverVerify(conn, context, &user)
        case "email_change":
            guard try emailChangeVerify(conn, context, params, &user, round: &round) else { return false }
        case "sms" where smsAllowed, "phone_change" where smsAllowed:
            try smsVerify(conn, context, params, &user, round: &round)
        default:
            throw AuthError(400, .validationFailed, "Unsupported verification type")
        }
        try updateProviders(conn, &user)
        return true
    }

    private func confirmEmail(_ conn: Connection, _ user: inout UserRecord) throws {
        try api.confirmEmail(conn, &user)
    }

    /// `signupVerify`: an invited user without a password gets a random one (the app then asks
    /// for a real one) through `UpdatePassword`, which also voids every pending token and its
    /// time and ends all the user's sessions; the email is confirmed and matching identities
    /// marked verified.
    private func signupVerify(_ conn: Connection, _ context: RequestContext, _ user: inout UserRecord) throws {
        if (user.encryptedPassword ?? "").isEmpty && user.invitedAt != nil {
            let passwords = Passwords(configuration: api.snapshot.configuration, environment: project.environment)
            user.encryptedPassword = passwords.hash(Mailer.randomPassword(project.environment, requiredCharacters: [], length: 64))
            user.forgetPendingTokens()
            try AuthError.whenDatabaseFails("Error storing password") { try conn.updateUser(user) }
            try OneTimeTokens.clearAll(conn, userID: user.id)
            try conn.deleteSessions(userID: user.id)
        }
        try api.audit(conn, context, actor: user, action: .userSignedUp, traits: ["provider": "email"])
        try confirmEmail(conn, &user)
        let email = user.email ?? ""
        // `Identity.UpdateIdentityData`: a raw `update identities set identity_data = ?`, so the
        // identity's `updated_at` stays as it was.
        for var identity in try conn.identities(userID: user.id) where !email.isEmpty && (identity.email ?? "") == email {
            identity.identityData = Models.merge(["email_verified": true], into: identity.identityData)
            try conn.updateIdentity(identity)
        }
    }

    /// `recoverVerify`: the recovery slot is spent; an unconfirmed email becomes confirmed.
    private func recoverVerify(_ conn: Connection, _ context: RequestContext, _ user: inout UserRecord) throws {
        user.recoveryToken = nil
        try conn.updateUser(user)
        try OneTimeTokens.clearAll(conn, userID: user.id)
        if user.emailConfirmedAt == nil {
            try api.audit(conn, context, actor: user, action: .userSignedUp, traits: ["provider": "email"])
            try confirmEmail(conn, &user)
        } else {
            try api.audit(conn, context, actor: user, action: .login)
        }
    }

    /// `emailChangeVerify`: with secure email change the first confirmation only records itself
    /// (returns false: the half-confirmed answer); the last one swaps the address and sends the
    /// old one its notice. `PUT /user` calls it too, for an anonymous user's address under
    /// autoconfirm (`params.type` email_change, `user.emailChange` the new address).
    func emailChangeVerify(_ conn: Connection, _ context: RequestContext, _ params: Params,
                           _ user: inout UserRecord, round: inout WriteRound) throws -> Bool {
        let config = api.snapshot.configuration
        if !config.mailer.autoconfirm && config.mailer.secureEmailChangeEnabled && user.emailChangeConfirmStatus == 0
            && !(user.email ?? "").isEmpty {
            let current = try conn.oneTimeTokenOwner(tokenHash: params.tokenHash, types: ["email_change_token_current"]) != nil
            let new = try conn.oneTimeTokenOwner(tokenHash: params.tokenHash, types: ["email_change_token_new"]) != nil
            user.emailChangeConfirmStatus = 1
            func matches(_ stored: String?) -> Bool {
                guard let stored, !stored.isEmpty else { return false }
                return params.token == stored || params.tokenHash == stored
            }
            if matches(user.emailChangeTokenCurrent) || current {
                user.emailChangeTokenCurrent = nil
                try conn.deleteOneTimeToken(userID: user.id, type: "email_change_token_current")
            } else if matches(user.emailChangeTokenNew) || new {
                user.emailChangeTokenNew = nil
                try conn.deleteOneTimeToken(userID: user.id, type: "email_change_token_new")
            }
            // `tx.UpdateOnly(user, ...)`: pop writes `updated_at` too.
            user.updatedAt = project.environment.now().microseconds
            try conn.updateUser(user)
            return false
        }

        let now = project.environment.now().microseconds
        let oldEmail = user.email ?? ""
        let newEmail = user.emailChange ?? ""
        try api.audit(conn, context, actor: user, action: .userModified)
        try upsertIdentity(conn, &user, provider: "email", changes: ["email": .string(newEmail), "email_verified": true],
                           created: ["sub": .string(user.id), "email": .string(newEmail), "email_verified": true,
                                     "phone_verified": false])
        user.confirmEmailChange(to: newEmail, at: now)
        try conn.updateUser(user)
        try OneTimeTokens.clearAll(conn, userID: user.id)
        if user.emailConfirmedAt == nil { try confirmEmail(conn, &user) }
        // The notice goes to the old address (verify.go, `emailAddressChanged`).
        if VerifyEndpoints.changed(oldEmail, user.email) {
            Mailer(api: api, context: context).notify(conn, .emailChanged, user: user, to: oldEmail,
                                                      authorizing: user.email ?? "", values: ["OldEmail": oldEmail], round: &round)
        }
        return true
    }

    /// `smsVerify`: a sign-up confirms the phone; a phone change swaps the number, creates or
    /// updates the phone identity and sends the phone-changed and identity-linked notices.
    /// `PUT /user` calls it too, for a phone change under SMS autoconfirm (`params.type`
    /// phone_change, `user.phoneChange` the new number).
    func smsVerify(_ conn: Connection, _ context: RequestContext, _ params: Params, _ user: inout UserRecord,
                   round: inout WriteRound) throws {
        let now = project.environment.now().microseconds
        let oldPhone = user.phone ?? ""
        var identityCreated = false
        if params.type == "sms" {
            try api.audit(conn, context, actor: user, action: .userSignedUp, traits: ["provider": "phone"])
            user.confirmationToken = nil
            user.phoneConfirmedAt = now
        } else {
            try api.audit(conn, context, actor: user, action: .userModified)
            identityCreated = try upsertIdentity(conn, &user, provider: "phone",
                               changes: ["phone": .string(params.phone), "phone_verified": true],
                               created: ["sub": .string(user.id), "phone": .string(params.phone), "email_verified": false,
                                         "phone_verified": true])
            // `ConfirmPhoneChange`.
            user.phone = user.phoneChange
            user.phoneChange = nil
            user.phoneChangeToken = nil
            user.phoneConfirmedAt = now
        }
        user.isAnonymous = false
        user.updatedAt = now
        try conn.updateUser(user)
        try OneTimeTokens.clearAll(conn, userID: user.id)
        user.refreshConfirmedAt()
        let mailer = Mailer(api: api, context: context)
        if params.type == "phone_change" && VerifyEndpoints.changed(oldPhone, user.phone) {
            mailer.notify(conn, .phoneChanged, user: user, to: user.email ?? "", values: ["OldPhone": oldPhone], round: &round)
        }
        if identityCreated {
            mailer.notify(conn, .identityLinked, user: user, to: user.email ?? "", values: ["Provider": "phone"], round: &round)
        }
    }

    /// `emailAddressChanged` / `phoneNumberChanged`: both set and different.
    static func changed(_ old: String, _ new: String?) -> Bool {
        let new = new ?? ""
        return !old.isEmpty && !new.isEmpty && old != new
    }

    @discardableResult
    private func upsertIdentity(_ conn: Connection, _ user: inout UserRecord, provider: String, changes: JSONObject,
                                created: JSONObject) throws -> Bool {
        try api.upsertIdentity(conn, user: user, provider: provider, changes: changes, created: created,
                               at: project.environment.now().microseconds)
    }

    private func updateProviders(_ conn: Connection, _ user: inout UserRecord) throws {
        try api.updateProviders(conn, &user)
    }
}
