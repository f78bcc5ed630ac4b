import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: the real server's internal/api/passkey_registration.go,
// passkey_authentication.go, passkey_manage.go, passkey_admin.go, passkey_webauthn.go and the
// options JSON of go-webauthn v0.16.5 (protocol/options.go, webauthn/registration.go,
// webauthn/login.go).

private func passkeyAPI(clock: ManualClock = ManualClock(), configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    try makeAPI(clock: clock) { config in
        config.passkey.enabled = true
        config.siteURL = "http://localhost:3000"
        configure(&config)
    }
}

private func bearer(_ session: JSON) -> String { session["access_token"]?.stringValue ?? "" }

extension GoTrueAPI {
    func registrationOptions(_ bearer: String) -> HTTPResponse {
        call("POST", "/passkeys/registration/options", .object([:]), bearer: bearer)
    }

    /// Options, the software authenticator's attestation, verify.
    func registerPasskey(_ bearer: String, format: String = "none") throws -> (options: JSON, credential: JSON, verified: HTTPResponse) {
        let options = registrationOptions(bearer)
        #expect(options.status == 200, "\(options.text)")
        let credential = control("POST", "/emulator/v1/webauthn/attestation", ["options": options.json["options"] ?? .null, "format": .string(format)])
        #expect(credential.status == 200, "\(credential.text)")
        let verified = call("POST", "/passkeys/registration/verify",
                            ["challenge_id": options.json["challenge_id"] ?? .null, "credential": credential.json], bearer: bearer)
        return (options.json, credential.json, verified)
    }

    func signInWithPasskey(_ extra: JSONObject = [:]) -> (assertion: HTTPResponse, verified: HTTPResponse) {
        let options = call("POST", "/passkeys/authentication/options", .object([:]))
        var body: JSONObject = ["challenge_id": options.json["challenge_id"] ?? .null]
        for (k, v) in extra { body[k] = v }
        let assertion = control("POST", "/emulator/v1/webauthn/assertion", .object(body))
        let verified = call("POST", "/passkeys/authentication/verify",
                            ["challenge_id": options.json["challenge_id"] ?? .null, "credential": assertion.json])
        return (assertion, verified)
    }
}

@Suite struct PasskeyGateTests {
    @Test func offByDefaultWithTheRealAnswers() throws {
        let api = try makeAPI()
        for (method, path) in [("POST", "/passkeys/authentication/options"), ("POST", "/passkeys/registration/options"),
                               ("GET", "/passkeys"), ("DELETE", "/passkeys/00000000-0000-0000-0000-000000000001")] {
            let r = api.call(method, path, .object([:]))
            #expect(r.status == 404)
            #expect(errorCode(r) == "passkey_disabled")
            #expect(r.json["msg"] == "Passkeys are disabled")
        }
        #expect(api.call("GET", "/settings").json["passkeys_enabled"] == false)
        #expect(try passkeyAPI().call("GET", "/settings").json["passkeys_enabled"] == true)
    }

    /// `authentication/options` sits behind the passkey limiter (a burst of 30 per key).
    @Test func signInOptionsAreRateLimited() throws {
        let api = try passkeyAPI { $0.rateLimits.header = "X-Forwarded-For" }
        let key: HTTPHeaders = ["X-Forwarded-For": "203.0.113.9"]
        let statuses = (0..<31).map { _ in api.call("POST", "/passkeys/authentication/options", .object([:]), headers: key).status }
        #expect(statuses.prefix(30).allSatisfy { $0 == 200 })
        #expect(statuses.last == 429)
        // The verify route is not limited by it.
        #expect(api.call("POST", "/passkeys/authentication/verify", .object([:]), headers: key).status == 400)
    }

    @Test func registrationNeedsAUserWhoIsNotAnonymous() throws {
        let api = try passkeyAPI { $0.external.anonymousUsersEnabled = true }
        #expect(api.registrationOptions("").status == 401)
        let anonymous = api.call("POST", "/signup", .object([:])).json
        let refused = api.registrationOptions(bearer(anonymous))
        #expect(refused.status == 403)
        #expect(errorCode(refused) == "no_authorization")
    }
}

