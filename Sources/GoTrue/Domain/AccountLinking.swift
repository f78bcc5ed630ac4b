import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore

/// Signing in with an external identity (OAuth callback, id_token grant): automatic account
/// linking (`models.DetermineAccountLinking`), account creation
/// (`createAccountFromExternalIdentity`) and manual linking (`linkIdentityToUser`). Everything
/// runs inside the caller's write transaction.
struct ExternalAccounts {
    let api: Core
    let context: RequestContext

    private var project: Project { api.project }
    private var config: Configuration { api.snapshot.configuration }

    enum Decision {
        case accountExists(UserRecord, IdentityRecord)
        case createAccount
        case linkAccount(UserRecord)
        case multipleAccounts
    }

    /// The outcome of signing in: a user to issue a session for, or an error that must still
    /// commit what was done (GoTrue's `CommitWithError`: the unverified user and the
    /// confirmation email stay).
    enum Outcome {
        /// The user signed in, and the identities GoTrue's answer lists: the ones loaded with
        /// the user before the change (not refreshed: a linked identity missing, an updated one
        /// with its old data, removed ones still there), or the new account's one.
        case user(UserRecord, created: Bool, identities: [IdentityRecord])
        case failedAfterCommit(AuthError)
    }

    /// `DetermineAccountLinking` with only the default linking domain (no SSO, no experimental
    /// linking domains): an existing identity signs in; otherwise a verified email shared with
    /// exactly one account (through its identities, else its user row) links; otherwise a new
    /// account.
    func decide(_ conn: Connection, emails: [ProviderEmail], aud: String, provider: String, subject: String)
        throws -> (Decision, ProviderEmail)
    {
        var verified: [String] = []
        var candidate = ProviderEmail(email: "", verified: false, primary: false)
        for email in emails {
            if email.verified || config.mailer.autoconfirm { verified.append(email.email.lowercased()) }
            if email.primary {
                candidate = email
                candidate.email = email.email.lowercased()
            }
        }
        if let identity = try conn.identity(providerID: subject, provider: provider) {
            guard let user = try conn.user(id: identity.userID) else {
                throw AuthError(500, .unexpectedFailure, "Database error finding user")
            }
            // The candidate email becomes the account's own (it may be empty).
            candidate.email = user.email ?? ""
            return (.accountExists(user, identity), candidate)
        }
        if verified.isEmpty {
            // `IsDuplicatedEmail`: an unverified address already in use is not given to the
            // new account.
            if !candidate.email.isEmpty, try api.isDuplicatedEmail(conn, candidate.email, aud: aud) {
                candidate.email = ""
            }
            return (.createAccount, candidate)
        }
        // SSO identities live in their own linking domain; every other provider is "default".
        let similar = try conn.identities(emails: verified).filter { !$0.provider.hasPrefix("sso:") }
        if similar.isEmpty {
            let users = try conn.userIDs(emails: verified)
            if users.count == 1, let user = try conn.user(id: users[0]) { return (.linkAccount(user), candidate) }
            if users.count > 1 { return (.multipleAccounts, candidate) }
            return (.createAccount, candidate)
        }
        let owner = similar[0].userID
        if similar.contains(where: { $0.userID != owner }) { return (.multipleAccounts, candidate) }
        guard let user = try conn.user(id: owner) else {
            throw AuthError(500, .unexpectedFailure, "Database error finding user")
        }
        return (.linkAccount(user), candidate)
    }


