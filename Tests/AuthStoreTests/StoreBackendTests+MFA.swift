import Foundation
import Testing
@testable import AuthStore

/// The store methods of MFA factors and challenges, PKCE flow states, WebAuthn, the OAuth
/// server and custom providers: the same behaviour on both backends, and in Postgres mode rows
/// as GoTrue writes them (read back with plain SQL).
extension StoreBackendTests {
    /// Whether two JSON texts hold the same value (jsonb reorders object members and respaces).
    private func sameJSON(_ a: String?, _ b: String?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        // Parsed and written again with sorted keys: one text per JSON value.
        func canonical(_ text: String) -> Data? {
            guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else { return nil }
            return try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
        }
        guard let left = canonical(a), let right = canonical(b) else { return false }
        return left == right
    }

    // MARK: mfa_factors, mfa_challenges

    @Test(arguments: StoreBackend.available) func factorsAndChallengesRoundTrip(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        var totp = FactorRecord(id: newID(), userID: ada.id, factorType: "totp", status: "unverified", at: t0)
        totp.secret = "JBSWY3DPEHPK3PXP"
        // Distinct times: Postgres breaks ties by physical position, which an update changes.
        var phone = FactorRecord(id: newID(), userID: ada.id, factorType: "phone", status: "unverified", at: t0 + 1)
        phone.friendlyName = "work phone"
        phone.phone = "15550001"
        let webauthn = FactorRecord(id: newID(), userID: ada.id, factorType: "webauthn", status: "unverified", at: t0 + 2)
        let sms = ChallengeRecord(id: newID(), factorID: phone.id, ipAddress: "127.0.0.1", otpCode: "123456", at: t0 + 2)
        let code = ChallengeRecord(id: newID(), factorID: totp.id, ipAddress: "::1", at: t0 + 2)
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            for factor in [totp, phone, webauthn] { try c.insertFactor(factor) }
            try c.insertChallenge(sms)
            try c.insertChallenge(code)
        }
        try db.read { (c: Connection) throws in
            #expect(try c.factors(userID: ada.id) == [totp, phone, webauthn])
            #expect(try c.factor(id: phone.id, userID: ada.id) == phone)
            #expect(try c.factor(id: phone.id, userID: newID()) == nil)
            #expect(try c.factor(id: "not-a-uuid", userID: ada.id) == nil)
            #expect(try c.factor(id: totp.id) == totp)
            #expect(try c.challenge(id: sms.id, factorID: phone.id) == sms)
            #expect(try c.challenge(id: code.id, factorID: totp.id) == code)
            #expect(try c.challenge(id: sms.id, factorID: totp.id) == nil)
            #expect(try c.latestChallenge(factorID: phone.id) == sms)
        }

        // Two factors challenged in one instant (a frozen virtual clock).
        try db.write { (c: Connection) throws in
            try c.markFactorChallenged(id: phone.id, at: t0 + 10)
            try c.markFactorChallenged(id: totp.id, at: t0 + 10)
            try c.markChallengeVerified(id: code.id, at: t0 + 11)
        }
        var verified = try #require(try db.read { try $0.factor(id: totp.id) })
        #expect(try db.read { try $0.factor(id: phone.id)?.lastChallengedAt } == t0 + 10)
        // GoTrue's last_challenged_at is unique: the second moves on by a microsecond.
        #expect(verified.lastChallengedAt == (backend == .postgres ? t0 + 11 : t0 + 10))
        // A third in that instant takes the first free one; a factor challenged again keeps
        // its own time free for itself.
        try db.write { (c: Connection) throws in
            try c.markFactorChallenged(id: webauthn.id, at: t0 + 10)
            try c.markFactorChallenged(id: phone.id, at: t0 + 10)
        }
        #expect(try db.read { try $0.factor(id: webauthn.id)?.lastChallengedAt } == (backend == .postgres ? t0 + 12 : t0 + 10))
        #expect(try db.read { try $0.factor(id: phone.id)?.lastChallengedAt } == t0 + 10)
        #expect(try db.read { try $0.challenge(id: code.id, factorID: totp.id)?.verifiedAt } == t0 + 11)

        verified.status = "verified"
        verified.friendlyName = "authenticator"
        verified.updatedAt = t0 + 12
        try db.write { try $0.updateFactor(verified) }
        #expect(try db.read { try $0.factor(id: totp.id) } == verified)

        // Unverified factors: the never-challenged one expires, the challenged one stays until
        // one of its type is verified.
        try db.write { try $0.deleteExpiredFactors(createdBefore: t0 + 5) }
        #expect(try db.read { try $0.factors(userID: ada.id).map(\.id) } == [totp.id, phone.id])
        try db.write { try $0.deleteUnverifiedFactors(userID: ada.id, factorType: "phone") }
        #expect(try db.read { try $0.factors(userID: ada.id).map(\.id) } == [totp.id])
        #expect(try db.read { try $0.challenge(id: sms.id, factorID: phone.id) } == nil)  // ON DELETE CASCADE

