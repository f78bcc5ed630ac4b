import AuthHTTP
import AuthJSON
import Dispatch
import Synchronization
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: reference §5.6, §7.5-7.7 (internal/api/token.go, internal/tokens/service.go).
@Suite struct PasswordGrantTests {
    @Test func signInReturnsSessionWithNullWeakPassword() throws {
        let api = try makeAPI()
        _ = api.signUp("p@example.com", "password1")
        let response = api.signIn("P@Example.com", "password1")
        #expect(response.status == 200)
        let keys = response.json.objectValue!.keys
        #expect(keys == ["access_token", "token_type", "expires_in", "expires_at", "refresh_token", "user", "weak_password"])
        #expect(response.json["weak_password"] == .null)
        #expect(response.text.contains(#""weak_password":null"#))
        #expect(response.json["user"]?["identities"]?.arrayValue?.count == 1)
    }

    @Test func weakPasswordReportedOnSignInUnderStricterPolicy() throws {
        let api = try makeAPI()
        _ = api.signUp("w@example.com", "abcdef")
        // The policy tightens at runtime: the stored password is now weak, sign-in still works.
        api.project.configuration.password.minLength = 8
        let response = api.signIn("w@example.com", "abcdef")
        #expect(response.status == 200)
        #expect(response.json["weak_password"] == ["message": "Password should be at least 8 characters.", "reasons": ["length"]])
    }

