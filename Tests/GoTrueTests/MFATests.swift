import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: reference §14 and the real server's internal/api/mfa.go, models/factor.go,
// models/challenge.go (shapes, codes, messages and the order of the checks).

private func mfaAPI(clock: ManualClock = ManualClock(), configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    try makeAPI(clock: clock) { config in
        config.mfa.totp = MFASettings.Toggles(enroll: true, verify: true)
        configure(&config)
    }
}

private extension GoTrueAPI {
    func enrollTOTP(_ bearer: String, name: String? = nil) -> HTTPResponse {
        var body: JSONObject = ["factor_type": "totp"]
        if let name { body["friendly_name"] = .string(name) }
        return call("POST", "/factors", .object(body), bearer: bearer)
    }

    func challenge(_ factor: String, _ bearer: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        call("POST", "/factors/\(factor)/challenge", .object([:]), bearer: bearer, headers: headers)
    }

    func verifyFactor(_ factor: String, challenge: String, code: String, _ bearer: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        call("POST", "/factors/\(factor)/verify", ["challenge_id": .string(challenge), "code": .string(code)],
             bearer: bearer, headers: headers)
    }

    /// The current code of a TOTP secret on the project's clock.
    func totpCode(_ secret: String, offset: Int64 = 0) -> String {
        OneTimePassword.totp(secret: (try? Base32.decode(secret)) ?? [], unixSeconds: project.environment.now().unixSeconds + offset)
    }

    /// Enrolls, challenges and verifies a TOTP factor; returns the factor id, its secret and the aal2 session.
    func verifiedTOTP(_ bearer: String) throws -> (factor: String, secret: String, session: JSON) {
        let enrolled = enrollTOTP(bearer)
        let factor = try #require(enrolled.json["id"]?.stringValue)
        let secret = try #require(enrolled.json["totp"]?["secret"]?.stringValue)
        let challenge = try #require(self.challenge(factor, bearer).json["id"]?.stringValue)
        let verified = verifyFactor(factor, challenge: challenge, code: totpCode(secret), bearer)
        #expect(verified.status == 200, "\(verified.text)")
        return (factor, secret, verified.json)
    }
}

private func bearer(_ session: JSON) -> String { session["access_token"]?.stringValue ?? "" }

@Suite struct MFAEnrollTests {
    @Test func totpIsOffAsUnderSupabaseStart() throws {
        let api = try makeAPI()
        let token = bearer(api.signUp("off@example.com"))
        let refused = api.enrollTOTP(token)
        #expect(refused.status == 422)
        #expect(errorCode(refused) == "mfa_totp_enroll_not_enabled")
        #expect(refused.json["msg"] == "MFA enroll is disabled for TOTP")
        let phone = api.call("POST", "/factors", ["factor_type": "phone", "phone": "15550001111"], bearer: token)
        #expect(errorCode(phone) == "mfa_phone_enroll_not_enabled")
        let webauthn = api.call("POST", "/factors", ["factor_type": "webauthn"], bearer: token)
        #expect(errorCode(webauthn) == "mfa_webauthn_enroll_not_enabled")
        let unknown = api.call("POST", "/factors", ["factor_type": "sms"], bearer: token)
        #expect(unknown.status == 400)
        #expect(unknown.json["msg"] == "factor_type needs to be totp, phone, or webauthn")
    }

    @Test func totpEnrollmentAnswer() throws {
        let api = try mfaAPI()
        let token = bearer(api.signUp("totp@example.com"))
        let enrolled = api.enrollTOTP(token, name: "phone app")
        #expect(enrolled.status == 200)
        #expect(enrolled.json["type"] == "totp")
        #expect(enrolled.json["friendly_name"] == "phone app")
        let secret = try #require(enrolled.json["totp"]?["secret"]?.stringValue)
        // 20 random bytes in base32 without padding: 32 symbols.
        #expect(secret.count == 32 && (try? Base32.decode(secret))?.count == 20)
        // The issuer defaults to the site URL's host (with its port), as `url.ParseRequestURI(...).Host`.
        #expect(enrolled.json["totp"]?["uri"]?.stringValue
            == "otpauth://totp/127.0.0.1:3000:totp@example.com?algorithm=SHA1&digits=6&issuer=127.0.0.1:3000&period=30&secret=\(secret)")
        #expect(enrolled.json["totp"]?["qr_code"]?.stringValue?.hasPrefix("<?xml") == true)
        #expect(enrolled.json["phone"] == nil)