@Suite struct PasskeyCeremonyTests {
    @Test func registrationOptionsHaveGoWebAuthnsShape() throws {
        let api = try passkeyAPI()
        let session = api.signUp("opts@example.com", data: ["name": "Opt Name"])
        let r = api.registrationOptions(bearer(session))
        #expect(r.status == 200)
        #expect(r.json.objectValue?.keys == ["challenge_id", "options", "expires_at"])
        let options = try #require(r.json["options"]?.objectValue)
        #expect(options.keys == ["rp", "user", "challenge", "pubKeyCredParams", "timeout", "authenticatorSelection", "attestation"])
        #expect(options["rp"] == ["name": "Supabase", "id": "localhost"])
        let userID = try #require(session["user"]?["id"]?.stringValue)
        #expect(options["user"] == ["name": "opts@example.com", "displayName": "Opt Name", "id": .string(Base64URL.encode(Array(userID.utf8)))])
        #expect(try Base64URL.decode(options["challenge"]?.stringValue ?? "").count == 32)
        #expect(options["pubKeyCredParams"]?.arrayValue?.compactMap { $0["alg"]?.intValue } == [-7, -35, -36, -257, -258, -259, -37, -38, -39, -8])
        #expect(options["timeout"] == 300000)
        #expect(options["authenticatorSelection"] == ["residentKey": "required", "userVerification": "preferred"])
        #expect(options["attestation"] == "none")
        #expect(r.json["expires_at"]?.intValue == 1_767_225_600 + 300)
    }

    @Test func registersAndSignsInWithTheSoftwareAuthenticator() throws {
        let api = try passkeyAPI()
        let session = api.signUp("pk@example.com")
        let (_, credential, verified) = try api.registerPasskey(bearer(session))
        #expect(verified.status == 200, "\(verified.text)")
        #expect(verified.json.objectValue?.keys == ["id", "friendly_name", "created_at"])
        #expect(verified.json["friendly_name"] == "Passkey")
        #expect(verified.json["created_at"] == "2026-01-01T00:00:00Z")

        let options = api.call("POST", "/passkeys/authentication/options", .object([:]))
        #expect(options.json["options"]?.objectValue?.keys == ["challenge", "timeout", "rpId", "userVerification"])
        #expect(options.json["options"]?["rpId"] == "localhost")

        let (assertion, signedIn) = api.signInWithPasskey()
        #expect(assertion.json["id"] == credential["id"])
        #expect(signedIn.status == 200, "\(signedIn.text)")
        let token = try #require(signedIn.json["access_token"]?.stringValue)
        let amr = claims(of: token)["amr"]?.arrayValue ?? []
        #expect(amr.first?["method"] == "passkey")
        #expect(claims(of: token)["aal"] == "aal1")
        #expect(signedIn.json["user"]?["email"] == "pk@example.com")
        #expect(signedIn.json["refresh_token"]?.stringValue?.isEmpty == false)

        // The refresh token works like any other session's.
        #expect(api.refresh(signedIn.json["refresh_token"]?.stringValue ?? "").status == 200)

        // last_used_at appears in the list after the sign-in.
        let list = api.call("GET", "/passkeys", bearer: bearer(session)).json.arrayValue ?? []
        #expect(list.count == 1)
        #expect(list.first?["last_used_at"] == "2026-01-01T00:00:00Z")
    }

    /// go-webauthn decodes the credential into typed structs first: a member of the wrong JSON
    /// type is "Invalid credential response" even when nothing reads it.
    @Test func credentialMembersOfTheWrongTypeAreRefused() throws {
        let api = try passkeyAPI()
        let token = bearer(api.signUp("types@example.com"))
        func register(_ change: (inout JSONObject, inout JSONObject) -> Void) -> HTTPResponse {
            let options = api.registrationOptions(token)
            var credential = api.control("POST", "/emulator/v1/webauthn/attestation", ["options": options.json["options"] ?? .null])
                .json.objectValue ?? [:]
            var response = credential["response"]?.objectValue ?? [:]
            change(&credential, &response)
            credential["response"] = .object(response)
            return api.call("POST", "/passkeys/registration/verify",
                            ["challenge_id": options.json["challenge_id"] ?? .null, "credential": .object(credential)], bearer: token)
        }
        for refused in [register { c, _ in c["authenticatorAttachment"] = 5 }, register { c, _ in c["clientExtensionResults"] = [] },
                        register { _, r in r["transports"] = "usb" }, register { _, r in r["publicKeyAlgorithm"] = 1.5 },
                        register { _, r in r["publicKey"] = "!!" }] {
            #expect(refused.status == 400)
            #expect(refused.json["msg"] == "Invalid credential response")
        }
        #expect(register { c, _ in c["clientExtensionResults"] = .object([:]) }.status == 200)

        let options = api.call("POST", "/passkeys/authentication/options", .object([:]))
        var assertion = api.control("POST", "/emulator/v1/webauthn/assertion", ["challenge_id": options.json["challenge_id"] ?? .null])
            .json.objectValue ?? [:]
        assertion["authenticatorAttachment"] = .object([:])
        let signIn = api.call("POST", "/passkeys/authentication/verify",
                              ["challenge_id": options.json["challenge_id"] ?? .null, "credential": .object(assertion)])
        #expect(signIn.status == 400)
        #expect(signIn.json["msg"] == "Invalid credential response")
    }

