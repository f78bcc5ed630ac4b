import AuthHTTP
import AuthJSON
import AuthJWT
import EmulatorTools
import GoTrue
import Testing
@testable import AuthScenarios

@Suite("Effects: GoTrue errors, raw responses, consequences, stored state")
struct EffectTests {
    @Test func errorByCodeIsRenderedAsGoTrueRendersIt() throws {
        let h = try Harness()
        try h.load(#"{"name": "e", "rules": [{"match": {"op": "token.password"}, "then": {"error": "over_request_rate_limit", "retry_after": 30}}]}"#)
        let initial = h.signIn("a@example.com")
        #expect(initial.status == 429)
        #expect(initial.headers["x-sb-error-code"] == "over_request_rate_limit")
        #expect(initial.headers["Retry-After"] == "30")
        #expect(initial.json == ["code": 429, "error_code": "over_request_rate_limit", "msg": "Request rate limit reached"])

        let versioned = h.signIn("a@example.com", headers: ["X-Supabase-Api-Version": "2024-01-01"])
        #expect(versioned.status == 429)
        #expect(versioned.headers["X-Supabase-Api-Version"] == "2024-01-01")
        #expect(versioned.json == ["code": "over_request_rate_limit", "message": "Request rate limit reached"])
    }

    /// The statuses and messages of reference §16, per route where they differ.
    @Test(arguments: [
        ("invalid_credentials", "token.password", 400, "Invalid login credentials"),
        ("email_not_confirmed", "token.password", 400, "Email not confirmed"),
        ("refresh_token_already_used", "token.refresh_token", 400, "Invalid Refresh Token: Already Used"),
        ("session_expired", "token.refresh_token", 400, "Invalid Refresh Token: Session Expired"),
        ("session_not_found", "token.refresh_token", 400, "Invalid Refresh Token: No Valid Session Found"),
        ("session_not_found", "user.get", 403, "Session from session_id claim in JWT does not exist"),
        ("user_banned", "token.password", 400, "User is banned"),
        ("user_already_exists", "signup", 422, "User already registered"),
        ("over_email_send_rate_limit", "otp", 429, "email rate limit exceeded"),
        ("request_timeout", "token.refresh_token", 504, "Processing this request timed out, please retry after a moment."),
        ("signup_disabled", "signup", 422, "Signups not allowed for this instance"),
    ])
    func catalogueDefaults(code: String, operation: String, status: Int, message: String) {
        let error = ErrorCatalog.error(ErrorCode(code), status: nil, message: nil, operation: operation)
        #expect(error.status == status)
        #expect(error.message == message)
        #expect(error.code?.rawValue == code)
    }

    @Test func unexpectedFailureAndWeakPasswordUseTheirOwnShapes() throws {
        let h = try Harness()
        try h.load("""
            {"name": "e", "rules": [
              {"match": {"op": "health"}, "then": {"error": "unexpected_failure"}},
              {"match": {"op": "signup"}, "then": {"error": "weak_password", "message": "Password should be at least 8 characters."}},
              {"match": {"op": "settings"}, "then": {"error": "conflict", "status": 503, "message": "busy"}}
            ]}
            """)
        let failure = h.call("GET", "/health")
        #expect(failure.status == 500)
        #expect(failure.headers["x-sb-error-code"] == nil)
        #expect(failure.json["msg"] == JSON.string(AuthError.unexpectedFailureMessage))
        let weak = h.signUp("w@example.com")
        #expect(weak.status == 422)
        #expect(weak.json["weak_password"] == ["reasons": ["length"]])
        #expect(weak.json["msg"] == "Password should be at least 8 characters.")
        let overridden = h.call("GET", "/settings")
        #expect(overridden.status == 503)
        #expect(overridden.json["msg"] == "busy")
        #expect(overridden.json["error_id"] != nil)
    }

    @Test func rawResponsesAndMalformedJSON() throws {
        let h = try Harness()
        try h.load("""
            {"name": "raw", "rules": [
              {"match": {"op": "health"}, "when": {"times": 1}, "then": {"status": 502, "headers": {"Content-Type": "text/html"}, "body": "<h1>502 Bad Gateway</h1>"}},
              {"match": {"op": "settings"}, "when": {"times": 1}, "then": {"body": {"ok": true}, "headers": {"X-From": "proxy"}}},
              {"match": {"op": "token.password"}, "then": {"malformed_json": true}},
              {"match": {"op": "signup"}, "then": {"error": "invalid_credentials", "malformed_json": true}}
            ]}
            """)
        let html = h.call("GET", "/health")
        #expect(html.status == 502)
        #expect(html.headers["Content-Type"] == "text/html")
        #expect(html.text == "<h1>502 Bad Gateway</h1>")
        let json = h.call("GET", "/settings")
        #expect(json.status == 200 && json.json == ["ok": true] && json.headers["X-From"] == "proxy")

        let broken = h.signIn("a@example.com")
        #expect(broken.status == 200)
        #expect(broken.headers["Content-Type"] == "application/json")
        #expect(!broken.body.isEmpty)
        #expect((try? JSON(parsing: broken.body)) == nil)
        let brokenError = h.signUp("b@example.com")
        #expect(brokenError.status == 400 && brokenError.headers["x-sb-error-code"] == "invalid_credentials")
        #expect((try? JSON(parsing: brokenError.body)) == nil)
    }

    /// A fault without `passthrough_then` never runs the handler: nothing is stored.
    @Test func faultsLeaveStoredStateUntouched() throws {
        let h = try Harness()
        try h.load("""
            {"name": "f", "rules": [{"match": {"op": "signup"}, "when": {"times": 4}, "then": {"error": "unexpected_failure"}},
                                    {"match": {"op": "signup"}, "when": {"times": 3}, "then": {"reset": true}}]}
            """)
        #expect(h.signUp("new@example.com").status == 500)
        #expect(h.signUp("new@example.com").status == 500)
        #expect(h.signUp("new@example.com").status == 500)
        #expect(h.signUp("new@example.com").status == 500)
        #expect(h.signUp("new@example.com").directive.reset)
        try h.load(#"{"name": "f", "rules": [{"match": {"op": "signup"}, "then": {"hang": true}}]}"#)
        #expect(h.signUp("new@example.com").directive.stall)
        try h.load(#"{"name": "f", "rules": [{"match": {"op": "signup"}, "then": {"close_after_bytes": 20}}]}"#)
        #expect(h.signUp("new@example.com").directive.closeAfterBytes == 20)
        h.engine.removeAll()
        // The first real sign-up: a new user with a session (not 422 user_already_exists).
        let real = h.signUp("new@example.com")
        #expect(real.status == 200)
        #expect(real.json["access_token"]?.stringValue != nil)
    }

    @Test func passthroughThenCommitsAndBreaksTheTransport() throws {
        let h = try Harness()
        try h.load(#"{"name": "p", "rules": [{"match": {"op": "signup"}, "when": {"times": 1}, "then": {"passthrough_then": "reset"}}]}"#)
        let first = h.signUp("done@example.com")
        #expect(first.status == 200)           // the real handler's answer...
        #expect(first.directive.reset)         // ...that never reaches the client
        let again = h.signUp("done@example.com")
        #expect(again.status == 422)
        #expect(again.json["error_code"] == "user_already_exists")
    }

    @Test func delayAndDripPassTheRealResponseThrough() throws {
        let h = try Harness()
        try h.load(#"{"name": "slow", "seed": 1, "rules": [{"match": {"op": "signup"}, "then": {"delay_ms": {"min": 100, "max": 200}, "drip": {"chunks": 3, "duration_ms": 50}}}]}"#)
        let response = h.signUp("slow@example.com")
        #expect(response.status == 200)
        #expect(response.json["access_token"]?.stringValue != nil)
        let delay = try #require(response.directive.delay)
        #expect(delay >= .milliseconds(100) && delay <= .milliseconds(200))
        #expect(response.directive.drip == ResponseDirective.Drip(chunks: 3, duration: .milliseconds(50)))
    }

    @Test func refreshTokenReuseConsequenceRevokesTheFamily() throws {
        func run(consequence: Bool) throws -> HTTPResponse {
            let h = try Harness()
            let session = h.signUp("r@example.com").json
            let token = try #require(session["refresh_token"]?.stringValue)
            try h.load(#"{"name": "reuse", "rules": [{"match": {"op": "token.refresh_token"}, "when": {"times": 1}, "then": {"error": "refresh_token_already_used", "consequence": \#(consequence)}}]}"#)
            let refused = h.refresh(token)
            #expect(refused.status == 400)
            #expect(refused.json["error_code"] == "refresh_token_already_used")
            h.clock.advance(seconds: 11)  // past the 10 s reuse interval
            return h.refresh(token)
        }
        let revoked = try run(consequence: true)
        #expect(revoked.status == 400)
        #expect(revoked.json["error_code"] == "refresh_token_already_used")
        #expect(try run(consequence: false).status == 200)
    }

    @Test func sessionExpiredConsequenceEndsTheSession() throws {
        let h = try Harness()
        let session = h.signUp("s@example.com").json
        let token = try #require(session["refresh_token"]?.stringValue)
        let access = try #require(session["access_token"]?.stringValue)
        try h.load(#"{"name": "expire", "rules": [{"match": {"op": "token.refresh_token"}, "when": {"times": 1}, "then": {"error": "session_expired", "consequence": true}}]}"#)
        let refused = h.refresh(token)
        #expect(refused.status == 400)
        #expect(refused.json["msg"] == "Invalid Refresh Token: Session Expired")
        // The session is gone: the access token's session no longer exists, the token neither.
        let user = h.call("GET", "/user", bearer: access)
        #expect(user.status == 403)
        #expect(user.json["error_code"] == "session_not_found")
        #expect(h.refresh(token).json["error_code"] == "refresh_token_not_found")
    }

    @Test func sessionNotFoundConsequenceOnAnAccessToken() throws {
        let h = try Harness()
        let session = h.signUp("t@example.com").json
        let access = try #require(session["access_token"]?.stringValue)
        try h.load(#"{"name": "gone", "rules": [{"match": {"op": "user.get"}, "when": {"times": 1}, "then": {"error": "session_not_found", "consequence": true}}]}"#)
        #expect(h.call("GET", "/user", bearer: access).json["msg"] == "Session from session_id claim in JWT does not exist")
        let after = h.call("GET", "/user", bearer: access)
        #expect(after.status == 403 && after.json["error_code"] == "session_not_found")
    }
}