        let issuer = api.call("POST", "/factors", ["factor_type": "totp", "issuer": "Acme Corp", "friendly_name": "b"], bearer: token)
        #expect(issuer.json["totp"]?["uri"]?.stringValue?.hasPrefix("otpauth://totp/Acme%20Corp:totp@example.com?") == true)
        #expect(issuer.json["totp"]?["uri"]?.stringValue?.contains("&issuer=Acme%20Corp&") == true)

        // The user lists both factors, unverified.
        let user = api.call("GET", "/user", bearer: token).json
        #expect(user["factors"]?.arrayValue?.count == 2)
        #expect(user["factors"]?[0]?["status"] == "unverified")
        #expect(user["factors"]?[0]?["friendly_name"] == "phone app")
        #expect(user["factors"]?[0]?["factor_type"] == "totp")
    }

    @Test func namesLimitsAndAnonymousUsers() throws {
        let api = try mfaAPI { $0.mfa.maxEnrolledFactors = 2; $0.external.anonymousUsersEnabled = true }
        let token = bearer(api.signUp("limits@example.com"))
        #expect(api.enrollTOTP(token, name: "one").status == 200)
        let clash = api.enrollTOTP(token, name: "one")
        #expect(clash.status == 422)
        #expect(errorCode(clash) == "mfa_factor_name_conflict")
        #expect(clash.json["msg"] == #"A factor with the friendly name "one" for this user already exists"#)
        #expect(api.enrollTOTP(token, name: "two").status == 200)
        let third = api.enrollTOTP(token, name: "three")
        #expect(errorCode(third) == "too_many_enrolled_mfa_factors")
        #expect(third.json["msg"] == "Maximum number of verified factors reached, unenroll to continue")

        let anonymous = bearer(api.call("POST", "/signup", .object([:])).json)
        let refused = api.enrollTOTP(anonymous)
        #expect(refused.status == 403)
        #expect(errorCode(refused) == "no_authorization")
        #expect(refused.json["msg"] == "Anonymous user not allowed to perform these actions")
        #expect(api.call("POST", "/factors", ["factor_type": "totp"]).status == 401)
    }

    @Test func expiredUnverifiedFactorsArePurged() throws {
        let clock = ManualClock()
        let api = try mfaAPI(clock: clock) { $0.mfa.maxEnrolledFactors = 1 }
        let token = bearer(api.signUp("purge@example.com"))
        #expect(api.enrollTOTP(token, name: "old").status == 200)
        #expect(errorCode(api.enrollTOTP(token, name: "new")) == "too_many_enrolled_mfa_factors")
        clock.advance(seconds: 301)
        // The session's token is still valid for an hour; the old factor (never challenged) went.
        #expect(api.enrollTOTP(token, name: "new").status == 200)
    }
}