    @Test func packedSelfAttestationRegisters() throws {
        let api = try passkeyAPI()
        let (_, _, verified) = try api.registerPasskey(bearer(api.signUp("packed@example.com")), format: "packed")
        #expect(verified.status == 200, "\(verified.text)")
        let stored = try api.project.database.read { conn in try conn.webAuthnCredentials(userID: claims(of: bearer(api.signIn("packed@example.com").json))["sub"]?.stringValue ?? "") }
        #expect(stored.first?.attestationType == "packed")
    }

    @Test func aChallengeIsUsedOnceAndExpires() throws {
        let clock = ManualClock()
        let api = try passkeyAPI(clock: clock)
        let token = bearer(api.signUp("once@example.com"))
        let options = api.registrationOptions(token)
        let credential = api.control("POST", "/emulator/v1/webauthn/attestation", ["challenge_id": options.json["challenge_id"] ?? .null])
        #expect(credential.status == 200, "\(credential.text)")
        let body: JSON = ["challenge_id": options.json["challenge_id"] ?? .null, "credential": credential.json]
        #expect(api.call("POST", "/passkeys/registration/verify", body, bearer: token).status == 200)
        let again = api.call("POST", "/passkeys/registration/verify", body, bearer: token)
        #expect(again.status == 400)
        #expect(errorCode(again) == "webauthn_challenge_not_found")
        #expect(again.json["msg"] == "Challenge not found or already used")

        let late = api.call("POST", "/passkeys/authentication/options", .object([:]))
        clock.advance(seconds: 301)
        let assertion = api.control("POST", "/emulator/v1/webauthn/assertion", ["challenge_id": late.json["challenge_id"] ?? .null])
        let expired = api.call("POST", "/passkeys/authentication/verify", ["challenge_id": late.json["challenge_id"] ?? .null, "credential": assertion.json])
        #expect(expired.status == 400)
        #expect(errorCode(expired) == "webauthn_challenge_expired")
        #expect(expired.json["msg"] == "Challenge has expired")
    }

    @Test func verifyParamsAreCheckedInOrder() throws {
        let api = try passkeyAPI()
        func verify(_ body: JSON) -> HTTPResponse { api.call("POST", "/passkeys/authentication/verify", body) }
        #expect(verify(.object([:])).json["msg"] == "challenge_id is required")
        #expect(verify(["challenge_id": "x"]).json["msg"] == "credential is required")
        #expect(verify(["challenge_id": "x", "credential": .object([:])]).json["msg"] == "challenge_id must be a valid UUID")
        let unknown = verify(["challenge_id": "00000000-0000-4000-8000-000000000000", "credential": .object([:])])
        #expect(errorCode(unknown) == "webauthn_challenge_not_found")
        // A registration challenge cannot be used to sign in.
        let token = bearer(api.signUp("kind@example.com"))
        let reg = api.registrationOptions(token)
        #expect(errorCode(verify(["challenge_id": reg.json["challenge_id"] ?? .null, "credential": .object([:])])) == "webauthn_challenge_not_found")
    }

