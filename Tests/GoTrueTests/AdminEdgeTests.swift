import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import GoTrue

// Edges of admin.go, invite.go, identity.go and mail.go where the stored row or the answer
// follows from how GoTrue writes (pop's automatic `updated_at`, `User.Ban`, gofrs's UUID
// parsing, `FindUserByPhoneAndAudience`).

@Suite struct AdminEdgeTests {
    /// `sendInvite` saves with `UpdateOnly`, which writes `updated_at` too: a re-invite moves it.
    @Test func aReinviteMovesUpdatedAt() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let first = api.admin("POST", "/invite", ["email": "again@example.com"])
        #expect(first.status == 200)
        #expect(first.json["updated_at"] == first.json["invited_at"])
        clock.advance(seconds: 61)
        let second = api.admin("POST", "/invite", ["email": "again@example.com"])
        #expect(second.status == 200)
        let later = clock.now().rfc3339
        #expect(second.json["invited_at"] == .string(later))
        #expect(second.json["updated_at"] == .string(later))
        let id = second.json["id"]?.stringValue ?? ""
        #expect(api.admin("GET", "/admin/users/\(id)").json["updated_at"] == .string(later))
    }

    /// The same for a resent code (`sendConfirmation` through `/resend`).
    @Test func aResentConfirmationMovesUpdatedAt() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.mailer.autoconfirm = false }
        let id = api.signUp("resend@example.com")["id"]?.stringValue ?? ""
        clock.advance(seconds: 61)
        #expect(api.call("POST", "/resend", ["type": "signup", "email": "resend@example.com"]).status == 200)
        #expect(api.admin("GET", "/admin/users/\(id)").json["updated_at"] == .string(clock.now().rfc3339))
    }

    /// `generate_link` saves every link type with `UpdateOnly`: the answer and the row show the
    /// new `updated_at`.
    @Test(arguments: ["recovery", "magiclink", "email_change_new", "email_change_current"])
    func generateLinkMovesUpdatedAt(_ type: String) throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.mailer.secureEmailChangeEnabled = true }
        let id = api.createUser(["email": "link@example.com", "email_confirm": true])["id"]?.stringValue ?? ""
        clock.advance(seconds: 5)
        var body: JSONObject = ["type": .string(type), "email": "link@example.com"]
        if type.hasPrefix("email_change") { body["new_email"] = "moved@example.com" }
        let linked = api.admin("POST", "/admin/generate_link", .object(body))
        #expect(linked.status == 200)
        let now = JSON.string(clock.now().rfc3339)
        #expect(linked.json["updated_at"] == now)
        #expect(api.admin("GET", "/admin/users/\(id)").json["updated_at"] == now)
    }

    /// `User.Ban`: any non-zero duration bans, even one shorter than the microsecond the time is
    /// kept in; only `none` (or zero) lifts a ban.
    @Test func aNanosecondBanStillBans() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let id = api.createUser(["email": "brief@example.com", "ban_duration": "24h"])["id"]?.stringValue ?? ""
        let brief = api.admin("PUT", "/admin/users/\(id)", ["ban_duration": "1ns"])
        #expect(brief.status == 200)
        #expect(brief.json["banned_until"] == .string(clock.now().rfc3339))
        let created = api.createUser(["email": "brief2@example.com", "ban_duration": "999ns"])
        #expect(created["banned_until"] == .string(clock.now().rfc3339))
        #expect(api.admin("PUT", "/admin/users/\(id)", ["ban_duration": "0s"]).json["banned_until"] == nil)
    }

    /// `IsDuplicatedPhone` skips SSO users: a phone only an SSO user holds is not `phone_exists`
    /// but the unique index's refusal, as on Postgres.
    @Test func aPhoneOnlyAnSSOUserHoldsReachesTheIndex() throws {
        let api = try makeAPI()
        try api.project.database.write { conn in
            var sso = UserRecord(id: "11111111-2222-4333-8444-555555555555", createdAt: 1_767_225_600_000_000)
            sso.aud = "authenticated"
            sso.role = "authenticated"
            sso.phone = "15550007777"
            sso.isSSOUser = true
            try conn.insertUser(sso)
        }
        let created = api.admin("POST", "/admin/users", ["phone": "+15550007777"])
        #expect(created.status == 500)
        #expect(created.headers["x-sb-error-code"] == "unexpected_failure")
        #expect(created.json["code"] == "23505")
        // A non-SSO holder is the check's own answer.
        _ = api.createUser(["phone": "15550008888"])
        let taken = api.admin("POST", "/admin/users", ["phone": "15550008888"])
        #expect(taken.status == 422)
        #expect(taken.json["error_code"] == "phone_exists")
    }
}