@Suite struct MFAVerifyTests {
    @Test func totpChallengeAndVerifyRaiseTheSession() throws {
        let clock = ManualClock()
        let api = try mfaAPI(clock: clock)
        let session = api.signUp("aal@example.com")
        let token = bearer(session)
        let enrolled = api.enrollTOTP(token)
        let factor = try #require(enrolled.json["id"]?.stringValue)
        let secret = try #require(enrolled.json["totp"]?["secret"]?.stringValue)

        let challenge = api.challenge(factor, token)
        #expect(challenge.status == 200)
        #expect(challenge.json["type"] == "totp")
        #expect(challenge.json["expires_at"]?.int64Value == api.project.environment.now().unixSeconds + 300)
        let challengeID = try #require(challenge.json["id"]?.stringValue)

        let wrong = api.verifyFactor(factor, challenge: challengeID, code: "000000" == api.totpCode(secret) ? "111111" : "000000", token)
        #expect(wrong.status == 422)
        #expect(errorCode(wrong) == "mfa_verification_failed")
        #expect(wrong.json["msg"] == "Invalid TOTP code entered")

        // RFC 6238 with one step of skew: the previous step's code still passes.
        let verified = api.verifyFactor(factor, challenge: challengeID, code: api.totpCode(secret, offset: -30), token)
        #expect(verified.status == 200, "\(verified.text)")
        let access = try #require(verified.json["access_token"]?.stringValue)
        let raised = claims(of: access)
        #expect(raised["aal"] == "aal2")
        #expect(raised["amr"]?[0]?["method"] == "totp")
        #expect(raised["amr"]?[1]?["method"] == "password")
        #expect(raised["session_id"] == AuthJSONClaims.sessionID(of: token))
        #expect(verified.json["user"]?["factors"]?[0]?["status"] == "verified")
        #expect(verified.json["expires_in"] == 3600)
        // `updateMFASessionAndClaims` sets none of a refresh's sb-auth-* headers; the swap
        // stamps the user's updated_at, as a refresh's does.
        #expect(verified.headers.allSatisfy { !$0.name.lowercased().hasPrefix("sb-auth-") })
        #expect(verified.json["user"]?["updated_at"] == .string(api.project.environment.now().rfc3339))

        // The old refresh token was swapped for the new one; the new one keeps aal2.
        let newRefresh = try #require(verified.json["refresh_token"]?.stringValue)
        #expect(newRefresh != session["refresh_token"]?.stringValue)
        let refreshed = api.refresh(newRefresh)
        #expect(claims(of: refreshed.json["access_token"]?.stringValue ?? "")["aal"] == "aal2")

        // A used challenge answers as the real server does: as an address mismatch.
        let reused = api.verifyFactor(factor, challenge: challengeID, code: api.totpCode(secret), access)
        #expect(reused.status == 422)
        #expect(errorCode(reused) == "mfa_ip_address_mismatch")
        #expect(reused.json["msg"] == "Challenge and verify IP addresses mismatch.")
    }