        try db.write { try $0.deleteChallenge(id: code.id) }
        #expect(try db.read { try $0.latestChallenge(factorID: totp.id) } == nil)
        try db.write { try $0.deleteFactor(id: totp.id) }
        #expect(try db.read { try $0.factors(userID: ada.id) }.isEmpty)
        try db.write { (c: Connection) throws in
            try c.insertFactor(webauthn)
            try c.deleteFactors(userID: ada.id)
        }
        #expect(try db.read { try $0.factors(userID: ada.id) }.isEmpty)
    }

    @Test(arguments: StoreBackend.available) func downgradingSessionsOfAFactor(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        let totp = FactorRecord(id: newID(), userID: ada.id, factorType: "totp", status: "verified", at: t0)
        var raised = SessionRecord(id: newID(), userID: ada.id, at: t0)
        raised.aal = "aal2"
        raised.factorID = totp.id
        let other = SessionRecord(id: newID(), userID: ada.id, at: t0 + 1)
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertFactor(totp)
            try c.insertSession(raised)
            try c.insertSession(other)
            try c.addAMRClaim(id: newID(), sessionID: raised.id, method: "password", at: t0)
            try c.addAMRClaim(id: newID(), sessionID: raised.id, method: "totp", at: t0 + 1)
            try c.addAMRClaim(id: newID(), sessionID: other.id, method: "totp", at: t0 + 1)
        }
        try db.write { try $0.downgradeSessions(of: totp) }
        try db.read { (c: Connection) throws in
            let session = try #require(try c.session(id: raised.id))
            #expect(session.aal == "aal1" && session.factorID == nil)
            #expect(try c.amrClaims(sessionID: raised.id).map(\.method) == ["password"])
            #expect(try c.amrClaims(sessionID: other.id).map(\.method) == ["totp"])  // not raised by the factor
        }
    }

    @Test(arguments: StoreBackend.available) func webAuthnFactorState(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        var factor = FactorRecord(id: newID(), userID: ada.id, factorType: "webauthn", status: "unverified", at: t0)
        let challenge = ChallengeRecord(id: newID(), factorID: factor.id, ipAddress: "10.0.0.1", at: t0)
        let session = #"{"challenge":"abc","user_id":"dXNlcg","expires":"2023-11-14T22:18:20Z","allowed_credentials":null}"#
        let credential = #"{"id":"Y3JlZA","publicKey":"cGs","authenticator":{"AAGUID":"AAAA","signCount":0},"flags":{"backupEligible":false}}"#
        let aaguid = "adce0002-35bc-c60a-648b-0b25f1f05503"
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertFactor(factor)
            try c.insertChallenge(challenge)
            try c.setChallengeWebAuthnSessionData(challengeID: challenge.id, sessionData: session)
        }
        #expect(sameJSON(try db.read { try $0.challengeWebAuthnSessionData(challengeID: challenge.id) }, session))
        #expect(try db.read { try $0.verifiedWebAuthnFactorCredentials(userID: ada.id) }.isEmpty)
        factor.status = "verified"
        factor.webAuthnAAGUID = aaguid
        factor.updatedAt = t0 + 1
        try db.write { (c: Connection) throws in
            try c.updateFactor(factor)
            try c.saveFactorWebAuthnCredential(factorID: factor.id, credential: credential, aaguid: aaguid, at: t0 + 1)
        }
        let saved = try db.read { try $0.verifiedWebAuthnFactorCredentials(userID: ada.id) }
        #expect(saved.map(\.factorID) == [factor.id])
        #expect(sameJSON(saved.first?.credential, credential))
        #expect(try db.read { try $0.factor(id: factor.id) } == factor)
    }

    @Test func factorsAndChallengesAreGoTrueRows() throws {
        guard StoreBackend.available.contains(.postgres) else { return }
        let db = try StoreBackend.postgres.open()
        let ada = user(email: "ada@example.com")
        var phone = FactorRecord(id: newID(), userID: ada.id, factorType: "phone", status: "unverified", at: t0)
        phone.phone = "15550001"
        let totp = FactorRecord(id: newID(), userID: ada.id, factorType: "totp", status: "verified", at: t0 + 5)
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertFactor(phone)
            try c.insertFactor(totp)
            try c.insertChallenge(ChallengeRecord(id: newID(), factorID: totp.id, ipAddress: "127.0.0.1", at: t0 + 5))
            try c.insertChallenge(ChallengeRecord(id: newID(), factorID: phone.id, ipAddress: "::1", otpCode: "654321", at: t0))
            try c.markFactorChallenged(id: totp.id, at: t0 + 5)
        }
        // Go strings '' (friendly_name, secret, otp_code), storage.NullString NULL (phone),
        // enum labels, timestamptz.
        let found1 = try rows(db, """
            SELECT factor_type::text, status::text, pg_typeof(status)::text, friendly_name, secret, coalesce(phone, 'NULL'),
            created_at::text, pg_typeof(created_at)::text, coalesce(last_challenged_at::text, 'NULL')
            FROM auth.mfa_factors ORDER BY created_at
            """)
        #expect(found1 == [
                ["phone", "unverified", "factor_status", "", "", "15550001", "2023-11-14 22:13:20+00", "timestamp with time zone", "NULL"],
                ["totp", "verified", "factor_status", "", "", "NULL", "2023-11-14 22:13:20.000005+00", "timestamp with time zone",
                 "2023-11-14 22:13:20.000005+00"],
            ])
        let found2 = try rows(db, """
            SELECT ip_address::text, pg_typeof(ip_address)::text, otp_code, created_at::text FROM auth.mfa_challenges ORDER BY created_at
            """)
        #expect(found2 == [["::1/128", "inet", "654321", "2023-11-14 22:13:20+00"], ["127.0.0.1/32", "inet", "", "2023-11-14 22:13:20.000005+00"]])
    }

    // MARK: flow_state

    @Test(arguments: StoreBackend.available) func flowStatesRoundTrip(backend: StoreBackend) throws {
        let db = try backend.open()
        var ada = user(email: "ada@example.com")
        ada.phoneChange = "15550002"
        var pkce = FlowStateRecord(id: newID(), userID: ada.id, authCode: newID(), codeChallengeMethod: "s256",
                                   codeChallenge: String(repeating: "c", count: 43), providerType: "email",
                                   authenticationMethod: "magiclink", at: t0)
        pkce.redirectTo = "https://app.example.com/callback"
        var implicit = FlowStateRecord(id: newID(), userID: nil, authCode: "", codeChallengeMethod: "", codeChallenge: "",
                                       providerType: "github", authenticationMethod: "oauth", at: t0)
        implicit.inviteToken = "invite-1"
        implicit.linkingTargetID = ada.id
        implicit.emailOptional = true
        let later = FlowStateRecord(id: newID(), userID: ada.id, authCode: newID(), codeChallengeMethod: "plain",
                                    codeChallenge: "verifier", providerType: "email", authenticationMethod: "magiclink", at: t0 + 1)
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            for flow in [pkce, implicit, later] { try c.insertFlowState(flow) }
            try c.replaceOneTimeToken(id: newID(), userID: ada.id, type: "recovery_token", tokenHash: "hash-1", relatesTo: "ada@example.com", at: t0)
        }
        try db.read { (c: Connection) throws in
            #expect(try c.flowState(id: pkce.id) == pkce)
            #expect(try c.flowState(id: implicit.id) == implicit)
            #expect(try !(c.flowState(id: implicit.id)?.isPKCE ?? true))
            #expect(try c.flowState(id: "nope") == nil)
            #expect(try c.flowState(authCode: pkce.authCode) == pkce)
            #expect(try c.latestFlowState(userID: ada.id, authenticationMethod: "magiclink") == later)
            #expect(try c.latestFlowState(userID: ada.id, authenticationMethod: "recovery") == nil)
            #expect(try c.oneTimeTokenOwner(tokenHash: "hash-1", types: ["confirmation_token", "recovery_token"]) == ada.id)
            #expect(try c.oneTimeTokenOwner(tokenHash: "hash-1", types: ["confirmation_token", "no_such_type"]) == nil)
            #expect(try c.user(phoneChange: "15550002", aud: "authenticated")?.id == ada.id)
            #expect(try c.user(phoneChange: "15550002", aud: "other") == nil)
            #expect(try c.user(phoneChange: "", aud: "authenticated") == nil)
        }
        try db.write { (c: Connection) throws in
            try c.claimFlowState(id: implicit.id, userID: ada.id, providerAccessToken: "gho_a", providerRefreshToken: "ghr_r", at: t0 + 3)
            try c.recordAuthCodeIssued(flowStateID: pkce.id, at: t0 + 4)
        }
        implicit.userID = ada.id
        implicit.providerAccessToken = "gho_a"
        implicit.providerRefreshToken = "ghr_r"
        implicit.authCodeIssuedAt = t0 + 3
        implicit.updatedAt = t0 + 3
        pkce.authCodeIssuedAt = t0 + 4
        pkce.updatedAt = t0 + 4
        try db.read { (c: Connection) throws in
            #expect(try c.flowState(id: implicit.id) == implicit)
            #expect(try c.flowState(id: pkce.id) == pkce)
        }
        try db.write { (c: Connection) throws in
            try c.deleteFlowState(id: pkce.id)
            try c.deleteFlowState(id: "not-a-uuid")
        }
        #expect(try db.read { try $0.flowState(id: pkce.id) } == nil)
        #expect(try db.read { try $0.flowState(id: later.id) } == later)
    }

    @Test func flowStatesAreGoTrueRows() throws {
        guard StoreBackend.available.contains(.postgres) else { return }
        let db = try StoreBackend.postgres.open()
        var pkce = FlowStateRecord(id: newID(), userID: nil, authCode: newID(), codeChallengeMethod: "s256",
                                   codeChallenge: "challenge", providerType: "email", authenticationMethod: "email/signup", at: t0)
        pkce.redirectTo = "https://app.example.com/"
        let implicit = FlowStateRecord(id: newID(), userID: nil, authCode: "", codeChallengeMethod: "", codeChallenge: "",
                                       providerType: "github", authenticationMethod: "oauth", at: t0 + 1)
        try db.write { (c: Connection) throws in
            try c.insertFlowState(pkce)
            try c.insertFlowState(implicit)
        }
        // An implicit flow's PKCE columns are NULL (pointers in models.FlowState); provider
        // tokens '' (Go strings); the method is the enum label.
        let found3 = try rows(db, """
            SELECT coalesce(auth_code, 'NULL') = 'NULL', coalesce(code_challenge_method::text, 'NULL'), pg_typeof(code_challenge_method)::text,
            coalesce(code_challenge, 'NULL'), provider_access_token, provider_refresh_token, created_at::text, email_optional
            FROM auth.flow_state ORDER BY created_at
            """)
        #expect(found3 == [
                ["0", "s256", "code_challenge_method", "challenge", "", "", "2023-11-14 22:13:20+00", "0"],
                ["1", "NULL", "code_challenge_method", "NULL", "", "", "2023-11-14 22:13:20.000001+00", "0"],
            ])
        let redirects = try rows(db, "SELECT flow_state_id::text, redirect_to FROM auth_emulator.flow_state_redirects")
        #expect(redirects == [[pkce.id, "https://app.example.com/"]])
        try db.write { try $0.deleteFlowState(id: pkce.id) }
        #expect(try rows(db, "SELECT count(*) FROM auth_emulator.flow_state_redirects") == [["0"]])
    }

    // MARK: webauthn_credentials, webauthn_challenges, authenticator keys

    @Test(arguments: StoreBackend.available) func passkeysAndTheirCeremonies(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        let first = WebAuthnCredentialRecord(
            id: newID(), userID: ada.id, credentialID: [0x01, 0xAB, 0x00, 0xFF], publicKey: [0xA5, 0x01, 0x02], attestationType: "none",
            aaguid: "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4", signCount: 0, transports: #"["hybrid","internal"]"#, backupEligible: true,
            backedUp: false, friendlyName: "", at: t0)
        let second = WebAuthnCredentialRecord(
            id: newID(), userID: ada.id, credentialID: [0x02], publicKey: [0xA5], attestationType: "packed", aaguid: nil, signCount: 7,
            transports: "[]", backupEligible: false, backedUp: false, friendlyName: "YubiKey", at: t0)
        let registration = WebAuthnChallengeRecord(id: newID(), userID: ada.id, challengeType: "registration",
                                                   sessionData: #"{"challenge":"q","user_id":"dQ"}"#, createdAt: t0, expiresAt: t0 + 300_000_000)
        let discoverable = WebAuthnChallengeRecord(id: newID(), userID: nil, challengeType: "authentication",
                                                   sessionData: #"{"challenge":"r"}"#, createdAt: t0, expiresAt: t0 + 300_000_000)
        let key = SoftwareAuthenticatorKeyRecord(credentialID: [0x01, 0xAB, 0x00, 0xFF], userID: ada.id, rpID: "localhost",
                                                 userHandle: [0x75, 0x73], privateKey: Array(repeating: 7, count: 32), signCount: 0,
                                                 discoverable: true, createdAt: t0)
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertWebAuthnCredential(first)
            try c.insertWebAuthnCredential(second)
            try c.insertWebAuthnChallenge(registration)
            try c.insertWebAuthnChallenge(discoverable)
            try c.insertSoftwareAuthenticatorKey(key)
        }
        try db.read { (c: Connection) throws in
            #expect(try c.webAuthnCredentials(userID: ada.id) == [first, second])
            #expect(try c.countWebAuthnCredentials(userID: ada.id) == 2)
            #expect(try c.webAuthnCredential(id: second.id, userID: ada.id) == second)
            #expect(try c.webAuthnCredential(id: second.id, userID: newID()) == nil)
            #expect(try c.webAuthnCredential(credentialID: [0x01, 0xAB, 0x00, 0xFF]) == first)
            #expect(try c.webAuthnCredential(credentialID: [0x03]) == nil)
            let read = try #require(try c.webAuthnChallenge(id: registration.id))
            #expect(sameJSON(read.sessionData, registration.sessionData))
            var same = read
            same.sessionData = registration.sessionData
            #expect(same == registration)
            #expect(try c.softwareAuthenticatorKeys(userID: ada.id, rpID: "localhost") == [key])
            #expect(try c.softwareAuthenticatorKeys(rpID: "localhost") == [key])
            #expect(try c.softwareAuthenticatorKeys(rpID: "example.com").isEmpty)
        }
        // A credential in use twice: the counter and the time move on; the backup state stays
        // as registered (`UpdateLastUsedWithSignCount`).
        try db.write { (c: Connection) throws in
            try c.markWebAuthnCredentialUsed(id: first.id, signCount: 3, at: t0 + 9)
            try c.renameWebAuthnCredential(id: second.id, friendlyName: "Desk key", at: t0 + 9)
        }
        let used = try #require(try db.read { try $0.webAuthnCredential(id: first.id, userID: ada.id) })
        #expect(used.signCount == 3 && used.backedUp == first.backedUp && used.lastUsedAt == t0 + 9 && used.updatedAt == t0 + 9)
        #expect(try db.read { try $0.webAuthnCredential(id: second.id, userID: ada.id)?.friendlyName } == "Desk key")
        #expect(try db.write { try $0.bumpSoftwareAuthenticatorCounter(credentialID: key.credentialID) } == 1)
        #expect(try db.write { try $0.bumpSoftwareAuthenticatorCounter(credentialID: key.credentialID) } == 2)

        // A challenge is consumed once, and only with its type and user.
        try db.write { (c: Connection) throws in
            #expect(try c.consumeWebAuthnChallenge(id: registration.id, type: "authentication", userID: ada.id) == nil)
            #expect(try c.consumeWebAuthnChallenge(id: registration.id, type: "registration", userID: nil) == nil)
            #expect(try c.consumeWebAuthnChallenge(id: registration.id, type: "registration", userID: ada.id)?.id == registration.id)
            #expect(try c.consumeWebAuthnChallenge(id: registration.id, type: "registration", userID: ada.id) == nil)
            #expect(try c.consumeWebAuthnChallenge(id: discoverable.id, type: "authentication", userID: ada.id) == nil)
            #expect(try c.consumeWebAuthnChallenge(id: discoverable.id, type: "authentication", userID: nil)?.userID == nil)
        }
        #expect(try db.read { try $0.webAuthnChallenge(id: discoverable.id) } == nil)
        try db.write { try $0.deleteWebAuthnCredential(id: first.id) }
        #expect(try db.read { try $0.webAuthnCredentials(userID: ada.id) }.map(\.id) == [second.id])
        // A second credential with a registered id is refused.
        let duplicate = #expect(throws: StoreError.self) {
            try db.write { (c: Connection) throws in
                var clash = second
                clash.id = newID()
                try c.insertWebAuthnCredential(clash)
            }
        }
        #expect(duplicate?.isUniqueViolation == true)
    }

    @Test func passkeysAreGoTrueRows() throws {
        guard StoreBackend.available.contains(.postgres) else { return }
        let db = try StoreBackend.postgres.open()
        let ada = user(email: "ada@example.com")
        let credential = WebAuthnCredentialRecord(
            id: newID(), userID: ada.id, credentialID: [0xDE, 0xAD], publicKey: [0xBE, 0xEF], attestationType: "none",
            aaguid: nil, signCount: 0, transports: #"["usb"]"#, backupEligible: false, backedUp: false, friendlyName: "", at: t0)
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertWebAuthnCredential(credential)
            try c.insertWebAuthnChallenge(WebAuthnChallengeRecord(id: newID(), userID: nil, challengeType: "authentication",
                                                                  sessionData: #"{"b":1,"a":2}"#, createdAt: t0, expiresAt: t0 + 1))
            try c.insertSoftwareAuthenticatorKey(SoftwareAuthenticatorKeyRecord(
                credentialID: [0xDE, 0xAD], userID: ada.id, rpID: "localhost", userHandle: [1], privateKey: [2], signCount: 0,
                discoverable: false, createdAt: t0))
        }
        let found4 = try rows(db, """
            SELECT pg_typeof(credential_id)::text, encode(credential_id, 'hex'), encode(public_key, 'hex'), jsonb_typeof(transports),
            transports ->> 0, coalesce(aaguid::text, 'NULL'), friendly_name, created_at::text FROM auth.webauthn_credentials
            """)
        #expect(found4 == [["bytea", "dead", "beef", "array", "usb", "NULL", "", "2023-11-14 22:13:20+00"]])
        let challenges = try rows(db, """
            SELECT pg_typeof(session_data)::text, session_data ->> 'a', coalesce(user_id::text, 'NULL') FROM auth.webauthn_challenges
            """)
        #expect(challenges == [["jsonb", "2", "NULL"]])
        #expect(try rows(db, "SELECT credential_id, user_id::text, discoverable FROM auth_emulator.authenticator_keys") == [["dead", ada.id, "0"]])
    }

    // MARK: OAuth server

    @Test(arguments: StoreBackend.available) func oauthServerRoundTrip(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        var confidential = OAuthClientRecord(id: newID(), registrationType: "manual", clientType: "confidential",
                                             tokenEndpointAuthMethod: "client_secret_basic",
                                             redirectURIs: ["https://app.example.com/cb", "http://localhost:3000/cb"],
                                             grantTypes: ["authorization_code", "refresh_token"], at: t0)
        confidential.secretHash = "$2a$04$hash"
        confidential.name = "Example"
        confidential.uri = "https://app.example.com"
        let publicClient = OAuthClientRecord(id: newID(), registrationType: "dynamic", clientType: "public", tokenEndpointAuthMethod: "none",
                                             redirectURIs: ["myapp://cb"], grantTypes: ["authorization_code"], at: t0 + 1)
        var authorization = OAuthAuthorizationRecord(id: newID(), authorizationID: "abcdefghijklmnopqrstuvwxyz234567", clientID: confidential.id,
                                                     redirectURI: "https://app.example.com/cb", scope: "openid email", at: t0,
                                                     expiresAt: t0 + 180_000_000)
        authorization.state = "xyz"
        authorization.codeChallenge = String(repeating: "a", count: 43)
        authorization.codeChallengeMethod = "s256"
        authorization.nonce = "n-0S6"
        var session = SessionRecord(id: newID(), userID: ada.id, at: t0)
        session.oauthClientID = confidential.id
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertOAuthClient(confidential)
            try c.insertOAuthClient(publicClient)
            try c.insertOAuthAuthorization(authorization)
            try c.insertSession(session)
        }
        try db.read { (c: Connection) throws in
            #expect(try c.oauthClient(id: confidential.id) == confidential)
            #expect(try c.oauthClient(id: publicClient.id) == publicClient)
            #expect(try c.oauthClient(id: "client") == nil)
            #expect(try c.oauthClients() == [publicClient, confidential])
            #expect(try c.oauthAuthorization(authorizationID: authorization.authorizationID) == authorization)
        }
        authorization.userID = ada.id
        authorization.status = "approved"
        authorization.code = "code-1"
        authorization.approvedAt = t0 + 2
        confidential.redirectURIs = ["https://app.example.com/other"]
        confidential.updatedAt = t0 + 2
        var deleted = publicClient
        deleted.deletedAt = t0 + 2
        try db.write { (c: Connection) throws in
            try c.updateOAuthAuthorization(authorization)
            try c.updateOAuthClient(confidential)
            try c.updateOAuthClient(deleted)
        }
        try db.read { (c: Connection) throws in
            #expect(try c.oauthAuthorization(code: "code-1") == authorization)
            #expect(try c.oauthClient(id: confidential.id) == confidential)
            #expect(try c.oauthClient(id: publicClient.id) == nil)  // soft-deleted
            #expect(try c.oauthClients() == [confidential])
        }
        try db.write { try $0.deleteOAuthAuthorization(id: authorization.id) }
        #expect(try db.read { try $0.oauthAuthorization(code: "code-1") } == nil)

        // Consents: one per user and client; granting again replaces the scopes and clears a
        // revocation.
        let consent = OAuthConsentRecord(id: newID(), userID: ada.id, clientID: confidential.id, scopes: ["openid", "email"], at: t0)
        try db.write { (c: Connection) throws in
            try c.upsertOAuthConsent(consent)
            try c.revokeOAuthConsent(id: consent.id, at: t0 + 1)
        }
        #expect(try db.read { try $0.activeOAuthConsent(userID: ada.id, clientID: confidential.id) } == nil)
        var regranted = OAuthConsentRecord(id: newID(), userID: ada.id, clientID: confidential.id, scopes: ["openid"], at: t0 + 2)
        try db.write { try $0.upsertOAuthConsent(regranted) }
        regranted.id = consent.id  // the row stays
        try db.read { (c: Connection) throws in
            #expect(try c.activeOAuthConsent(userID: ada.id, clientID: confidential.id) == regranted)
            #expect(try c.activeOAuthConsents(userID: ada.id) == [regranted])
        }
        try db.write { try $0.deleteOAuthSessions(userID: ada.id, clientID: confidential.id) }
        #expect(try db.read { try $0.session(id: session.id) } == nil)
    }

    @Test func oauthServerRowsAreGoTrueRows() throws {
        guard StoreBackend.available.contains(.postgres) else { return }
        let db = try StoreBackend.postgres.open()
        let client = OAuthClientRecord(id: newID(), registrationType: "dynamic", clientType: "public", tokenEndpointAuthMethod: "none",
                                       redirectURIs: ["https://a.example.com/cb", "https://b.example.com/cb"],
                                       grantTypes: ["authorization_code", "refresh_token"], at: t0)
        var authorization = OAuthAuthorizationRecord(id: newID(), authorizationID: "auth-1", clientID: client.id,
                                                     redirectURI: "https://a.example.com/cb", scope: "openid", at: t0, expiresAt: t0 + 1)
        authorization.codeChallengeMethod = "S256"
        let ada = user(email: "ada@example.com")
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertOAuthClient(client)
            try c.insertOAuthAuthorization(authorization)
            try c.upsertOAuthConsent(OAuthConsentRecord(id: newID(), userID: ada.id, clientID: client.id, scopes: ["openid", "email"], at: t0))
        }
        // Lists joined with "," (SetRedirectURIs), a public client's secret hash '' (a Go string).
        let found5 = try rows(db, """
            SELECT redirect_uris, grant_types, client_secret_hash, registration_type::text, pg_typeof(client_type)::text, created_at::text
            FROM auth.oauth_clients
            """)
        #expect(found5 == [["https://a.example.com/cb,https://b.example.com/cb", "authorization_code,refresh_token", "",
                      "dynamic", "oauth_client_type", "2023-11-14 22:13:20+00"]])
        // The challenge method lowercased for the enum; response_type its default.
        let found6 = try rows(db, """
            SELECT code_challenge_method::text, status::text, response_type::text, coalesce(user_id::text, 'NULL'),
            expires_at::text FROM auth.oauth_authorizations
            """)
        #expect(found6 == [["s256", "pending", "code", "NULL", "2023-11-14 22:13:20.000001+00"]])
        #expect(try rows(db, "SELECT scopes, granted_at::text, coalesce(revoked_at::text, 'NULL') FROM auth.oauth_consents")
                == [["openid email", "2023-11-14 22:13:20+00", "NULL"]])
    }

    // MARK: custom_oauth_providers

    private func provider(_ identifier: String, type: String, at time: Int64) -> CustomOAuthProviderRecord {
        var p = CustomOAuthProviderRecord(id: newID(), providerType: type, identifier: identifier, name: "Provider \(identifier)",
                                          clientID: "client-id", clientSecret: "secret", at: time)
        if type == "oidc" {
            p.issuer = "https://issuer.example.com"
        } else {
            p.authorizationURL = "https://idp.example.com/authorize"
            p.tokenURL = "https://idp.example.com/token"
            p.userinfoURL = "https://idp.example.com/userinfo"
        }
        return p
    }

    /// The record with its JSON-object columns replaced by `other`'s when they hold the same
    /// JSON value (jsonb's text differs from what was written).
    private func normalised(_ p: CustomOAuthProviderRecord?, like other: CustomOAuthProviderRecord) -> CustomOAuthProviderRecord? {
        guard var p else { return nil }
        if sameJSON(p.attributeMapping, other.attributeMapping) { p.attributeMapping = other.attributeMapping }
        if sameJSON(p.authorizationParams, other.authorizationParams) { p.authorizationParams = other.authorizationParams }
        if sameJSON(p.cachedDiscovery, other.cachedDiscovery) { p.cachedDiscovery = other.cachedDiscovery }
        return p
    }

    @Test(arguments: StoreBackend.available) func customProvidersRoundTrip(backend: StoreBackend) throws {
        let db = try backend.open()
        var oidc = provider("custom:corp", type: "oidc", at: t0)
        oidc.acceptableClientIDs = #"["ios-app","android-app"]"#
        oidc.scopes = #"["openid","profile","email"]"#
        oidc.attributeMapping = #"{"name":"display_name","email":"mail"}"#
        oidc.authorizationParams = #"{"prompt":"consent"}"#
        oidc.customClaimsAllowlist = #"["groups"]"#
        oidc.discoveryURL = "https://issuer.example.com/.well-known/openid-configuration"
        oidc.cachedDiscovery = #"{"issuer":"https://issuer.example.com","jwks_uri":"https://issuer.example.com/jwks"}"#
        oidc.pkceEnabled = false
        oidc.emailOptional = true
        let oauth2 = provider("custom:legacy", type: "oauth2", at: t0 + 1)
        try db.write { (c: Connection) throws in
            try c.insertCustomOAuthProvider(oidc)
            try c.insertCustomOAuthProvider(oauth2)
        }
        try db.read { (c: Connection) throws in
            #expect(normalised(try c.customOAuthProvider(identifier: "custom:corp"), like: oidc) == oidc)
            #expect(try c.customOAuthProvider(identifier: "custom:legacy") == oauth2)
            #expect(try c.customOAuthProvider(identifier: "custom:none") == nil)
            #expect(try c.customOAuthProviders().map(\.identifier) == ["custom:legacy", "custom:corp"])
            #expect(try c.customOAuthProviders(type: "oidc").map(\.id) == [oidc.id])
            #expect(try c.countCustomOAuthProviders() == 2)
        }
        oidc.name = "Corp SSO"
        oidc.scopes = "[]"
        oidc.cachedDiscovery = nil
        oidc.enabled = false
        oidc.updatedAt = t0 + 5
        try db.write { try $0.updateCustomOAuthProvider(oidc) }
        #expect(normalised(try db.read { try $0.customOAuthProvider(identifier: "custom:corp") }, like: oidc) == oidc)
        try db.write { try $0.deleteCustomOAuthProvider(id: oauth2.id) }
        #expect(try db.read { try $0.countCustomOAuthProviders() } == 1)
        let duplicate = #expect(throws: StoreError.self) {
            try db.write { try $0.insertCustomOAuthProvider(self.provider("custom:corp", type: "oauth2", at: t0)) }
        }
        #expect(duplicate?.isUniqueViolation == true)
    }

    @Test func customProvidersAreGoTrueRows() throws {
        guard StoreBackend.available.contains(.postgres) else { return }
        let db = try StoreBackend.postgres.open()
        var oidc = provider("custom:corp", type: "oidc", at: t0)
        oidc.scopes = #"["openid","a \"quoted\" scope"]"#
        oidc.attributeMapping = #"{"email":"mail"}"#
        oidc.cachedDiscovery = #"{"issuer":"https://issuer.example.com"}"#
        try db.write { try $0.insertCustomOAuthProvider(oidc) }
        // text[] lists, jsonb maps, the discovery document stamped with the write's time.
        let found7 = try rows(db, """
            SELECT pg_typeof(scopes)::text, array_length(scopes, 1), scopes[2], cardinality(acceptable_client_ids),
            attribute_mapping ->> 'email', pg_typeof(cached_discovery)::text, discovery_cached_at::text, pkce_enabled
            FROM auth.custom_oauth_providers
            """)
        #expect(found7 == [["text[]", "2", #"a "quoted" scope"#, "0", "mail", "jsonb", "2023-11-14 22:13:20+00", "1"]])
        #expect(try db.read { try $0.customOAuthProvider(identifier: "custom:corp")?.scopes } == oidc.scopes)
        // Unchanged on an update that keeps the document, cleared with it.
        oidc.updatedAt = t0 + 7
        try db.write { try $0.updateCustomOAuthProvider(oidc) }
        #expect(try rows(db, "SELECT discovery_cached_at::text FROM auth.custom_oauth_providers") == [["2023-11-14 22:13:20+00"]])
        oidc.cachedDiscovery = nil
        try db.write { try $0.updateCustomOAuthProvider(oidc) }
        #expect(try rows(db, "SELECT coalesce(discovery_cached_at::text, 'NULL') FROM auth.custom_oauth_providers") == [["NULL"]])
    }

    /// `supabase start` pins GoTrue v2.189.0, whose schema has no `custom_claims_allowlist`
    /// (v2.192.0): providers without an allowlist still work there.
    @Test func customProvidersOnASchemaWithoutTheClaimsAllowlist() throws {
        guard StoreBackend.available.contains(.postgres) else { return }
        let db = try StoreBackend.postgres.open()
        try db.write { c in
            try c.postgres!.store { try $0.executeScript("ALTER TABLE auth.custom_oauth_providers DROP COLUMN custom_claims_allowlist") }
        }
        var legacy = provider("custom:legacy", type: "oauth2", at: t0)
        try db.write { try $0.insertCustomOAuthProvider(legacy) }
        legacy.name = "Legacy SSO"
        try db.write { try $0.updateCustomOAuthProvider(legacy) }
        #expect(try db.read { try $0.customOAuthProviders() } == [legacy])
        legacy.customClaimsAllowlist = #"["groups"]"#
        let refused = #expect(throws: StoreError.self) { try db.write { try $0.updateCustomOAuthProvider(legacy) } }
        #expect(refused?.postgres?.sqlstate == "42703")
        #expect(refused?.message.contains("custom_claims_allowlist does not exist") == true)
    }

    /// The emulator's fake issuers are served over http on loopback, which GoTrue's https
    /// CHECK constraints refuse: `auth` gets the https form, `auth_emulator` the URL itself.
    @Test(arguments: StoreBackend.available) func customProvidersOfTheFakeIssuersKeepTheirHTTPURLs(backend: StoreBackend) throws {
        let db = try backend.open()
        let issuer = "http://127.0.0.1:9999/emulator/v1/idp/custom:acme"
        var oidc = provider("custom:acme", type: "oidc", at: t0)
        oidc.issuer = issuer
        oidc.jwksURI = issuer + "/jwks"
        var oauth2 = provider("custom:gh", type: "oauth2", at: t0 + 1)
        oauth2.authorizationURL = "http://127.0.0.1:9999/emulator/v1/idp/custom:gh/authorize"
        try db.write { (c: Connection) throws in
            try c.insertCustomOAuthProvider(oidc)
            try c.insertCustomOAuthProvider(oauth2)
        }
        #expect(try db.read { try $0.customOAuthProviders() } == [oauth2, oidc])
        if backend == .postgres {
            let stored = try rows(db, "SELECT identifier, issuer, jwks_uri, authorization_url FROM auth.custom_oauth_providers ORDER BY identifier")
            let https = "https://127.0.0.1:9999/emulator/v1/idp"
            #expect(stored == [
                ["custom:acme", "\(https)/custom:acme", "\(https)/custom:acme/jwks", "NULL"],
                ["custom:gh", "NULL", "NULL", "\(https)/custom:gh/authorize"],
            ])
        }
        // Moved to an https issuer, the URLs kept beside go.
        oidc.issuer = "https://issuer.example.com"
        oidc.jwksURI = nil
        oidc.updatedAt = t0 + 2
        try db.write { (c: Connection) throws in
            try c.updateCustomOAuthProvider(oidc)
            try c.deleteCustomOAuthProvider(id: oauth2.id)
        }
        #expect(try db.read { try $0.customOAuthProviders() } == [oidc])
        if backend == .postgres {
            #expect(try rows(db, "SELECT count(*) FROM auth_emulator.custom_oauth_provider_urls") == [["0"]])
        }
    }
}
