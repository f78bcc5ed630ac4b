// Transport directives and graceful shutdown, over real sockets.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import Testing
@testable import AuthHTTP

@Suite("Response directives and shutdown")
struct ResponseDirectiveTests {
    @Test func delayHoldsTheResponseWithoutBlockingOthers() throws {
        // One worker only: if the delay occupied it, the second request would wait too. The
        // held response is due only long after any wait of this test, so "answered while the
        // other is still held" is an order, not a race against the machine's speed.
        let responder = ObservedResponder(signalled: ["/delay"])
        try withServer({ $0.workerThreads = 1; $0.loopThreads = 1 }, responder: responder) { server in
            let held = try TestClient(port: server.port)
            try held.send("GET /delay?ms=60000 HTTP/1.1\r\nHost: h\r\n\r\n")
            // The worker produced the held response and is free again.
            #expect(responder.awaitEntered())

            let other = try TestClient(port: server.port)
            try other.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try other.readResponse().text == "ok")
            #expect(held.receivedSoFar().isEmpty, "the held response went out before its delay")

            // The delay is honoured: nothing comes before it has passed.
            let delayed = try TestClient(port: server.port)
            let start = monotonicSeconds()
            try delayed.send("GET /delay?ms=600 HTTP/1.1\r\nHost: h\r\n\r\n")
            let response = try delayed.readResponse()
            #expect(response.text == "delayed")
            #expect(monotonicSeconds() - start >= 0.6)
            #expect(held.receivedSoFar().isEmpty)
            // The held response is cut off by the shutdown at the end of `withServer`.
        }
    }

    @Test func blockingJobsRunInParallelAfterFastOnes() throws {
        // Each blocking job waits until the test has seen all four running at once, so they can
        // only finish if each got a worker of its own rather than queuing behind one.
        let responder = ObservedResponder(signalled: ["/slow"], gated: ["/slow"])
        try withServer({ $0.workerThreads = 4; $0.loopThreads = 1 }, responder: responder) { server in
            // Many quick responses first teach the pool that jobs are short...
            let warm = try TestClient(port: server.port)
            for _ in 0..<200 {
                try warm.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
                _ = try warm.readResponse()
            }
            // ...then four blocking ones must still get a worker each, not queue behind one.
            let clients = try (0..<4).map { _ in try TestClient(port: server.port) }
            for client in clients { try client.send("GET /slow?ms=0 HTTP/1.1\r\nHost: h\r\n\r\n") }
            let allRunning = responder.awaitEntered(4)
            #expect(allRunning, "the blocking jobs did not all run at once")
            for _ in clients { responder.gate.signal() }
            guard allRunning else { return }
            for client in clients { #expect(try client.readResponse().text == "slow") }
        }
    }

    @Test func closeAfterBytesTruncatesTheResponse() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /close-after?n=10 HTTP/1.1\r\nHost: h\r\n\r\n")
            let bytes = try client.readToEnd()
            #expect(bytes.count == 10)
            #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 2")

            // N beyond the length: everything, then the close.
            let whole = try TestClient(port: server.port)
            try whole.send("GET /close-after?n=100000 HTTP/1.1\r\nHost: h\r\n\r\n")
            let text = String(decoding: try whole.readToEnd(), as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(text.hasSuffix("\r\n\r\n0123456789abcdefghij"))
        }
    }

    @Test func dripSendsTheBodyInPiecesOverTheDuration() throws {
        let body = "0123456789abcdefghij"
        try withServer({ $0.workerThreads = 1; $0.loopThreads = 1 }) { server in
            let client = try TestClient(port: server.port)
            let start = monotonicSeconds()
            try client.send("GET /drip?chunks=4&ms=1200 HTTP/1.1\r\nHost: h\r\n\r\n")
            // The head and the first quarter of the body arrive first, the last piece only a
            // whole duration later (pieces 400 ms apart, each timed after the one before)...
            #expect(client.awaitPeer(seconds: 30) == .data)
            let first = String(decoding: client.receivedSoFar(), as: UTF8.self)
            #expect(first.hasPrefix("HTTP/1.1 200"))
            #expect(!first.hasSuffix(body), "the whole body came at once")
            // ...the whole body only after the duration, and the connection stays usable.
            let response = try client.readResponse()
            #expect(response.text == body)
            #expect(monotonicSeconds() - start >= 1.15)

            // While one connection drips, the loop serves others: the quick answer comes
            // between the dripping response's first piece and its last.
            let slow = try TestClient(port: server.port)
            try slow.send("GET /drip?chunks=2&ms=1500 HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(slow.awaitPeer(seconds: 30) == .data)
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse().text == "ok")
            #expect(!String(decoding: slow.receivedSoFar(), as: UTF8.self).hasSuffix(body), "the drip was over before the quick answer")
            #expect(try slow.readResponse().text == body)
        }
    }

    @Test func closeAfterZeroBytesClosesWithoutAStatusLine() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /close-after?n=0 HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readToEnd().isEmpty)
        }
    }

    @Test func resetAbortsWithRST() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /reset HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(client.awaitPeer(seconds: 30) == .reset)
        }
    }

    @Test func stallNeverAnswersAndIgnoresPipelinedRequests() throws {
        try withServer({ $0.idleTimeout = .milliseconds(200) }) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /stall HTTP/1.1\r\nHost: h\r\n\r\nGET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            // Longer than the idle timeout: a stalled connection is not idle, it stays open.
            #expect(client.awaitPeer(seconds: 0.6) == .stillOpen)
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(client.awaitPeer(seconds: 0.3) == .stillOpen)

            // The server is otherwise fine.
            let other = try TestClient(port: server.port)
            try other.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try other.readResponse().status == 200)
        }
    }

    @Test func gracefulShutdownFinishesInFlightRequests() throws {
        /// `/gate` blocks its worker until the test opens the gate, so the order of events does
        /// not depend on scheduling.
        // Each gated request says when a worker has started it, so the stop below begins with
        // both surely in flight (a fixed sleep was not enough on a loaded machine).
        struct GatedResponder: HTTPResponder {
            let gate: DispatchSemaphore
            let entered: DispatchSemaphore
            func respond(to request: HTTPRequest) -> HTTPResponse {
                if request.path == "/gate" || request.path == "/gate2" {
                    entered.signal()
                    gate.wait()
                    return HTTPResponse(status: 200, body: Array((request.path == "/gate" ? "finished" : "delayed").utf8))
                }
                return TestResponder().respond(to: request)
            }
        }
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        var configuration = HTTPServerConfiguration(port: 0, loopThreads: 2, workerThreads: 2)
        configuration.idleTimeout = .seconds(30)
        let server = HTTPServer(configuration: configuration, responder: GatedResponder(gate: gate, entered: entered))
        try server.start()
        let port = server.port

        let idle = try TestClient(port: port)
        try idle.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try idle.readResponse().status == 200)

        let busy = try TestClient(port: port)
        try busy.send("GET /gate HTTP/1.1\r\nHost: h\r\n\r\n")
        let delayed = try TestClient(port: port)
        try delayed.send("GET /gate2 HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(entered.wait(timeout: .now() + 10) == .success)
        #expect(entered.wait(timeout: .now() + 10) == .success)

        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            server.shutdown(timeout: .seconds(10))
            stopped.signal()
        }
        // Idle keep-alive connections are closed right away...
        #expect(idle.awaitPeer(seconds: 30) == .closed)
        // ...while the in-flight requests are still running.
        gate.signal()
        gate.signal()

        let finished = try busy.readResponse()
        #expect(finished.text == "finished")
        // Answered during the drain: the client is told not to reuse the connection.
        #expect(finished.header("Connection") == "close")
        #expect(busy.awaitPeer(seconds: 30) == .closed)
        #expect(try delayed.readResponse().text == "delayed")

        #expect(stopped.wait(timeout: .now() + 30) == .success)
        server.waitUntilStopped()
        // Two requests were in flight (the gated one and the delayed one); the idle keep-alive
        // connection counts in neither figure.
        #expect(server.drainReport == DrainReport(finished: 2, cutOff: 0))
        server.shutdown()  // idempotent

        // Nothing listens any more.
        #expect(throws: (any Error).self) { _ = try TestClient(port: port) }
    }

    @Test func shutdownTimeoutForcesStalledConnectionsClosed() throws {
        let responder = ObservedResponder(signalled: ["/delay"])
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, loopThreads: 1, workerThreads: 1), responder: responder)
        try server.start()
        let client = try TestClient(port: server.port)
        try client.send("GET /delay?ms=60000 HTTP/1.1\r\nHost: h\r\n\r\n")
        // The request is in flight (its response held) before the stop begins.
        #expect(responder.awaitEntered())
        let start = monotonicSeconds()
        server.shutdown(timeout: .milliseconds(300))
        // The drain waited its time, then cut the held response off rather than wait it out:
        // the client sees the close, not the response.
        #expect(monotonicSeconds() - start >= 0.25)
        #expect(client.awaitPeer(seconds: 30) == .closed)
        #expect(server.drainReport == DrainReport(finished: 0, cutOff: 1))
    }

    @Test func shutdownBeforeStartAndFromAResponder() throws {
        let unused = HTTPServer(configuration: HTTPServerConfiguration(port: 0), responder: TestResponder())
        unused.shutdown()
        unused.waitUntilStopped()

        struct Stopper: HTTPResponder {
            let box: ServerBox
            func respond(to request: HTTPRequest) -> HTTPResponse {
                box.server?.shutdown(timeout: .seconds(2))
                return HTTPResponse(status: 200, body: Array("stopping".utf8))
            }
        }
        let box = ServerBox()
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, loopThreads: 1, workerThreads: 1), responder: Stopper(box: box))
        box.server = server
        try server.start()
        let client = try TestClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try client.readResponse().text == "stopping")
        server.waitUntilStopped()
    }
}

