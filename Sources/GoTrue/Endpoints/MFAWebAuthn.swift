import AuthCrypto
import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore

/// WebAuthn MFA factors (mfa.go: `enrollWebAuthnFactor`, `challengeWebAuthnFactor`,
/// `verifyWebAuthnFactor`; `GOTRUE_MFA_WEB_AUTHN_ENROLL_ENABLED` / `_VERIFY_ENABLED`). The
/// relying party is `getWebAuthnMFA`'s: the shared `GOTRUE_WEBAUTHN_*` settings with go-webauthn's
/// defaults otherwise (no authenticator selection, no attestation preference, so user
/// verification is never required). The factor's first challenge is a registration ("create"),
/// later ones an assertion ("request") over every verified WebAuthn factor's credential.
extension MFAEndpoints {
    private var relyingParty: RelyingParty { config.webAuthn.relyingParty(siteURL: config.siteURL) }

    /// `enrollWebAuthnFactor`: an unverified factor; its credential comes with the first verify.
    func enrollWebAuthn(_ context: RequestContext, _ caller: Authenticated, friendlyName: String) throws(AuthError) -> HTTPResponse {
        let factor: FactorRecord = try api.write { conn in
            try validateFactors(conn, caller, name: friendlyName)
            let factor = newFactor(caller, type: "webauthn", name: friendlyName)
            try conn.insertFactor(factor)
            try api.audit(conn, context, actor: caller.user, action: .factorInProgress,
                          traits: ["factor_id": .string(factor.id), "factor_type": "webauthn"], ipAddress: api.clientIP(context))
            return factor
        }
        return .json(["id": .string(factor.id), "type": "webauthn", "friendly_name": .string(friendlyName)])
    }

    /// The user's WebAuthn factor credentials (`User.WebAuthnCredentials`).
    private func factorCredentials(_ userID: String) throws(AuthError) -> [FactorCredential] {
        try api.read { conn in try conn.verifiedWebAuthnFactorCredentials(userID: userID) }
            .compactMap { (try? JSON(parsing: $0.credential)).flatMap(FactorCredential.init(json:)) }
    }

    /// `challengeWebAuthnFactor`.
    func challengeWebAuthn(_ context: RequestContext, _ caller: Authenticated, _ factor: FactorRecord) throws(AuthError) -> HTTPResponse {
        _ = try RequestBody(context.request, as: "ChallengeFactorParams")
        let rp = relyingParty
        let challengeBytes = project.environment.randomBytes(WebAuthn.challengeLength)
        let existing = try factorCredentials(caller.user.id)
        let email = caller.user.email ?? ""
        let kind: String
        let options: JSON
        let session: WebAuthnSession
        if factor.status != "verified" {
            // Existing credentials are excluded, each with transports usb and nfc (mfa.go).
            kind = "create"
            (options, session) = PasskeyOptions.creation(
                userHandle: Array(caller.user.id.utf8), name: email, displayName: email, rp: rp,
                exclude: existing.map { ($0.id, ["usb", "nfc"]) }, challenge: challengeBytes, userVerification: "",
                residentKey: nil, attestation: nil)
        } else {
            // `BeginLogin` refuses a user without credentials; the real server lets that error
            // through as a 500.
            guard !existing.isEmpty else { throw AuthError(500, .unexpectedFailure, AuthError.unexpectedFailureMessage) }
            kind = "request"
            (options, session) = PasskeyOptions.request(rp: rp, challenge: challengeBytes, userID: Array(caller.user.id.utf8),
                                                        allow: existing.map { ($0.id, $0.transports) }, userVerification: "")
        }
        let now = project.environment.now().microseconds
        let challenge = ChallengeRecord(id: project.environment.uuid(), factorID: factor.id, ipAddress: api.clientIP(context), at: now)
        try api.write { conn in
            try conn.insertChallenge(challenge)
            try conn.setChallengeWebAuthnSessionData(challengeID: challenge.id, sessionData: session.json.serialized())
            try conn.markFactorChallenged(id: factor.id, at: now)
        }
        var response = JSONObject()
        response["id"] = .string(challenge.id)
        response["type"] = "webauthn"
        response["expires_at"] = .number(Timestamp(microseconds: now).unixSeconds + Int64(config.mfa.challengeExpirySeconds))
        // `credential_options` is go-webauthn's CredentialCreation / CredentialAssertion.
        response["webauthn"] = ["type": .string(kind), "credential_options": ["publicKey": options]]
        return .json(.object(response))
    }

