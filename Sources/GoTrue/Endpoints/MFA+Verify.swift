import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

extension MFAEndpoints {
    // MARK: POST /factors/{factor_id}/verify

    func verify(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try caller(context)
        let factor = try factor(context, of: caller)
        let body = try RequestBody(context.request, as: "VerifyFactorParams")
        let challengeID = try MFAEndpoints.challengeID(body)
        let code = try body.string("code") ?? ""
        if code.isEmpty && factor.factorType != "webauthn" {
            throw AuthError(400, .validationFailed, "Code needs to be non-empty")
        }
        switch factor.factorType {
        case "phone":
            guard config.mfa.phone.verify else { throw AuthError(422, .mfaPhoneVerifyNotEnabled, "MFA verification is disabled for Phone") }
        case "totp":
            guard config.mfa.totp.verify else { throw AuthError(422, .mfaTotpVerifyNotEnabled, "MFA verification is disabled for TOTP") }
        case "webauthn":
            // The real server answers a disabled WebAuthn verify with the enroll code.
            guard config.mfa.webAuthn.verify else { throw AuthError(422, .mfaWebauthnEnrollNotEnabled, "MFA verification is disabled for WebAuthn") }
            return try verifyWebAuthn(context, caller, factor, body, challengeID: challengeID)
        default:
            throw AuthError(400, .validationFailed, "factor_type needs to be totp, phone, or webauthn")
        }
        let challenge = try validateChallenge(context, factor, challengeID)

        let valid: Bool
        if factor.factorType == "totp" {
            let secret = (try? Base32.decode(factor.secret ?? "")) ?? []
            valid = !secret.isEmpty && OneTimePassword.validateTOTP(code, secret: secret, unixSeconds: project.environment.now().unixSeconds)
        } else if config.sms.provider == "twilio_verify" {
            // `IsTwilioVerifyProvider`: Twilio checks the code (`VerifyOTP`), the captured code
            // standing in for the one it sent. A provider that cannot be built is a 500, a wrong
            // code a 403 before the hook is asked.
            if let problem = config.sms.providerProblem {
                logError("sms: \(problem)")
                throw AuthError(500, .unexpectedFailure, "Failed to get SMS provider")
            }
            guard constantTimeEquals(Array((challenge.otpCode ?? "").utf8), Array(code.utf8)) else {
                throw AuthError(403, .otpExpired, "Token has expired or is invalid")
            }
            valid = true
        } else {
            valid = constantTimeEquals(Array((challenge.otpCode ?? "").utf8), Array(code.utf8))
        }
        // The MFA-verification-attempt hook sees every attempt; a rejection signs the user out
        // everywhere (mfa.go).
        if let decision = try Hooks(api: api, request: context.request).verificationAttempt(
            .mfaVerification, ["user_id": .string(caller.user.id), "factor_id": .string(factor.id),
                               "factor_type": .string(factor.factorType), "valid": .bool(valid)],
            defaultMessage: "Further MFA verification attempts will be rejected."), decision.rejected {
            try api.write { conn in try conn.deleteSessions(userID: caller.user.id) }
            throw AuthError(403, .mfaVerificationRejected, decision.message)
        }
        if !valid {
            throw AuthError(422, .mfaVerificationFailed,
                            factor.factorType == "totp" ? "Invalid TOTP code entered" : "Invalid MFA Phone code entered")
        }

        return try completeVerification(context, caller, factor, challenge: challenge,
                                        sessionID: try verifiedSessionID(caller)) { conn, now, updated in
            try conn.markChallengeVerified(id: challenge.id, at: now)
            guard factor.status != "verified" else { return false }
            updated.status = "verified"
            try conn.updateFactor(updated)
            return true
        }
    }

    /// The session a verification upgrades (the access token's `session_id`).
    func verifiedSessionID(_ caller: Authenticated) throws(AuthError) -> String {
        guard let id = caller.session?.id else { throw AuthError(500, .unexpectedFailure, "Cannot read SessionId claim as UUID") }
        return id
    }

    /// The tail every successful verification shares (`verifyTOTPFactor`, `verifyPhoneFactor`,
    /// `verifyWebAuthnFactor`): in one transaction, the attempt is audited, the factor-specific
    /// writes run (`promote` returns whether the factor has just become verified), the session
    /// becomes aal2, lower sessions and the type's unverified factors go, and a first
    /// verification sends the factor-enrolled notice.
    func completeVerification(_ context: RequestContext, _ caller: Authenticated, _ factor: FactorRecord,
                              challenge: ChallengeRecord, sessionID: String,
                              promote: @Sendable (Connection, Int64, inout FactorRecord) throws -> Bool) throws(AuthError) -> HTTPResponse {
        let mailer = Mailer(api: api, context: context)
        let (issued, userJSON) = try api.write { conn, round in
            let now = project.environment.now().microseconds
            try api.audit(conn, context, actor: caller.user, action: .verificationAttempted,
                          traits: ["factor_id": .string(factor.id), "challenge_id": .string(challenge.id),
                                   "factor_type": .string(factor.factorType)], ipAddress: api.clientIP(context))
            var updated = factor
            updated.updatedAt = now
            let newlyVerified = try promote(conn, now, &updated)
            guard var user = try conn.user(id: caller.user.id) else { throw AuthError(404, .userNotFound, "User not found") }
            // The answer's user is the one GoTrue reloads before it deletes the other unverified
            // factors of this type: they are still listed.
            let identities = try conn.identities(userID: user.id)
            let factors = try conn.factors(userID: user.id)
            let issued = try upgradeSession(conn, context, user: &user, sessionID: sessionID, factor: factor, at: now)
            let shown = Models.user(user, identities: identities, factors: factors)
            try conn.deleteSessionsBelowAAL2(userID: user.id)
            try conn.deleteUnverifiedFactors(userID: user.id, factorType: factor.factorType)
            if newlyVerified {
                mailer.notify(conn, .mfaFactorEnrolled, user: user, to: user.email ?? "",
                              values: ["FactorType": factor.factorType], round: &round)
            }
            return (issued, shown)
        }
        // `updateMFASessionAndClaims` sets none of the sb-auth-* headers a refresh sets.
        return .json(.object(issued.response(user: userJSON)))
    }