    @Test func aTamperedCredentialFailsAndStoresNothing() throws {
        let api = try passkeyAPI()
        let token = bearer(api.signUp("tamper@example.com"))
        let options = api.registrationOptions(token)
        var credential = try #require(api.control("POST", "/emulator/v1/webauthn/attestation", ["options": options.json["options"] ?? .null,
                                                                                             "origin": "http://evil.example"]).json.objectValue)
        let refused = api.call("POST", "/passkeys/registration/verify", ["challenge_id": options.json["challenge_id"] ?? .null, "credential": .object(credential)], bearer: token)
        #expect(refused.status == 400)
        #expect(errorCode(refused) == "webauthn_verification_failed")
        #expect(refused.json["msg"] == "Credential verification failed")
        #expect(api.call("GET", "/passkeys", bearer: token).json == .array([]))

        let options2 = api.registrationOptions(token)
        credential["type"] = "nope"
        let unparsable = api.call("POST", "/passkeys/registration/verify", ["challenge_id": options2.json["challenge_id"] ?? .null, "credential": .object(credential)], bearer: token)
        #expect(unparsable.status == 400)
        #expect(errorCode(unparsable) == "webauthn_verification_failed")
        #expect(unparsable.json["msg"] == "Invalid credential response")
    }

    @Test func signInChecksSignatureUserAndState() throws {
        let api = try passkeyAPI()
        let token = bearer(api.signUp("state@example.com"))
        #expect(try api.registerPasskey(token).verified.status == 200)

        // A bad signature.
        let options = api.call("POST", "/passkeys/authentication/options", .object([:]))
        var assertion = try #require(api.control("POST", "/emulator/v1/webauthn/assertion", ["challenge_id": options.json["challenge_id"] ?? .null]).json.objectValue)
        var response = try #require(assertion["response"]?.objectValue)
        var sig = try Base64URL.decode(response["signature"]?.stringValue ?? "")
        sig[sig.count - 1] ^= 0x01
        response["signature"] = .string(Base64URL.encode(sig))
        assertion["response"] = .object(response)
        let bad = api.call("POST", "/passkeys/authentication/verify", ["challenge_id": options.json["challenge_id"] ?? .null, "credential": .object(assertion)])
        #expect(bad.status == 400)
        #expect(errorCode(bad) == "webauthn_verification_failed")
        #expect(bad.json["msg"] == "Credential verification failed")

        // Not verified (UV off) is fine under "preferred"; no user presence is not.
        #expect(api.signInWithPasskey(["user_verified": false]).verified.status == 200)
        #expect(errorCode(api.signInWithPasskey(["user_present": false]).verified) == "webauthn_verification_failed")

        // Counter regression: accepted, the stored counter kept.
        #expect(api.signInWithPasskey(["sign_count": 100]).verified.status == 200)
        let low = api.signInWithPasskey(["sign_count": 5])
        #expect(low.verified.status == 200)
        let userID = claims(of: token)["sub"]?.stringValue ?? ""
        #expect(try api.project.database.read { conn in try conn.webAuthnCredentials(userID: userID) }.first?.signCount == 100)

        // A banned user.
        _ = api.control("PUT", "/admin/users/\(userID)", ["ban_duration": "24h"])
        let banned = api.signInWithPasskey().verified
        #expect(banned.status == 403)
        #expect(errorCode(banned) == "user_banned")
    }

    @Test func aDeletedUserOrPasskeyCannotSignIn() throws {
        let api = try passkeyAPI()
        let token = bearer(api.signUp("gone@example.com"))
        let passkey = try api.registerPasskey(token).verified.json["id"]?.stringValue ?? ""
        #expect(api.call("DELETE", "/passkeys/\(passkey)", bearer: token).status == 204)
        let refused = api.signInWithPasskey().verified
        #expect(refused.status == 400)
        #expect(errorCode(refused) == "webauthn_verification_failed")

        // A soft-deleted user's passkeys are deleted with it (admin.go's soft-delete branch).
        let soft = api.signUp("soft@example.com")
        let user = soft["user"]?["id"]?.stringValue ?? ""
        _ = try api.registerPasskey(bearer(soft))
        #expect(api.admin("DELETE", "/admin/users/\(user)", ["should_soft_delete": true]).status == 200)
        #expect(api.admin("GET", "/admin/users/\(user)/passkeys").json == .array([]))
        let afterSoftDelete = api.signInWithPasskey().verified
        #expect(afterSoftDelete.status == 400)
        #expect(errorCode(afterSoftDelete) == "webauthn_verification_failed")
    }

    @Test func theLimitIsEnforced() throws {
        let api = try passkeyAPI { $0.passkey.maxPasskeysPerUser = 1 }
        let token = bearer(api.signUp("limit@example.com"))
        let first = api.registrationOptions(token)
        let second = api.registrationOptions(token)
        for (index, options) in [first, second].enumerated() {
            let credential = api.control("POST", "/emulator/v1/webauthn/attestation", ["challenge_id": options.json["challenge_id"] ?? .null])
            let verified = api.call("POST", "/passkeys/registration/verify", ["challenge_id": options.json["challenge_id"] ?? .null, "credential": credential.json], bearer: token)
            if index == 0 {
                #expect(verified.status == 200)
            } else {
                #expect(verified.status == 422)
                #expect(errorCode(verified) == "too_many_passkeys")
            }
        }
        let refused = api.registrationOptions(token)
        #expect(refused.status == 422)
        #expect(errorCode(refused) == "too_many_passkeys")
        #expect(refused.json["msg"] == "Maximum number of passkeys reached")
    }

    /// The same authenticator credential registered again (a second ceremony): the unique
    /// credential id answers 422 `webauthn_credential_exists`.
    @Test func aCredentialRegistersOnce() throws {
        let api = try passkeyAPI()
        let token = bearer(api.signUp("dup@example.com"))
        var hand = HandAuthenticator()
        hand.rpID = "localhost"
        var statuses: [Int] = []
        var last = HTTPResponse(status: 0)
        for _ in 0..<2 {
            let options = api.registrationOptions(token).json
            let challenge = options["options"]?["challenge"]?.stringValue ?? ""
            let credential = hand.registration(clientData: hand.clientData("webauthn.create", challenge: challenge),
                                               object: hand.attestationObject(authData: hand.authData(flags: 0x05, count: 0, attested: true)))
            last = api.call("POST", "/passkeys/registration/verify", ["challenge_id": options["challenge_id"] ?? .null, "credential": credential],
                            bearer: token)
            statuses.append(last.status)
        }
        #expect(statuses == [200, 422])
        #expect(errorCode(last) == "webauthn_credential_exists")
        #expect(last.json["msg"] == "This credential is already registered")
    }

    /// Passkeys and, when asked for, the software authenticator's keys survive an export and
    /// import.
    @Test func survivesExportAndImport() throws {
        let api = try passkeyAPI()
        let token = bearer(api.signUp("snap@example.com"))
        #expect(try api.registerPasskey(token).verified.status == 200)
        let exported = api.control("GET", "/emulator/v1/export?include_secrets=true")
        #expect(exported.json["tables"]?["emulator_authenticator_keys"]?.arrayValue?.count == 1)
        #expect(api.control("POST", "/emulator/v1/reset").status < 300)
        #expect(api.signInWithPasskey().verified.status == 400)
        let imported = api.controlRaw("POST", "/emulator/v1/import", body: exported.text)
        #expect(imported.status == 200, "\(imported.text)")
        #expect(api.signInWithPasskey().verified.status == 200)
    }

    /// A plain export leaves the authenticator's private keys out. Imported, the user keeps the
    /// registered passkey (as one a real browser made), the software authenticator holds none,
    /// and registering a new one works.
    @Test func plainExportLeavesTheAuthenticatorKeysOut() throws {
        let api = try passkeyAPI()
        let token = bearer(api.signUp("plain@example.com"))
        #expect(try api.registerPasskey(token).verified.status == 200)
        let exported = api.control("GET", "/emulator/v1/export")
        #expect(exported.json["tables"]?["emulator_authenticator_keys"] == nil)
        #expect(exported.json["tables"]?["webauthn_credentials"]?.arrayValue?.count == 1)
        let imported = api.controlRaw("POST", "/emulator/v1/import", body: exported.text)
        #expect(imported.status == 200, "\(imported.text)")
        #expect(api.signInWithPasskey().assertion.status == 404)
        #expect(api.call("GET", "/passkeys", bearer: token).json.arrayValue?.count == 1)
        // The imported session still holds: the user registers a new passkey and signs in with it.
        #expect(try api.registerPasskey(token).verified.status == 200)
        #expect(api.signInWithPasskey().verified.status == 200)
    }

    @Test func excludeCredentialsListsRegisteredOnes() throws {
        let api = try passkeyAPI()
        let token = bearer(api.signUp("ex@example.com"))
        let (_, credential, _) = try api.registerPasskey(token)
        let options = api.registrationOptions(token).json["options"]
        #expect(options?["excludeCredentials"] == .array([["type": "public-key", "id": credential["id"] ?? .null]]))
        #expect(options?.objectValue?.keys == ["rp", "user", "challenge", "pubKeyCredParams", "timeout", "excludeCredentials", "authenticatorSelection", "attestation"])
        // The software authenticator refuses to create a second credential for the same RP.
        let again = api.control("POST", "/emulator/v1/webauthn/attestation", ["options": options ?? .null])
        #expect(again.status == 409)
    }
}

