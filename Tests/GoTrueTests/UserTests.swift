import AuthCrypto
import AuthJSON
import AuthJWT
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: reference §1.3, §5.12, §5.14-5.15 (internal/api/auth.go, user.go, logout.go).
@Suite struct AuthLevelTests {
    @Test func bearerErrors() throws {
        let api = try makeAPI()
        let missing = api.call("GET", "/user")
        #expect(missing.status == 401)
        #expect(missing.text == #"{"code":401,"error_code":"no_authorization","msg":"This endpoint requires a valid Bearer token"}"#)
        let garbage = api.call("GET", "/user", bearer: "garbage")
        #expect(garbage.status == 403)
        #expect(garbage.json["msg"] == "invalid JWT: unable to parse or verify signature, token is malformed: token contains an invalid number of segments")
        // The anon key has no sub.
        let anon = api.call("GET", "/user", bearer: api.project.configuration.apiKeys.anon)
        #expect(anon.status == 403)
        #expect(anon.json["msg"] == "invalid claim: missing sub claim")
    }

    @Test func expiredTokenAndForeignSignature() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let token = api.signUp("x@example.com")["access_token"]!.stringValue!
        #expect(api.call("GET", "/user", bearer: token).status == 200)
        clock.advance(seconds: 3601)
        let expired = api.call("GET", "/user", bearer: token)
        #expect(expired.status == 403)
        #expect(expired.json["msg"] == "invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired")
        let other = try makeAPI(clock: clock) { $0.jwt.secret = "another-secret-another-secret-another-secret" }
        let forged = other.call("GET", "/user", bearer: api.signUp("y@example.com")["access_token"]!.stringValue!)
        #expect(forged.json["msg"] == "invalid JWT: unable to parse or verify signature, token signature is invalid: signature is invalid")
    }

    /// Requests verify with the keys of the configuration they arrived under: a secret changed
    /// at runtime refuses tokens signed with the old one from the next request on.
    @Test func liveSecretChangeAppliesToTheNextRequest() throws {
        let api = try makeAPI()
        let token = api.signUp("live@example.com")["access_token"]!.stringValue!
        #expect(api.call("GET", "/user", bearer: token).status == 200)
        api.project.settings.update { $0.jwt.secret = "another-secret-another-secret-another-secret" }
        let refused = api.call("GET", "/user", bearer: token)
        #expect(refused.status == 403)
        #expect(refused.json["msg"] == "invalid JWT: unable to parse or verify signature, token signature is invalid: signature is invalid")
    }

    @Test func deletedUserAndSession() throws {
        let api = try makeAPI()
        let session = api.signUp("d@example.com")
        let token = session["access_token"]!.stringValue!
        try api.project.database.write { try $0.execute(portable: "DELETE FROM sessions") }
        let noSession = api.call("GET", "/user", bearer: token)
        #expect(noSession.status == 403)
        #expect(errorCode(noSession) == "session_not_found")
        try api.project.database.write { try $0.execute(portable: "DELETE FROM users") }
        let noUser = api.call("GET", "/user", bearer: token)
        #expect(errorCode(noUser) == "user_not_found")
        #expect(noUser.json["msg"] == "User from sub claim in JWT does not exist")
    }

    @Test func keysWithKid() throws {
        let api = try makeAPI {
            $0.jwt.keys = [try! JWK([
                "kty": "oct", "kid": "key-1", "key_ops": ["sign", "verify"],
                "k": .string(Base64URL.encode(Array("jwk-secret-jwk-secret-jwk-secret-00".utf8))),
            ])]
        }
        let token = api.signUp("k@example.com")["access_token"]!.stringValue!
        let header = String(decoding: (try? Base64URL.decode(token.split(separator: ".")[0])) ?? [], as: UTF8.self)
        #expect(header == #"{"alg":"HS256","kid":"key-1","typ":"JWT"}"#)
        #expect(api.call("GET", "/user", bearer: token).status == 200)
    }
}

@Suite struct UserEndpointTests {
    @Test func getUserAndAudience() throws {
        let api = try makeAPI()
        let session = api.signUp("g@example.com", data: ["a": 1])
        let token = session["access_token"]!.stringValue!
        let response = api.call("GET", "/user", bearer: token)
        #expect(response.status == 200)
        #expect(response.json["email"] == "g@example.com")
        #expect(response.json["identities"]?.arrayValue?.count == 1)
        let mismatch = api.call("GET", "/user", bearer: token, headers: ["X-JWT-AUD": "other"])
        #expect(mismatch.status == 400)
        #expect(mismatch.json["msg"] == "Token audience doesn't match request audience")
    }

    @Test func metadataMergeAndAdminOnlyAppMetadata() throws {
        let api = try makeAPI()
        let token = api.signUp("m@example.com", data: ["keep": "yes", "drop": "me"])["access_token"]!.stringValue!
        let updated = api.call("PUT", "/user", ["data": ["drop": nil, "new": ["nested": true]]], bearer: token)
        #expect(updated.status == 200)
        let meta = updated.json["user_metadata"]!
        #expect(meta["keep"] == "yes")
        #expect(meta["drop"] == nil)
        #expect(meta["new"] == ["nested": true])
        let refused = api.call("PUT", "/user", ["app_metadata": ["plan": "pro"]], bearer: token)
        #expect(refused.status == 403)
        #expect(refused.json["msg"] == "Updating app_metadata requires admin privileges")
    }