    /// `challenge_id` is a `uuid.UUID` in the real params: a string that is not one fails the
    /// JSON decoding with gofrs/uuid's message; absent, it is the nil UUID (found by nothing).
    static func challengeID(_ body: RequestBody) throws(AuthError) -> String {
        guard let text = try body.string("challenge_id") else { return Validation.nilUUID }
        if let id = AdminEndpoints.canonicalUUID(text) { return id }
        let length = text.utf8.count
        let detail = [32, 36, 38, 41].contains(length)
            ? "uuid: incorrect UUID format in string \(GoStrconv.quote(text))"
            : "uuid: incorrect UUID length \(length) in string \(GoStrconv.quote(text))"
        throw AuthError(400, .badJson, "Could not parse request body as JSON: " + detail)
    }

    /// `validateChallenge`: the factor's own challenge, made from this address and not used
    /// yet, within `GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION` (an expired one is deleted).
    func validateChallenge(_ context: RequestContext, _ factor: FactorRecord, _ id: String) throws(AuthError) -> ChallengeRecord {
        guard let challenge = try api.read({ conn in try conn.challenge(id: id, factorID: factor.id) }) else {
            throw AuthError(422, .mfaFactorNotFound, "MFA factor with the provided challenge ID not found")
        }
        if challenge.verifiedAt != nil || challenge.ipAddress != api.clientIP(context) {
            throw AuthError(422, .mfaIpAddressMismatch, "Challenge and verify IP addresses mismatch.")
        }
        let expiresAt = challenge.createdAt + Int64(config.mfa.challengeExpirySeconds) * 1_000_000
        if project.environment.now().microseconds > expiresAt {
            try api.write { conn in try conn.deleteChallenge(id: challenge.id) }
            throw AuthError(422, .mfaChallengeExpired,
                            "MFA challenge \(challenge.id) has expired, verify against another challenge or create a new challenge.")
        }
        return challenge
    }

    /// `updateMFASessionAndClaims`: the factor's AMR entry joins the session, the refresh token
    /// is swapped for a new one (the old aal1 token can no longer refresh into this session's
    /// aal2 state), the session records aal2 and the factor, and a new access token is minted.
    func upgradeSession(_ conn: Connection, _ context: RequestContext, user: inout UserRecord, sessionID: String,
                        factor: FactorRecord, at now: Int64) throws -> Tokens.Issued {
        let request = context.request
        try conn.addAMRClaim(id: project.environment.uuid(), sessionID: sessionID, method: factor.amrMethod, at: now)
        guard var session = try conn.session(id: sessionID) else {
            throw AuthError(404, .sessionNotFound, "Session from session_id claim in JWT does not exist")
        }
        let tokens = Tokens(api: api)
        let refreshToken: String
        if let state = SessionRefreshToken.state(of: session) {
            // The second format moves the counter by 2, not 1: the aal1 token the client held
            // is then two behind, outside the one-behind allowance, so it cannot refresh into
            // this session's aal2 state (`updateMFASessionAndClaims`).
            try conn.updateSessionRefreshTokenState(id: sessionID, hmacKey: state.stored, counter: state.counter + 2)
            refreshToken = SessionRefreshToken(sessionID: sessionID, counter: state.counter + 2).encoded(key: state.key)
        } else {
            // `GrantRefreshTokenSwap`: the session's oldest unrevoked token (`FindTokenBySessionID`)
            // is revoked, its child issued. With none left unrevoked (the family ended by a
            // reused token while the access token lives on), the not-found error is a plain Go
            // error: a 500 that rolls the whole verification back, never a revived family.
            guard let current = try conn.oldestActiveRefreshToken(sessionID: sessionID) else {
                var failure = AuthError.unexpected
                failure.internalError = "refresh token not found for session \(sessionID)"
                throw failure
            }
            try api.audit(conn, context, actor: user, action: .tokenRevoked)
            try conn.revokeRefreshToken(id: current.id, at: now)
            refreshToken = tokens.newRefreshToken()
            try conn.insertRefreshToken(token: refreshToken, userID: user.id, sessionID: sessionID, parent: current.token, at: now)
            // `createRefreshToken`'s `UpdateLastSignInAt`: pop stamps `updated_at` (a refresh's swap does the same).
            user.updatedAt = now
            try conn.updateUserLastSignIn(id: user.id, lastSignInAt: user.lastSignInAt, updatedAt: now)
        }
        let (aal, amr) = try tokens.assurance(conn, sessionID: sessionID)
        session.aal = aal
        session.factorID = factor.id
        session.updatedAt = now
        try conn.updateSession(session)
        let issuedAt = Timestamp(microseconds: now).unixSeconds
        let (token, expiresAt) = try tokens.accessToken(user: user, sessionID: sessionID, aal: aal, amr: amr, issuedAt: issuedAt,
                                                        method: factor.amrMethod, request: request)
        return Tokens.Issued(accessToken: token, expiresAt: expiresAt, refreshToken: refreshToken, sessionID: sessionID,
                             userID: user.id, issuedAt: issuedAt)
    }
}