@Suite struct PasskeyManagementTests {
    @Test func listRenameDelete() throws {
        let api = try passkeyAPI()
        let token = bearer(api.signUp("manage@example.com"))
        let id = try api.registerPasskey(token).verified.json["id"]?.stringValue ?? ""
        let list = api.call("GET", "/passkeys", bearer: token)
        #expect(list.json == .array([["id": .string(id), "friendly_name": "Passkey", "created_at": "2026-01-01T00:00:00Z"]]))

        #expect(api.call("PATCH", "/passkeys/\(id)", .object([:]), bearer: token).json["msg"] == "friendly_name is required")
        let long = api.call("PATCH", "/passkeys/\(id)", ["friendly_name": .string(String(repeating: "é", count: 61))], bearer: token)
        #expect(long.status == 400)
        #expect(long.json["msg"] == "friendly_name must be 120 characters or less")
        let renamed = api.call("PATCH", "/passkeys/\(id)", ["friendly_name": "Laptop"], bearer: token, headers: ["X-Forwarded-For": "192.0.2.5"])
        #expect(renamed.status == 200)
        #expect(renamed.json == ["id": .string(id), "friendly_name": "Laptop", "created_at": "2026-01-01T00:00:00Z"])

        let notMine = api.call("PATCH", "/passkeys/\(id)", ["friendly_name": "x"], bearer: bearer(api.signUp("other@example.com")))
        #expect(notMine.status == 404)
        #expect(errorCode(notMine) == "validation_failed")
        #expect(notMine.json["msg"] == "Passkey not found")
        #expect(api.call("DELETE", "/passkeys/not-a-uuid", bearer: token).json["msg"] == "Passkey not found")

        #expect(api.call("DELETE", "/passkeys/\(id)", bearer: token, headers: ["X-Forwarded-For": "192.0.2.6"]).status == 204)
        #expect(api.call("GET", "/passkeys", bearer: token).json == .array([]))
        // passkey_manage.go audits both with the client's address.
        let audit = api.admin("GET", "/admin/audit").json.arrayValue ?? []
        let address = { (action: String) in audit.first { $0["payload"]?["action"] == .string(action) }?["ip_address"] }
        #expect(address("passkey_updated") == "192.0.2.5")
        #expect(address("passkey_deleted") == "192.0.2.6")
        #expect(api.call("DELETE", "/passkeys/\(id)", bearer: token).status == 404)
    }