    /// `triggerBeforeUserCreatedExternal`: before any transaction (a hook call never holds the
    /// writer), the linking decision is taken in a read; when it would create an account, the
    /// before-user-created hook sees that account and may refuse it.
    func beforeUserCreated(data: ProviderUserData, provider: String) throws(AuthError) {
        let hooks = Hooks(api: api, request: context.request)
        guard hooks.enabled(.beforeUserCreated) else { return }
        let aud = api.requestAudience(context)
        let (decision, candidate) = try api.read { conn in
            try decide(conn, emails: data.emails, aud: aud, provider: provider, subject: data.metadata.subject)
        }
        guard case .createAccount = decision else { return }
        if config.disableSignup { throw AuthError(422, .signupDisabled, "Signups not allowed for this instance") }
        var user = UserRecord(id: project.environment.uuid(), createdAt: project.environment.now().microseconds)
        user.aud = aud
        user.role = config.jwt.defaultGroupName
        user.email = candidate.email.isEmpty ? nil : candidate.email
        user.appMetadata = Models.text(["provider": .string(provider), "providers": [.string(provider)]])
        user.userMetadata = Models.text(data.metadata.identityData)
        try hooks.beforeUserCreated(user)
    }

    /// `createAccountFromExternalIdentity`.
    func signIn(_ conn: Connection, data: ProviderUserData, provider: String, emailOptional: Bool,
                round: inout WriteRound) throws -> Outcome {
        let aud = api.requestAudience(context)
        let now = project.environment.now().microseconds
        let identityData = data.metadata.identityData
        let (decision, candidate) = try decide(conn, emails: data.emails, aud: aud, provider: provider,
                                               subject: data.metadata.subject)
        var user: UserRecord
        var identity: IdentityRecord
        var created = false
        var shown: [IdentityRecord]
        switch decision {
        case .linkAccount(let existing):
            user = existing
            shown = try conn.identities(userID: user.id)
            identity = try createIdentity(conn, user: user, provider: provider, data: identityData)
            // The map `createNewIdentity` lower-cased is the one merged into user_metadata.
            mergeUserMetadata(&user, ExternalAccounts.storedIdentityData(identityData))
            try updateProviders(conn, &user)
            try api.audit(conn, context, actor: user, action: .identityLinked,
                          traits: identityTraits(identity), ipAddress: api.clientIP(context))
        case .createAccount:
            if config.disableSignup {
                throw AuthError(422, .signupDisabled, "Signups not allowed for this instance")
            }
            user = UserRecord(id: project.environment.uuid(), createdAt: now)
            user.aud = aud
            user.role = config.jwt.defaultGroupName
            user.email = candidate.email.isEmpty ? nil : candidate.email
            user.encryptedPassword = ""  // models.NewUser without a password: an empty hash, never NULL
            user.appMetadata = Models.text(["provider": .string(provider), "providers": [.string(provider)]])
            user.userMetadata = Models.text(identityData)
            // `signupNewUser`, reloading the row an app trigger may have changed.
            user = try AuthError.whenDatabaseFails("Database error saving new user", writing: user) { try conn.insertUser(user) }
            identity = try createIdentity(conn, user: user, provider: provider, data: identityData)
            shown = [identity]
            created = true
        case .accountExists(let existing, var found):
            user = existing
            shown = try conn.identities(userID: user.id)
            // `UpdateOnly(identity, ...)` runs `BeforeUpdate` on the map it then merges.
            let stored = ExternalAccounts.storedIdentityData(identityData)
            found.identityData = Models.text(stored)
            found.updatedAt = now
            try conn.updateIdentity(found)
            identity = found
            mergeUserMetadata(&user, stored)
            try updateProviders(conn, &user)
        case .multipleAccounts:
            logError("multiple accounts with the same email address in the default linking domain")
            // `NewInternalServerError`: `unexpected_failure`.
            throw AuthError(500, .unexpectedFailure, "Multiple accounts with the same email address in the same linking domain detected: default")
        }

        if api.isBanned(user) { throw AuthError(403, .userBanned, "User is banned") }

        // A Web3 identity never carries an email, so it never waits for one.
        let hasEmails = provider != "web3" && !(emailOptional && candidate.email.isEmpty)
        if hasEmails && user.emailConfirmedAt == nil {
            try removeUnconfirmedIdentities(conn, &user, keeping: identity)
            if candidate.verified || config.mailer.autoconfirm {
                try api.audit(conn, context, actor: user, action: .userSignedUp,
                              traits: ["provider": .string(provider)])
                try confirm(conn, &user)
            } else {
                var emailSent = false
                if !candidate.email.isEmpty {
                    try Mailer(api: api, context: context).sendConfirmation(conn, user: &user, pkce: false, round: &round)
                    emailSent = true
                }
                if !config.mailer.allowUnverifiedEmailSignIns {
                    let message = emailSent
                        ? "Unverified email with \(provider). A confirmation email has been sent to your \(provider) email"
                        : "Unverified email with \(provider). Verify the email with \(provider) in order to sign in"
                    return .failedAfterCommit(AuthError(422, .providerEmailNeedsVerification, message))
                }
            }
        } else {
            try api.audit(conn, context, actor: user, action: .login,
                          traits: ["provider": .string(provider)])
        }
        return .user(user, created: created, identities: shown)
    }

