import AuthHTTP
import AuthJSON
import EmulatorTools
import GoTrue
import Testing
@testable import AuthScenarios

@Suite("Request journal")
struct JournalTests {
    @Test func recordsRequestsWithoutSecrets() throws {
        let h = try Harness()
        #expect(h.signUp("j@example.com", headers: ["X-Emulator-Test": "t1"]).status == 200)
        let session = h.signIn("j@example.com").json
        let token = try #require(session["refresh_token"]?.stringValue)
        try h.load(#"{"name": "one", "rules": [{"match": {"op": "token.refresh_token"}, "when": {"times": 1}, "then": {"reset": true}}]}"#)
        _ = h.refresh(token)
        _ = h.refresh(token)
        _ = h.call("GET", "/no-such-route?token=secret123&type=signup")
        _ = h.control("GET", "/scenarios")  // control routes are not recorded

        let listing = h.control("GET", "/journal")
        #expect(listing.status == 200)
        let entries = try #require(listing.json["entries"]?.arrayValue)
        #expect(entries.count == 5)
        #expect(entries.map { $0["op"]?.stringValue } == ["signup", "token.password", "token.refresh_token", "token.refresh_token", nil])
        #expect(entries.map { $0["status"]?.intValue } == [200, 200, nil, 200, 404])
        #expect(entries[0]["test"] == "t1")
        #expect(entries[0]["time"] == "2026-01-01T00:00:00Z")
        #expect(entries[2]["rule"] == "one#0")
        #expect(entries[2]["fault"] == "reset")
        #expect(entries[1]["query"] == ["grant_type": "password"])
        #expect(entries[4]["query"]?["token"] == "[redacted]")
        #expect(entries[4]["query"]?["type"] == "signup")
        #expect(entries[1]["latency_ms"]?.doubleValue ?? -1 >= 0)
        // Nothing secret anywhere in the journal.
        let text = listing.text
        #expect(!text.contains("password1"))
        #expect(!text.contains(token))
        #expect(!text.contains("secret123"))
        #expect(!text.contains(session["access_token"]?.stringValue ?? "-"))
    }

    @Test func filtersAndCounts() throws {
        let h = try Harness()
        _ = h.signUp("f@example.com")
        let token = h.signIn("f@example.com").json["refresh_token"]?.stringValue ?? ""
        h.clock.advance(seconds: 60)
        _ = h.refresh(token)
        _ = h.signIn("f@example.com", headers: ["X-Emulator-Test": "t2"])
        _ = h.call("POST", "/token?grant_type=password", ["email": "f@example.com", "password": "wrong-one"])

        func count(_ query: String) -> Int? { h.control("GET", "/journal/count" + query).json["count"]?.intValue }
        #expect(count("") == 5)
        #expect(count("?op=token.refresh_token") == 1)
        #expect(count("?op=token.*") == 4)
        #expect(count("?status=400") == 1)
        #expect(count("?status=2xx") == 4)
        #expect(count("?status=none") == 0)
        #expect(count("?test=t2") == 1)
        #expect(count("?since=2") == 3)
        #expect(count("?since=2026-01-01T00:01:00Z") == 3)
        #expect(count("?op=token.password&status=200") == 2)
        #expect(h.control("GET", "/journal?limit=2").json["entries"]?.arrayValue?.map { $0["id"]?.intValue } == [4, 5])
        #expect(h.control("GET", "/journal/count?status=abc").status == 400)
        #expect(h.control("GET", "/journal?since=yesterday").status == 400)

        #expect(h.control("DELETE", "/journal").status == 204)
        #expect(count("") == 0)
        _ = h.call("GET", "/health")
        // Ids keep increasing after a clear, so `since` stays meaningful.
        #expect(h.control("GET", "/journal").json["entries"]?[0]?["id"] == 6)
    }

    @Test func ringBufferKeepsTheMostRecent() throws {
        let journal = Journal(capacity: 3)
        for index in 0..<7 {
            journal.record(JournalEntry(id: 0, time: Timestamp(seconds: Int64(index)), operation: "health", method: "GET", path: "/health",
                                        viaGateway: false, query: [], status: 200, latencyMilliseconds: 0, rule: nil, fault: nil, test: nil))
        }
        #expect(journal.entries().map(\.id) == [5, 6, 7])
        #expect(journal.count(JournalFilter(afterID: 5)) == 2)
        let off = Journal(capacity: 0)
        off.record(journal.entries()[0])
        #expect(off.entries().isEmpty)
    }

    /// A 429 from a send limit is GoTrue's behaviour, not a fault: its entry says so, and how a
    /// test sends another mail; other entries carry no hint.
    @Test func sendLimitAnswersCarryAHint() throws {
        var entry = JournalEntry(id: 1, time: Timestamp(seconds: 0), operation: "otp", method: "POST", path: "/otp",
                                 viaGateway: false, query: [], status: 429, latencyMilliseconds: 0, rule: nil, fault: nil, test: nil)
        entry.errorCode = "over_email_send_rate_limit"
        let hint = try #require(entry.json["hint"]?.stringValue)
        #expect(hint.contains("email.max_frequency") && hint.contains("POST /emulator/v1/clock"))
        entry.errorCode = "over_request_rate_limit"
        #expect(entry.json["hint"] == nil)
    }
}
