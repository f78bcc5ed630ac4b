import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import GoTrue

// mail.go's `sendEmail` and `generate_link`, password.go's character sets: edges where the
// emulator follows what the real server reads and checks.

@Suite struct MailEdgeTests {
    /// The email-changed notice goes to the old address, but `sendEmail` checks the user's
    /// current (new) address against the authorized list.
    @Test func theEmailChangedNoticeIsAuthorizedByTheNewAddress() throws {
        let api = try makeAPI { config in
            config.mailer.notifications = [.emailChanged]
            config.mailer.secureEmailChangeEnabled = false
            config.external.emailAuthorizedAddresses = ["new5@example.com"]
        }
        let id = api.createUser(["email": "old5@example.com", "password": "password1", "email_confirm": true])["id"]?.stringValue ?? ""
        let token = api.signIn("old5@example.com").json["access_token"]?.stringValue ?? ""
        #expect(api.call("PUT", "/user", ["email": "new5@example.com"], bearer: token).status == 200)
        let change = try #require(try api.latestMessage(to: "new5@example.com", type: "email_change"))
        #expect(api.verify(["type": "email_change", "token_hash": .string(change.tokenHash)]).status == 200)
        let notice = try #require(try api.latestMessage(to: "old5@example.com", type: "email_changed_notification"))
        #expect(notice.userID == id)
    }

    /// `sendEmail` hands the send-email hook the user as `findUser` loaded it, factors too.
    @Test func theSendEmailHookSeesTheFactors() throws {
        let server = FakeHookServer { _ in .response(status: 204, headers: [], body: []) }
        let api = try hookAPI(server, \.sendEmail)
        let user = api.createUser(["email": "factors@example.com", "email_confirm": true])["id"]?.stringValue ?? ""
        try api.project.database.write { conn in
            try conn.insertFactor(FactorRecord(id: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", userID: user, factorType: "totp",
                                               status: "verified", at: 1_767_225_600_000_000))
        }
        #expect(api.call("POST", "/recover", ["email": "factors@example.com"]).status == 200)
        let call = try #require(server.received.last)
        #expect(call.json["user"]?["factors"]?[0]?["id"] == "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee")
    }

    /// `generate_link`: a valid body `redirect_to` wins; otherwise `GetReferrer`, where a
    /// non-empty `redirect_to` header is the only request candidate even when it is refused.
    @Test func generateLinkRedirectPrecedence() throws {
        let api = try makeAPI()
        _ = api.createUser(["email": "links@example.com", "email_confirm": true])
        func redirect(_ body: JSONObject, query: String = "", header: String? = nil) -> JSON? {
            var headers: HTTPHeaders = [:]
            if let header { headers["redirect_to"] = header }
            var all = body
            all["type"] = "recovery"
            all["email"] = "links@example.com"
            return api.admin("POST", "/admin/generate_link" + query, .object(all), headers: headers).json["redirect_to"]
        }
        #expect(redirect([:], query: "?redirect_to=http://127.0.0.1:3000/q", header: "https://evil.example") == "http://127.0.0.1:3000")
        #expect(redirect([:], query: "?redirect_to=http://127.0.0.1:3000/q") == "http://127.0.0.1:3000/q")
        #expect(redirect(["redirect_to": "http://127.0.0.1:3000/b"], query: "?redirect_to=http://127.0.0.1:3000/q",
                         header: "https://evil.example") == "http://127.0.0.1:3000/b")
        #expect(redirect([:], header: "http://127.0.0.1:3000/h") == "http://127.0.0.1:3000/h")
    }

    /// `strings.ContainsAny` compares code points: "e" + U+0301 holds an "e"; a precomposed "é"
    /// in the set is not met by "e" + U+0301.
    @Test func requiredCharactersAreCodePoints() throws {
        let api = try makeAPI { $0.password.requiredCharacters = ["abcdefghijklmnopqrstuvwxyz", "0123456789"] }
        let decomposed = api.call("POST", "/signup", ["email": "cp1@example.com", "password": "E\u{301}XYZe\u{301}1234"])
        #expect(decomposed.status == 200, "\(decomposed.text)")
        let accented = try makeAPI { $0.password.requiredCharacters = ["\u{E9}", "0123456789"] }
        let refused = accented.call("POST", "/signup", ["email": "cp2@example.com", "password": "e\u{301}XYZ1234"])
        #expect(refused.status == 422)
        #expect(refused.json["weak_password"]?["reasons"] == ["characters"])
    }
}