    @Test func passwordChange() throws {
        let api = try makeAPI()
        let session = api.signUp("pw@example.com", "password1")
        let token = session["access_token"]!.stringValue!
        let other = api.signIn("pw@example.com", "password1").json
        let same = api.call("PUT", "/user", ["password": "password1"], bearer: token)
        #expect(same.status == 422)
        #expect(errorCode(same) == "same_password")
        let weak = api.call("PUT", "/user", ["password": ""], bearer: token)
        #expect(errorCode(weak) == "weak_password")
        let changed = api.call("PUT", "/user", ["password": "password2"], bearer: token)
        #expect(changed.status == 200)
        #expect(api.signIn("pw@example.com", "password2").status == 200)
        #expect(errorCode(api.signIn("pw@example.com", "password1")) == "invalid_credentials")
        // Other sessions end; the current one stays.
        #expect(errorCode(api.call("GET", "/user", bearer: other["access_token"]!.stringValue!)) == "session_not_found")
        #expect(api.call("GET", "/user", bearer: token).status == 200)
    }

    @Test func reauthenticationAndCurrentPasswordRules() throws {
        let api = try makeAPI { $0.security.updatePasswordRequireReauthentication = true }
        let token = api.signUp("ra@example.com")["access_token"]!.stringValue!
        // A fresh session (under 24 h) needs no nonce, as the real server.
        #expect(api.call("PUT", "/user", ["password": "password2"], bearer: token).status == 200)

        let clock = ManualClock()
        let old = try makeAPI(clock: clock) { $0.security.updatePasswordRequireReauthentication = true }
        let oldToken = old.signUp("rb@example.com")["access_token"]!.stringValue!
        clock.advance(seconds: 3000)
        let refreshed = old.call("GET", "/user", bearer: oldToken)
        #expect(refreshed.status == 200)
        try old.project.database.write { try $0.moveBack("sessions", "created_at", seconds: 90_000) }
        let needed = old.call("PUT", "/user", ["password": "password2"], bearer: oldToken)
        #expect(needed.status == 400)
        #expect(errorCode(needed) == "reauthentication_needed")
        let invalid = old.call("PUT", "/user", ["password": "password2", "nonce": "123456"], bearer: oldToken)
        #expect(invalid.status == 422)
        #expect(errorCode(invalid) == "reauthentication_not_valid")
        // A nonce as /reauthenticate stores it (hash of email + code) is accepted.
        try old.project.database.write { conn in
            try conn.execute(portable: "UPDATE users SET reauthentication_token = ?, reauthentication_sent_at = ?",
                             .text(OneTimeTokens.tokenHash("rb@example.com", "654321")), conn.timestamp(clock.now().microseconds))
        }
        // A valid nonce is spent at once, even when a later check refuses the update (the same
        // password here): it cannot be used again.
        let same = old.call("PUT", "/user", ["password": "password1", "nonce": "654321"], bearer: oldToken)
        #expect(errorCode(same) == "same_password")
        #expect(errorCode(old.call("PUT", "/user", ["password": "password2", "nonce": "654321"], bearer: oldToken))
                == "reauthentication_not_valid")
        try old.project.database.write { conn in
            try conn.execute(portable: "UPDATE users SET reauthentication_token = ?, reauthentication_sent_at = ?",
                             .text(OneTimeTokens.tokenHash("rb@example.com", "111222")), conn.timestamp(clock.now().microseconds))
        }
        #expect(old.call("PUT", "/user", ["password": "password2", "nonce": "111222"], bearer: oldToken).status == 200)

