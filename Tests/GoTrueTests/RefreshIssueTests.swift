import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// The refresh grant reads inside its write transaction and signs / renders after the commit;
/// what it returns must be the same as when everything happened inside (reference §7.5).
@Suite struct RefreshIssueTests {
    @Test func tokenAndUserReflectTheTransaction() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        let session = api.signUp("i@example.com", data: ["full_name": "I <3 JSON", "z": 1, "a": [2, 1]])
        let access = session["access_token"]!.stringValue!
        clock.advance(seconds: 42)

        var headers = HTTPHeaders()
        headers["User-Agent"] = "refresh-test/1.0"
        let response = api.call("POST", "/token?grant_type=refresh_token",
                                ["refresh_token": session["refresh_token"]!], headers: headers)
        #expect(response.status == 200)
        let now = clock.now().unixSeconds
        let body = try #require(response.json.objectValue)
        #expect(body.keys == ["access_token", "token_type", "expires_in", "expires_at", "refresh_token", "user"])
        #expect(body["expires_in"] == 3600)
        #expect(body["expires_at"] == .number(now + 3600))

        let minted = claims(of: body["access_token"]!.stringValue!)
        #expect(minted["iat"] == .number(now))
        #expect(minted["exp"] == .number(now + 3600))
        #expect(minted["user_metadata"] == claims(of: access)["user_metadata"])
        #expect(minted["amr"] == claims(of: access)["amr"])
        #expect(minted["aal"] == "aal1")
        #expect(minted["session_id"] == claims(of: access)["session_id"])

        // The user object is the one GET /user renders for the same state, byte for byte.
        let user = api.call("GET", "/user", bearer: body["access_token"]!.stringValue!)
        #expect(user.status == 200)
        #expect(body["user"]!.serialized() == user.text)
        #expect(response.headers["sb-auth-user-id"] == body["user"]?["id"]?.stringValue)
        #expect(response.headers["sb-auth-session-id"] == minted["session_id"]?.stringValue)
        #expect(response.headers["sb-auth-refresh-token-prefix"] == String(body["refresh_token"]!.stringValue!.prefix(5)))

        let sessionID = minted["session_id"]!.stringValue!
        let stored = try #require(try api.project.database.read { try $0.session(id: sessionID) })
        #expect(stored.refreshedAt == clock.now().microseconds)
        #expect(stored.updatedAt == clock.now().microseconds)
        #expect(stored.userAgent == "refresh-test/1.0")
        #expect(stored.notAfter == nil && stored.aal == "aal1")
    }
}