    /// `linkIdentityToUser`: the identity joins `target` (manual linking, `link_identity`).
    func link(_ conn: Connection, target: UserRecord, data: ProviderUserData, provider: String,
              round: inout WriteRound) throws -> Outcome {
        var user = try conn.user(id: target.id) ?? target
        // The user the request authenticated, identities loaded then: the new one is not listed.
        let shown = try conn.identities(userID: user.id)
        if let existing = try conn.identity(providerID: data.metadata.subject, provider: provider) {
            if existing.userID == user.id {
                throw AuthError(422, .identityAlreadyExists, "Identity is already linked")
            }
            throw AuthError(422, .identityAlreadyExists, "Identity is already linked to another user")
        }
        let identity = try createIdentity(conn, user: user, provider: provider, data: data.metadata.identityData)
        try api.audit(conn, context, actor: user, action: .identityLinked,
                      traits: identityTraits(identity), ipAddress: api.clientIP(context))
        if (user.email ?? "").isEmpty {
            switch try adoptIdentityEmail(conn, &user) {
            case .conflict: throw AuthError(400, .emailExists, AuthError.duplicateEmailMessage)
            case .ok: break
            }
            if !data.metadata.emailVerified {
                try Mailer(api: api, context: context).sendConfirmation(conn, user: &user, pkce: false, round: &round)
                return .failedAfterCommit(AuthError(422, .emailNotConfirmed,
                    "Unverified email with \(provider). A confirmation email has been sent to your \(provider) email"))
            }
            try confirm(conn, &user)
            if user.isAnonymous {
                user.isAnonymous = false
                try conn.updateUser(user)
            }
        }
        try updateProviders(conn, &user)
        Mailer(api: api, context: context).notify(conn, .identityLinked, user: user, to: user.email ?? "",
                                                  values: ["Provider": provider], round: &round)
        return .user(user, created: false, identities: shown)
    }

    // MARK: model helpers (internal/models)

    /// `Identity.BeforeCreate` / `BeforeUpdate`: a string `email` in the identity's data is
    /// stored lower-cased (`Ann@Example.COM` → `ann@example.com`).
    static func storedIdentityData(_ data: JSONObject) -> JSONObject {
        guard case .string(let email)? = data["email"] else { return data }
        var stored = data
        stored["email"] = .string(email.lowercased())
        return stored
    }

    /// `models.NewIdentity`: the provider's subject (`identity_data.sub`) is the identity's id.
    func createIdentity(_ conn: Connection, user: UserRecord, provider: String, data: JSONObject) throws -> IdentityRecord {
        let identity = IdentityRecord(id: project.environment.uuid(), providerID: data["sub"]?.stringValue ?? "",
                                      userID: user.id, identityData: Models.text(ExternalAccounts.storedIdentityData(data)),
                                      provider: provider, at: project.environment.now().microseconds)
        try conn.insertIdentity(identity)
        return identity
    }