    @Test func challengeChecks() throws {
        let clock = ManualClock()
        let api = try mfaAPI(clock: clock)
        let token = bearer(api.signUp("checks@example.com"))
        let enrolled = api.enrollTOTP(token)
        let factor = try #require(enrolled.json["id"]?.stringValue)
        let secret = try #require(enrolled.json["totp"]?["secret"]?.stringValue)
        let challenge = try #require(api.challenge(factor, token).json["id"]?.stringValue)

        let empty = api.verifyFactor(factor, challenge: challenge, code: "", token)
        #expect(empty.status == 400)
        #expect(empty.json["msg"] == "Code needs to be non-empty")
        let badID = api.verifyFactor(factor, challenge: "abc", code: "123456", token)
        #expect(badID.status == 400)
        #expect(errorCode(badID) == "bad_json")
        #expect(badID.json["msg"] == #"Could not parse request body as JSON: uuid: incorrect UUID length 3 in string "abc""#)
        let unknown = api.verifyFactor(factor, challenge: "00000000-0000-0000-0000-000000000001", code: "123456", token)
        #expect(unknown.status == 422)
        #expect(errorCode(unknown) == "mfa_factor_not_found")
        #expect(unknown.json["msg"] == "MFA factor with the provided challenge ID not found")
        let elsewhere = api.verifyFactor(factor, challenge: challenge, code: api.totpCode(secret), token,
                                         headers: ["X-Forwarded-For": "203.0.113.9"])
        #expect(errorCode(elsewhere) == "mfa_ip_address_mismatch")
        let missingFactor = api.challenge("00000000-0000-0000-0000-000000000002", token)
        #expect(missingFactor.status == 404)
        #expect(errorCode(missingFactor) == "mfa_factor_not_found")
        #expect(missingFactor.json["msg"] == "Factor not found")
        let badFactor = api.challenge("nope", token)
        #expect(badFactor.status == 404)
        #expect(badFactor.json["msg"] == "factor_id must be an UUID")

        clock.advance(seconds: 301)
        let expired = api.verifyFactor(factor, challenge: challenge, code: api.totpCode(secret), token)
        #expect(expired.status == 422)
        #expect(errorCode(expired) == "mfa_challenge_expired")
        #expect(expired.json["msg"]?.stringValue
            == "MFA challenge \(challenge) has expired, verify against another challenge or create a new challenge.")
        // An expired challenge is deleted: asking again finds nothing.
        #expect(errorCode(api.verifyFactor(factor, challenge: challenge, code: api.totpCode(secret), token)) == "mfa_factor_not_found")
    }

    /// The answer's user is reloaded before the other unverified factors of the type go.
    @Test func theAnswerStillListsTheOtherUnverifiedFactors() throws {
        let api = try mfaAPI()
        let token = bearer(api.signUp("two@example.com"))
        let first = api.enrollTOTP(token, name: "first")
        let second = api.enrollTOTP(token, name: "second")
        let id = try #require(first.json["id"]?.stringValue)
        let challenge = try #require(api.challenge(id, token).json["id"]?.stringValue)
        let verified = api.verifyFactor(id, challenge: challenge, code: api.totpCode(first.json["totp"]?["secret"]?.stringValue ?? ""), token)
        let factors = verified.json["user"]?["factors"]?.arrayValue ?? []
        // In the order the store lists them (Postgres moves an updated row to the end, as under GoTrue).
        let statuses = Dictionary(uniqueKeysWithValues: factors.compactMap { f in f["id"]?.stringValue.map { ($0, f["status"]?.stringValue ?? "") } })
        #expect(statuses == [first.json["id"]?.stringValue ?? "": "verified", second.json["id"]?.stringValue ?? "": "unverified"])
        #expect(api.call("GET", "/user", bearer: bearer(verified.json)).json["factors"]?.arrayValue?.count == 1)
    }

    @Test func verifyingEndsTheUsersOtherAAL1Sessions() throws {
        let api = try mfaAPI()
        let first = api.signUp("others@example.com")
        let second = api.signIn("others@example.com").json
        _ = try api.verifiedTOTP(bearer(first))
        let refused = api.refresh(second["refresh_token"]?.stringValue ?? "")
        #expect(refused.status == 400)
        #expect(errorCode(refused) == "refresh_token_not_found")
    }

    /// `updateMFASessionAndClaims` swaps the session's unrevoked refresh token; a family a reused
    /// token ended has none, and `FindTokenBySessionID`'s not-found error is a plain 500 that rolls
    /// the verification back (the access token, still valid, does not revive the family).
    @Test func verifyingASessionWhoseTokensWereAllRevokedIsA500() throws {
        let clock = ManualClock()
        let api = try mfaAPI(clock: clock) { $0.security.refreshTokenReuseInterval = 0 }
        let session = api.signUp("revoked@example.com")
        let token = bearer(session)
        let enrolled = api.enrollTOTP(token)
        let factor = try #require(enrolled.json["id"]?.stringValue)
        // r0 -> r1 -> r2, then r0 again: not the active token's parent, so a reuse that ends the family.
        let first = session["refresh_token"]?.stringValue ?? ""
        let second = api.refresh(first).json["refresh_token"]?.stringValue ?? ""
        #expect(api.refresh(second).status == 200)
        clock.advance(seconds: 1)
        #expect(errorCode(api.refresh(first)) == "refresh_token_already_used")
        #expect(api.call("GET", "/user", bearer: token).status == 200)
        let challenge = try #require(api.challenge(factor, token).json["id"]?.stringValue)
        let verified = api.verifyFactor(factor, challenge: challenge, code: api.totpCode(enrolled.json["totp"]?["secret"]?.stringValue ?? ""), token)
        #expect(verified.status == 500)
        #expect(verified.text.contains(#""error_code":"unexpected_failure","msg":"Unexpected failure, please check server logs for more information""#))
        #expect(api.call("GET", "/user", bearer: token).json["factors"]?[0]?["status"] == "unverified")
    }

    @Test func sideDoorCodeIsAccepted() throws {
        let clock = ManualClock()
        let api = try mfaAPI(clock: clock)
        let token = bearer(api.signUp("door@example.com"))
        let enrolled = api.enrollTOTP(token)
        let factor = try #require(enrolled.json["id"]?.stringValue)
        #expect(api.call("GET", "/emulator/v1/mfa/totp?factor_id=\(factor)").status == 401)
        let codes = api.call("GET", "/emulator/v1/mfa/totp?factor_id=\(factor)", headers: api.serviceRoleHeaders)
        #expect(codes.status == 200)
        let code = try #require(codes.json["code"]?.stringValue)
        #expect(codes.json["next_code"]?.stringValue == api.totpCode(enrolled.json["totp"]?["secret"]?.stringValue ?? "", offset: 30))
        let challenge = try #require(api.challenge(factor, token).json["id"]?.stringValue)
        #expect(api.verifyFactor(factor, challenge: challenge, code: code, token).status == 200)
        #expect(api.call("GET", "/emulator/v1/mfa/totp?factor_id=x", headers: api.serviceRoleHeaders).status == 400)
        #expect(api.call("GET", "/emulator/v1/mfa/totp?factor_id=00000000-0000-0000-0000-000000000003",
                         headers: api.serviceRoleHeaders).status == 404)
    }
}

