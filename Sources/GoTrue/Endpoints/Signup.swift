import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /signup` (reference §5.5, §8): email/phone sign-up and anonymous sign-in.
struct SignupEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        // No guard: api.go's route closure parses the body first, then applies `AnonymousSignIns`
        // or `Signups` by what it asks for (after the anonymous-provider check), as `signup` does.
        [Endpoint("POST", "/signup", operation: "signup") { g, context in try g.signup(context) }]
    }

    private var project: Project { api.project }
    private var config: Configuration { api.snapshot.configuration }

    /// The route wrapper of api.go: parse first, then anonymous sign-in when neither email nor
    /// phone is given.
    /// `limited: false` is the internal re-entry of `/otp` and `/magiclink`, which the real
    /// server makes past the route's limiter.
    func signup(_ context: RequestContext, limited: Bool = true) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "SignupParams").checking(SignupEndpoints.params)
        let email = try body.string("email") ?? ""
        let phone = try body.string("phone") ?? ""
        if email.isEmpty && phone.isEmpty {
            guard config.external.anonymousUsersEnabled else {
                throw AuthError(422, .anonymousProviderDisabled, "Anonymous sign-ins are disabled")
            }
            try api.rateLimit(.anonymousSignIns, context)
            return try anonymous(context, body: body)
        }
        if limited { try api.rateLimit(.signups, context) }
        return try signup(context, body: body, email: email, phone: phone)
    }

    /// `SignupParams`' decoded fields (`Provider` and `Aud` are `json:"-"`).
    static let params: [String: RequestBody.FieldType] = [
        "email": .string, "phone": .string, "password": .string, "data": .map, "channel": .string,
        "code_challenge_method": .string, "code_challenge": .string,
    ]

    private func signupDisabledCheck() throws(AuthError) {
        if config.disableSignup { throw AuthError(422, .signupDisabled, "Signups not allowed for this instance") }
    }

    private func anonymous(_ context: RequestContext, body: RequestBody) throws(AuthError) -> HTTPResponse {
        try signupDisabledCheck()
        let data = try body.map("data") ?? JSONObject()
        let aud = api.requestAudience(context)
        let now = project.environment.now()
        var user = UserRecord(id: project.environment.uuid(), createdAt: now.microseconds)
        user.aud = aud
        user.role = config.jwt.defaultGroupName
        user.isAnonymous = true
        user.encryptedPassword = ""  // models.NewUser stores an empty hash, never NULL
        user.appMetadata = "{}"
        user.userMetadata = Models.text(data)
        let hooks = Hooks(api: api, request: context.request)
        // `triggerBeforeUserCreated`, outside any transaction: a refusal stores nothing.
        try hooks.beforeUserCreated(user)
        let (issued, userJSON) = try api.write { [user] conn in
            // anonymous.go wraps the whole transaction's failure in its own message.
            try AuthError.whenDatabaseFails("Database error creating anonymous user", rewrapping: true) {
                // The record as built on every run of this write, then as stored (an app's
                // BEFORE INSERT trigger may change it: `signupNewUser` reloads the user).
                var user = try AuthError.whenDatabaseFails("Database error saving new user", writing: user) { try conn.insertUser(user) }
                let issued = try Tokens(api: api).issueSession(conn, user: &user, method: "anonymous", request: context.request)
                return (issued, Models.user(user, identities: []))
            }
        }
        try hooks.afterUserCreated(userJSON)
        return .json(.object(issued.response(user: userJSON)), headers: issued.headers)
    }

    private func signup(_ context: RequestContext, body: RequestBody, email rawEmail: String, phone rawPhone: String)
        throws(AuthError) -> HTTPResponse
    {
        // Api.Signup parses the body again after the DISABLE_SIGNUP check; the result is the same.
        try signupDisabledCheck()
        let password = try body.string("password") ?? ""
        let data = try body.map("data") ?? JSONObject()
        let channel = try body.string("channel") ?? ""
        let codeChallenge = try body.string("code_challenge") ?? ""
        let codeChallengeMethod = try body.string("code_challenge_method") ?? ""
        let provider = rawEmail.isEmpty ? "phone" : "email"

        // validateSignupParams, in the real order.
        if password.isEmpty { throw AuthError(400, .validationFailed, "Signup requires a valid password") }
        let passwords = Passwords(configuration: config, environment: project.environment)
        try passwords.checkStrength(password)
        if !rawEmail.isEmpty && !rawPhone.isEmpty {
            throw AuthError(400, .validationFailed, "Only an email address or phone number should be provided on signup.")
        }
        if provider == "phone" && !SignupEndpoints.isValidChannel(channel, config) {
            throw AuthError(400, .validationFailed, SignupEndpoints.invalidChannelMessage)
        }
        if !rawPhone.isEmpty && !codeChallenge.isEmpty {
            throw AuthError(400, .validationFailed, "PKCE not supported for phone signups")
        }
        try PKCE.validateParameters(method: codeChallengeMethod, challenge: codeChallenge)

        let aud = api.requestAudience(context)
        let email: String
        let phone: String
        if provider == "email" {
            guard config.external.emailEnabled else { throw AuthError(400, .emailProviderDisabled, "Email signups are disabled") }
            email = try Validation.email(rawEmail)
            phone = ""
        } else {
            guard config.external.phoneEnabled else { throw AuthError(400, .phoneProviderDisabled, "Phone signups are disabled") }
            phone = try Validation.phone(rawPhone)
            email = ""
        }

        // Hash before taking the write lock: PBKDF2 is the slow part of a sign-up.
        let passwordHash = passwords.hash(password)
        let now = project.environment.now()
        let autoconfirm = provider == "email" ? config.mailer.autoconfirm : config.sms.autoconfirm

        // The user a new sign-up creates (`ToUserModel`), shown to the before-user-created hook
        // outside any transaction when no user has the address yet.
        var prospect = UserRecord(id: project.environment.uuid(), createdAt: now.microseconds)
        prospect.aud = aud
        prospect.role = config.jwt.defaultGroupName
        prospect.email = provider == "email" ? email : nil
        prospect.phone = provider == "phone" ? phone : nil
        prospect.encryptedPassword = passwordHash
        prospect.appMetadata = Models.text(["provider": .string(provider), "providers": [.string(provider)]])
        prospect.userMetadata = Models.text(data)
        let hooks = Hooks(api: api, request: context.request)
        // signup.go looks the address up with `IsDuplicatedEmail` (identities first, so an
        // account whose own email has changed still answers to an identity's old one) and the
        // phone with `FindUserByPhoneAndAudience`.
        @Sendable func existingUser(_ conn: Connection) throws -> UserRecord? {
            provider == "email" ? try api.duplicatedEmailUser(conn, email, aud: aud) : try conn.user(phone: phone, aud: aud)
        }
        if hooks.enabled(.beforeUserCreated) || hooks.enabled(.afterUserCreated) {
            let exists = try api.read { conn in try existingUser(conn) != nil }
            if !exists { try hooks.beforeUserCreated(prospect) }
        }
        enum Outcome {
            case session(Tokens.Issued, JSON)
            case pending(JSON)
            case exists(UserRecord)
        }
        let (outcome, _): (Outcome, Bool) = try api.write { [prospect] conn, round in
            var created = false
            var user: UserRecord
            if let existing = try existingUser(conn) {
                let confirmed = provider == "email" ? existing.emailConfirmedAt != nil : existing.phoneConfirmedAt != nil
                if confirmed {
                    try api.audit(conn, context, actor: existing, action: .userRepeatedSignUp,
                                  traits: ["provider": .string(provider)])
                    return (.exists(existing), created)
                }
                user = existing
            } else {
                // `signupNewUser`: the row as stored, so an app trigger's changes reach the response.
                user = try AuthError.whenDatabaseFails("Database error saving new user", writing: prospect) { try conn.insertUser(prospect) }
                created = true
            }

            // The provider's identity, created on first sign-up; user_metadata takes its data.
            var identity: IdentityRecord
            // `RemoveUnconfirmedIdentities` makes user_metadata the new identity's very map, and
            // `UpdateUserMetaData` then deletes its null values and `Confirm` adds
            // `email_verified: true` to it: the answer's identity shows both changes, while the
            // identity row keeps what was inserted (nulls, `email_verified: false`).
            var shared: JSONObject?
            if let found = try conn.identity(providerID: user.id, provider: provider) {
                identity = found
            } else {
                var identityData: JSONObject = ["sub": .string(user.id)]
                if let userEmail = user.email, !userEmail.isEmpty { identityData["email"] = .string(userEmail) }
                identityData["email_verified"] = false
                identityData["phone_verified"] = false
                for (key, value) in data where identityData[key] == nil { identityData[key] = value }
                // `BeforeCreate` lower-cases a phone sign-up's `data.email` in the map the identity
                // and user_metadata share.
                identityData = ExternalAccounts.storedIdentityData(identityData)
                identity = IdentityRecord(id: project.environment.uuid(), providerID: user.id, userID: user.id,
                                          identityData: Models.text(identityData), provider: provider, at: now.microseconds)
                try conn.insertIdentity(identity)
                var metadata = identityData
                for (key, value) in identityData where value == .null { _ = metadata.removeValue(forKey: key) }
                shared = metadata
                user.userMetadata = Models.text(metadata)
                try AuthError.whenDatabaseFails("Database error updating user") { try conn.updateUser(user) }
                // An unconfirmed account (one an unverified provider made, say) keeps only this
                // identity, with its data and provider (signup.go).
                if !created { try ExternalAccounts(api: api, context: context).removeUnconfirmedIdentities(conn, &user, keeping: identity) }
            }

            if autoconfirm {
                // signup.go: a phone sign-up's entry also names the channel (`sms` when none was sent).
                var traits: JSONObject = ["provider": .string(provider)]
                if provider == "phone" { traits["channel"] = .string(channel.isEmpty ? "sms" : channel) }
                try api.audit(conn, context, actor: user, action: .userSignedUp, traits: traits)
                if provider == "email" {
                    user.emailConfirmedAt = now.microseconds
                    user.confirmationToken = nil
                    user.userMetadata = Models.merge(["email_verified": true], into: user.userMetadata)
                    shared?["email_verified"] = true
                } else {
                    // `ConfirmPhone` sets the time and clears the token; unlike `Confirm`, it
                    // leaves user_metadata's `phone_verified` as the identity made it (false).
                    user.phoneConfirmedAt = now.microseconds
                    user.confirmationToken = nil
                }
                try OneTimeTokens.clearAll(conn, userID: user.id)
                try AuthError.whenDatabaseFails("Database error updating user") { try conn.updateUser(user) }
                try api.audit(conn, context, actor: user, action: .login,
                              traits: ["provider": .string(provider)])
                let issued = try Tokens(api: api).issueSession(conn, user: &user, method: "password", request: context.request)
                return (.session(issued, Models.user(user, identities: [shown(identity, shared)])), created)
            }

            try api.audit(conn, context, actor: user, action: .userConfirmationRequested,
                          traits: ["provider": .string(provider)])
            // The confirmation message goes to the outbox (Mailer.swift); a PKCE sign-up first
            // records its flow state, and its link then carries a `pkce_` token.
            let mailer = Mailer(api: api, context: context)
            if provider == "email" {
                if !codeChallenge.isEmpty {
                    try FlowStates.create(conn, project: project, userID: user.id, providerType: "email",
                                          authenticationMethod: FlowStates.emailSignup,
                                          codeChallengeMethod: codeChallengeMethod, codeChallenge: codeChallenge)
                }
                try mailer.sendConfirmation(conn, user: &user, pkce: !codeChallenge.isEmpty, round: &round)
            } else {
                _ = try mailer.sendPhoneOTP(conn, user: &user, phone: phone, purpose: .confirmation, channel: channel, round: &round)
            }
            // signup.go signs in whenever either channel is confirmed, whichever was signed up
            // with: an unconfirmed email of an account with a confirmed phone (or the reverse)
            // gets its confirmation and a session, no password asked.
            if user.emailConfirmedAt != nil || user.phoneConfirmedAt != nil {
                try api.audit(conn, context, actor: user, action: .login, traits: ["provider": .string(provider)])
                let issued = try Tokens(api: api).issueSession(conn, user: &user, method: "password", request: context.request)
                return (.session(issued, Models.user(user, identities: [shown(identity, shared)])), created)
            }
            // `HasBeenInvited`: an invited user's metadata and identities are left out of the
            // answer (what is stored stays).
            if user.invitedAt != nil {
                var shown = user
                shown.userMetadata = "{}"
                return (.pending(Models.user(shown, identities: [])), created)
            }
            return (.pending(Models.user(user, identities: [shown(identity, shared)])), created)
        }

        // signup.go calls the after-user-created hook on its last path only: whenever it answers
        // the user with a confirmation pending (a user created now, or one still unconfirmed
        // from before), never when it signs the user in at once; a failure is its 500.
        if case .pending(let userJSON) = outcome {
            do {
                try hooks.afterUserCreated(userJSON)
            } catch {
                var failure = AuthError(500, .unexpectedFailure, "Error invoking hook")
                failure.internalError = error.message
                throw failure
            }
        }
        switch outcome {
        case .session(let issued, let userJSON):
            return .json(.object(issued.response(user: userJSON)), headers: issued.headers)
        case .pending(let userJSON):
            return .json(userJSON)
        case .exists(let existing):
            if config.mailer.autoconfirm || config.sms.autoconfirm {
                throw AuthError(422, .userAlreadyExists, "User already registered")
            }
            // `sanitizeUser` keeps the eagerly loaded factors.
            let factors = try api.read { conn in try conn.factors(userID: existing.id) }
            return .json(sanitized(existing, provider: provider, data: data, aud: aud, now: now, factors: factors))
        }
    }

    /// The identity as the answer shows it: with the map it shares with user_metadata, when it
    /// was made now.
    private func shown(_ identity: IdentityRecord, _ shared: JSONObject?) -> IdentityRecord {
        guard let shared else { return identity }
        var shown = identity
        shown.identityData = Models.text(shared)
        return shown
    }

    /// `sanitizeUser`: the enumeration-protection stand-in for an existing confirmed account
    /// (reference §8.3): a fresh id, no role, no confirmations, no identities.
    private func sanitized(_ stored: UserRecord, provider: String, data: JSONObject, aud: String, now: Timestamp,
                           factors: [FactorRecord]) -> JSON {
        var user = UserRecord(id: project.environment.uuid(), createdAt: now.microseconds)
        user.aud = aud
        user.role = ""
        user.email = provider == "email" ? stored.email : nil
        user.phone = provider == "phone" ? stored.phone : nil
        user.confirmationSentAt = now.microseconds
        user.invitedAt = stored.invitedAt
        user.recoverySentAt = stored.recoverySentAt
        user.phoneChange = stored.phoneChange
        user.phoneChangeSentAt = stored.phoneChangeSentAt
        user.reauthenticationSentAt = stored.reauthenticationSentAt
        user.bannedUntil = stored.bannedUntil
        user.deletedAt = stored.deletedAt
        user.isAnonymous = stored.isAnonymous
        user.appMetadata = Models.text(["provider": .string(provider), "providers": [.string(provider)]])
        user.userMetadata = Models.text(data)
        return Models.user(user, identities: [], factors: factors)
    }

    /// `IsValidMessageChannel`: any channel with the send-SMS hook on; else SMS always, WhatsApp
    /// only through Twilio or Twilio Verify.
    static func isValidChannel(_ channel: String, _ config: Configuration) -> Bool {
        // With the send-SMS hook on, the channel is the hook's business.
        if config.hooks.sendSMS.enabled { return true }
        switch channel {
        case "", "sms": return true
        case "whatsapp": return ["twilio", "twilio_verify"].contains(config.sms.provider)
        default: return false
        }
    }

    /// `InvalidChannelError` (sms_provider): WhatsApp needs Twilio, which the emulator has not.
    static let invalidChannelMessage =
        "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider."
}
