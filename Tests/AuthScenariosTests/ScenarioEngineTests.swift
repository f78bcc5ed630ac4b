import AuthHTTP
import AuthJSON
import EmulatorTools
import GoTrue
import Testing
@testable import AuthScenarios

@Suite("Matching, sequencing and states")
struct ScenarioEngineTests {
    /// Statuses of `count` GET /health calls (always 200 without a scenario).
    func healthStatuses(_ h: Harness, _ count: Int, headers: HTTPHeaders = [:]) -> [Int] {
        (0..<count).map { _ in h.call("GET", "/health", headers: headers).status }
    }

    @Test func timesFiresOnTheFirstN() throws {
        let h = try Harness()
        try h.load(#"{"name": "s", "rules": [{"match": {"op": "health"}, "when": {"times": 2}, "then": {"status": 503}}]}"#)
        #expect(healthStatuses(h, 4) == [503, 503, 200, 200])
    }

    @Test func nthEveryAfter() throws {
        let h = try Harness()
        try h.load(#"{"name": "nth", "rules": [{"match": {"op": "health"}, "when": {"nth": 3}, "then": {"status": 500}}]}"#)
        #expect(healthStatuses(h, 5) == [200, 200, 500, 200, 200])
        try h.load(#"{"name": "nth", "rules": [{"match": {"op": "health"}, "when": {"every": 2}, "then": {"status": 500}}]}"#)
        #expect(healthStatuses(h, 5) == [200, 500, 200, 500, 200])
        try h.load(#"{"name": "nth", "rules": [{"match": {"op": "health"}, "when": {"after": 2}, "then": {"status": 500}}]}"#)
        #expect(healthStatuses(h, 4) == [200, 200, 500, 500])
        // `times` counts firings: after two skipped requests, exactly one fires.
        try h.load(#"{"name": "nth", "rules": [{"match": {"op": "health"}, "when": {"after": 2, "times": 1}, "then": {"status": 500}}]}"#)
        #expect(healthStatuses(h, 5) == [200, 200, 500, 200, 200])
    }

    /// `window_ms`: every matching request fires from the first firing until the window closes on
    /// the project's clock, then none; a reset opens a fresh window at the next firing.
    @Test func windowFiresOnEveryRequestUntilItCloses() throws {
        let h = try Harness()
        try h.load(#"{"name": "w", "rules": [{"match": {"op": "health"}, "when": {"window_ms": 5000}, "then": {"status": 503}}]}"#)
        // Activation does not start the window: the first firing does.
        h.clock.advance(seconds: 60)
        let opened = h.project.environment.now()
        #expect(healthStatuses(h, 3) == [503, 503, 503])
        let listed = h.control("GET", "/scenarios/w").json["rules"]?[0]
        #expect(listed?["window_closes_at"] == .string(opened.adding(seconds: 5).rfc3339))
        #expect(listed?["fired"] == 3)
        h.clock.advance(seconds: 4.5)
        #expect(healthStatuses(h, 1) == [503])
        h.clock.advance(seconds: 0.5)
        #expect(healthStatuses(h, 2) == [200, 200])
        h.clock.advance(seconds: 3600)
        #expect(healthStatuses(h, 1) == [200])
        #expect(h.control("GET", "/scenarios/w").json["rules"]?[0]?["matched"] == 7)

        #expect(h.control("POST", "/scenarios/w/reset").status == 200)
        #expect(h.control("GET", "/scenarios/w").json["rules"]?[0]?["window_closes_at"] == nil)
        #expect(healthStatuses(h, 2) == [503, 503])
        h.clock.advance(seconds: 5)
        #expect(healthStatuses(h, 1) == [200])
    }

    @Test func windowOpensAtTheFirstFiringAndCombines() throws {
        let h = try Harness()
        // Skipped requests do not open the window; it opens at the third request.
        try h.load(#"{"name": "w", "rules": [{"match": {"op": "health"}, "when": {"after": 2, "window_ms": 1000}, "then": {"status": 500}}]}"#)
        #expect(healthStatuses(h, 2) == [200, 200])
        h.clock.advance(seconds: 10)
        #expect(healthStatuses(h, 1) == [500])
        h.clock.advance(seconds: 0.5)
        #expect(healthStatuses(h, 1) == [500])
        h.clock.advance(seconds: 0.5)
        #expect(healthStatuses(h, 1) == [200])
        // `times` still caps the firings inside the window.
        try h.load(#"{"name": "w", "rules": [{"match": {"op": "health"}, "when": {"times": 2, "window_ms": 60000}, "then": {"status": 500}}]}"#)
        #expect(healthStatuses(h, 3) == [500, 500, 200])
        // A state-bound window: the rule fires only in its state, inside its window.
        try h.load("""
            {"name": "w", "rules": [
              {"match": {"op": "settings"}, "when": {"next_state": "down", "times": 1}, "then": {"status": 418}},
              {"match": {"op": "health"}, "when": {"state": "down", "window_ms": 2000}, "then": {"status": 503}}
            ]}
            """)
        #expect(healthStatuses(h, 1) == [200])
        #expect(h.call("GET", "/settings").status == 418)
        h.clock.advance(seconds: 30)
        #expect(healthStatuses(h, 2) == [503, 503])
        h.clock.advance(seconds: 2)
        #expect(healthStatuses(h, 1) == [200])
    }

    @Test func probabilityIsSeededAndReplayable() throws {
        func run(seed: Int) throws -> [Int] {
            let h = try Harness()
            try h.load(#"{"name": "p", "seed": \#(seed), "rules": [{"match": {}, "when": {"probability": 0.3}, "then": {"status": 500}}]}"#)
            return healthStatuses(h, 200)
        }
        let first = try run(seed: 42)
        #expect(try run(seed: 42) == first)
        #expect(try run(seed: 43) != first)
        let failures = first.filter { $0 == 500 }.count
        #expect(failures > 35 && failures < 85)  // ~60 expected
    }

    @Test func randomSeedIsReportedAndResetReplaysIt() throws {
        let h = try Harness()
        try h.load(#"{"name": "p", "rules": [{"match": {}, "when": {"probability": 0.5}, "then": {"status": 500}}]}"#)
        let listed = h.control("GET", "/scenarios").json["scenarios"]?[0]
        #expect(listed?["seed"]?.doubleValue != nil)
        #expect(listed?["seed_given"] == false)
        let first = healthStatuses(h, 50)
        #expect(h.control("POST", "/scenarios/p/reset").status == 200)
        #expect(healthStatuses(h, 50) == first)
        // The reported seed replays the run in a fresh project.
        let seed = Int(listed!["seed"]!.doubleValue!)
        let other = try Harness()
        try other.load(#"{"name": "p", "seed": \#(seed), "rules": [{"match": {}, "when": {"probability": 0.5}, "then": {"status": 500}}]}"#)
        #expect(healthStatuses(other, 50) == first)
    }

    @Test func statesMoveLikeWireMock() throws {
        let h = try Harness()
        try h.load("""
            {"name": "machine", "rules": [
              {"match": {"op": "health"}, "when": {"state": "started", "next_state": "down"}, "then": {"status": 500}},
              {"match": {"op": "health"}, "when": {"state": "down", "times": 2}, "then": {"status": 503}},
              {"match": {"op": "settings"}, "when": {"state": "down", "next_state": "started"}, "then": {"status": 418}}
            ]}
            """)
        #expect(healthStatuses(h, 4) == [500, 503, 503, 200])
        #expect(h.control("GET", "/scenarios/machine").json["state"] == "down")
        #expect(h.call("GET", "/settings").status == 418)
        // Back in `started`: the first rule fires again; the second has used its two firings.
        #expect(healthStatuses(h, 2) == [500, 200])
        let rules = h.control("GET", "/scenarios/machine").json["rules"]?.arrayValue ?? []
        #expect(rules.map { $0["fired"]?.intValue } == [2, 2, 1])
        #expect(rules.map { $0["matched"]?.intValue } == [2, 4, 1])
    }

    @Test func firstFiringRuleWinsAcrossScenariosInOrder() throws {
        let h = try Harness()
        try h.load(#"{"name": "a", "rules": [{"match": {"op": "health"}, "when": {"times": 1}, "then": {"status": 501}}]}"#)
        try h.load(#"{"name": "b", "rules": [{"match": {"op": "health"}, "then": {"status": 502}}]}"#)
        #expect(healthStatuses(h, 3) == [501, 502, 502])
        #expect(h.control("DELETE", "/scenarios/b").status == 204)
        #expect(healthStatuses(h, 1) == [200])
        #expect(h.control("DELETE", "/scenarios/b").status == 404)
    }

    @Test func matchConditions() throws {
        let h = try Harness()
        try h.load("""
            {"name": "m", "rules": [
              {"match": {"method": "POST", "path": "/sign*", "body": {"email": "target@example.com", "data.plan": "pro"}}, "then": {"status": 451}},
              {"match": {"op": "token.*", "query": {"grant_type": "password"}, "headers": {"X-Client": "ios"}}, "then": {"status": 452}},
              {"match": {"op": "user.get", "headers": {"Authorization": false}}, "then": {"status": 453}},
              {"match": {"path": "/health", "headers": {"X-Probe": true}}, "then": {"status": 454}}
            ]}
            """)
        let target: JSON = ["email": "target@example.com", "password": "password1", "data": ["plan": "pro"]]
        #expect(h.call("POST", "/signup", target).status == 451)
        let free: JSON = ["email": "target@example.com", "password": "password1", "data": ["plan": "free"]]
        #expect(h.call("POST", "/signup", free).status == 200)
        #expect(h.signUp("other@example.com").status == 200)
        #expect(h.signIn("other@example.com", headers: ["X-Client": "ios"]).status == 452)
        #expect(h.signIn("other@example.com", headers: ["X-Client": "web"]).status == 200)
        #expect(h.call("GET", "/user").status == 453)
        #expect(h.call("GET", "/user", bearer: "x").status == 403)
        #expect(h.call("GET", "/health", headers: ["X-Probe": "1"]).status == 454)
        #expect(h.call("GET", "/auth/v1/health", headers: ["X-Probe": "1", "apikey": h.project.configuration.apiKeys.anon]).status == 454)
        #expect(h.call("GET", "/health").status == 200)
    }

    @Test func testScopeIsolatesRequests() throws {
        let h = try Harness()
        try h.load(#"{"name": "scoped", "test": "test-a", "rules": [{"match": {"op": "health"}, "then": {"status": 500}}]}"#)
        #expect(healthStatuses(h, 1) == [200])
        #expect(healthStatuses(h, 1, headers: ["X-Emulator-Test": "test-b"]) == [200])
        #expect(healthStatuses(h, 2, headers: ["X-Emulator-Test": "test-a"]) == [500, 500])
    }

    /// The listing names each rule's test scope as it applies: the file's `test` (absent from
    /// the rule as written), a rule's own `match.test` over it, `null` for a rule that sees
    /// every request, so a scoped rule never reads as global.
    @Test func listingNamesEachRulesTestScope() throws {
        let h = try Harness()
        try h.load(#"""
            {"name": "scoped", "test": "checkout-17", "rules": [{"match": {"op": "health"}, "then": {"status": 500}},
             {"match": {"op": "settings", "test": "checkout-18"}, "then": {"status": 500}}]}
            """#)
        try h.load(#"{"name": "global", "rules": [{"match": {"op": "jwks"}, "then": {"status": 500}}]}"#)
        let scoped = h.control("GET", "/scenarios/scoped").json["rules"]?.arrayValue ?? []
        #expect(scoped.map { $0["test"] } == [.string("checkout-17"), .string("checkout-18")])
        let global = h.control("GET", "/scenarios/global").json["rules"]?.arrayValue ?? []
        #expect(global.map { $0["test"] } == [.null])
        let all = h.control("GET", "/scenarios").json["scenarios"]?[0]?["rules"]?[0]?["test"]
        #expect(all == .string("checkout-17"))
    }

    @Test func controlRoutesAreNeverMatchedAndNeedTheServiceRole() throws {
        let h = try Harness()
        try h.load(#"{"name": "all", "rules": [{"match": {}, "then": {"status": 500}}]}"#)
        #expect(h.control("GET", "/scenarios").status == 200)
        #expect(h.call("GET", GoTrueAPI.emulatorPrefix + "/scenarios").status == 401)
        #expect(h.call("GET", GoTrueAPI.emulatorPrefix + "/scenarios", bearer: h.project.configuration.apiKeys.anon).status == 403)
    }

    @Test func controlRoutesLoadValidateAndClear() throws {
        let h = try Harness()
        let created = h.control("POST", "/scenarios", raw: #"{"name": "posted", "seed": 7, "rules": [{"match": {"op": "health"}, "then": {"status": 503}}]}"#)
        #expect(created.status == 201)
        #expect(created.json["name"] == "posted")
        #expect(created.json["seed"] == 7)
        #expect(h.call("GET", "/health").status == 503)

        let bad = h.control("POST", "/scenarios", raw: #"{"name": "bad", "rules": [{"match": {"op": "nope"}, "then": {"reset": true}}]}"#)
        #expect(bad.status == 400)
        #expect(bad.json["error_code"] == "validation_failed")
        #expect(bad.json["msg"]?.stringValue?.contains("request: rule 0: rules[0].match.op: unknown operation \"nope\"") == true)
        #expect(h.control("GET", "/scenarios/bad").status == 404)

        #expect(h.control("DELETE", "/scenarios").status == 204)
        #expect(h.control("GET", "/scenarios").json["scenarios"] == [])
        #expect(h.call("GET", "/health").status == 200)
        #expect(h.control("POST", "/scenarios/none/reset").status == 404)
    }
}