@Suite struct MFAAssuranceTests {
    @Test func aal2IsNeededOnceAFactorIsVerified() throws {
        let api = try mfaAPI()
        let session = api.signUp("rules@example.com")
        let (factor, secret, aal2) = try api.verifiedTOTP(bearer(session))
        // A fresh password sign-in is aal1; its user lists the verified factor.
        let signIn = api.signIn("rules@example.com").json
        let aal1 = bearer(signIn)
        #expect(claims(of: aal1)["aal"] == "aal1")
        #expect(signIn["user"]?["factors"]?[0]?["status"] == "verified")

        let password = api.call("PUT", "/user", ["password": "another-password"], bearer: aal1)
        #expect(password.status == 401)
        #expect(errorCode(password) == "insufficient_aal")
        #expect(password.json["msg"] == "AAL2 session is required to update email or password when MFA is enabled.")
        // Metadata is no credential.
        #expect(api.call("PUT", "/user", ["data": ["a": 1]], bearer: aal1).status == 200)
        let enroll = api.enrollTOTP(aal1, name: "second")
        #expect(enroll.status == 403)
        #expect(errorCode(enroll) == "insufficient_aal")
        #expect(enroll.json["msg"] == "AAL2 required to enroll a new factor")
        let unenroll = api.call("DELETE", "/factors/\(factor)", bearer: aal1)
        #expect(unenroll.status == 422)
        #expect(errorCode(unenroll) == "insufficient_aal")
        #expect(unenroll.json["msg"] == "AAL2 required to unenroll verified factor")

        // The aal2 session may do all three.
        let aal2Token = bearer(aal2)
        #expect(api.call("PUT", "/user", ["password": "another-password"], bearer: aal2Token).status == 200)
        #expect(api.enrollTOTP(aal2Token, name: "second").status == 200)
        let removed = api.call("DELETE", "/factors/\(factor)", bearer: aal2Token)
        #expect(removed.status == 200)
        #expect(removed.json == ["id": .string(factor)])
        // Sessions raised by the factor drop back to aal1.
        let after = api.refresh(aal2["refresh_token"]?.stringValue ?? "")
        #expect(claims(of: after.json["access_token"]?.stringValue ?? "")["aal"] == "aal1")
        _ = secret
    }

    @Test func mfaNotices() throws {
        let api = try mfaAPI { $0.mailer.notifications = [.mfaFactorEnrolled, .mfaFactorUnenrolled] }
        let session = api.signUp("notices@example.com")
        let (factor, _, aal2) = try api.verifiedTOTP(bearer(session))
        #expect(api.call("DELETE", "/factors/\(factor)", bearer: bearer(aal2)).status == 200)
        let types = try api.messages(to: "notices@example.com").map(\.type)
        #expect(types == ["mfa_factor_unenrolled_notification", "mfa_factor_enrolled_notification"])
        #expect(try api.messages(to: "notices@example.com").first?.bodyText.contains("totp") == true)
    }
}

@Suite struct MFAPhoneTests {
    private func phoneAPI(clock: ManualClock = ManualClock()) throws -> GoTrueAPI {
        try mfaAPI(clock: clock) { $0.mfa.phone = MFASettings.Toggles(enroll: true, verify: true) }
    }

