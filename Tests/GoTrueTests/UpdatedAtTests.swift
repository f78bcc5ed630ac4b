import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import GoTrue

// Which writes move `updated_at`: pop's `Update` and `UpdateOnly` always write it, GoTrue's raw
// `UPDATE` statements (`Identity.UpdateIdentityData`) never do.

@Suite struct UpdatedAtTests {
    /// signupVerify marks the identity verified with `UpdateIdentityData`: its `updated_at` stays.
    @Test func confirmingASignUpLeavesTheIdentityUpdatedAt() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.mailer.autoconfirm = false }
        _ = api.call("POST", "/signup", ["email": "ident@example.com", "password": "password1"])
        let created = clock.now().rfc3339
        let message = try #require(try api.latestMessage(to: "ident@example.com"))
        clock.advance(seconds: 30)
        let verified = api.verify(["type": "signup", "email": "ident@example.com", "token": .string(message.otp)])
        #expect(verified.status == 200)
        let identity = verified.json["user"]?["identities"]?[0]
        #expect(identity?["identity_data"]?["email_verified"] == true)
        #expect(identity?["updated_at"] == .string(created))
        let token = verified.json["access_token"]?.stringValue ?? ""
        #expect(api.call("GET", "/user", bearer: token).json["identities"]?[0]?["updated_at"] == .string(created))
    }

    /// The first of a secure email change's two confirmations saves the user with `UpdateOnly`.
    @Test func theFirstOfTwoEmailChangeConfirmationsMovesTheUser() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.mailer.autoconfirm = false }
        _ = api.call("POST", "/signup", ["email": "first@example.com", "password": "password1"])
        let confirm = try #require(try api.latestMessage(to: "first@example.com"))
        let token = try #require(api.verify(["type": "signup", "email": "first@example.com", "token": .string(confirm.otp)])
            .json["access_token"]?.stringValue)
        #expect(api.call("PUT", "/user", ["email": "second@example.com"], bearer: token).status == 200)
        let toNew = try #require(try api.latestMessage(to: "second@example.com"))
        clock.advance(seconds: 30)
        let first = api.verify(["type": "email_change", "email": "second@example.com", "token": .string(toNew.otp)])
        #expect(first.json["msg"]?.stringValue?.hasPrefix("Confirmation link accepted") == true)
        #expect(api.call("GET", "/user", bearer: token).json["updated_at"] == .string(clock.now().rfc3339))
    }

    /// The email-change answer lists the identities as loaded mid-change: the email identity's
    /// new address with its old `updated_at`; the stored row has the new time.
    @Test func theEmailChangeAnswerShowsTheIdentitysOldUpdatedAt() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.mailer.secureEmailChangeEnabled = false }
        let token = api.signUp("before@example.com")["access_token"]?.stringValue ?? ""
        let created = clock.now().rfc3339
        #expect(api.call("PUT", "/user", ["email": "after@example.com"], bearer: token).status == 200)
        let change = try #require(try api.latestMessage(to: "after@example.com"))
        clock.advance(seconds: 20)
        let done = api.verify(["type": "email_change", "token_hash": .string(change.tokenHash)])
        #expect(done.status == 200)
        let shown = done.json["user"]?["identities"]?[0]
        #expect(shown?["identity_data"]?["email"] == "after@example.com")
        #expect(shown?["updated_at"] == .string(created))
        let fresh = done.json["access_token"]?.stringValue ?? ""
        #expect(api.call("GET", "/user", bearer: fresh).json["identities"]?[0]?["updated_at"] == .string(clock.now().rfc3339))
    }

    /// `WriteChallengeToDatabase` saves `last_challenged_at` with `UpdateOnly`: a challenge moves
    /// the factor's `updated_at` to the same time.
    @Test func aChallengeMovesTheFactor() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.mfa.totp = MFASettings.Toggles(enroll: true, verify: true) }
        let token = api.signUp("challenge@example.com")["access_token"]?.stringValue ?? ""
        let factor = api.call("POST", "/factors", ["factor_type": "totp"], bearer: token).json["id"]?.stringValue ?? ""
        clock.advance(seconds: 10)
        #expect(api.call("POST", "/factors/\(factor)/challenge", bearer: token).status == 200)
        let shown = api.call("GET", "/user", bearer: token).json["factors"]?[0]
        #expect(shown?["updated_at"] == .string(clock.now().rfc3339))
        #expect(shown?["last_challenged_at"] == shown?["updated_at"])
    }
}

/// verifyGet turns only HTTP errors into error redirects; a plain database failure (here the
/// audit entry's insert, which signupVerify returns unwrapped) is dropped after the rollback.
@Suite struct VerifyGetFailureTests {
    @Test(.enabled(if: !TestStore.isPostgres, "an SQLite trigger makes the failure"), arguments: [false, true])
    func aPlainDatabaseFailureIsABareRedirect(_ pkce: Bool) throws {
        let api = try makeAPI { $0.mailer.autoconfirm = false }
        var body: JSONObject = ["email": "bare@example.com", "password": "password1"]
        if pkce {
            body["code_challenge"] = "0123456789012345678901234567890123456789012"
            body["code_challenge_method"] = "plain"
        }
        #expect(api.call("POST", "/signup", .object(body)).status == 200)
        let message = try #require(try api.latestMessage(to: "bare@example.com"))
        try api.project.database.write { conn in
            try conn.execute(portable: "CREATE TRIGGER audit_down BEFORE INSERT ON audit_log_entries BEGIN SELECT RAISE(ABORT, 'audit down'); END")
        }
        let response = api.call("GET", "/verify?type=signup&token=\(message.tokenHash)&redirect_to=http://127.0.0.1:3000/welcome")
        #expect(response.status == 303)
        #expect(response.headers["Location"] == (pkce ? "http://127.0.0.1:3000/welcome?code=" : "http://127.0.0.1:3000/welcome"))
        // Rolled back: the address is still unconfirmed.
        #expect(try api.storedUser(email: "bare@example.com")?.emailConfirmedAt == nil)
    }
}
