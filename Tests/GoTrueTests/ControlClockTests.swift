import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// A GoTrue API whose project runs on a `VirtualClock` over a hand-moved base clock, as the
/// emulator's does over the wall clock.
func makeControlAPI(base: ManualClock = ManualClock(), configure: (inout Configuration) -> Void = { _ in })
    throws -> (GoTrueAPI, VirtualClock)
{
    var configuration = Configuration()
    configuration.passwordHashIterations = 1_000
    configure(&configuration)
    let clock = VirtualClock(base: base)
    let database = try TestStore.database()
    let project = Project(configuration: configuration, database: database, environment: Environment(clock: clock))
    return (GoTrueAPI(emulating: project), clock)
}

extension GoTrueAPI {
    /// A control call with the service_role key.
    func control(_ method: String, _ target: String, _ body: JSON? = nil) -> HTTPResponse {
        call(method, target, body, bearer: project.configuration.apiKeys.serviceRole)
    }

    func controlRaw(_ method: String, _ target: String, body: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers["Authorization"] = "Bearer " + project.configuration.apiKeys.serviceRole
        return respond(to: request(method, target, headers: headers, body: body))
    }
}

@Suite struct ControlClockTests {
    @Test func readsTheBaseClockUntilMoved() throws {
        let base = ManualClock()
        let (api, _) = try makeControlAPI(base: base)
        let response = api.control("GET", "/emulator/v1/clock")
        #expect(response.status == 200)
        #expect(response.json["now"]?.stringValue == "2026-01-01T00:00:00Z")
        #expect(response.json["offset_seconds"]?.doubleValue == 0)
        #expect(response.json["frozen"]?.boolValue == false)
        base.advance(seconds: 5)
        #expect(api.control("GET", "/emulator/v1/clock").json["now"]?.stringValue == "2026-01-01T00:00:05Z")
    }

    @Test func advanceSetFreezeAndUnfreeze() throws {
        let base = ManualClock()
        let (api, clock) = try makeControlAPI(base: base)
        var response = api.control("POST", "/emulator/v1/clock", ["advance_seconds": 3600])
        #expect(response.status == 200)
        #expect(response.json["now"]?.stringValue == "2026-01-01T01:00:00Z")
        #expect(response.json["offset_seconds"]?.doubleValue == 3600)

        response = api.control("POST", "/emulator/v1/clock", ["set": "2030-06-01T12:00:00+02:00", "freeze": true])
        #expect(response.json["now"]?.stringValue == "2030-06-01T10:00:00Z")
        #expect(response.json["frozen"]?.boolValue == true)
        base.advance(seconds: 60)
        #expect(clock.now().rfc3339 == "2030-06-01T10:00:00Z")
        // Advancing a frozen clock moves the frozen instant.
        _ = api.control("POST", "/emulator/v1/clock", ["advance_seconds": 1.5])
        #expect(clock.now().rfc3339 == "2030-06-01T10:00:01.5Z")
        // Unfreezing runs on from the frozen instant, without catching up the wall clock.
        response = api.control("POST", "/emulator/v1/clock", ["freeze": false])
        #expect(response.json["frozen"]?.boolValue == false)
        base.advance(seconds: 2)
        #expect(clock.now().rfc3339 == "2030-06-01T10:00:03.5Z")
        // Going back is allowed.
        _ = api.control("POST", "/emulator/v1/clock", ["advance_seconds": -3.5])
        #expect(clock.now().rfc3339 == "2030-06-01T10:00:00Z")
    }

    @Test(arguments: [
        #"{"advance_seconds": "60"}"#, #"{"advance_seconds": 1e300}"#, #"{"set": "tomorrow"}"#, #"{"set": 5}"#,
        #"{"freeze": 1}"#, #"{}"#, #"{"advance": 60}"#, #"{"set": "2030-01-01T00:00:00Z", "freeze": "yes"}"#,
    ])
    func badInputIsRefusedAndChangesNothing(body: String) throws {
        let (api, clock) = try makeControlAPI()
        let before = clock.reading
        let response = api.controlRaw("POST", "/emulator/v1/clock", body: body)
        #expect(response.status == 400)
        #expect(errorCode(response) == "validation_failed")
        #expect(clock.reading == before)
    }

