import AuthCrypto
import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

/// `/factors` (mfa.go; reference §14): enrolling TOTP, phone and WebAuthn factors (the latter in
/// `MFAWebAuthn.swift`), challenging them,
/// verifying a challenge (which raises the session to aal2) and unenrolling. The guards are the
/// real router's, in its order: `requireAuthentication`, `requireNotAnonymous`, `loadFactor`,
/// then the challenge/verify rate limiter.
struct MFAEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("POST", "/factors", operation: "factors.enroll", guards: caller) { g, context in try g.enroll(context) },
            Endpoint("POST", "/factors/{factor_id}/verify", operation: "factors.verify",
                     guards: caller + [.loadFactor, .limit(.factorVerify)]) { g, context in try g.verify(context) },
            Endpoint("POST", "/factors/{factor_id}/challenge", operation: "factors.challenge",
                     guards: caller + [.loadFactor, .limit(.factorChallenge)]) { g, context in try g.challenge(context) },
            Endpoint("DELETE", "/factors/{factor_id}", operation: "factors.unenroll",
                     guards: caller + [.loadFactor]) { g, context in
                try g.unenroll(context)
            },
        ]
    }

    var project: Project { api.project }
    var config: Configuration { api.snapshot.configuration }

    // MARK: middleware

    /// The `/factors` group's `requireAuthentication` then `requireNotAnonymous`; the caller's
    /// factors are read with the user, for `loadFactor`.
    static let caller: [RouteGuard] = [.requireAuthenticationWithIdentities, .requireNotAnonymous]

    /// The caller the guards admitted.
    func caller(_ context: RequestContext) throws(AuthError) -> Authenticated {
        try api.caller(context, loadingIdentities: true)
    }

    /// The factor `loadFactor` admitted.
    func factor(_ context: RequestContext, of caller: Authenticated) throws(AuthError) -> FactorRecord {
        if let factor = context.factor { return factor }
        return try Self.loadFactor(context, of: caller)
    }

    /// `loadFactor`: the path's factor must parse as a UUID and belong to the caller.
    static func loadFactor(_ context: RequestContext, of caller: Authenticated?) throws(AuthError) -> FactorRecord {
        guard let id = AdminEndpoints.canonicalUUID(context.pathParameters["factor_id"] ?? "") else {
            throw AuthError(404, .validationFailed, "factor_id must be an UUID")
        }
        guard let factor = caller?.factors.first(where: { $0.id == id }) else {
            throw AuthError(404, .mfaFactorNotFound, "Factor not found")
        }
        return factor
    }

    private static func isAAL2(_ session: SessionRecord?) -> Bool { session?.aal == "aal2" }

    // MARK: POST /factors

    func enroll(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try caller(context)
        guard caller.session != nil else {
            throw AuthError(500, .unexpectedFailure, "A valid session and a registered user are required to enroll a factor")
        }
        let body = try RequestBody(context.request, as: "EnrollFactorParams")
        let params = EnrollParams(friendlyName: try body.string("friendly_name") ?? "",
                                  factorType: try body.string("factor_type") ?? "",
                                  issuer: try body.string("issuer") ?? "", phone: try body.string("phone") ?? "")
        switch params.factorType {
        case "phone":
            guard config.mfa.phone.enroll else { throw AuthError(422, .mfaPhoneEnrollNotEnabled, "MFA enroll is disabled for Phone") }
            return try enrollPhone(context, caller, params)
        case "totp":
            guard config.mfa.totp.enroll else { throw AuthError(422, .mfaTotpEnrollNotEnabled, "MFA enroll is disabled for TOTP") }
            return try enrollTOTP(context, caller, params)
        case "webauthn":
            guard config.mfa.webAuthn.enroll else { throw AuthError(422, .mfaWebauthnEnrollNotEnabled, "MFA enroll is disabled for WebAuthn") }
            return try enrollWebAuthn(context, caller, friendlyName: params.friendlyName)
        default:
            throw AuthError(400, .validationFailed, "factor_type needs to be totp, phone, or webauthn")
        }
    }

    private struct EnrollParams {
        var friendlyName: String
        var factorType: String
        var issuer: String
        var phone: String
    }

    /// `validateFactors`, inside the enrolling transaction: expired unverified factors are
    /// purged first (every user's, as `DeleteExpiredFactors`), then the name, the two limits
    /// and the AAL rule are checked against the user's remaining factors.
    func validateFactors(_ conn: Connection, _ caller: Authenticated, name: String) throws {
        let now = project.environment.now().microseconds
        try conn.deleteExpiredFactors(createdBefore: now - Int64(config.mfa.factorExpirySeconds * 1_000_000))
        let factors = try conn.factors(userID: caller.user.id)
        var verified = 0
        for factor in factors {
            // Go compares the plain strings, so two unnamed factors conflict too.
            if (factor.friendlyName ?? "") == name {
                throw AuthError(422, .mfaFactorNameConflict, "A factor with the friendly name \(GoStrconv.quote(name)) for this user already exists")
            }
            if factor.status == "verified" { verified += 1 }
        }
        if factors.count >= config.mfa.maxEnrolledFactors || verified >= config.mfa.maxVerifiedFactors {
            throw AuthError(422, .tooManyEnrolledMfaFactors, "Maximum number of verified factors reached, unenroll to continue")
        }
        if verified > 0 && caller.session != nil && !MFAEndpoints.isAAL2(caller.session) {
            throw AuthError(403, .insufficientAal, "AAL2 required to enroll a new factor")
        }
    }

    func newFactor(_ caller: Authenticated, type: String, name: String) -> FactorRecord {
        var factor = FactorRecord(id: project.environment.uuid(), userID: caller.user.id, factorType: type, status: "unverified",
                                  at: project.environment.now().microseconds)
        factor.friendlyName = name
        return factor
    }

    /// `enrollTOTPFactor`: a 20-byte secret (base32 without padding), its `otpauth://` URI with
    /// the issuer (the request's, else the site URL's host) and the email as account name, and
    /// the URI as an SVG QR code.
    private func enrollTOTP(_ context: RequestContext, _ caller: Authenticated, _ params: EnrollParams) throws(AuthError) -> HTTPResponse {
        var issuer = params.issuer
        if issuer.isEmpty {
            // `url.ParseRequestURI(SITE_URL).Host`.
            guard let host = MFAEndpoints.host(of: config.siteURL) else {
                throw AuthError(500, .unexpectedFailure, "site url is improperly formatted")
            }
            issuer = host
        }
        let secret = Base32.encode(project.environment.randomBytes(20), padding: false)
        let email = caller.user.email ?? ""
        let uri = MFAEndpoints.otpauthURI(issuer: issuer, account: email, secret: secret)
        // The SVG itself (`buf.String()`): the clients make the `data:image/svg+xml;utf-8,` URI of
        // it. Drawn outside the write lock; nil when the URI fits no QR version (over 1,273 bytes).
        let svg = email.isEmpty ? nil : QRCode.svg(uri)
        let factor: FactorRecord = try api.write { [issuer] conn in
            try validateFactors(conn, caller, name: params.friendlyName)
            // `totp.Generate` refuses an empty issuer or account name (a phone-only user), and a
            // URI too long for a QR code fails the real server too.
            if issuer.isEmpty || email.isEmpty || svg == nil {
                logError("mfa: no otpauth URI or QR code for this user")
                throw AuthError(500, .unexpectedFailure, "Error generating QR Code")
            }
            var factor = newFactor(caller, type: "totp", name: params.friendlyName)
            factor.secret = secret
            try conn.insertFactor(factor)
            try api.audit(conn, context, actor: caller.user, action: .factorInProgress,
                          traits: ["factor_id": .string(factor.id)], ipAddress: api.clientIP(context))
            return factor
        }
        var totp = JSONObject()
        totp["qr_code"] = .string(svg ?? "")
        totp["secret"] = .string(secret)
        totp["uri"] = .string(uri)
        var response = JSONObject()
        response["id"] = .string(factor.id)
        response["type"] = "totp"
        response["friendly_name"] = .string(params.friendlyName)
        response["totp"] = .object(totp)
        return .json(.object(response))
    }

    /// `enrollPhoneFactor`: an E.164 number; an unverified factor for the same number is
    /// replaced, a verified one refused.
    private func enrollPhone(_ context: RequestContext, _ caller: Authenticated, _ params: EnrollParams) throws(AuthError) -> HTTPResponse {
        if params.phone.isEmpty {
            throw AuthError(400, .validationFailed, "Phone number required to enroll Phone factor")
        }
        let phone = try Validation.phone(params.phone)
        let factor: FactorRecord = try api.write { conn in
            for existing in caller.factors where existing.factorType == "phone" && existing.phone == phone {
                if existing.status == "verified" {
                    throw AuthError(422, .mfaVerifiedFactorExists,
                                    "A verified phone factor already exists, unenroll the existing factor to continue")
                }
                try conn.deleteFactor(id: existing.id)
            }
            try validateFactors(conn, caller, name: params.friendlyName)
            var factor = newFactor(caller, type: "phone", name: params.friendlyName)
            factor.phone = phone
            try conn.insertFactor(factor)
            try api.audit(conn, context, actor: caller.user, action: .factorInProgress,
                          traits: ["factor_id": .string(factor.id), "factor_type": "phone"], ipAddress: api.clientIP(context))
            return factor
        }
        var response = JSONObject()
        response["id"] = .string(factor.id)
        response["type"] = "phone"
        response["friendly_name"] = .string(params.friendlyName)
        // The number as the request gave it (`EnrollFactorResponse.Phone`).
        response["phone"] = .string(params.phone)
        return .json(.object(response))
    }

    /// `otpauth://totp/<issuer>:<account>?algorithm=SHA1&digits=6&issuer=...&period=30&secret=...`
    /// as pquerna/otp writes it: the label path-escaped (RFC 3986 path characters kept), the
    /// query sorted by key with values escaped as path segments (space as `%20`).
    static func otpauthURI(issuer: String, account: String, secret: String) -> String {
        let query = [("algorithm", "SHA1"), ("digits", "6"), ("issuer", issuer), ("period", "30"), ("secret", secret)]
            .map { GoURL.pathEscape($0.0) + "=" + GoURL.pathEscape($0.1) }.joined(separator: "&")
        return "otpauth://totp/" + GoURL.escapePath(issuer + ":" + account) + "?" + query
    }

    /// The host (with port) of an absolute URL, as `url.ParseRequestURI(...).Host`.
    static func host(of url: String) -> String? {
        URLAuthority.split(url).map { String($0.authority) }
    }

    // MARK: POST /factors/{factor_id}/challenge

    func challenge(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try caller(context)
        let factor = try factor(context, of: caller)
        switch factor.factorType {
        case "phone":
            guard config.mfa.phone.verify else { throw AuthError(422, .mfaPhoneVerifyNotEnabled, "MFA verification is disabled for Phone") }
            return try challengePhone(context, caller, factor)
        case "totp":
            guard config.mfa.totp.verify else { throw AuthError(422, .mfaTotpVerifyNotEnabled, "MFA verification is disabled for TOTP") }
            return try writeChallenge(context, caller, factor, code: nil)
        case "webauthn":
            guard config.mfa.webAuthn.verify else { throw AuthError(422, .mfaWebauthnVerifyNotEnabled, "MFA verification is disabled for WebAuthn") }
            return try challengeWebAuthn(context, caller, factor)
        default:
            throw AuthError(400, .validationFailed, "factor_type needs to be totp, phone, or webauthn")
        }
    }

    /// `challengePhoneFactor`: the channel (`sms` unless WhatsApp through Twilio), the factor's
    /// send frequency, then a code of `GOTRUE_MFA_PHONE_OTP_LENGTH` digits sent by SMS.
    private func challengePhone(_ context: RequestContext, _ caller: Authenticated, _ factor: FactorRecord) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "ChallengeFactorParams")
        let asked = try body.string("channel") ?? ""
        let channel = asked.isEmpty ? "sms" : asked
        guard SignupEndpoints.isValidChannel(channel, config) else {
            throw AuthError(400, .validationFailed, SignupEndpoints.invalidChannelMessage)
        }
        try FrequencyLimit.check(sentAt: factor.lastChallengedAt, frequencySeconds: config.mfa.phoneMaxFrequencySeconds,
                                 now: project.environment.now(), code: .overSmsSendRateLimit)
        let code = OneTimeTokens(project: project).otp(length: config.mfa.phoneOTPLength)
        let mailer = Mailer(api: api, context: context)
        return try writeChallenge(context, caller, factor, code: code) { conn, round in
            try mailer.sendMFAPhoneCode(conn, userID: caller.user.id, phone: factor.phone ?? "", code: code, channel: channel,
                                        round: &round)
        }
    }

    /// `WriteChallengeToDatabase` and its audit entry; the answer carries the expiry. `send`
    /// (the phone factor's code) runs first in the same write, as the real server sends before
    /// it stores the challenge: a failed send stores nothing.
    private func writeChallenge(_ context: RequestContext, _ caller: Authenticated, _ factor: FactorRecord, code: String?,
                                send: @Sendable (Connection, inout WriteRound) throws -> Void = { _, _ in }) throws(AuthError) -> HTTPResponse {
        let now = project.environment.now().microseconds
        let challenge = ChallengeRecord(id: project.environment.uuid(), factorID: factor.id, ipAddress: api.clientIP(context),
                                        otpCode: code, at: now)
        try api.write { conn, round in
            try send(conn, &round)
            try conn.insertChallenge(challenge)
            try conn.markFactorChallenged(id: factor.id, at: now)
            try api.audit(conn, context, actor: caller.user, action: .challengeCreated,
                          traits: ["factor_id": .string(factor.id), "factor_status": .string(factor.status)],
                          ipAddress: api.clientIP(context))
        }
        var response = JSONObject()
        response["id"] = .string(challenge.id)
        response["type"] = .string(factor.factorType)
        response["expires_at"] = .number(Timestamp(microseconds: now).unixSeconds + Int64(config.mfa.challengeExpirySeconds))
        return .json(.object(response))
    }

    // MARK: DELETE /factors/{factor_id}

    func unenroll(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try caller(context)
        let factor = try factor(context, of: caller)
        guard let session = caller.session else {
            throw AuthError(500, .unexpectedFailure, "A valid session and factor are required to unenroll a factor")
        }
        if factor.status == "verified" && !MFAEndpoints.isAAL2(session) {
            throw AuthError(422, .insufficientAal, "AAL2 required to unenroll verified factor")
        }
        let mailer = Mailer(api: api, context: context)
        try api.write { conn, round in
            try conn.deleteFactor(id: factor.id)
            try api.audit(conn, context, actor: caller.user, action: .factorUnenrolled,
                          traits: ["factor_id": .string(factor.id), "factor_status": .string(factor.status),
                                   "session_id": .string(session.id)], ipAddress: api.clientIP(context))
            try conn.downgradeSessions(of: factor)
            mailer.notify(conn, .mfaFactorUnenrolled, user: caller.user, to: caller.user.email ?? "",
                          values: ["FactorType": factor.factorType], round: &round)
        }
        return .json(["id": .string(factor.id)])
    }
}
