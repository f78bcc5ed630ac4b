import AuthCrypto
import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore

/// `/passkeys/*` (passkey_registration.go, passkey_authentication.go, passkey_manage.go): the
/// group's first middleware is `requirePasskeyEnabled` (404 `passkey_disabled` while
/// `GOTRUE_PASSKEY_ENABLED` is off, the default); registration then runs `requireAuthentication`
/// and `requireNotAnonymous`, the list and management routes `requireAuthentication`, and
/// `authentication/options` the passkey rate limiter.
struct PasskeyEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("POST", "/passkeys/authentication/options", operation: "passkeys.authentication.options",
                     guards: [.requirePasskeyEnabled, .limit(.passkeyAuthentication)]) { g, c in try g.authenticationOptions(c) },
            Endpoint("POST", "/passkeys/authentication/verify", operation: "passkeys.authentication.verify",
                     guards: [.requirePasskeyEnabled]) { g, c in try g.authenticationVerify(c) },
            Endpoint("POST", "/passkeys/registration/options", operation: "passkeys.registration.options",
                     guards: registering) { g, c in try g.registrationOptions(c) },
            Endpoint("POST", "/passkeys/registration/verify", operation: "passkeys.registration.verify",
                     guards: registering) { g, c in try g.registrationVerify(c) },
            Endpoint("GET", "/passkeys", operation: "passkeys.list",
                     guards: [.requirePasskeyEnabled, .requireAuthentication]) { g, c in try g.list(c) },
            Endpoint("PATCH", "/passkeys/{passkey_id}", operation: "passkeys.update",
                     guards: [.requirePasskeyEnabled, .requireAuthentication]) { g, c in try g.update(c) },
            // The identities and factors are read with the user: deleting needs aal2 when MFA is on.
            Endpoint("DELETE", "/passkeys/{passkey_id}", operation: "passkeys.delete",
                     guards: [.requirePasskeyEnabled, .requireAuthenticationWithIdentities]) { g, c in try g.delete(c) },
        ]
    }

    private var config: Configuration { api.snapshot.configuration }
    private var environment: Environment { api.project.environment }
    private var relyingParty: RelyingParty { config.webAuthn.relyingParty(siteURL: config.siteURL) }

    /// `/passkeys/registration`: `requirePasskeyEnabled`, `requireAuthentication`, then
    /// `requireNotAnonymous`; the factors are read with the user, for the aal2 rule.
    static let registering: [RouteGuard] = [.requirePasskeyEnabled, .requireAuthenticationWithIdentities, .requireNotAnonymous]

    /// The caller the registration guards admitted, then the handlers' own checks.
    private func registeringCaller(_ context: RequestContext) throws(AuthError) -> Authenticated {
        let caller = try api.caller(context, loadingIdentities: true)
        if caller.user.isSSOUser {
            throw AuthError(422, .validationFailed, "SSO users cannot register passkeys")
        }
        try Self.requireManagementAAL(caller)
        return caller
    }

    /// `requirePasskeyManagementAAL` (passkey_webauthn.go): with a verified MFA factor, managing
    /// passkeys needs an aal2 session.
    static func requireManagementAAL(_ caller: Authenticated) throws(AuthError) {
        let hasMFA = caller.factors.contains { $0.status == "verified" }
        if hasMFA && caller.session?.aal != "aal2" {
            throw AuthError(403, .insufficientAal, "AAL2 session is required to manage passkeys when MFA is enabled")
        }
    }

    // MARK: registration

    /// `POST /passkeys/registration/options`.
    func registrationOptions(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try registeringCaller(context)
        let existing = try api.read { conn in try conn.webAuthnCredentials(userID: caller.user.id) }
        if existing.count >= config.passkey.maxPasskeysPerUser {
            throw AuthError(422, .tooManyPasskeys, "Maximum number of passkeys reached")
        }
        let rp = relyingParty
        let (options, session) = PasskeyOptions.creation(user: caller.user, rp: rp, exclude: existing.map(\.credentialID),
                                                         challenge: environment.randomBytes(WebAuthn.challengeLength))
        return try storeChallenge(userID: caller.user.id, type: "registration", session: session, options: options)
    }

    private func storeChallenge(userID: String?, type: String, session: WebAuthnSession, options: JSON) throws(AuthError) -> HTTPResponse {
        let now = environment.now()
        let expiresAt = now.microseconds + Int64(config.webAuthn.challengeExpirySeconds * 1_000_000)
        let record = WebAuthnChallengeRecord(id: environment.uuid(), userID: userID, challengeType: type,
                                             sessionData: session.json.serialized(), createdAt: now.microseconds, expiresAt: expiresAt)
        try api.write { conn in try conn.insertWebAuthnChallenge(record) }
        return .json([
            "challenge_id": .string(record.id),
            "options": options,
            "expires_at": .number(Double(expiresAt / 1_000_000)),
        ])
    }

    /// The `challenge_id` / `credential` body both verify routes read, with their checks.
    private func verifyParams(_ context: RequestContext, as name: String) throws(AuthError) -> (String, JSON) {
        let body = try RequestBody(context.request, as: name)
        let challengeID = try body.string("challenge_id") ?? ""
        guard !challengeID.isEmpty else { throw AuthError(400, .validationFailed, "challenge_id is required") }
        // `json.RawMessage`: only an absent key leaves it nil (`null` is kept as the text "null").
        guard let credential = body.value("credential") else { throw AuthError(400, .validationFailed, "credential is required") }
        guard let id = AdminEndpoints.canonicalUUID(challengeID) else {
            throw AuthError(400, .validationFailed, "challenge_id must be a valid UUID")
        }
        return (id, credential)
    }

    /// `ConsumeWebAuthnChallengeByID` in its own transaction: the challenge is gone whatever
    /// happens next, then `IsExpired`.
    private func consume(_ id: String, type: String, userID: String?) throws(AuthError) -> WebAuthnSession {
        let found = try api.write { conn in try conn.consumeWebAuthnChallenge(id: id, type: type, userID: userID) }
        guard let challenge = found else {
            throw AuthError(400, .webauthnChallengeNotFound, "Challenge not found or already used")
        }
        if environment.now().microseconds > challenge.expiresAt {
            throw AuthError(400, .webauthnChallengeExpired, "Challenge has expired")
        }
        guard let json = try? JSON(parsing: challenge.sessionData), let session = WebAuthnSession(json: json) else {
            throw AuthError(500, .unexpectedFailure, "Database error consuming challenge")
        }
        return session
    }

    static let invalidResponse = AuthError(400, .webauthnVerificationFailed, "Invalid credential response")
    static let verificationFailed = AuthError(400, .webauthnVerificationFailed, "Credential verification failed")

    /// `POST /passkeys/registration/verify`.
    func registrationVerify(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try registeringCaller(context)
        let (challengeID, credentialJSON) = try verifyParams(context, as: "PasskeyRegistrationVerifyParams")
        let session = try consume(challengeID, type: "registration", userID: caller.user.id)
        let parsed: RegistrationResponse
        do { parsed = try RegistrationResponse(credentialJSON) } catch {
            logError("passkey registration: \(error)")
            throw Self.invalidResponse
        }
        let verified: RegistrationResponse.Credential
        do {
            guard session.userID == Array(caller.user.id.utf8) else { throw WebAuthnFailure.verify("ID mismatch for user and session") }
            verified = try parsed.verify(session: session, relyingParty: relyingParty)
        } catch {
            logError("passkey registration: \(error)")
            throw Self.verificationFailed
        }
        let now = environment.now().microseconds
        let aaguid = PasskeyOptions.uuidString(verified.aaguid)
        let record = WebAuthnCredentialRecord(
            id: environment.uuid(), userID: caller.user.id, credentialID: verified.id, publicKey: verified.publicKey,
            attestationType: verified.attestationType, aaguid: aaguid, signCount: Int64(verified.signCount),
            transports: JSON.array(verified.transports.map { .string($0) }).serialized(),
            backupEligible: verified.backupEligible, backedUp: verified.backedUp,
            friendlyName: PasskeyOptions.friendlyName(aaguid: aaguid), at: now)
        try api.write { conn in
            if try conn.countWebAuthnCredentials(userID: caller.user.id) >= config.passkey.maxPasskeysPerUser {
                throw AuthError(422, .tooManyPasskeys, "Maximum number of passkeys reached")
            }
            do {
                try conn.insertWebAuthnCredential(record)
            } catch let error as StoreError where error.isUniqueViolation {
                throw AuthError(422, .webauthnCredentialExists, "This credential is already registered")
            }
            try api.audit(conn, context, actor: caller.user, action: .passkeyCreated,
                          traits: ["passkey_id": .string(record.id)], ipAddress: api.clientIP(context))
        }
        var o = JSONObject()
        o["id"] = .string(record.id)
        if !record.friendlyName.isEmpty { o["friendly_name"] = .string(record.friendlyName) }
        o["created_at"] = .string(Timestamp(microseconds: record.createdAt).rfc3339)
        return .json(.object(o))
    }

    // MARK: authentication

    /// `POST /passkeys/authentication/options`: a discoverable-credential request (no
    /// `allowCredentials`, no user bound to the challenge).
    func authenticationOptions(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let (options, session) = PasskeyOptions.request(rp: relyingParty, challenge: environment.randomBytes(WebAuthn.challengeLength))
        return try storeChallenge(userID: nil, type: "authentication", session: session, options: options)
    }

    /// `POST /passkeys/authentication/verify`: `ValidatePasskeyLogin` (the user handle names
    /// the user, who must own the asserted credential), the user's state, then a session whose
    /// AMR entry is `passkey` (models.PasskeyLogin).
    func authenticationVerify(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let (challengeID, credentialJSON) = try verifyParams(context, as: "PasskeyAuthenticationVerifyParams")
        let session = try consume(challengeID, type: "authentication", userID: nil)
        let parsed: AssertionResponse
        do { parsed = try AssertionResponse(credentialJSON) } catch {
            logError("passkey sign-in: \(error)")
            throw Self.invalidResponse
        }
        let (user, credential) = try api.read { conn -> (UserRecord?, WebAuthnCredentialRecord?) in
            guard let handle = String(validating: parsed.userHandle, as: UTF8.self),
                  let id = AdminEndpoints.canonicalUUID(handle), let user = try conn.user(id: id) else { return (nil, nil) }
            let owned = try conn.webAuthnCredentials(userID: user.id)
            return (user, owned.first(where: { $0.credentialID == parsed.rawID }))
        }
        let outcome: AssertionResponse.Outcome
        do {
            guard session.userID.isEmpty else { throw WebAuthnFailure.verify("session was not a discoverable login") }
            guard !parsed.userHandle.isEmpty else { throw WebAuthnFailure.verify("blank user handle") }
            guard let user, parsed.userHandle == Array(user.id.utf8) else { throw WebAuthnFailure.verify("unknown user handle") }
            guard let credential else { throw WebAuthnFailure.verify("credential not found for the user") }
            outcome = try parsed.verify(session: session, relyingParty: relyingParty, credential: .init(
                publicKey: credential.publicKey, signCount: UInt32(truncatingIfNeeded: credential.signCount),
                backupEligible: credential.backupEligible))
        } catch {
            logError("passkey sign-in: \(error)")
            throw Self.verificationFailed
        }
        guard let user, let credential else { throw Self.verificationFailed }
        if let email = user.email, !email.isEmpty, user.emailConfirmedAt == nil {
            throw AuthError(403, .emailNotConfirmed, "Email not confirmed")
        }
        if let phone = user.phone, !phone.isEmpty, user.phoneConfirmedAt == nil {
            throw AuthError(403, .phoneNotConfirmed, "Phone not confirmed")
        }
        if api.isBanned(user) { throw AuthError(403, .userBanned, "User is banned") }
        let (issued, userJSON) = try api.write { conn in
            var user = user  // as read, on every run of this write
            try conn.markWebAuthnCredentialUsed(id: credential.id, signCount: Int64(outcome.signCount), at: environment.now().microseconds)
            try api.audit(conn, context, actor: user, action: .login,
                          traits: ["passkey_id": .string(credential.id)], ipAddress: api.clientIP(context))
            let issued = try Tokens(api: api).issueSession(conn, user: &user, method: "passkey", request: context.request)
            return (issued, Models.user(user, identities: try conn.identities(userID: user.id), factors: try conn.factors(userID: user.id)))
        }
        let response = issued.response(user: userJSON)
        return .json(.object(response), headers: issued.headers)
    }

    // MARK: management

    /// `PasskeyListItem`.
    static func item(_ c: WebAuthnCredentialRecord) -> JSON {
        var o = JSONObject()
        o["id"] = .string(c.id)
        if !c.friendlyName.isEmpty { o["friendly_name"] = .string(c.friendlyName) }
        o["created_at"] = .string(Timestamp(microseconds: c.createdAt).rfc3339)
        if let used = c.lastUsedAt { o["last_used_at"] = .string(Timestamp(microseconds: used).rfc3339) }
        return .object(o)
    }

    /// `GET /passkeys`.
    func list(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        let credentials = try api.read { conn in try conn.webAuthnCredentials(userID: caller.user.id) }
        return .json(.array(credentials.map(Self.item)))
    }

    static let notFound = AuthError(404, .validationFailed, "Passkey not found")

    /// `PATCH /passkeys/{passkey_id}`: the id, then the body, then the name's checks, then the row.
    func update(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        guard let id = AdminEndpoints.canonicalUUID(context.pathParameters["passkey_id"] ?? "") else { throw Self.notFound }
        let body = try RequestBody(context.request, as: "PasskeyUpdateParams")
        let name = try body.string("friendly_name") ?? ""
        guard !name.isEmpty else { throw AuthError(400, .validationFailed, "friendly_name is required") }
        // Go's len() counts bytes.
        guard name.utf8.count <= 120 else { throw AuthError(400, .validationFailed, "friendly_name must be 120 characters or less") }
        let updated = try api.write { conn -> WebAuthnCredentialRecord in
            guard var credential = try conn.webAuthnCredential(id: id, userID: caller.user.id) else { throw Self.notFound }
            let now = environment.now().microseconds
            try conn.renameWebAuthnCredential(id: id, friendlyName: name, at: now)
            try api.audit(conn, context, actor: caller.user, action: .passkeyUpdated,
                          traits: ["passkey_id": .string(id)], ipAddress: api.clientIP(context))
            credential.friendlyName = name
            credential.updatedAt = now
            return credential
        }
        return .json(Self.item(updated))
    }

    /// `DELETE /passkeys/{passkey_id}`: aal2 when MFA is on, then the id and the row; 204.
    func delete(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context, loadingIdentities: true)
        try Self.requireManagementAAL(caller)
        guard let id = AdminEndpoints.canonicalUUID(context.pathParameters["passkey_id"] ?? "") else { throw Self.notFound }
        try api.write { conn in
            guard try conn.webAuthnCredential(id: id, userID: caller.user.id) != nil else { throw Self.notFound }
            try conn.deleteWebAuthnCredential(id: id)
            try api.audit(conn, context, actor: caller.user, action: .passkeyDeleted,
                          traits: ["passkey_id": .string(id)], ipAddress: api.clientIP(context))
        }
        return HTTPResponse(status: 204)
    }
}

