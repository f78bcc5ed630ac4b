import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

@Suite struct ControlTokenTests {
    func seeded() throws -> GoTrueAPI {
        let (api, _) = try makeControlAPI()
        let response = api.control("POST", "/emulator/v1/seed", ["users": [
            ["id": "11111111-2222-4333-8444-555555555555", "email": "ada@example.com", "email_confirm": true],
        ]])
        #expect(response.status == 200)
        return api
    }

    @Test func mintsATokenBackedByASession() throws {
        let api = try seeded()
        let response = api.control("POST", "/emulator/v1/token", [
            "email": "ada@example.com", "role": "editor", "claims": ["tenant": "acme"], "expires_in": 120,
        ])
        #expect(response.status == 200)
        let token = try #require(response.json["access_token"]?.stringValue)
        let c = claims(of: token)
        #expect(c["sub"]?.stringValue == "11111111-2222-4333-8444-555555555555")
        #expect(c["role"]?.stringValue == "editor")
        #expect(c["tenant"]?.stringValue == "acme")
        #expect(c["exp"]?.int64Value == Int64(1_767_225_600 + 120))
        #expect(c["session_id"]?.stringValue?.isEmpty == false)
        #expect(c["amr"]?[0]?["method"]?.stringValue == "password")
        #expect(response.json["expires_in"]?.intValue == 120)
        #expect(response.json["user"]?["email"]?.stringValue == "ada@example.com")
        let user = api.call("GET", "/user", bearer: token)
        #expect(user.status == 200)
        #expect(user.json["id"]?.stringValue == "11111111-2222-4333-8444-555555555555")
        // The refresh token belongs to the same session.
        let refreshed = api.refresh(response.json["refresh_token"]?.stringValue ?? "")
        #expect(refreshed.status == 200)
        #expect(claims(of: refreshed.json["access_token"]?.stringValue ?? "")["session_id"] == c["session_id"])
        // Logout ends the session: the minted token is then refused.
        #expect(api.call("POST", "/logout", bearer: token).status == 204)
        #expect(errorCode(api.call("GET", "/user", bearer: token)) == "session_not_found")
    }

    @Test func byUserIDWithDefaultsAndAnExpiredOne() throws {
        let api = try seeded()
        let response = api.control("POST", "/emulator/v1/token", ["user_id": "11111111-2222-4333-8444-555555555555"])
        let c = claims(of: response.json["access_token"]?.stringValue ?? "")
        #expect(c["role"]?.stringValue == "authenticated")
        #expect(c["exp"]?.int64Value == Int64(1_767_225_600 + 3600))
        let expired = api.control("POST", "/emulator/v1/token", ["user_id": "11111111-2222-4333-8444-555555555555", "expires_in": -1])
        #expect(expired.status == 200)
        let refused = api.call("GET", "/user", bearer: expired.json["access_token"]?.stringValue)
        #expect(refused.status == 403)
        #expect(errorCode(refused) == "bad_jwt")
    }

    @Test func aRoleAloneMintsAKeyLikeToken() throws {
        let api = try seeded()
        let response = api.control("POST", "/emulator/v1/token", ["role": "service_role", "expires_in": 60])
        #expect(response.status == 200)
        let token = try #require(response.json["access_token"]?.stringValue)
        #expect(claims(of: token) == ["iss": "supabase-demo", "role": "service_role", "iat": 1_767_225_600, "exp": 1_767_225_660])
        // It is a valid admin credential.
        #expect(api.call("GET", "/admin/users", bearer: token).status == 200)
        #expect(response.json["refresh_token"] == nil)
    }

    @Test(arguments: [
        (#"{"user_id": "22222222-2222-4222-8222-222222222222"}"#, 404, "user_not_found"),
        (#"{"email": "nobody@example.com"}"#, 404, "user_not_found"),
        (#"{"user_id": "nope"}"#, 400, "validation_failed"),
        (#"{"user_id": "11111111-2222-4333-8444-555555555555", "email": "ada@example.com"}"#, 400, "validation_failed"),
        (#"{}"#, 400, "validation_failed"),
        (#"{"email": "ada@example.com", "expires_in": "60"}"#, 400, "validation_failed"),
        (#"{"email": "ada@example.com", "expires_in": 1.5}"#, 400, "validation_failed"),
        (#"{"email": "ada@example.com", "claims": [1]}"#, 400, "validation_failed"),
        (#"{"email": "ada@example.com", "role": 5}"#, 400, "validation_failed"),
        (#"{"email": "ada@example.com", "scope": "x"}"#, 400, "validation_failed"),
        (#"nope"#, 400, "bad_json"),
    ])
    func errors(body: String, status: Int, code: String) throws {
        let api = try seeded()
        let response = api.controlRaw("POST", "/emulator/v1/token", body: body)
        #expect(response.status == status)
        #expect(errorCode(response) == code)
        #expect(try api.project.database.read { conn in try conn.dumpTable("sessions") }.rows.isEmpty)
    }

    @Test func sessionlessUserTokensAndKeysFromTheConfiguration() throws {
        let api = try seeded()
        let config = api.project.configuration
        let now = api.project.environment.now()
        let token = TestTokens.userToken(userID: "11111111-2222-4333-8444-555555555555", email: "ada@example.com",
                                         role: "authenticated", configuration: config, now: now, expiresIn: 60)
        #expect(claims(of: token)["session_id"] == nil)
        #expect(api.call("GET", "/user", bearer: token).status == 200)
        // Without an expiry the key-like token is exactly the project's key.
        #expect(TestTokens.keyToken(role: "anon", configuration: config, now: now, expiresIn: nil) == config.apiKeys.anon)
        #expect(TestTokens.keyToken(role: "service_role", configuration: config, now: now, expiresIn: nil) == config.apiKeys.serviceRole)
    }
}