    @Test func phoneFactorWithTheCodeFromTheOutbox() throws {
        let clock = ManualClock()
        let api = try phoneAPI(clock: clock)
        let token = bearer(api.signUp("phone-mfa@example.com"))
        let invalid = api.call("POST", "/factors", ["factor_type": "phone", "phone": "0123"], bearer: token)
        #expect(invalid.status == 400)
        #expect(invalid.json["msg"] == "Invalid phone number format (E.164 required)")
        let missing = api.call("POST", "/factors", ["factor_type": "phone"], bearer: token)
        #expect(missing.json["msg"] == "Phone number required to enroll Phone factor")

        let enrolled = api.call("POST", "/factors", ["factor_type": "phone", "phone": "+1 555 000 2222"], bearer: token)
        #expect(enrolled.status == 200)
        #expect(enrolled.json["phone"] == "+1 555 000 2222")
        #expect(enrolled.json["totp"] == nil)
        let factor = try #require(enrolled.json["id"]?.stringValue)

        let challenge = api.challenge(factor, token)
        #expect(challenge.status == 200)
        #expect(challenge.json["type"] == "phone")
        let sms = try #require(try api.latestMessage(to: "15550002222", type: "mfa"))
        #expect(sms.channel == "sms")
        #expect(sms.bodyText == "Your code is \(sms.otp)")
        #expect(sms.otp.count == 6)

        let again = api.challenge(factor, token)
        #expect(again.status == 429)
        #expect(errorCode(again) == "over_sms_send_rate_limit")

        let challengeID = try #require(challenge.json["id"]?.stringValue)
        let wrong = api.verifyFactor(factor, challenge: challengeID, code: sms.otp == "000000" ? "111111" : "000000", token)
        #expect(wrong.json["msg"] == "Invalid MFA Phone code entered")
        let verified = api.verifyFactor(factor, challenge: challengeID, code: sms.otp, token)
        #expect(verified.status == 200)
        #expect(claims(of: verified.json["access_token"]?.stringValue ?? "")["amr"]?[0]?["method"] == "mfa/phone")

        // A verified number cannot be enrolled again.
        let duplicate = api.call("POST", "/factors", ["factor_type": "phone", "phone": "15550002222"],
                                 bearer: verified.json["access_token"]?.stringValue ?? "")
        #expect(errorCode(duplicate) == "mfa_verified_factor_exists")
    }

    /// With Twilio Verify (`IsTwilioVerifyProvider`), Twilio checks the code: a wrong one is
    /// 403 `otp_expired` before any hook is asked, the captured one passes.
    @Test func twilioVerifyChecksTheCodeItself() throws {
        let api = try mfaAPI { config in
            config.mfa.phone = MFASettings.Toggles(enroll: true, verify: true)
            config.sms.provider = "twilio_verify"
            config.sms.providerSettings = ["twilio_verify.account_sid": "AC1", "twilio_verify.auth_token": "t",
                                           "twilio_verify.message_service_sid": "VA1"]
        }
        let token = bearer(api.signUp("verify-mfa@example.com"))
        let factor = try #require(api.call("POST", "/factors", ["factor_type": "phone", "phone": "15550004444"], bearer: token)
            .json["id"]?.stringValue)
        let challenge = api.challenge(factor, token)
        #expect(challenge.status == 200)
        let sms = try #require(try api.latestMessage(to: "15550004444", type: "mfa"))
        let challengeID = try #require(challenge.json["id"]?.stringValue)
        let wrong = api.verifyFactor(factor, challenge: challengeID, code: sms.otp == "000000" ? "111111" : "000000", token)
        #expect(wrong.status == 403)
        #expect(wrong.text == #"{"code":403,"error_code":"otp_expired","msg":"Token has expired or is invalid"}"#)
        #expect(api.verifyFactor(factor, challenge: challengeID, code: sms.otp, token).status == 200)
    }

    @Test func whatsappNeedsTwilio() throws {
        let api = try phoneAPI()
        let token = bearer(api.signUp("wa@example.com"))
        let factor = api.call("POST", "/factors", ["factor_type": "phone", "phone": "15550003333"], bearer: token).json["id"]?.stringValue ?? ""
        let refused = api.call("POST", "/factors/\(factor)/challenge", ["channel": "whatsapp"], bearer: token)
        #expect(refused.status == 400)
        #expect(refused.json["msg"] == .string(SignupEndpoints.invalidChannelMessage))
    }
}