/// `/admin/users/{user_id}/passkeys` (passkey_admin.go): behind `requireAdminCredentials` and
/// `loadUser`, not gated by the passkey setting.
struct AdminPasskeyEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/admin/users/{user_id}/passkeys", operation: "admin.users.passkeys.list",
                     guards: AdminEndpoints.admin) { g, context in
                let user = try AdminEndpoints(api: g.api).loadUser(context)
                let credentials = try g.api.read { conn in try conn.webAuthnCredentials(userID: user.id) }
                return .json(.array(credentials.map(PasskeyEndpoints.item)))
            },
            Endpoint("DELETE", "/admin/users/{user_id}/passkeys/{passkey_id}", operation: "admin.users.passkeys.delete",
                     guards: AdminEndpoints.admin) { g, context in
                let admin = try g.api.adminCaller(context)
                let user = try AdminEndpoints(api: g.api).loadUser(context)
                guard let id = AdminEndpoints.canonicalUUID(context.pathParameters["passkey_id"] ?? "") else {
                    throw PasskeyEndpoints.notFound
                }
                try g.api.write { conn in
                    guard try conn.webAuthnCredential(id: id, userID: user.id) != nil else { throw PasskeyEndpoints.notFound }
                    try conn.deleteWebAuthnCredential(id: id)
                    try g.api.audit(conn, context, actor: admin.actor, action: .passkeyDeleted,
                                    traits: ["user_id": .string(user.id), "passkey_id": .string(id)],
                                    ipAddress: g.api.clientIP(context))
                }
                return HTTPResponse(status: 204)
            },
        ]
    }
}
