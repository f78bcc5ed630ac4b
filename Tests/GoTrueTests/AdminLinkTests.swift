import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: reference §12.7 and §10.1 (adminGenerateLink in internal/api/mail.go,
// GetEmailActionLink in the template mailer).

extension GoTrueAPI {
    func generateLink(_ body: JSONObject, headers: HTTPHeaders = [:]) -> HTTPResponse {
        admin("POST", "/admin/generate_link", .object(body), headers: headers)
    }

    /// The one_time_tokens rows of a user as (type, hash, relates_to).
    func oneTimeTokens(_ userID: String) throws -> [(String, String, String)] {
        try project.database.read { conn in
            try conn.query(portable: "SELECT token_type, token_hash, relates_to FROM one_time_tokens WHERE user_id = ?",
                           .text(userID))
                .map { ($0.string("token_type") ?? "", $0.string("token_hash") ?? "", $0.string("relates_to") ?? "") }
                // By name: Postgres orders GoTrue's `one_time_token_type` enum by its labels' order.
                .sorted { $0.0 < $1.0 }
        }
    }

    func storedUser(_ email: String) throws -> UserRecord? {
        try project.database.read { try $0.user(email: email, aud: "authenticated") }
    }
}

@Suite struct AdminGenerateLinkTests {
    @Test func signupCreatesTheUserAndStoresTheToken() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let missing = api.generateLink(["type": "signup", "email": "new@example.com"])
        #expect(missing.status == 400)
        #expect(missing.json["msg"] == "Signup requires a valid password")
        #expect(errorCode(api.generateLink(["type": "signup", "email": "new@example.com", "password": "123"])) == "weak_password")

        let response = api.generateLink(["type": "signup", "email": "New@Example.com", "password": "secret-pw",
                                         "data": ["plan": "trial"]])
        #expect(response.status == 200)
        let body = response.json
        let otp = try #require(body["email_otp"]?.stringValue)
        #expect(otp.count == 6 && otp.allSatisfy(\.isNumber))
        let hashed = Hex.encode(SHA224.hash(data: Array(("new@example.com" + otp).utf8)))
        #expect(body["hashed_token"] == .string(hashed))
        #expect(body["verification_type"] == "signup")
        #expect(body["redirect_to"] == "http://127.0.0.1:3000")
        #expect(body["action_link"] == .string("http://127.0.0.1:9999/auth/v1/verify?token=\(hashed)&type=signup&redirect_to=http://127.0.0.1:3000"))
        // The user's fields are flattened at the top level, before the link fields.
        #expect(body["email"] == "new@example.com")
        #expect(body["confirmation_sent_at"] == .string(clock.now().rfc3339))
        #expect(body["user_metadata"] == ["plan": "trial"])
        #expect(body["identities"]?.arrayValue?.count == 1)
        let keys = body.objectValue!.keys
        #expect(Array(keys.suffix(5)) == ["action_link", "email_otp", "hashed_token", "verification_type", "redirect_to"])
        #expect(keys.first == "id")

        let stored = try #require(try api.storedUser("new@example.com"))
        #expect(stored.confirmationToken == hashed)
        #expect(stored.emailConfirmedAt == nil)
        #expect(try api.oneTimeTokens(stored.id).map { $0.0 } == ["confirmation_token"])
        #expect(try api.oneTimeTokens(stored.id).first?.1 == hashed)
        #expect(try api.oneTimeTokens(stored.id).first?.2 == "new@example.com")

        // Again for the unconfirmed user: data merged, a fresh token replaces the old one.
        let again = api.generateLink(["type": "signup", "email": "new@example.com", "data": ["step": 2]]).json
        #expect(again["user_metadata"] == ["plan": "trial", "step": 2])
        #expect(try api.storedUser("new@example.com")?.confirmationToken == again["hashed_token"]?.stringValue)
        #expect(try api.oneTimeTokens(stored.id).count == 1)
        // A sign-up link is neither an invitation nor audited as one.
        #expect(again["invited_at"] == nil)
        #expect(!api.auditEntries().contains { $0["payload"]?["action"] == "user_invited" })

        // Once confirmed, the address is taken.
        _ = api.signUp("done@example.com")
        let taken = api.generateLink(["type": "signup", "email": "done@example.com", "password": "secret-pw"])
        #expect(taken.status == 422)
        #expect(errorCode(taken) == "email_exists")
    }

    @Test func magicLinkAndRecovery() throws {
        let api = try makeAPI()
        let id = api.signUp("known@example.com")["user"]!["id"]!.stringValue!
        let magic = api.generateLink(["type": "magiclink", "email": "known@example.com"]).json
        let hashed = try #require(magic["hashed_token"]?.stringValue)
        #expect(magic["verification_type"] == "magiclink")
        #expect(magic["action_link"]?.stringValue?.contains("&type=magiclink&") == true)
        #expect(try api.storedUser("known@example.com")?.recoveryToken == hashed)
        #expect(try api.oneTimeTokens(id).map { $0.0 } == ["recovery_token"])
        #expect(magic["recovery_sent_at"]?.stringValue != nil)
        let entry = try #require(api.auditEntries().first)
        #expect(entry["payload"]?["action"] == "user_recovery_requested")
        #expect(entry["payload"]?["actor_id"] == .string(id))

        let recovery = api.generateLink(["type": "recovery", "email": "known@example.com"]).json
        #expect(recovery["verification_type"] == "recovery")
        #expect(try api.oneTimeTokens(id).first?.1 == recovery["hashed_token"]?.stringValue)

        let unknown = api.generateLink(["type": "recovery", "email": "nobody@example.com"])
        #expect(unknown.status == 404)
        #expect(unknown.text == #"{"code":404,"error_code":"user_not_found","msg":"User with this email not found"}"#)

        // A magic link for an unknown address signs it up instead.
        let fresh = api.generateLink(["type": "magiclink", "email": "fresh@example.com"]).json
        #expect(fresh["verification_type"] == "signup")
        #expect(fresh["action_link"]?.stringValue?.contains("&type=signup&") == true)
        let created = try #require(try api.storedUser("fresh@example.com"))
        #expect(created.confirmationToken == fresh["hashed_token"]?.stringValue)
        #expect(created.encryptedPassword?.isEmpty == false)
    }

    @Test func invite() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let invited = api.generateLink(["type": "invite", "email": "guest@example.com", "data": ["team": "blue"]])
        #expect(invited.status == 200)
        let body = invited.json
        #expect(body["invited_at"] == .string(clock.now().rfc3339))
        #expect(body["user_metadata"] == ["team": "blue"])
        #expect(body["role"] == "authenticated")
        #expect(body["app_metadata"] == ["provider": "email", "providers": ["email"]])
        let stored = try #require(try api.storedUser("guest@example.com"))
        #expect(stored.encryptedPassword == "")
        #expect(stored.confirmationToken == body["hashed_token"]?.stringValue)
        let entry = try #require(api.auditEntries().first)
        #expect(entry["payload"]?["action"] == "user_invited")
        #expect(entry["payload"]?["actor_username"] == "service_role")
        #expect(entry["payload"]?["traits"] == ["user_id": .string(stored.id), "user_email": "guest@example.com"])
        // Inviting again while unconfirmed re-issues (the new `data` is not merged, unlike a
        // sign-up link's); once confirmed it is refused.
        let again = api.generateLink(["type": "invite", "email": "guest@example.com", "data": ["team": "red"]])
        #expect(again.status == 200)
        #expect(again.json["user_metadata"] == ["team": "blue"])
        #expect(try api.storedUser("guest@example.com")?.confirmationToken == again.json["hashed_token"]?.stringValue)
        #expect(try api.oneTimeTokens(stored.id).map { $0.0 } == ["confirmation_token"])
        _ = api.signUp("member@example.com")
        #expect(errorCode(api.generateLink(["type": "invite", "email": "member@example.com"])) == "email_exists")
    }

    @Test func emailChange() throws {
        let api = try makeAPI()
        let id = api.signUp("cur@example.com")["user"]!["id"]!.stringValue!
        _ = api.signUp("other@example.com")
        let needsNew = api.generateLink(["type": "email_change_new", "email": "cur@example.com"])
        #expect(needsNew.json["msg"] == "An email address is required")
        #expect(errorCode(api.generateLink(["type": "email_change_new", "email": "cur@example.com", "new_email": "other@example.com"]))
                == "email_exists")

        let current = api.generateLink(["type": "email_change_current", "email": "cur@example.com", "new_email": "Next@Example.com"]).json
        #expect(current["new_email"] == "next@example.com")
        #expect(current["verification_type"] == "email_change_current")
        let currentHash = try #require(current["hashed_token"]?.stringValue)
        #expect(current["action_link"] == .string("http://127.0.0.1:9999/auth/v1/verify?token=\(currentHash)&type=email_change&redirect_to=http://127.0.0.1:3000"))
        #expect(try api.storedUser("cur@example.com")?.emailChangeTokenCurrent == currentHash)

        let new = api.generateLink(["type": "email_change_new", "email": "cur@example.com", "new_email": "next@example.com"]).json
        let otp = try #require(new["email_otp"]?.stringValue)
        // hashed_token is made with the current address; the stored token and link with the new one.
        #expect(new["hashed_token"] == .string(OneTimeTokens.tokenHash("cur@example.com", otp)))
        let storedNew = OneTimeTokens.tokenHash("next@example.com", otp)
        #expect(try api.storedUser("cur@example.com")?.emailChangeTokenNew == storedNew)
        #expect(new["action_link"]?.stringValue?.contains("token=\(storedNew)&type=email_change") == true)
        let rows = try api.oneTimeTokens(id)
        #expect(rows.map { $0.0 } == ["email_change_token_current", "email_change_token_new"])
        #expect(rows.map { $0.2 } == ["cur@example.com", "next@example.com"])

        #expect(api.generateLink(["type": "email_change_current", "email": "nobody@example.com", "new_email": "x@example.com"]).status == 404)
        let insecure = try makeAPI { $0.mailer.secureEmailChangeEnabled = false }
        _ = insecure.signUp("cur@example.com")
        #expect(insecure.generateLink(["type": "email_change_current", "email": "cur@example.com", "new_email": "n@example.com"]).json["msg"]
                == "Enable secure email change to generate link for current email")
    }

    @Test func redirectsAndErrors() throws {
        let api = try makeAPI { $0.uriAllowList = ["http://localhost:5173/**"] }
        _ = api.signUp("r@example.com")
        let allowed = api.generateLink(["type": "recovery", "email": "r@example.com", "redirect_to": "http://localhost:5173/reset?x=1"]).json
        #expect(allowed["redirect_to"] == "http://localhost:5173/reset?x=1")
        #expect(allowed["action_link"]?.stringValue?.hasSuffix("&redirect_to=http%3A%2F%2Flocalhost%3A5173%2Freset%3Fx%3D1") == true)
        let refused = api.generateLink(["type": "recovery", "email": "r@example.com", "redirect_to": "https://evil.example/"]).json
        #expect(refused["redirect_to"] == "http://127.0.0.1:3000")
        let site = api.generateLink(["type": "recovery", "email": "r@example.com", "redirect_to": "http://127.0.0.1:3000/account"]).json
        #expect(site["redirect_to"] == "http://127.0.0.1:3000/account")

        let badType = api.generateLink(["type": "bogus", "email": "r@example.com"])
        #expect(badType.status == 400)
        #expect(badType.json["msg"] == "Invalid email action link type requested: bogus")
        #expect(api.generateLink(["type": "signup"]).json["msg"] == "An email address is required")
        #expect(errorCode(api.call("POST", "/admin/generate_link", ["type": "signup", "email": "a@example.com"],
                                   bearer: api.project.configuration.apiKeys.anon)) == "not_admin")
    }
}