    @Test func managingNeedsAAL2WhenMFAIsOn() throws {
        let api = try passkeyAPI { $0.mfa.totp = MFASettings.Toggles(enroll: true, verify: true) }
        let session = api.signUp("aal@example.com")
        let token = bearer(session)
        let id = try api.registerPasskey(token).verified.json["id"]?.stringValue ?? ""
        // Verify a TOTP factor, then use an aal1 session.
        let factor = api.call("POST", "/factors", ["factor_type": "totp"], bearer: token)
        let secret = factor.json["totp"]?["secret"]?.stringValue ?? ""
        let factorID = factor.json["id"]?.stringValue ?? ""
        let challenge = api.call("POST", "/factors/\(factorID)/challenge", .object([:]), bearer: token).json["id"]?.stringValue ?? ""
        let code = OneTimePassword.totp(secret: try Base32.decode(secret), unixSeconds: api.project.environment.now().unixSeconds)
        #expect(api.call("POST", "/factors/\(factorID)/verify", ["challenge_id": .string(challenge), "code": .string(code)], bearer: token).status == 200)
        let aal1 = bearer(api.signIn("aal@example.com").json)
        for r in [api.registrationOptions(aal1), api.call("DELETE", "/passkeys/\(id)", bearer: aal1)] {
            #expect(r.status == 403)
            #expect(errorCode(r) == "insufficient_aal")
            #expect(r.json["msg"] == "AAL2 session is required to manage passkeys when MFA is enabled")
        }
        // Listing and renaming need no aal2.
        #expect(api.call("GET", "/passkeys", bearer: aal1).status == 200)
        #expect(api.call("PATCH", "/passkeys/\(id)", ["friendly_name": "n"], bearer: aal1).status == 200)
    }

    @Test func adminListAndDelete() throws {
        let api = try passkeyAPI()
        let session = api.signUp("adm@example.com")
        let userID = session["user"]?["id"]?.stringValue ?? ""
        let id = try api.registerPasskey(bearer(session)).verified.json["id"]?.stringValue ?? ""
        #expect(api.control("GET", "/admin/users/\(userID)/passkeys").json.arrayValue?.map { $0["id"] } == [.string(id)])
        #expect(api.call("GET", "/admin/users/\(userID)/passkeys", bearer: bearer(session)).status == 403)
        let unknown = api.control("DELETE", "/admin/users/\(userID)/passkeys/00000000-0000-4000-8000-000000000000")
        #expect(unknown.status == 404)
        #expect(errorCode(unknown) == "validation_failed")
        #expect(unknown.json["msg"] == "Passkey not found")
        #expect(api.control("DELETE", "/admin/users/\(userID)/passkeys/\(id)").status == 204)
        #expect(api.control("GET", "/admin/users/\(userID)/passkeys").json == .array([]))
        // Not gated by the passkey setting.
        let off = try makeAPI()
        let user = off.signUp("plain@example.com")["user"]?["id"]?.stringValue ?? ""
        #expect(off.control("GET", "/admin/users/\(user)/passkeys").json == .array([]))
    }
}