/// Reads the `session_id` claim of a token.
private enum AuthJSONClaims {
    static func sessionID(of token: String) -> JSON? { claims(of: token)["session_id"] }
}

@Suite struct MFASeedTests {
    @Test func seededFactorsSignInAtAAL2() throws {
        let api = try mfaAPI { $0.mfa.phone = MFASettings.Toggles(enroll: true, verify: true) }
        let fixture: JSON = ["users": [[
            "email": "seeded@example.com", "password": "password1", "email_confirm": true,
            "factors": [["factor_type": "totp", "secret": "JBSWY3DPEHPK3PXP", "friendly_name": "app"],
                        ["factor_type": "phone", "phone": "+15550004444", "status": "unverified"]],
        ]]]
        let seeded = api.call("POST", "/emulator/v1/seed", fixture, headers: api.serviceRoleHeaders)
        #expect(seeded.status == 200)
        let factors = try #require(seeded.json["users"]?[0]?["factors"]?.arrayValue)
        #expect(factors.count == 2)
        #expect(factors[0]["status"] == "verified" && factors[1]["status"] == "unverified")
        let factor = try #require(factors[0]["id"]?.stringValue)

        let session = api.signIn("seeded@example.com").json
        let token = bearer(session)
        #expect(session["user"]?["factors"]?.arrayValue?.count == 2)
        let challenge = try #require(api.challenge(factor, token).json["id"]?.stringValue)
        let verified = api.verifyFactor(factor, challenge: challenge, code: api.totpCode("JBSWY3DPEHPK3PXP"), token)
        #expect(claims(of: bearer(verified.json))["aal"] == "aal2")

        // Seeding again keeps the factor ids; an entry without `factors` leaves them alone.
        let again = api.call("POST", "/emulator/v1/seed", fixture, headers: api.serviceRoleHeaders)
        #expect(again.json["users"]?[0]?["factors"]?[0]?["id"]?.stringValue == factor)
        let untouched = api.call("POST", "/emulator/v1/seed", ["users": [["email": "seeded@example.com"]]], headers: api.serviceRoleHeaders)
        #expect(untouched.json["users"]?[0]?["factors"]?.arrayValue?.count == 2)
    }
}

/// `GOTRUE_SESSIONS_ALLOW_LOW_AAL`: an aal1 session of a user with a verified factor gets access
/// tokens that end by its allowance (counted from the sign-in) and no longer refreshes after
/// it; a user without a factor, or an aal2 session, is not limited.
@Suite struct AllowLowAALTests {
    @Test func aLowSessionIsCappedThenRefused() throws {
        let clock = ManualClock()
        let api = try mfaAPI(clock: clock) { $0.sessions.allowLowAALSeconds = 120 }
        let session = api.signUp("low@example.com")
        // No factor yet: the usual hour.
        #expect(session["expires_in"] == 3600)
        let (_, _, raised) = try api.verifiedTOTP(bearer(session))
        #expect(raised["expires_in"] == 3600)

        clock.advance(seconds: 30)
        let low = api.signIn("low@example.com")
        #expect(low.json["expires_in"] == 120)
        let access = try #require(low.json["access_token"]?.stringValue)
        #expect(claims(of: access)["exp"]?.int64Value == clock.now().unixSeconds + 120)
        clock.advance(seconds: 60)
        let refreshed = api.refresh(low.json["refresh_token"]!.stringValue!)
        #expect(refreshed.status == 200)
        #expect(refreshed.json["expires_in"] == 60)
        clock.advance(seconds: 61)
        let refused = api.refresh(refreshed.json["refresh_token"]!.stringValue!)
        #expect(refused.status == 400)
        #expect(errorCode(refused) == "session_expired")
        #expect(refused.json["msg"] == "Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)")
        // The aal2 session is not limited.
        #expect(api.refresh(raised["refresh_token"]!.stringValue!).json["expires_in"] == 3600)
    }
}
