import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// Reference §6.1: per-client token buckets, their keys and the presets.
@Suite("Rate limits")
struct RateLimitTests {
    func signIn(_ api: GoTrueAPI, headers: HTTPHeaders = [:], remote: String = "127.0.0.1") -> Int {
        var headers = headers
        headers["Host"] = "127.0.0.1"
        let body = #"{"email": "nobody@example.com", "password": "password1"}"#
        let request = HTTPRequest(method: "POST", target: "/token?grant_type=password", headers: headers, body: Array(body.utf8),
                                  remoteAddress: remote)
        return api.respond(to: request).status
    }

    @Test func withoutAKeyHeaderNothingIsLimited() throws {
        // As GoTrue (and `supabase start`, which sets no GOTRUE_RATE_LIMIT_HEADER): no key, no limit.
        let api = try makeAPI()
        #expect((0..<40).map { _ in signIn(api) }.allSatisfy { $0 == 400 })
    }

    @Test func tokenBucketHasABurstOf30AndRefillsOnTheClock() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.rateLimits.header = "X-Forwarded-For" }
        let key: HTTPHeaders = ["X-Forwarded-For": "203.0.113.7, 10.0.0.1"]
        // 30 rapid requests pass (to the handler's 400), the 31st is limited.
        #expect((0..<30).map { _ in signIn(api, headers: key) }.allSatisfy { $0 == 400 })
        let limited = api.call("POST", "/token?grant_type=password", ["email": "a@b.co", "password": "x"], headers: key)
        #expect(limited.status == 429)
        #expect(limited.json["error_code"] == "over_request_rate_limit")
        #expect(limited.json["msg"] == "Request rate limit reached")
        #expect(limited.headers["Retry-After"] == nil)
        #expect(limited.headers["X-RateLimit-Limit"] == nil)
        // Other keys have their own buckets; the first comma-separated value is the key.
        #expect(signIn(api, headers: ["X-Forwarded-For": "198.51.100.1"]) == 400)
        #expect(signIn(api, headers: ["X-Forwarded-For": "203.0.113.7"]) == 429)
        // 150 per 5 minutes = one token every 2 s of (virtual) time.
        clock.advance(seconds: 1.9)
        #expect(signIn(api, headers: key) == 429)
        clock.advance(seconds: 0.2)
        #expect(signIn(api, headers: key) == 400)
        #expect(signIn(api, headers: key) == 429)
        // An empty first value is no key at all.
        #expect(signIn(api, headers: ["X-Forwarded-For": " , 203.0.113.7"]) == 400)
    }

    @Test func unknownGrantsAreNotLimited() throws {
        let api = try makeAPI { $0.rateLimits.preset = .tiny }
        for _ in 0..<6 {
            #expect(api.call("POST", "/token?grant_type=bogus", [:]).status == 400)
        }
    }

    @Test func tinyPresetKeysOnThePeerAddress() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.rateLimits.preset = .tiny }
        #expect((0..<3).map { _ in signIn(api) } == [400, 400, 400])
        #expect(signIn(api) == 429)
        #expect(signIn(api, remote: "127.0.0.2") == 400)
        // 3 per 5 minutes: one more after 100 s.
        clock.advance(seconds: 100)
        #expect(signIn(api) == 400)
        #expect(signIn(api) == 429)
        // Switching preset at runtime starts every bucket afresh; `off` limits nothing.
        api.project.configuration.rateLimits.preset = .off
        #expect((0..<10).map { _ in signIn(api) }.allSatisfy { $0 == 400 })
        api.project.configuration.rateLimits.preset = .real
        #expect((0..<30).map { _ in signIn(api) }.allSatisfy { $0 == 400 })
        #expect(signIn(api) == 429)
    }

    @Test func endpointGroupsHaveTheirOwnBuckets() throws {
        let api = try makeAPI {
            $0.rateLimits.preset = .tiny
            $0.external.anonymousUsersEnabled = true
        }
        let sessions = (0..<3).map { index in api.signUp("user\(index)@example.com") }
        #expect(sessions.allSatisfy { $0["access_token"] != nil })
        let fourth = api.call("POST", "/signup", ["email": "user3@example.com", "password": "password1"])
        #expect(fourth.status == 429)
        // Anonymous sign-ins, sign-ins and PUT /user keep their own counts.
        #expect(api.call("POST", "/signup", [:]).status == 200)
        #expect(signIn(api) == 400)
        let access = sessions[0]["access_token"]?.stringValue ?? ""
        for _ in 0..<3 { #expect(api.call("PUT", "/user", ["data": ["a": 1]], bearer: access).status == 200) }
        #expect(api.call("PUT", "/user", ["data": ["a": 2]], bearer: access).status == 429)
        // requireAuthentication runs before the limiter: a bad token is a 401, not a 429.
        #expect(api.call("PUT", "/user", ["data": [:]]).status == 401)
        // GET /user is never limited.
        #expect(api.call("GET", "/user", bearer: access).status == 200)
    }

    @Test func anonymousBucketBurstEqualsItsValue() throws {
        let api = try makeAPI {
            $0.rateLimits.keyOnPeerAddress = true
            $0.rateLimits.anonymousUsers = 2
            $0.external.anonymousUsersEnabled = true
        }
        #expect(api.call("POST", "/signup", [:]).status == 200)
        #expect(api.call("POST", "/signup", [:]).status == 200)
        #expect(api.call("POST", "/signup", [:]).status == 429)
    }

    @Test func sbForwardedForComesFirstWhenEnabled() throws {
        var settings = RateLimitSettings()
        settings.header = "X-Real-IP"
        let request = HTTPRequest(method: "POST", target: "/token", headers: ["Sb-Forwarded-For": "192.0.2.9, 10.0.0.1", "X-Real-IP": "198.51.100.2"])
        #expect(settings.clientKey(for: request) == "198.51.100.2")
        settings.sbForwardedForEnabled = true
        #expect(settings.clientKey(for: request) == "192.0.2.9")
        // Not an IP: fall back to the configured header.
        let spoofed = HTTPRequest(method: "POST", target: "/token", headers: ["Sb-Forwarded-For": "evil", "X-Real-IP": "198.51.100.2"])
        #expect(settings.clientKey(for: spoofed) == "198.51.100.2")
        #expect(RateLimitSettings.isIPAddress("2001:db8::1"))
        #expect(!RateLimitSettings.isIPAddress("256.1.1.1"))
        // sbff keys on `net.ParseIP(key).String()`: one client however it is spelled; a leading
        // zero is no address (Go 1.17 on).
        for (spelled, key) in [("2001:DB8::5", "2001:db8::5"), ("2001:db8:0:0::5", "2001:db8::5"), ("::ffff:192.0.2.9", "192.0.2.9"),
                               ("01.2.3.4", "198.51.100.2")] {
            let request = HTTPRequest(method: "POST", target: "/token", headers: ["Sb-Forwarded-For": spelled, "X-Real-IP": "198.51.100.2"])
            #expect(settings.clientKey(for: request) == key, "\(spelled)")
        }
        settings.header = ""
        #expect(settings.clientKey(for: HTTPRequest(method: "GET", target: "/")) == nil)
        settings.keyOnPeerAddress = true
        #expect(settings.clientKey(for: HTTPRequest(method: "GET", target: "/", remoteAddress: "::1")) == "::1")
    }

    @Test func bucketsBelongToOneProject() throws {
        let a = try makeAPI { $0.rateLimits.preset = .tiny }
        let b = try makeAPI { $0.rateLimits.preset = .tiny }
        for _ in 0..<3 { _ = signIn(a) }
        #expect(signIn(a) == 429)
        #expect(signIn(b) == 400)
    }

    /// The rules of apilimiter.New: rate = value / window, bursts, TTLs.
    @Test func rulesFollowTheRealLimiters() {
        let settings = RateLimitSettings()
        #expect(settings.rule(for: .token) == RateLimitRule(events: 150, window: 300, burst: 30, ttl: 3600))
        #expect(settings.rule(for: .signups) == RateLimitRule(events: 30, window: 300, burst: 30, ttl: 3600))
        #expect(settings.rule(for: .anonymousSignIns) == RateLimitRule(events: 30, window: 3600, burst: 30, ttl: 3600))
        #expect(settings.rule(for: .factorVerify) == RateLimitRule(events: 15, window: 60, burst: 30, ttl: 60))
        #expect(settings.rule(for: .oauthClientRegister)?.events == 10)
        var off = settings
        off.preset = .off
        #expect(off.rule(for: .token) == nil)
    }
}

@Suite struct ResetForgetsLimitsTests {
    @Test func resetClearsRateLimitBuckets() throws {
        let api = try makeAPI { $0.rateLimits.header = "X-Forwarded-For" }
        let key: HTTPHeaders = ["X-Forwarded-For": "203.0.113.9"]
        for _ in 0..<30 { _ = api.call("POST", "/token?grant_type=password", ["email": "a@b.co", "password": "x"], headers: key) }
        #expect(api.call("POST", "/token?grant_type=password", ["email": "a@b.co", "password": "x"], headers: key).status == 429)
        try Reset(project: api.project).run(keepSeed: false)
        #expect(api.call("POST", "/token?grant_type=password", ["email": "a@b.co", "password": "x"], headers: key).status == 400)
    }
}