        let current = try makeAPI { $0.security.updatePasswordRequireCurrentPassword = true }
        let t = current.signUp("cp@example.com", "password1")["access_token"]!.stringValue!
        #expect(errorCode(current.call("PUT", "/user", ["password": "password3"], bearer: t)) == "current_password_required")
        #expect(errorCode(current.call("PUT", "/user", ["password": "password3", "current_password": "nope"], bearer: t)) == "current_password_invalid")
        #expect(current.call("PUT", "/user", ["password": "password3", "current_password": "password1"], bearer: t).status == 200)
        // A session a one-time code signed in (amr otp; `Session.IsRecovery`) needs no current password.
        #expect(current.call("POST", "/otp", ["email": "cp@example.com"]).status == 200)
        let code = try #require(try current.latestMessage(to: "cp@example.com")?.otp)
        let otp = current.verify(["type": "email", "email": "cp@example.com", "token": .string(code)]).json
        #expect(otp["access_token"].flatMap { claims(of: $0.stringValue ?? "")["amr"]?[0]?["method"] } == "otp")
        #expect(current.call("PUT", "/user", ["password": "password4"], bearer: otp["access_token"]?.stringValue).status == 200)
    }

    @Test func emailChangeIsPendingAndDuplicatesRefused() throws {
        let api = try makeAPI { $0.mailer.autoconfirm = false }
        try api.project.database.write { _ in }
        let confirmed = try makeAPI()
        let token = confirmed.signUp("old@example.com")["access_token"]!.stringValue!
        _ = confirmed.signUp("taken@example.com")
        let taken = confirmed.call("PUT", "/user", ["email": "Taken@example.com"], bearer: token)
        #expect(taken.status == 422)
        #expect(errorCode(taken) == "email_exists")
        let pending = confirmed.call("PUT", "/user", ["email": "new@example.com"], bearer: token)
        #expect(pending.status == 200)
        #expect(pending.json["email"] == "old@example.com")
        #expect(pending.json["new_email"] == "new@example.com")
        #expect(pending.json["email_change_sent_at"] != nil)
        let tokens = try confirmed.project.database.read {
            try $0.query(portable: "SELECT token_type FROM one_time_tokens").compactMap { $0.string("token_type") }.sorted()
        }
        #expect(tokens == ["email_change_token_current", "email_change_token_new"])
    }

    @Test func anonymousConversion() throws {
        let api = try makeAPI { $0.external.anonymousUsersEnabled = true }
        let token = api.call("POST", "/signup", [:]).json["access_token"]!.stringValue!
        let passwordOnly = api.call("PUT", "/user", ["password": "password9"], bearer: token)
        #expect(passwordOnly.status == 422)
        #expect(passwordOnly.json["msg"] == "Updating password of an anonymous user without an email or phone is not allowed")
        let converted = api.call("PUT", "/user", ["email": "real@example.com", "password": "password9"], bearer: token)
        #expect(converted.status == 200)
        #expect(converted.json["is_anonymous"] == false)
        #expect(converted.json["email"] == "real@example.com")
        #expect(converted.json["email_confirmed_at"] != nil)
        #expect(converted.json["identities"]?[0]?["provider"] == "email")
        #expect(api.signIn("real@example.com", "password9").status == 200)
    }

    @Test func phoneChangeWithSMSAutoconfirm() throws {
        let api = try makeAPI()
        let token = api.signUp("ph@example.com")["access_token"]!.stringValue!
        let response = api.call("PUT", "/user", ["phone": "+44 7700 900123"], bearer: token)
        #expect(response.status == 200)
        #expect(response.json["phone"] == "447700900123")
        #expect(response.json["phone_confirmed_at"] != nil)
    }
}

@Suite struct LogoutTests {
    @Test func scopes() throws {
        let api = try makeAPI()
        let a = api.signUp("lo@example.com")
        let b = api.signIn("lo@example.com").json
        let c = api.signIn("lo@example.com").json
        func alive(_ s: JSON) -> Bool { api.call("GET", "/user", bearer: s["access_token"]!.stringValue!).status == 200 }

        let bad = api.call("POST", "/logout?scope=everything", bearer: a["access_token"]!.stringValue!)
        #expect(bad.status == 400)
        #expect(bad.json["msg"] == #"Unsupported logout scope "everything""#)

        let others = api.call("POST", "/logout?scope=others", bearer: a["access_token"]!.stringValue!)
        #expect(others.status == 204)
        #expect(others.body.isEmpty)
        #expect(alive(a) && !alive(b) && !alive(c))
        #expect(errorCode(api.refresh(b["refresh_token"]!.stringValue!)) == "refresh_token_not_found")

        let d = api.signIn("lo@example.com").json
        #expect(api.call("POST", "/logout?scope=local", bearer: a["access_token"]!.stringValue!).status == 204)
        #expect(!alive(a) && alive(d))

        let e = api.signIn("lo@example.com").json
        #expect(api.call("POST", "/logout", bearer: d["access_token"]!.stringValue!).status == 204)
        #expect(!alive(d) && !alive(e))
    }
}

@Suite struct SettingsTests {
    @Test func reflectsConfiguration() throws {
        let api = try makeAPI {
            $0.external.anonymousUsersEnabled = true
            $0.external.providers["google"] = { var p = OAuthProviderSettings(); p.enabled = true; return p }()
            $0.mailer.autoconfirm = false
        }
        let response = api.call("GET", "/settings")
        #expect(response.status == 200)
        let body = response.json
        #expect(body.objectValue?.keys == ["external", "disable_signup", "mailer_autoconfirm", "phone_autoconfirm", "sms_provider",
                                           "saml_enabled", "saml_private_key_next_configured", "passkeys_enabled"])
        let external = body["external"]!.objectValue!
        #expect(external.keys.first == "anonymous_users")
        #expect(external.keys.suffix(3) == ["email", "phone", "zoom"])
        #expect(external.count == 26)
        #expect(external["google"] == true)
        #expect(external["apple"] == false)
        #expect(external["anonymous_users"] == true)
        #expect(body["mailer_autoconfirm"] == false)
        #expect(body["phone_autoconfirm"] == true)
    }
}
