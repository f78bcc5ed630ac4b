import AuthHTTP
import AuthJSON
import AuthStore

/// `GET /user` and `PUT /user` (reference §5.14-5.15).
struct UserEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/user", operation: "user.get", guards: [.requireAuthenticationByHandler]) { g, context in
                try g.get(context)
            },
            Endpoint("PUT", "/user", operation: "user.update", guards: [.requireAuthenticationWithIdentities, .limit(.user)]) {
                g, context in try g.update(context)
            },
        ]
    }

    private var project: Project { api.project }
    private var config: Configuration { api.snapshot.configuration }

    func get(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context, loadingIdentities: true)
        let aud = api.requestAudience(context, claims: caller.claims)
        let tokenAud = caller.claims["aud"]?.stringValue ?? caller.claims["aud"]?.arrayValue?.first?.stringValue
        guard let tokenAud, aud == tokenAud else {
            throw AuthError(400, .validationFailed, "Token audience doesn't match request audience")
        }
        var writer = JSONByteWriter(reservingCapacity: JSON.goJSONCapacity)
        Models.writeUser(caller.user, identities: caller.identities ?? [], factors: caller.factors, to: &writer)
        return .json(writer: writer)
    }

    func update(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context, loadingIdentities: true)
        let aud = api.requestAudience(context, claims: caller.claims)
        let body = try RequestBody(context.request, as: "UserUpdateParams")
        var email = try body.string("email") ?? ""
        let password = try body.string("password")
        let currentPassword = try body.string("current_password")
        let nonce = try body.string("nonce") ?? ""
        let data = try body.map("data")
        let appData = try body.map("app_metadata")
        var phone = try body.string("phone") ?? ""
        let channel = try body.string("channel") ?? ""
        let codeChallenge = try body.string("code_challenge") ?? ""
        let codeChallengeMethod = try body.string("code_challenge_method") ?? ""
        let user = caller.user
        let passwords = Passwords(configuration: config, environment: project.environment)

        // validateUserUpdateParams
        if !email.isEmpty { email = try Validation.email(email) }
        if !phone.isEmpty {
            phone = try Validation.phone(phone)
            if !SignupEndpoints.isValidChannel(channel, config) {
                throw AuthError(400, .validationFailed, SignupEndpoints.invalidChannelMessage)
            }
        }
        if let password { try passwords.checkStrength(password) }

        // isAdmin: the user's role is the admin group of the default audience.
        if appData != nil && !(user.aud == config.jwt.audience && user.role == config.jwt.adminGroupName) {
            throw AuthError(403, .notAdmin, "Updating app_metadata requires admin privileges")
        }
        let setsPassword = password.map { !$0.isEmpty } ?? false
        // `HasMFAEnabled` (a verified factor) without an aal2 session: no credential changes.
        if caller.factors.contains(where: { $0.status == "verified" }) && caller.session?.aal != "aal2"
            && (setsPassword || (!email.isEmpty && email != (user.email ?? "")) || (!phone.isEmpty && phone != (user.phone ?? ""))) {
            throw AuthError(401, .insufficientAal, "AAL2 session is required to update email or password when MFA is enabled.")
        }
        if user.isAnonymous && setsPassword && email.isEmpty && phone.isEmpty {
            throw AuthError(422, .validationFailed,
                            "Updating password of an anonymous user without an email or phone is not allowed")
        }
        if user.isSSOUser && (setsPassword || (!email.isEmpty && email != (user.email ?? ""))
            || (!phone.isEmpty && phone != (user.phone ?? "")) || !nonce.isEmpty) {
            throw AuthError(422, .userSsoManaged, "Updating email, phone, password of a SSO account only possible via SSO")
        }
        let changesEmail = !email.isEmpty && email != (user.email ?? "")
        let changesPhone = !phone.isEmpty && phone != (user.phone ?? "")
        try api.read { conn in
            if changesEmail, try api.isDuplicatedEmail(conn, email, aud: aud, excluding: user.id) {
                throw AuthError.duplicateEmail
            }
            if changesPhone, try conn.userExists(phone: phone, aud: aud, excluding: user.id) {
                throw AuthError(422, .phoneExists, AuthError.duplicatePhoneMessage)
            }
        }

        var newHash: String?
        if let password {
            if config.security.updatePasswordRequireReauthentication {
                let now = project.environment.now().microseconds
                let dayOld = caller.session.map { now > $0.createdAt + 86_400_000_000 } ?? true
                if dayOld {
                    if nonce.isEmpty {
                        throw AuthError(400, .reauthenticationNeeded, "Password update requires reauthentication")
                    }
                    try verifyReauthentication(nonce: nonce, user: user)
                }
            }
            if !password.isEmpty, let stored = user.encryptedPassword, !stored.isEmpty {
                if config.security.updatePasswordRequireCurrentPassword, try !isRecoverySession(caller) {
                    guard let currentPassword, !currentPassword.isEmpty else {
                        throw AuthError(400, .currentPasswordRequired, "Current password required when setting new password.")
                    }
                    guard try Passwords.verify(currentPassword, against: stored) else {
                        throw AuthError(400, .currentPasswordInvalid, "Current password required when setting new password.")
                    }
                }
                if try Passwords.verify(password, against: stored) {
                    throw AuthError(422, .samePassword, "New password should be different from the old password.")
                }
            }
            // Hashed outside the write lock; an empty password clears it, as `SetPassword("")`.
            newHash = password.isEmpty ? "" : passwords.hash(password)
        }

        let mailer = Mailer(api: api, context: context)
        let (updated, identities, factors) = try api.write { [newHash, email, phone] conn, round in
            let now = project.environment.now()
            var user = try conn.user(id: user.id) ?? user
            if let newHash {
                let addingFirstPassword = !newHash.isEmpty && (user.encryptedPassword ?? "").isEmpty
                user.encryptedPassword = newHash
                // UpdatePassword: pending tokens no longer trusted; every other session ends.
                user.forgetPendingTokens()
                user.updatedAt = now.microseconds
                try AuthError.whenDatabaseFails("Error during password storage") { try conn.updateUser(user) }
                try OneTimeTokens.clearAll(conn, userID: user.id)
                try conn.deleteSessions(userID: user.id, except: caller.session?.id)
                try api.audit(conn, context, actor: user, action: .userUpdatedPassword)
                if addingFirstPassword { try api.ensureEmailIdentityForPassword(conn, &user) }
                mailer.notify(conn, .passwordChanged, user: user, to: user.email ?? "", round: &round)
            }
            // user.go: an app trigger on auth.users that refuses these updates is this 500.
            if let data {
                user.userMetadata = Models.merge(data, into: user.userMetadata)
                user.updatedAt = now.microseconds
                try AuthError.whenDatabaseFails("Error updating user") { try conn.updateUser(user) }
            }
            if let appData {
                user.appMetadata = Models.merge(appData, into: user.appMetadata)
                user.updatedAt = now.microseconds
                try AuthError.whenDatabaseFails("Error updating user") { try conn.updateUser(user) }
            }
            if changesEmail {
                if user.isAnonymous && config.mailer.autoconfirm {
                    // `emailChangeVerify` as a confirmation link runs it (its audit entry,
                    // identity and notice), without the `app_metadata.providers` update that
                    // only `/verify` makes.
                    user.emailChange = email
                    _ = try VerifyEndpoints(api: api).emailChangeVerify(conn, context, VerifyEndpoints.Params(type: "email_change", email: email),
                                                                        &user, round: &round)
                } else {
                    // sendEmailChange (Mailer.swift): both addresses get a message with secure
                    // email change; a PKCE request records its flow state first.
                    if !codeChallenge.isEmpty {
                        try FlowStates.create(conn, project: project, userID: user.id, providerType: FlowStates.emailChange,
                                              authenticationMethod: FlowStates.emailChange,
                                              codeChallengeMethod: codeChallengeMethod, codeChallenge: codeChallenge)
                    }
                    try mailer.sendEmailChange(conn, user: &user, to: email, pkce: !codeChallenge.isEmpty, round: &round)
                }
            }
            if changesPhone {
                if config.sms.autoconfirm {
                    // `smsVerify`, as for `emailChangeVerify` above.
                    user.phoneChange = phone
                    try VerifyEndpoints(api: api).smsVerify(conn, context, VerifyEndpoints.Params(type: "phone_change", phone: phone),
                                                            &user, round: &round)
                } else {
                    _ = try mailer.sendPhoneOTP(conn, user: &user, phone: phone, purpose: .phoneChange, channel: channel, round: &round)
                }
            }
            try api.audit(conn, context, actor: user, action: .userModified)
            let reloaded = try conn.user(id: user.id) ?? user
            return (reloaded, try conn.identities(userID: user.id), try conn.factors(userID: user.id))
        }
        return .json(Models.user(updated, identities: identities, factors: factors))
    }

    /// `Session.IsRecovery`: a session signed in by a one-time link or code (`otp`, `magiclink`,
    /// `recovery`: `AuthenticationMethod.IsRecovery`), as a password reset's is, whatever the
    /// flow (implicit recovery links sign in with `otp`, PKCE magic links with `magiclink`). Read
    /// from the session's stored AMR claims, as GoTrue loads them, never from the token's `amr`,
    /// which a custom access token hook may have rewritten.
    private func isRecoverySession(_ caller: Authenticated) throws(AuthError) -> Bool {
        guard let session = caller.session else { return false }
        let methods: [String]
        do {
            methods = try project.database.read { conn in try conn.amrClaims(sessionID: session.id).map(\.method) }
        } catch {
            throw api.storeFailure(error)
        }
        return methods.contains { ["otp", "magiclink", "recovery"].contains($0) }
    }

    /// `verifyReauthentication`: the nonce is the OTP sent by `/reauthenticate`, stored hashed
    /// with the user's email (or phone) and valid for the OTP lifetime. A valid one is used up
    /// at once (`ConfirmReauthentication` runs outside the update's transaction), so it stays
    /// spent when a later check refuses the update.
    private func verifyReauthentication(nonce: String, user: UserRecord) throws(AuthError) {
        let invalid = AuthError(422, .reauthenticationNotValid, "Nonce has expired or is invalid")
        guard let stored = user.reauthenticationToken, !stored.isEmpty, let sentAt = user.reauthenticationSentAt else { throw invalid }
        let viaEmail = !(user.email ?? "").isEmpty
        guard viaEmail || !(user.phone ?? "").isEmpty else {
            throw AuthError(422, .reauthenticationNotValid, "Reauthentication requires an email or a phone number")
        }
        let relatesTo = viaEmail ? user.email ?? "" : user.phone ?? ""
        let lifetime = Int64(viaEmail ? config.mailer.otpExpirySeconds : config.sms.otpExpirySeconds) * 1_000_000
        guard project.environment.now().microseconds <= sentAt + lifetime,
              OneTimeTokens.tokenHash(relatesTo, nonce) == stored
        else { throw invalid }
        try AuthError.whenDatabaseFails("Error during reauthentication") {
            try api.write { conn in
                guard var current = try conn.user(id: user.id) else { return }
                current.reauthenticationToken = nil
                current.updatedAt = project.environment.now().microseconds
                try conn.updateUser(current)
                try OneTimeTokens.clearAll(conn, userID: current.id)
            }
        }
    }
}