/// One link builder for emails, `generate_link` and the outbox: `ResolveReference` of the URL
/// path setting against the external URL, as the real mailer builds links.
@Suite struct ActionLinkTests {
    @Test(arguments: [
        // supabase start: absolute URL paths win over the external URL.
        ("http://127.0.0.1:54321", "http://127.0.0.1:54321/auth/v1/verify", "http://127.0.0.1:54321/auth/v1/verify"),
        ("http://127.0.0.1:9999", "/auth/v1/verify", "http://127.0.0.1:9999/auth/v1/verify"),
        ("http://127.0.0.1:9999/base/", "/verify", "http://127.0.0.1:9999/verify"),
        ("http://127.0.0.1:9999/base/", "verify", "http://127.0.0.1:9999/base/verify"),
        ("http://127.0.0.1:9999/base/x", "verify", "http://127.0.0.1:9999/base/verify"),
        ("http://h", "https://other.example/v?old=1#frag", "https://other.example/v"),
    ])
    func resolution(_ external: String, _ path: String, _ expected: String) {
        let link = Mailer.actionLink(externalURL: external, path: path, token: "t+1", type: "signup", redirectTo: "http://x/?a=b")
        let suffix = path.hasSuffix("#frag") ? "#frag" : ""
        #expect(link == expected + "?token=t%2B1&type=signup&redirect_to=http%3A%2F%2Fx%2F%3Fa%3Db" + suffix)
    }