    /// `verifyWebAuthnFactor`: the `webauthn` parameters, the challenge, the ceremony, then the
    /// factor verified with its credential (first time) and the session raised to aal2.
    func verifyWebAuthn(_ context: RequestContext, _ caller: Authenticated, _ factor: FactorRecord, _ body: RequestBody,
                        challengeID: String) throws(AuthError) -> HTTPResponse {
        guard let params = try body.map("webauthn") else { throw AuthError(400, .validationFailed, "WebAuthn config required") }
        let type = params["type"]?.stringValue ?? ""
        guard type == "create" || type == "request" else {
            throw AuthError(400, .validationFailed, "WebAuthn type must be create or request")
        }
        guard let response = params["credential_response"] else {
            throw AuthError(400, .validationFailed, "credential_response required")
        }
        let challenge = try validateChallenge(context, factor, challengeID)
        guard let data = try api.read({ conn in try conn.challengeWebAuthnSessionData(challengeID: challenge.id) }),
              let json = try? JSON(parsing: data), let session = WebAuthnSession(json: json) else {
            throw AuthError(500, .unexpectedFailure, AuthError.unexpectedFailureMessage)
        }
        let rp = relyingParty
        let handle = Array(caller.user.id.utf8)
        var newCredential: RegistrationResponse.Credential?
        if type == "create" {
            let parsed: RegistrationResponse
            do { parsed = try RegistrationResponse(response) } catch {
                throw AuthError(400, .validationFailed, "Invalid credential_response")
            }
            do {
                guard handle == session.userID else { throw WebAuthnFailure.verify("ID mismatch for user and session") }
                newCredential = try parsed.verify(session: session, relyingParty: rp)
            } catch {
                // `CreateCredential`'s error is returned as is: a 500 for the client.
                logError("webauthn factor registration: \(error)")
                throw AuthError(500, .unexpectedFailure, AuthError.unexpectedFailureMessage)
            }
        } else {
            let parsed: AssertionResponse
            do { parsed = try AssertionResponse(response) } catch {
                throw AuthError(400, .validationFailed, "Invalid credential_response")
            }
            let owned = try factorCredentials(caller.user.id)
            do {
                // `ValidateLogin` / `validateLogin`.
                guard handle == session.userID else { throw WebAuthnFailure.verify("ID mismatch for user and session") }
                if !session.allowedCredentialIDs.isEmpty {
                    guard session.allowedCredentialIDs.allSatisfy({ id in owned.contains { $0.id == id } }) else {
                        throw WebAuthnFailure.verify("user does not own all credentials from the allowed credential list")
                    }
                    guard session.allowedCredentialIDs.contains(parsed.rawID) else {
                        throw WebAuthnFailure.verify("credential not in the session's allowed list")
                    }
                }
                if !parsed.userHandle.isEmpty && parsed.userHandle != handle {
                    throw WebAuthnFailure.verify("user handle and user id do not match")
                }
                guard let credential = owned.first(where: { $0.id == parsed.rawID }) else {
                    throw WebAuthnFailure.verify("unable to find the credential for the returned credential id")
                }
                _ = try parsed.verify(session: session, relyingParty: rp, credential: .init(
                    publicKey: credential.publicKey, signCount: credential.signCount, backupEligible: credential.backupEligible))
            } catch {
                logError("webauthn factor sign-in: \(error)")
                throw AuthError(500, .unexpectedFailure, "Failed to validate WebAuthn MFA response")
            }
        }
        let sessionID = try verifiedSessionID(caller)
        // The challenge is consumed once the ceremony passed, before the transaction.
        try api.write { conn in try conn.deleteChallenge(id: challenge.id) }
        return try completeVerification(context, caller, factor, challenge: challenge, sessionID: sessionID) { [newCredential] conn, now, updated in
            guard factor.status != "verified", let credential = newCredential else { return false }
            updated.status = "verified"
            updated.webAuthnAAGUID = PasskeyOptions.uuidString(credential.aaguid)
            try conn.updateFactor(updated)
            try conn.saveFactorWebAuthnCredential(factorID: factor.id, credential: FactorCredential(credential).json.serialized(),
                                                  aaguid: updated.webAuthnAAGUID, at: now)
            return true
        }
    }
}

/// go-webauthn's `webauthn.Credential` as GoTrue stores it in `mfa_factors.web_authn_credential`
/// (Go marshals byte slices as standard base64).
struct FactorCredential {
    var id: [UInt8]
    var publicKey: [UInt8]
    var attestationType: String
    var transports: [String]
    var backupEligible: Bool
    var backupState: Bool
    var userVerified: Bool
    var aaguid: [UInt8]
    var signCount: UInt32

    init(_ c: RegistrationResponse.Credential) {
        id = c.id
        publicKey = c.publicKey
        attestationType = c.attestationType
        transports = c.transports
        backupEligible = c.backupEligible
        backupState = c.backedUp
        userVerified = c.userVerified
        aaguid = c.aaguid
        signCount = c.signCount
    }

    init?(json: JSON) {
        guard let id = json["id"]?.stringValue.flatMap({ try? Base64.decode($0) }),
              let key = json["publicKey"]?.stringValue.flatMap({ try? Base64.decode($0) }) else { return nil }
        self.id = id
        publicKey = key
        attestationType = json["attestationType"]?.stringValue ?? ""
        transports = (json["transport"]?.arrayValue ?? []).compactMap(\.stringValue)
        backupEligible = json["flags"]?["backupEligible"]?.boolValue ?? false
        backupState = json["flags"]?["backupState"]?.boolValue ?? false
        userVerified = json["flags"]?["userVerified"]?.boolValue ?? false
        aaguid = json["authenticator"]?["AAGUID"]?.stringValue.flatMap { try? Base64.decode($0) } ?? []
        signCount = UInt32(truncatingIfNeeded: json["authenticator"]?["signCount"]?.int64Value ?? 0)
    }

    var json: JSON {
        [
            "id": .string(Base64.encode(id)),
            "publicKey": .string(Base64.encode(publicKey)),
            "attestationType": .string(attestationType),
            "transport": .array(transports.map { .string($0) }),
            "flags": ["userPresent": true, "userVerified": .bool(userVerified), "backupEligible": .bool(backupEligible), "backupState": .bool(backupState)],
            "authenticator": ["AAGUID": .string(Base64.encode(aaguid)), "signCount": .number(Double(signCount)),
                              "cloneWarning": false, "attachment": ""],
        ]
    }
}