@Suite struct SoftwareAuthenticatorTests {
    @Test func needsTheServiceRole() throws {
        let api = try passkeyAPI()
        #expect(api.call("POST", "/emulator/v1/webauthn/attestation", ["challenge_id": "x"]).status == 401)
    }

    @Test func explainsWhatIsMissing() throws {
        let api = try passkeyAPI()
        let r = api.control("POST", "/emulator/v1/webauthn/assertion", .object([:]))
        #expect(r.status == 400)
        let none = api.control("POST", "/emulator/v1/webauthn/assertion", ["options": ["challenge": "AAAA", "rpId": "localhost"]])
        #expect(none.status == 404)
        #expect(errorCode(none) == "webauthn_credential_not_found")
    }

    @Test func relyingPartyDefaultsFollowTheSiteURL() {
        var w = WebAuthnSettings()
        #expect(w.relyingParty(siteURL: "http://127.0.0.1:3000") == RelyingParty(id: "localhost", name: "Supabase",
                                                                                 origins: ["http://127.0.0.1:3000", "http://localhost:3000"]))
        #expect(w.relyingParty(siteURL: "https://App.Example.com/path").id == "app.example.com")
        w.rpID = "example.com"
        w.rpOrigins = ["https://example.com"]
        w.rpDisplayName = "Ex"
        #expect(w.relyingParty(siteURL: "http://localhost:3000") == RelyingParty(id: "example.com", name: "Ex", origins: ["https://example.com"]))
    }
}

// Expected behaviour: mfa.go's enrollWebAuthnFactor, challengeWebAuthnFactor and
// verifyWebAuthnFactor (getWebAuthnMFA's relying party: go-webauthn defaults).
@Suite struct WebAuthnFactorTests {
    private func factorAPI(_ on: Bool = true) throws -> GoTrueAPI {
        try passkeyAPI { config in
            config.passkey.enabled = false
            if on { config.mfa.webAuthn = MFASettings.Toggles(enroll: true, verify: true) }
        }
    }

    @Test func offByDefault() throws {
        let api = try factorAPI(false)
        let token = bearer(api.signUp("off@example.com"))
        let r = api.call("POST", "/factors", ["factor_type": "webauthn"], bearer: token)
        #expect(r.status == 422)
        #expect(errorCode(r) == "mfa_webauthn_enroll_not_enabled")
    }