    @Test func cliConfigurationGivesTheSameLinkEverywhere() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { config in
            config.externalURL = "http://127.0.0.1:54321"
            config.mailer.autoconfirm = false
            config.mailer.urlPaths.confirmation = "http://127.0.0.1:54321/auth/v1/verify"
            config.mailer.urlPaths.invite = "http://127.0.0.1:54321/auth/v1/verify"
        }
        let admin = api.project.configuration.apiKeys.serviceRole
        _ = api.call("POST", "/signup", ["email": "links@example.com", "password": "password1"])
        let emailed = try #require(try api.project.database.read { try $0.outboxMessages() }.last)
        #expect(emailed.actionLink.hasPrefix("http://127.0.0.1:54321/auth/v1/verify?token=" + emailed.tokenHash + "&type=signup"))
        let generated = api.call("POST", "/admin/generate_link", ["type": "invite", "email": "invited@example.com"], bearer: admin)
        #expect(generated.json["action_link"]?.stringValue?.hasPrefix("http://127.0.0.1:54321/auth/v1/verify?token=") == true)
        // Through the gateway or at the root, the link is the same.
        clock.advance(seconds: 61)
        let before = try api.project.database.read { try $0.outboxMessages(recipient: "links@example.com") }
        #expect(api.call("POST", "/auth/v1/resend", ["type": "signup", "email": "links@example.com"]).status == 200)
        let after = try api.project.database.read { try $0.outboxMessages(recipient: "links@example.com") }
        #expect(after.count == before.count + 1)
        #expect(after.allSatisfy { $0.actionLink.hasPrefix("http://127.0.0.1:54321/auth/v1/verify?token=") })
    }
}

