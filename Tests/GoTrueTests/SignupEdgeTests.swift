import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import GoTrue

// signup.go's answer is built from maps GoTrue shares in memory: `RemoveUnconfirmedIdentities`
// makes user_metadata the new identity's own map, so what `UpdateUserMetaData` and `Confirm` do
// to one shows in the other.

@Suite struct SignupAnswerTests {
    @Test func anAutoconfirmedIdentityShowsEmailVerifiedAsAnswered() throws {
        let api = try makeAPI { $0.mailer.autoconfirm = true }
        let answer = api.call("POST", "/signup", ["email": "shared@example.com", "password": "password1"])
        #expect(answer.status == 200)
        let user = answer.json["user"]
        #expect(user?["user_metadata"]?["email_verified"] == true)
        #expect(user?["identities"]?[0]?["identity_data"]?["email_verified"] == true)
        // The identity row keeps what was inserted.
        let token = answer.json["access_token"]?.stringValue ?? ""
        #expect(api.call("GET", "/user", bearer: token).json["identities"]?[0]?["identity_data"]?["email_verified"] == false)
    }

    /// `UpdateUserMetaData` deletes null values from the shared map: neither user_metadata nor
    /// the answer's identity has them; the identity row does.
    @Test(arguments: [true, false])
    func nullDataValuesAreDropped(_ autoconfirm: Bool) throws {
        let api = try makeAPI { $0.mailer.autoconfirm = autoconfirm }
        let answer = api.call("POST", "/signup", ["email": .string("nulls\(autoconfirm)@example.com"), "password": "password1",
                                                  "data": ["x": .null, "y": 1]])
        #expect(answer.status == 200)
        let user = autoconfirm ? answer.json["user"] : answer.json
        for metadata in [user?["user_metadata"], user?["identities"]?[0]?["identity_data"]] {
            #expect(metadata?["x"] == nil)
            #expect(metadata?["y"] == 1)
        }
        let id = user?["id"]?.stringValue ?? ""
        let stored = api.admin("GET", "/admin/users/\(id)").json
        #expect(stored["user_metadata"]?.objectValue?.keys.contains("x") == false)
        #expect(stored["identities"]?[0]?["identity_data"]?.objectValue?.keys.contains("x") == true)
    }
}

@Suite struct SignupExistingAccountTests {
    private func googleAPI(autoconfirm: Bool) throws -> GoTrueAPI {
        try makeAPI { config in
            config.mailer.autoconfirm = autoconfirm
            config.sms.autoconfirm = autoconfirm
            config.enableProvider("google", clientID: "google-client")
        }
    }

    /// signup.go finds the account with `IsDuplicatedEmail`: an identity that still has the
    /// address names its account even after the account's own email moved on.
    @Test(arguments: [false, true])
    func anIdentityEmailNamesItsAccount(_ autoconfirm: Bool) throws {
        let api = try googleAPI(autoconfirm: autoconfirm)
        let google = api.call("POST", "/token?grant_type=id_token",
                              ["id_token": #"{"sub":"g-1","aud":"google-client","email":"was@example.com","email_verified":true}"#,
                               "provider": "google"])
        #expect(google.status == 200)
        let id = google.json["user"]?["id"]?.stringValue ?? ""
        #expect(api.admin("PUT", "/admin/users/\(id)", ["email": "now@example.com"]).status == 200)

        let again = api.call("POST", "/signup", ["email": "was@example.com", "password": "password1"])
        if autoconfirm {
            #expect(again.status == 422)
            #expect(again.json["error_code"] == "user_already_exists")
        } else {
            #expect(again.status == 200)
            #expect(again.json["email"] == "now@example.com")
            #expect(again.json["role"] == "")
            #expect(again.json["id"] != .string(id))
        }
        let entry = api.auditEntries().first { $0["payload"]?["action"] == "user_repeated_signup" }
        #expect(entry?["payload"]?["actor_id"] == .string(id))
        #expect(api.admin("GET", "/admin/users").json["users"]?.arrayValue?.count == 1)
    }

    /// After the confirmation is sent, signup.go signs in when either channel is confirmed.
    @Test func aConfirmedPhoneSignsAnEmailSignUpIn() throws {
        let api = try makeAPI { $0.mailer.autoconfirm = false }
        _ = api.createUser(["email": "both@example.com", "phone": "15550001212", "phone_confirm": true])
        let signedUp = api.call("POST", "/signup", ["email": "both@example.com", "password": "whatever1"])
        #expect(signedUp.status == 200)
        #expect(signedUp.json["access_token"]?.stringValue?.isEmpty == false)
        #expect(signedUp.json["user"]?["email_confirmed_at"] == nil)
        #expect(signedUp.json["user"]?["last_sign_in_at"] != nil)
        #expect(try api.latestMessage(to: "both@example.com", type: "signup") != nil)
        let actions = api.auditEntries().prefix(2).compactMap { $0["payload"]?["action"]?.stringValue }
        #expect(actions == ["login", "user_confirmation_requested"])
    }
}

/// `Identity.BeforeCreate` and `BeforeUpdate` store a string `identity_data.email` lower-cased.
@Suite struct IdentityEmailCaseTests {
    @Test func providerEmailsAreStoredLowerCased() throws {
        let api = try makeAPI { $0.enableProvider("google", clientID: "gc") }
        func grant(_ email: String) -> HTTPResponse {
            api.call("POST", "/token?grant_type=id_token",
                     ["id_token": .string(#"{"sub":"g-7","aud":"gc","email":"\#(email)","email_verified":true}"#), "provider": "google"])
        }
        let created = grant("Ann@Example.COM")
        #expect(created.status == 200)
        let id = created.json["user"]?["id"]?.stringValue ?? ""
        var shown = api.admin("GET", "/admin/users/\(id)").json
        #expect(shown["identities"]?[0]?["identity_data"]?["email"] == "ann@example.com")
        // The new, unconfirmed account takes the identity's map as its metadata
        // (`RemoveUnconfirmedIdentities`), lower-cased by then.
        #expect(shown["user_metadata"]?["email"] == "ann@example.com")
        // A returning sign-in updates the identity (`BeforeUpdate`) and merges that map.
        #expect(grant("ANN@example.com").status == 200)
        shown = api.admin("GET", "/admin/users/\(id)").json
        #expect(shown["identities"]?[0]?["identity_data"]?["email"] == "ann@example.com")
        #expect(shown["user_metadata"]?["email"] == "ann@example.com")
    }

    @Test func aPhoneSignUpsDataEmailIsLowerCased() throws {
        let api = try makeAPI { $0.external.phoneEnabled = true }
        let signedUp = api.call("POST", "/signup", ["phone": "+15550007171", "password": "password1", "data": ["email": "Evil@X.test"]])
        #expect(signedUp.status == 200)
        let user = signedUp.json["user"] ?? signedUp.json
        let id = user["id"]?.stringValue ?? ""
        let shown = api.admin("GET", "/admin/users/\(id)").json
        #expect(shown["identities"]?[0]?["identity_data"]?["email"] == "evil@x.test")
        #expect(shown["user_metadata"]?["email"] == "evil@x.test")
    }
}