    @Test func enrollChallengeVerifyReachesAAL2ThenSignsInAgain() throws {
        let api = try factorAPI()
        let session = api.signUp("factor@example.com")
        let token = bearer(session)
        let enrolled = api.call("POST", "/factors", ["factor_type": "webauthn", "friendly_name": "key"], bearer: token)
        #expect(enrolled.status == 200, "\(enrolled.text)")
        #expect(enrolled.json.objectValue?.keys == ["id", "type", "friendly_name"])
        let factorID = enrolled.json["id"]?.stringValue ?? ""

        let challenge = api.call("POST", "/factors/\(factorID)/challenge", .object([:]), bearer: token)
        #expect(challenge.status == 200, "\(challenge.text)")
        #expect(challenge.json.objectValue?.keys == ["id", "type", "expires_at", "webauthn"])
        #expect(challenge.json["webauthn"]?["type"] == "create")
        let options = try #require(challenge.json["webauthn"]?["credential_options"]?["publicKey"])
        // No authenticator selection and no attestation preference (getWebAuthnMFA).
        #expect(options["authenticatorSelection"] == .object([:]))
        #expect(options["attestation"] == nil)
        #expect(options["user"]?["displayName"] == "factor@example.com")

        let credential = api.control("POST", "/emulator/v1/webauthn/attestation", ["challenge_id": challenge.json["id"] ?? .null])
        #expect(credential.status == 200, "\(credential.text)")
        let verified = api.call("POST", "/factors/\(factorID)/verify",
                                ["challenge_id": challenge.json["id"] ?? .null, "webauthn": ["type": "create", "credential_response": credential.json]],
                                bearer: token)
        #expect(verified.status == 200, "\(verified.text)")
        let aal2 = try #require(verified.json["access_token"]?.stringValue)
        #expect(claims(of: aal2)["aal"] == "aal2")
        #expect(claims(of: aal2)["amr"]?.arrayValue?.compactMap { $0["method"]?.stringValue } == ["mfa/webauthn", "password"])
        #expect(verified.json["user"]?["factors"]?[0]?["status"] == "verified")

        // A later sign-in: an assertion over the factor's credential.
        let aal1 = bearer(api.signIn("factor@example.com").json)
        let request = api.call("POST", "/factors/\(factorID)/challenge", .object([:]), bearer: aal1)
        #expect(request.json["webauthn"]?["type"] == "request")
        let requestOptions = try #require(request.json["webauthn"]?["credential_options"]?["publicKey"])
        #expect(requestOptions["allowCredentials"]?[0]?["id"] == credential.json["id"])
        #expect(requestOptions["userVerification"] == nil)
        let assertion = api.control("POST", "/emulator/v1/webauthn/assertion", ["options": requestOptions])
        #expect(assertion.status == 200, "\(assertion.text)")
        let again = api.call("POST", "/factors/\(factorID)/verify",
                             ["challenge_id": request.json["id"] ?? .null, "webauthn": ["type": "request", "credential_response": assertion.json]],
                             bearer: aal1)
        #expect(again.status == 200, "\(again.text)")
        #expect(claims(of: again.json["access_token"]?.stringValue ?? "")["aal"] == "aal2")

        // A forged assertion fails as the real server fails it (500), and the challenge stays.
        let third = api.call("POST", "/factors/\(factorID)/challenge", .object([:]), bearer: aal1)
        var forged = try #require(api.control("POST", "/emulator/v1/webauthn/assertion", ["challenge_id": third.json["id"] ?? .null]).json.objectValue)
        var response = try #require(forged["response"]?.objectValue)
        response["clientDataJSON"] = .string(Base64URL.encode(Array(#"{"type":"webauthn.get","challenge":"AAAA","origin":"http://localhost:3000"}"#.utf8)))
        forged["response"] = .object(response)
        let refused = api.call("POST", "/factors/\(factorID)/verify",
                               ["challenge_id": third.json["id"] ?? .null, "webauthn": ["type": "request", "credential_response": .object(forged)]],
                               bearer: aal1)
        #expect(refused.status == 500)
        #expect(refused.json["msg"] == "Failed to validate WebAuthn MFA response")
    }

    @Test func verifyParamsAreChecked() throws {
        let api = try factorAPI()
        let token = bearer(api.signUp("params@example.com"))
        let factorID = api.call("POST", "/factors", ["factor_type": "webauthn"], bearer: token).json["id"]?.stringValue ?? ""
        let challengeID = api.call("POST", "/factors/\(factorID)/challenge", .object([:]), bearer: token).json["id"] ?? .null
        func verify(_ webauthn: JSON?) -> HTTPResponse {
            var body: JSONObject = ["challenge_id": challengeID]
            if let webauthn { body["webauthn"] = webauthn }
            return api.call("POST", "/factors/\(factorID)/verify", .object(body), bearer: token)
        }
        #expect(verify(nil).json["msg"] == "WebAuthn config required")
        #expect(verify(["type": "x"]).json["msg"] == "WebAuthn type must be create or request")
        #expect(verify(["type": "create"]).json["msg"] == "credential_response required")
        let invalid = verify(["type": "create", "credential_response": .object([:])])
        #expect(invalid.status == 400)
        #expect(invalid.json["msg"] == "Invalid credential_response")
        // Verification is off: the real server's enroll code.
        let off = try passkeyAPI { $0.mfa.webAuthn = MFASettings.Toggles(enroll: true, verify: false) }
        let t = bearer(off.signUp("v@example.com"))
        let f = off.call("POST", "/factors", ["factor_type": "webauthn"], bearer: t).json["id"]?.stringValue ?? ""
        let r = off.call("POST", "/factors/\(f)/verify", ["challenge_id": challengeID], bearer: t)
        #expect(errorCode(r) == "mfa_webauthn_enroll_not_enabled")
        #expect(r.json["msg"] == "MFA verification is disabled for WebAuthn")
    }
}

/// Default names by AAGUID, as `utilities/passkey_name.go` looks them up (the names GoTrue's
/// embedded table gives; unknown authenticators are "Passkey").
@Test func passkeyDefaultNamesFollowGoTruesTable() {
    #expect(PasskeyOptions.friendlyName(aaguid: "fbfc3007-154e-4ecc-8c0b-6e020557d7bd") == "Apple Passwords")
    #expect(PasskeyOptions.friendlyName(aaguid: "dd4ec289-e01d-41c9-bb89-70fa845d4bf2") == "iCloud Keychain (Managed)")
    #expect(PasskeyOptions.friendlyName(aaguid: "00000000-0000-0000-0000-000000000000") == "Passkey")
    #expect(PasskeyOptions.friendlyName(aaguid: nil) == "Passkey")
}