/// `GOTRUE_MAILER_EXTERNAL_HOSTS` with `X-Forwarded-Host` (`isValidExternalHost`).
@Suite struct ExternalHostTests {
    @Test func listedForwardedHostsBuildTheLinks() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { config in
            config.mailer.autoconfirm = false
            config.mailer.externalHosts = ["auth.example.com", "localhost"]
        }
        func link(_ email: String, _ headers: HTTPHeaders) throws -> String {
            _ = api.call("POST", "/signup", ["email": .string(email), "password": "password1"], headers: headers)
            return try #require(try api.project.database.read { try $0.outboxMessages(recipient: email) }.first).actionLink
        }
        #expect(try link("a@example.com", ["X-Forwarded-Host": "auth.example.com"]).hasPrefix("https://auth.example.com/auth/v1/verify?"))
        #expect(try link("b@example.com", ["X-Forwarded-Host": "localhost", "X-Forwarded-Proto": "http"]).hasPrefix("http://localhost/auth/v1/verify?"))
        #expect(try link("c@example.com", ["X-Forwarded-Host": "localhost"]).hasPrefix("https://localhost/auth/v1/verify?"))
        // An unlisted host is ignored: the configured external URL.
        #expect(try link("d@example.com", ["X-Forwarded-Host": "evil.example.com"]).hasPrefix("http://127.0.0.1:9999/auth/v1/verify?"))
    }
}