    @Test func malformedJSONIsBadJSON() throws {
        let (api, _) = try makeControlAPI()
        for body in ["", "{", "[1]"] {
            let response = api.controlRaw("POST", "/emulator/v1/clock", body: body)
            #expect(response.status == 400)
            #expect(errorCode(response) == "bad_json")
        }
    }

    @Test func requiresTheServiceRoleKey() throws {
        let (api, _) = try makeControlAPI()
        #expect(api.call("GET", "/emulator/v1/clock").status == 401)
        let anon = api.call("POST", "/emulator/v1/clock", ["advance_seconds": 1], bearer: api.project.configuration.apiKeys.anon)
        #expect(anon.status == 403)
        #expect(errorCode(anon) == "not_admin")
    }

    @Test func aFixedClockIsReportedButNotMoved() throws {
        let api = try makeAPI()
        #expect(api.control("GET", "/emulator/v1/clock").json["now"]?.stringValue == "2026-01-01T00:00:00Z")
        let response = api.control("POST", "/emulator/v1/clock", ["advance_seconds": 1])
        #expect(response.status == 400)
    }

    // MARK: Everything time-based follows the clock

    @Test func expiredAccessTokenIsRefusedThenRefreshWorks() throws {
        let (api, _) = try makeControlAPI()
        let session = api.signUp("ada@example.com")
        let token = try #require(session["access_token"]?.stringValue)
        let refreshToken = try #require(session["refresh_token"]?.stringValue)
        #expect(api.call("GET", "/user", bearer: token).status == 200)
        _ = api.control("POST", "/emulator/v1/clock", ["advance_seconds": 3601])
        let expired = api.call("GET", "/user", bearer: token)
        #expect(expired.status == 403)
        #expect(errorCode(expired) == "bad_jwt")
        let refreshed = api.refresh(refreshToken)
        #expect(refreshed.status == 200)
        let fresh = try #require(refreshed.json["access_token"]?.stringValue)
        #expect(claims(of: fresh)["iat"]?.int64Value == Int64(1_767_225_600 + 3601))
        #expect(api.call("GET", "/user", bearer: fresh).status == 200)
    }

    @Test func sessionTimeboxFollowsTheClock() throws {
        let (api, _) = try makeControlAPI { $0.sessions.timeboxSeconds = 600 }
        let session = api.signUp("ada@example.com")
        let refreshToken = try #require(session["refresh_token"]?.stringValue)
        _ = api.control("POST", "/emulator/v1/clock", ["advance_seconds": 601])
        let response = api.refresh(refreshToken)
        #expect(response.status == 400)
        #expect(errorCode(response) == "session_expired")
    }

    @Test func refreshReuseIntervalFollowsTheClock() throws {
        let (api, _) = try makeControlAPI()
        let session = api.signUp("ada@example.com")
        let parent = try #require(session["refresh_token"]?.stringValue)
        let child = try #require(api.refresh(parent).json["refresh_token"]?.stringValue)
        #expect(api.refresh(child).status == 200)
        // Within the 10 s reuse interval a revoked token still works ...
        _ = api.control("POST", "/emulator/v1/clock", ["advance_seconds": 5])
        #expect(api.refresh(parent).status == 200)
        // ... past it, reusing one is refused.
        _ = api.control("POST", "/emulator/v1/clock", ["advance_seconds": 6])
        let reused = api.refresh(child)
        #expect(reused.status == 400)
        #expect(errorCode(reused) == "refresh_token_already_used")
    }

    @Test func bansExpireWithTheClock() throws {
        let (api, _) = try makeControlAPI()
        let seeded = api.control("POST", "/emulator/v1/seed", [
            "users": [["email": "ban@example.com", "password": "password1", "email_confirm": true, "ban_duration": "1h"]],
        ])
        #expect(seeded.status == 200)
        #expect(errorCode(api.signIn("ban@example.com")) == "user_banned")
        _ = api.control("POST", "/emulator/v1/clock", ["advance_seconds": 3601])
        #expect(api.signIn("ban@example.com").status == 200)
    }
}
