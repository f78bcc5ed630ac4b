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