final class ServerBox: @unchecked Sendable {
    var server: HTTPServer?
}

@Suite struct BlockingIOTests {
    /// `/wait` waits inside `BlockingIO.perform` until the test opens the gate, as a worker
    /// calling a hook does.
    struct WaitingResponder: HTTPResponder {
        let gate: DispatchSemaphore
        func respond(to request: HTTPRequest) -> HTTPResponse {
            if request.path == "/wait" {
                BlockingIO.perform { gate.wait() }
                return HTTPResponse(status: 200, body: Array("waited".utf8))
            }
            return TestResponder().respond(to: request)
        }
    }

    @Test func workersWaitingOnOutgoingCallsAreStoodInFor() throws {
        let gate = DispatchSemaphore(value: 0)
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, loopThreads: 1, workerThreads: 2),
                                responder: WaitingResponder(gate: gate))
        try server.start()
        defer {
            for _ in 0..<6 { gate.signal() }
            server.shutdown()
        }
        // Three times as many waiting requests as workers.
        let waiting = try (0..<6).map { _ in
            let client = try TestClient(port: server.port)
            try client.send("GET /wait HTTP/1.1\r\nHost: h\r\n\r\n")
            return client
        }
        // Every other request is still answered while they wait: stand-ins serve the queue.
        for _ in 0..<20 {
            let quick = try TestClient(port: server.port)
            try quick.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(quick.awaitPeer(seconds: 30) == .data)
            #expect(try quick.readResponse().status == 200)
        }
        for _ in 0..<6 { gate.signal() }
        for client in waiting { #expect(try client.readResponse().text == "waited") }
    }

    /// `/wait/<lane>` waits in `BlockingIO.perform(refusing:)` until the test opens the gate, as a
    /// hook call does; a refusal is answered 422 `refused`.
    final class LaneWaitingResponder: HTTPResponder {
        struct Refused: Error {}
        let gate = DispatchSemaphore(value: 0)
        let entered = Atomic<Int>(0)
        func respond(to request: HTTPRequest) -> HTTPResponse {
            guard request.path.hasPrefix("/wait") else { return HTTPResponse(status: 200, body: Array("quick".utf8)) }
            do {
                try BlockingIO.perform(refusing: { Refused() }) { () throws(Refused) in
                    entered.add(1, ordering: .relaxed)
                    gate.wait()
                }
                return HTTPResponse(status: 200, body: Array("waited".utf8))
            } catch {
                return HTTPResponse(status: 422, body: Array("refused".utf8))
            }
        }
        func dispatch(_ request: HTTPRequest) -> HTTPDispatch {
            .queued(lane: request.path.hasSuffix("/2") ? 2 : 1)
        }
    }

    /// One lane (one project) whose calls hang cannot take every stand-in: past its bound its
    /// next calls are refused at once, while the calls it has are still held, and another lane's
    /// requests, waiting ones included, are served meanwhile.
    @Test func aLaneAtItsBoundIsRefusedAtOnceWhileOtherLanesAreServed() throws {
        let responder = LaneWaitingResponder()
        var configuration = HTTPServerConfiguration(port: 0, loopThreads: 1, workerThreads: 2)
        configuration.maxBlockedPerLane = 3
        let server = HTTPServer(configuration: configuration, responder: responder)
        try server.start()
        let released = Atomic<Bool>(false)
        defer {
            if !released.load(ordering: .relaxed) { for _ in 0..<8 { responder.gate.signal() } }
            server.shutdown()
        }
        let held = try (0..<3).map { _ in
            let client = try TestClient(port: server.port)
            try client.send("GET /wait/1 HTTP/1.1\r\nHost: h\r\n\r\n")
            return client
        }
        #expect(waitUntil { responder.entered.load(ordering: .relaxed) == 3 })
        // The gate is shut: every overflow answer arrives while the three calls are still held.
        for _ in 0..<5 {
            let overflow = try TestClient(port: server.port)
            try overflow.send("GET /wait/1 HTTP/1.1\r\nHost: h\r\n\r\n")
            let response = try overflow.readResponse()
            #expect(response.status == 422 && response.text == "refused")
        }
        #expect(responder.entered.load(ordering: .relaxed) == 3)
        // Another lane still gets its own calls and its quick requests.
        let other = try TestClient(port: server.port)
        try other.send("GET /wait/2 HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(waitUntil { responder.entered.load(ordering: .relaxed) == 4 })
        for _ in 0..<5 {
            let quick = try TestClient(port: server.port)
            try quick.send("GET /quick/2 HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try quick.readResponse().text == "quick")
        }
        released.store(true, ordering: .relaxed)
        for _ in 0..<4 { responder.gate.signal() }
        for client in held + [other] { #expect(try client.readResponse().text == "waited") }
        // The lane's count went back down: it may wait again.
        let again = try TestClient(port: server.port)
        try again.send("GET /wait/1 HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(waitUntil { responder.entered.load(ordering: .relaxed) == 5 })
        responder.gate.signal()
        #expect(try again.readResponse().text == "waited")
    }
}