@Suite struct AdminFactorEdgeTests {
    /// `UpdateFriendlyName` and `UpdatePhone` stamp `updated_at`; a body that changes neither
    /// writes nothing.
    @Test func aNoOpFactorUpdateKeepsUpdatedAt() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let user = api.createUser(["email": "factor@example.com"])["id"]?.stringValue ?? ""
        let factor = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
        try api.project.database.write { conn in
            try conn.insertFactor(FactorRecord(id: factor, userID: user, factorType: "totp", status: "verified",
                                               at: clock.now().microseconds))
        }
        let created = clock.now().rfc3339
        clock.advance(seconds: 5)
        for body: JSON in [.object(JSONObject()), ["phone": "+15550001111"]] {
            let unchanged = api.admin("PUT", "/admin/users/\(user)/factors/\(factor)", body)
            #expect(unchanged.status == 200)
            #expect(unchanged.json["updated_at"] == .string(created))
        }
        let renamed = api.admin("PUT", "/admin/users/\(user)/factors/\(factor)", ["friendly_name": "laptop"])
        #expect(renamed.json["updated_at"] == .string(clock.now().rfc3339))
        // Both the no-op updates and the rename are audited, as GoTrue audits every update.
        let actions = api.auditEntries().compactMap { $0["payload"]?["action"]?.stringValue }.filter { $0 == "factor_updated" }
        #expect(actions.count == 3)
    }
}

@Suite struct UnlinkIdentityTests {
    /// `DELETE /user/identities/{id}` parses the id with `uuid.FromString`: bare hex and braces
    /// name the same identity.
    @Test func identityIDsInGoUUIDForms() throws {
        let api = try makeAPI { config in
            config.security.manualLinkingEnabled = true
            config.enableProvider("google", clientID: "google-client")
        }
        let forms: [(String) -> String] = [{ $0.replacingOccurrences(of: "-", with: "") }, { "{\($0)}" }, { "urn:uuid:\($0)" }]
        for (n, form) in forms.enumerated() {
            let session = api.signUp("forms\(n)@example.com")
            let token = session["access_token"]?.stringValue ?? ""
            let linked = api.call("POST", "/token?grant_type=id_token",
                                  ["id_token": .string(#"{"sub":"g-\#(n)","aud":"google-client","email":"g\#(n)@example.com"}"#),
                                   "provider": "google", "link_identity": true], bearer: token)
            #expect(linked.status == 200)
            let fresh = linked.json["access_token"]?.stringValue ?? ""
            let identities = api.call("GET", "/user", bearer: fresh).json["identities"]?.arrayValue ?? []
            let google = try #require(identities.first { $0["provider"] == "google" }?["identity_id"]?.stringValue)
            let unlinked = api.call("DELETE", "/user/identities/\(form(google))", bearer: fresh)
            #expect(unlinked.status == 200, "form \(form(google))")
            #expect(api.call("GET", "/user", bearer: fresh).json["identities"]?.arrayValue?.count == 1)
        }
        let session = api.signUp("notuuid@example.com")
        let refused = api.call("DELETE", "/user/identities/not-a-uuid", bearer: session["access_token"]?.stringValue ?? "")
        #expect(refused.status == 404)
        #expect(refused.json["msg"] == "identity_id must be an UUID")
    }
}
