// Each transport fault as a raw client sees it, over a real loopback socket.
import AuthHTTP
import AuthJSON
import Foundation
import EmulatorTools
import GoTrue
import Testing
@testable import AuthScenarios

@Suite("Transport faults on the wire")
struct TransportFaultTests {
    let signup = #"{"email": "wire@example.com", "password": "password1"}"#

    @Test func hangNeverAnswersUntilTheClientGivesUp() throws {
        let h = try Harness()
        try h.load(#"{"name": "hang", "rules": [{"match": {"op": "signup"}, "when": {"times": 1}, "then": {"hang": true}}]}"#)
        try withServer(h) { port in
            let client = try TestClient(port: port)
            try client.post("/signup", signup)
            let (bytes, end) = client.readAll(timeout: 0.8)
            #expect(bytes.isEmpty)
            #expect(end == .stillOpen)
            // Nothing was written: the retry signs up for real.
            let retry = try TestClient(port: port)
            try retry.post("/signup", signup)
            #expect(try retry.readResponse().status == 200)
        }
        #expect(h.journal.entries().first?.fault == "hang")
        #expect(h.journal.entries().first?.status == nil)
    }

    @Test func resetSendsRST() throws {
        let h = try Harness()
        try h.load(#"{"name": "reset", "rules": [{"match": {"op": "signup"}, "then": {"reset": true}}]}"#)
        try withServer(h) { port in
            let client = try TestClient(port: port)
            try client.post("/signup", signup)
            let (bytes, end) = client.readAll()
            #expect(bytes.isEmpty)
            #expect(end == .reset)
        }
    }

    @Test func closeAfterBytesTruncates() throws {
        let h = try Harness()
        try h.load(#"{"name": "cut", "rules": [{"match": {"op": "signup"}, "then": {"passthrough_then": {"close_after_bytes": 500}}}]}"#)
        try withServer(h) { port in
            let client = try TestClient(port: port)
            try client.post("/signup", signup)
            let (bytes, end) = client.readAll()
            #expect(bytes.count == 500)
            #expect(end == .closed)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            // The announced length is the whole session's, far beyond what arrived.
            let length = text.split(separator: "\r\n").first { $0.hasPrefix("Content-Length: ") }.flatMap { Int($0.dropFirst(16)) }
            #expect((length ?? 0) > 500, "\(text)")
            #expect(text.contains("\r\n\r\n{\"access_token\":"))
        }
    }

    @Test func emptyResponseClosesWithoutAStatusLine() throws {
        let h = try Harness()
        try h.load(#"{"name": "empty", "rules": [{"match": {"op": "health"}, "then": {"empty_response": true}}]}"#)
        try withServer(h) { port in
            let client = try TestClient(port: port)
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            let (bytes, end) = client.readAll()
            #expect(bytes.isEmpty)
            #expect(end == .closed)
        }
    }

    @Test func malformedJSONArrivesWithTheRightHeaders() throws {
        let h = try Harness()
        try h.load(#"{"name": "bad", "rules": [{"match": {"op": "health"}, "then": {"malformed_json": true}}]}"#)
        try withServer(h) { port in
            let client = try TestClient(port: port)
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200 && response.reason == "OK")
            #expect(response.header("Content-Type") == "application/json")
            #expect((try? JSON(parsing: response.body)) == nil)
        }
    }

    @Test func delayAndDripPaceTheRealResponse() throws {
        let h = try Harness()
        try h.load(#"{"name": "slow", "rules": [{"match": {"op": "health"}, "then": {"delay_ms": 300, "drip": {"chunks": 3, "duration_ms": 400}}}]}"#)
        try withServer(h) { port in
            let client = try TestClient(port: port)
            let start = monotonicSeconds()
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            // Nothing for the delay, then the head and a first piece, the rest 400 ms later.
            client.setReceiveTimeout(0.2)
            var byte: UInt8 = 0
            #expect(recv(client.fd, &byte, 1, 0) < 0)
            client.setReceiveTimeout(30)
            let response = try client.readResponse()
            let elapsed = monotonicSeconds() - start
            #expect(response.status == 200)
            #expect((try? JSON(parsing: response.body))?["name"] == "GoTrue")
            // Both pacings were honoured (300 ms, then 400 ms between first and last piece).
            #expect(elapsed >= 0.65)
        }
    }
}