    @Test func errorOrder() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        _ = api.signUp("e@example.com", "password1")
        #expect(errorCode(api.signIn("nobody@example.com")) == "invalid_credentials")
        #expect(api.signIn("nobody@example.com").json["msg"] == "Invalid login credentials")
        #expect(errorCode(api.signIn("e@example.com", "wrong")) == "invalid_credentials")
        // Banned is checked before the password.
        try api.project.database.write { try $0.execute(portable: "UPDATE users SET banned_until = ?", $0.timestamp(clock.now().microseconds + 60_000_000)) }
        let banned = api.signIn("e@example.com", "wrong")
        #expect(banned.status == 400)
        #expect(errorCode(banned) == "user_banned")
        clock.advance(seconds: 61)
        #expect(api.signIn("e@example.com").status == 200)
    }

    @Test func parameterErrors() throws {
        let api = try makeAPI()
        let both = api.call("POST", "/token?grant_type=password", ["email": "a@b.co", "phone": "123", "password": "x"])
        #expect(both.json["msg"] == "Only an email address or phone number should be provided on login.")
        let neither = api.call("POST", "/token?grant_type=password", ["password": "x"])
        #expect(neither.json["msg"] == "missing email or phone")
        let phoneOff = api.call("POST", "/token?grant_type=password", ["phone": "123", "password": "x"])
        #expect(phoneOff.status == 422)
        #expect(errorCode(phoneOff) == "phone_provider_disabled")
        for target in ["/token", "/token?grant_type=magic", "/token?grant_type="] {
            let unsupported = api.call("POST", target, [:])
            #expect(unsupported.status == 400)
            #expect(unsupported.text == #"{"code":400,"error_code":"invalid_credentials","msg":"unsupported_grant_type"}"#)
        }
    }

    /// `r.FormValue("grant_type")`: a form body names the grant too (before the query), and
    /// `ParseForm` has then consumed it, so the grant's JSON parameters find an empty body.
    @Test func aFormBodyNamesTheGrantAndIsConsumed() throws {
        let api = try makeAPI()
        _ = api.signUp("form@example.com")
        let form: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"]
        for target in ["/token", "/token?grant_type=magic"] {
            let answer = api.call("POST", target, headers: form, raw: "grant_type=password&email=form%40example.com&password=password1")
            #expect(answer.status == 400)
            #expect(answer.json["msg"] == "Could not parse request body as JSON: unexpected end of JSON input", "\(target)")
        }
        // A JSON body is not a form: the query names the grant.
        #expect(api.call("POST", "/token", ["grant_type": "password"]).json["msg"] == "unsupported_grant_type")
        // `mime.ParseMediaType`: case-insensitive, white space and parameters allowed.
        for (contentType, isForm) in [("Application/X-WWW-Form-URLEncoded", true), (" application/x-www-form-urlencoded ; charset=utf-8", true),
                                      ("application/x-www-form-urlencodedx", false), ("text/plain", false)] {
            let answer = api.call("POST", "/token", headers: ["Content-Type": contentType], raw: "grant_type=password")
            #expect((answer.json["msg"] == "unsupported_grant_type") != isForm, "\(contentType)")
        }
    }

    /// GoTrue's request logger calls `ParseForm` (through `GetReferrer`) on every route but
    /// `/health`, unless a `redirect_to` header answers first: a JSON document sent with the
    /// form content type (`curl -d` without `-H`) reaches no handler.
    @Test func theRequestLoggerConsumesEveryFormBody() throws {
        let api = try makeAPI()
        let form: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded"]
        let signup = #"{"email": "formed@example.com", "password": "password1"}"#
        let refused = api.call("POST", "/signup", headers: form, raw: signup)
        #expect(refused.status == 400)
        #expect(errorCode(refused) == "bad_json")
        #expect(refused.json["msg"] == "Could not parse request body as JSON: unexpected end of JSON input")
        let behindGateway = api.call("POST", "/auth/v1/otp", headers: form, raw: #"{"email": "formed@example.com"}"#)
        #expect(behindGateway.json["msg"] == "Could not parse request body as JSON: unexpected end of JSON input")
        // `/magiclink` decodes from the stream: its empty body is EOF.
        let magic = api.call("POST", "/magiclink", headers: form, raw: #"{"email": "formed@example.com"}"#)
        #expect(magic.json["msg"] == "Could not read verification params: EOF")
        // Nothing was created.
        #expect(try api.project.database.read { try $0.user(email: "formed@example.com", aud: "authenticated") } == nil)
        // With a `redirect_to` header, getRedirectTo never parses the form: the body is read.
        var withHeader = form
        withHeader["redirect_to"] = "http://127.0.0.1:3000"
        #expect(api.call("POST", "/signup", headers: withHeader, raw: signup).status == 200)
        // `ParseForm` reads the bodies of POST, PUT and PATCH only: a DELETE keeps its body,
        // whatever its type, and the admin delete reads it.
        let id = try #require(api.createUser(["email": "gone@example.com"])["id"]?.stringValue)
        let delete = api.call("DELETE", "/admin/users/\(id)", bearer: api.serviceRole, headers: form, raw: #"{"should_soft_delete": true}"#)
        #expect(delete.status == 200)
        #expect(try api.project.database.read { try $0.user(id: id) }?.deletedAt != nil)
    }
}

@Suite struct RefreshGrantTests {
    @Test func rotationKeepsSession() throws {
        let api = try makeAPI()
        let session = api.signUp("r@example.com")
        let first = session["refresh_token"]!.stringValue!
        let response = api.refresh(first)
        #expect(response.status == 200)
        let second = response.json["refresh_token"]!.stringValue!
        #expect(second != first)
        let a = claims(of: session["access_token"]!.stringValue!)
        let b = claims(of: response.json["access_token"]!.stringValue!)
        #expect(a["session_id"] == b["session_id"])
        #expect(b["amr"] == a["amr"], "refreshing adds no amr entry")
        #expect(response.json.objectValue?.keys.contains("weak_password") == false)
    }

    @Test func malformedAndUnknownTokens() throws {
        let api = try makeAPI()
        for bad in ["", "short", "ABCDEFGHIJKL", "abcdefghijk!", String(repeating: "a", count: 40)] {
            let response = api.refresh(bad)
            #expect(response.status == 400)
            #expect(response.json["msg"] == "Refresh token is not valid", "\(bad)")
        }
        let unknown = api.refresh("abcdefghijkl")
        #expect(errorCode(unknown) == "refresh_token_not_found")
        #expect(unknown.json["msg"] == "Invalid Refresh Token: Refresh Token Not Found")
    }

    @Test func lostResponseReturnsSameChild() throws {
        let api = try makeAPI { $0.security.refreshTokenReuseInterval = 0 }
        let parent = api.signUp("l@example.com")["refresh_token"]!.stringValue!
        let child = api.refresh(parent).json["refresh_token"]!.stringValue!
        let again = api.refresh(parent)
        #expect(again.status == 200)
        #expect(again.json["refresh_token"]?.stringValue == child)
    }

    @Test func reuseOutsideIntervalRevokesFamily() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.security.refreshTokenReuseInterval = 10 }
        let t0 = api.signUp("u@example.com")["refresh_token"]!.stringValue!
        let t1 = api.refresh(t0).json["refresh_token"]!.stringValue!
        let t2 = api.refresh(t1).json["refresh_token"]!.stringValue!
        // t0 is two generations back: within the interval it still yields a fresh child.
        clock.advance(seconds: 5)
        let withinInterval = api.refresh(t0)
        #expect(withinInterval.status == 200)
        // t1 is not the parent of the newest token and was revoked long ago: reuse.
        clock.advance(seconds: 30)
        let reused = api.refresh(t1)
        #expect(reused.status == 400)
        #expect(errorCode(reused) == "refresh_token_already_used")
        #expect(reused.json["msg"] == "Invalid Refresh Token: Already Used")
        // The family revocation was committed despite the error: the newest tokens are dead too
        // once the reuse interval (restarted by the revocation, as GoTrue stamps updated_at)
        // has passed.
        let newest = withinInterval.json["refresh_token"]!.stringValue!
        clock.advance(seconds: 11)
        for token in [t2, newest] {
            #expect(errorCode(api.refresh(token)) == "refresh_token_already_used")
        }
    }

    /// Each swap rewrites the presented token's `revoked` column, and pop stamps its
    /// `updated_at`: a token reused within the interval opens the interval again.
    @Test func aSwapWithinTheIntervalExtendsIt() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.security.refreshTokenReuseInterval = 2 }
        let x = api.signUp("window@example.com")["refresh_token"]!.stringValue!
        let c1 = api.refresh(x).json["refresh_token"]!.stringValue!
        _ = api.refresh(c1)
        clock.advance(seconds: 1.5)
        let c3 = api.refresh(x).json["refresh_token"]!.stringValue!
        #expect(api.refresh(c3).status == 200)
        // 3 s after the first swap, 1.5 s after the last one.
        clock.advance(seconds: 1.5)
        #expect(api.refresh(x).status == 200)
    }

    /// `createRefreshToken` ends with `UpdateLastSignInAt`, which writes the column as it was
    /// and pop's `updated_at`: a refresh moves the user's `updated_at`, not `last_sign_in_at`.
    @Test func aRefreshStampsTheUsersUpdatedAt() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let session = api.signUp("stamp@example.com")
        let signedIn = session["user"]!
        clock.advance(seconds: 30)
        let refreshed = api.refresh(session["refresh_token"]!.stringValue!)
        #expect(refreshed.status == 200)
        #expect(refreshed.json["user"]?["updated_at"] == .string(clock.now().rfc3339))
        #expect(refreshed.json["user"]?["last_sign_in_at"] == signedIn["last_sign_in_at"])
        let stored = api.call("GET", "/user", bearer: refreshed.json["access_token"]?.stringValue).json
        #expect(stored["updated_at"] == .string(clock.now().rfc3339))
        #expect(stored["last_sign_in_at"] == signedIn["last_sign_in_at"])
    }

    /// The session's `ip` is `utilities.GetIPAddress`: the forwarding header's address when
    /// there is one, at sign-in and at each refresh.
    @Test func theSessionRecordsTheForwardedAddress() throws {
        let api = try makeAPI()
        _ = api.signUp("ip@example.com")
        let signedIn = api.signIn("ip@example.com", headers: ["X-Forwarded-For": "203.0.113.7, 10.0.0.1"])
        let sessionID = claims(of: signedIn.json["access_token"]!.stringValue!)["session_id"]!.stringValue!
        func storedIP() throws -> String? { try api.project.database.read { try $0.session(id: sessionID) }?.ip }
        #expect(try storedIP() == "203.0.113.7")
        let refreshed = api.call("POST", "/token?grant_type=refresh_token",
                                 ["refresh_token": signedIn.json["refresh_token"]!], headers: ["X-Forwarded-For": "::ffff:198.51.100.2"])
        #expect(refreshed.status == 200)
        #expect(try storedIP() == "198.51.100.2")
    }

    @Test func rotationDisabledDoesNotRevokeFamily() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) {
            $0.security.refreshTokenReuseInterval = 0
            $0.security.refreshTokenRotationEnabled = false
        }
        let t0 = api.signUp("n@example.com")["refresh_token"]!.stringValue!
        let t1 = api.refresh(t0).json["refresh_token"]!.stringValue!
        let t2 = api.refresh(t1).json["refresh_token"]!.stringValue!
        clock.advance(seconds: 1)
        #expect(errorCode(api.refresh(t0)) == "refresh_token_already_used")
        #expect(api.refresh(t2).status == 200)
    }

    @Test func concurrentRefreshesYieldOneChild() throws {
        let api = try makeAPI { $0.security.refreshTokenReuseInterval = 0 }
        let parent = api.signUp("c@example.com")["refresh_token"]!.stringValue!
        let results = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let response = api.refresh(parent)
            let token = response.status == 200 ? response.json["refresh_token"]?.stringValue ?? "?" : "error \(response.status)"
            results.withLock { $0.append(token) }
        }
        let tokens = results.withLock { $0 }
        #expect(tokens.count == 8)
        #expect(Set(tokens).count == 1, "every concurrent refresh of one token gets the same child: \(tokens)")
        let live = try api.project.database.read { try $0.scalar(portable: "SELECT count(*) FROM refresh_tokens WHERE revoked = false") }
        #expect(live == 1)
    }

    @Test func sessionTimeboxAndInactivity() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.sessions.timeboxSeconds = 3600 }
        var token = api.signUp("t@example.com")["refresh_token"]!.stringValue!
        clock.advance(seconds: 1800)
        token = api.refresh(token).json["refresh_token"]!.stringValue!
        clock.advance(seconds: 1801)
        let expired = api.refresh(token)
        #expect(errorCode(expired) == "session_expired")
        #expect(expired.json["msg"] == "Invalid Refresh Token: Session Expired")
        // Found user and session name themselves on the refusal, as the real server's writer has them.
        #expect(expired.headers["sb-auth-user-id"] != nil && expired.headers["sb-auth-session-id"] != nil)

        let idle = try makeAPI(clock: clock) { $0.sessions.inactivityTimeoutSeconds = 600 }
        var idleToken = idle.signUp("i@example.com")["refresh_token"]!.stringValue!
        clock.advance(seconds: 500)
        idleToken = idle.refresh(idleToken).json["refresh_token"]!.stringValue!
        clock.advance(seconds: 500)
        idleToken = idle.refresh(idleToken).json["refresh_token"]!.stringValue!
        clock.advance(seconds: 601)
        #expect(idle.refresh(idleToken).json["msg"] == "Invalid Refresh Token: Session Expired (Inactivity)")
    }

    @Test func singleSessionPerUser() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.sessions.singlePerUser = true }
        let older = api.signUp("s@example.com")["refresh_token"]!.stringValue!
        clock.advance(seconds: 1)
        let newer = api.signIn("s@example.com").json["refresh_token"]!.stringValue!
        clock.advance(seconds: 1)
        #expect(api.refresh(newer).status == 200)
        let revoked = api.refresh(older)
        #expect(revoked.json["msg"] == "Invalid Refresh Token: Session Expired (Revoked by Newer Login)")
    }

    @Test func bannedUserCannotRefresh() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let session = api.signUp("b@example.com")
        let token = session["refresh_token"]!.stringValue!
        try api.project.database.write { try $0.execute(portable: "UPDATE users SET banned_until = ?", $0.timestamp(clock.now().microseconds + 1_000_000_000)) }
        let response = api.refresh(token)
        #expect(errorCode(response) == "user_banned")
        #expect(response.json["msg"] == "Invalid Refresh Token: User Banned")
        // The user was found before the ban check: its id is on the answer, no session's yet.
        #expect(response.headers["sb-auth-user-id"] == session["user"]?["id"]?.stringValue)
        #expect(response.headers["sb-auth-session-id"] == nil)
    }
}