    func identityTraits(_ identity: IdentityRecord) -> JSONObject {
        ["identity_id": .string(identity.id), "provider": .string(identity.provider),
         "provider_id": .string(identity.providerID)]
    }

    /// `UpdateUserMetaData`: keys set, `null` values deleted.
    func mergeUserMetadata(_ user: inout UserRecord, _ updates: JSONObject) {
        user.userMetadata = Models.merge(updates, into: user.userMetadata)
    }

    func updateProviders(_ conn: Connection, _ user: inout UserRecord) throws {
        try api.updateProviders(conn, &user)
    }

    func confirm(_ conn: Connection, _ user: inout UserRecord) throws {
        try api.confirmEmail(conn, &user)
    }

    /// `RemoveUnconfirmedIdentities`: an unconfirmed account that gains an identity loses its
    /// password (unless the new identity is email/phone), takes the identity's data as its
    /// metadata and keeps only that identity (pre-account-takeover protection); `providers`
    /// lists that one.
    func removeUnconfirmedIdentities(_ conn: Connection, _ user: inout UserRecord, keeping identity: IdentityRecord) throws {
        if identity.provider != "email" && identity.provider != "phone" { user.encryptedPassword = nil }
        // `u.UserMetaData = identity.IdentityData`, then that map merged into itself: the
        // identity's data replaces the metadata.
        user.userMetadata = identity.identityData
        for other in try conn.identities(userID: user.id) where other.id != identity.id {
            try conn.deleteIdentity(id: other.id)
        }
        try updateProviders(conn, &user)
    }

    enum AdoptResult { case ok, conflict }

    /// `UpdateUserEmailFromIdentities`: keep the user's email when an identity carries it,
    /// otherwise take the best identity's (verified first, then unverified, then none; oldest
    /// first) that no other account of the audience uses.
    func adoptIdentityEmail(_ conn: Connection, _ user: inout UserRecord) throws -> AdoptResult {
        let identities = try conn.identities(userID: user.id)
        let current = (user.email ?? "").lowercased()
        if identities.contains(where: { ($0.email ?? "") == current }) { return .ok }
        func rank(_ i: IdentityRecord) -> Int {
            if (i.email ?? "").isEmpty { return 2 }
            return Models.object(i.identityData)["email_verified"]?.boolValue == true ? 0 : 1
        }
        let ordered = identities.enumerated().sorted { a, b in
            let (ra, rb) = (rank(a.element), rank(b.element))
            if ra != rb { return ra < rb }
            if a.element.createdAt != b.element.createdAt { return a.element.createdAt < b.element.createdAt }
            return a.element.id < b.element.id
        }.map(\.element)
        for identity in ordered {
            let email = identity.email ?? ""
            // No other account may hold the address (an empty one never matches a user row).
            if !email.isEmpty, try conn.userExists(email: email, aud: user.aud, excluding: nil) { continue }
            user.email = email.isEmpty ? nil : email
            user.clearAllPendingTokens()
            try OneTimeTokens.clearAll(conn, userID: user.id)
            if email.isEmpty || (rank(identity) != 0 && !config.mailer.autoconfirm) {
                user.emailConfirmedAt = nil
                user.userMetadata = Models.merge(["email_verified": false], into: user.userMetadata)
            }
            try conn.updateUser(user)
            return .ok
        }
        return .conflict
    }
}

extension Core {
    /// `UpdateAppMetaDataProviders`: `providers` lists the identities' providers in the order
    /// they were linked, `provider` the first. Writes the whole row (with any other pending
    /// change of `user`) and reloads it.
    func updateProviders(_ conn: Connection, _ user: inout UserRecord) throws {
        var providers: [String] = []
        for identity in try conn.identities(userID: user.id) where !providers.contains(identity.provider) {
            providers.append(identity.provider)
        }
        var changes: JSONObject = ["providers": .array(providers.map { .string($0) })]
        if let first = providers.first { changes["provider"] = .string(first) }
        user.appMetadata = Models.merge(changes, into: user.appMetadata)
        user.updatedAt = project.environment.now().microseconds
        try conn.updateUser(user)
        user = try conn.user(id: user.id) ?? user
    }

    /// `ensureEmailIdentityForPassword`, after a user's first password (`PUT /user`,
    /// `PUT /admin/users/{id}`). Behind `GOTRUE_EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED`,
    /// off by default, when nothing happens. On: an account that is neither SSO nor anonymous,
    /// whose stored email is confirmed (never the request's) and that has no email identity gets
    /// one, and `app_metadata`'s providers are listed again from its identities.
    func ensureEmailIdentityForPassword(_ conn: Connection, _ user: inout UserRecord) throws {
        guard snapshot.configuration.experimental.createEmailIdentityOnPasswordSet, !user.isSSOUser, !user.isAnonymous,
              let email = user.email, !email.isEmpty, user.emailConfirmedAt != nil,
              try !conn.identities(userID: user.id).contains(where: { $0.provider == "email" })
        else { return }
        let data: JSONObject = ["sub": .string(user.id), "email": .string(email), "email_verified": true, "phone_verified": false]
        try conn.insertIdentity(IdentityRecord(id: project.environment.uuid(), providerID: user.id, userID: user.id,
                                               identityData: Models.text(data), provider: "email",
                                               at: project.environment.now().microseconds))
        try updateProviders(conn, &user)
    }

    /// `User.Confirm`: email confirmed, `email_verified` in user_metadata, pending codes gone.
    func confirmEmail(_ conn: Connection, _ user: inout UserRecord) throws {
        let now = project.environment.now().microseconds
        user.confirmationToken = nil
        user.emailConfirmedAt = now
        user.userMetadata = Models.merge(["email_verified": true], into: user.userMetadata)
        user.updatedAt = now
        try conn.updateUser(user)
        try OneTimeTokens.clearAll(conn, userID: user.id)
        user.refreshConfirmedAt()
    }

    /// The user's own `email`/`phone` identity (whose id is the user id) updated with
    /// `changes`, or created with `created` as its data. True when it was created.
    @discardableResult
    func upsertIdentity(_ conn: Connection, user: UserRecord, provider: String, changes: JSONObject,
                        created: JSONObject, at now: Int64) throws -> Bool {
        if var identity = try conn.identity(providerID: user.id, provider: provider) {
            identity.identityData = Models.merge(changes, into: identity.identityData)
            identity.updatedAt = now
            try conn.updateIdentity(identity)
            return false
        }
        try conn.insertIdentity(IdentityRecord(id: project.environment.uuid(), providerID: user.id, userID: user.id,
                                               identityData: Models.text(created), provider: provider, at: now))
        return true
    }
}

extension Core {
    /// `IsDuplicatedEmail`: another account of the audience answers to `email` through one of
    /// its default-linking-domain identities (an SSO identity does not count), or, failing
    /// that, through its own `email` column. `excluding` is the account asking (its own
    /// identities are passed over; a change to its current address is not asked about).
    func isDuplicatedEmail(_ conn: Connection, _ email: String, aud: String, excluding userID: String? = nil) throws -> Bool {
        try duplicatedEmailUser(conn, email, aud: aud, excluding: userID) != nil
    }

    /// The account `IsDuplicatedEmail` finds (sign-up reads it): possibly one whose own `email`
    /// is another address now, found through an identity that still has `email`.
    func duplicatedEmailUser(_ conn: Connection, _ email: String, aud: String, excluding userID: String? = nil) throws -> UserRecord? {
        for identity in try conn.identities(emails: [email]) where !identity.provider.hasPrefix("sso:") && identity.userID != userID {
            if let user = try conn.user(id: identity.userID), user.aud == aud { return user }
        }
        return try conn.user(email: email, aud: aud)
    }
}
