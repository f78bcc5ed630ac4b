// Transport directives and graceful shutdown, over real sockets.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import AuthHTTP

@Suite("Response directives and shutdown")
struct ResponseDirectiveTests {
    @Test func delayHoldsTheResponseWithoutBlockingOthers() throws {
        // One worker only: if the delay occupied it, the second request would wait too.
        try withServer({ $0.workerThreads = 1; $0.loopThreads = 1 }) { server in
            let delayed = try TestClient(port: server.port)
            let start = monotonicSeconds()
            try delayed.send("GET /delay?ms=600 HTTP/1.1\r\nHost: h\r\n\r\n")
            usleep(50_000)

            let other = try TestClient(port: server.port)
            try other.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try other.readResponse().text == "ok")
            let otherDone = monotonicSeconds() - start
            #expect(otherDone < 0.4)

            let response = try delayed.readResponse()
            let elapsed = monotonicSeconds() - start
            #expect(response.text == "delayed")
            #expect(elapsed >= 0.6)
            #expect(otherDone < elapsed)
        }
    }

    @Test func blockingJobsRunInParallelAfterFastOnes() throws {
        try withServer({ $0.workerThreads = 4; $0.loopThreads = 1 }) { server in
            // Many quick responses first teach the pool that jobs are short...
            let warm = try TestClient(port: server.port)
            for _ in 0..<200 {
                try warm.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
                _ = try warm.readResponse()
            }
            // ...then four blocking ones must still get a worker each, not queue behind one.
            let clients = try (0..<4).map { _ in try TestClient(port: server.port) }
            let start = monotonicSeconds()
            for client in clients { try client.send("GET /slow?ms=400 HTTP/1.1\r\nHost: h\r\n\r\n") }
            for client in clients { #expect(try client.readResponse().text == "slow") }
            #expect(monotonicSeconds() - start < 0.75)
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
        try withServer({ $0.workerThreads = 1; $0.loopThreads = 1 }) { server in
            let client = try TestClient(port: server.port)
            let start = monotonicSeconds()
            try client.send("GET /drip?chunks=4&ms=600 HTTP/1.1\r\nHost: h\r\n\r\n")
            // The head and the first quarter of the body arrive at once...
            #expect(client.awaitPeer(seconds: 0.15) == .data)
            #expect(monotonicSeconds() - start < 0.15)
            client.setReceiveTimeout(5)
            // ...the whole body only after the duration, and the connection stays usable.
            let response = try client.readResponse()
            #expect(response.text == "0123456789abcdefghij")
            #expect(monotonicSeconds() - start >= 0.55)

            // While one connection drips, the loop serves others.
            let slow = try TestClient(port: server.port)
            try slow.send("GET /drip?chunks=2&ms=500 HTTP/1.1\r\nHost: h\r\n\r\n")
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            let quick = monotonicSeconds()
            #expect(try client.readResponse().text == "ok")
            #expect(monotonicSeconds() - quick < 0.3)
            #expect(try slow.readResponse().text == "0123456789abcdefghij")
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
            #expect(client.awaitPeer(seconds: 3) == .reset)
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
        #expect(idle.awaitPeer(seconds: 5) == .closed)
        // ...while the in-flight requests are still running.
        gate.signal()
        gate.signal()

        let finished = try busy.readResponse()
        #expect(finished.text == "finished")
        // Answered during the drain: the client is told not to reuse the connection.
        #expect(finished.header("Connection") == "close")
        #expect(busy.awaitPeer(seconds: 2) == .closed)
        #expect(try delayed.readResponse().text == "delayed")

        #expect(stopped.wait(timeout: .now() + 5) == .success)
        server.waitUntilStopped()
        // Two requests were in flight (the gated one and the delayed one); the idle keep-alive
        // connection counts in neither figure.
        #expect(server.drainReport == DrainReport(finished: 2, cutOff: 0))
        server.shutdown()  // idempotent

        // Nothing listens any more.
        #expect(throws: (any Error).self) { _ = try TestClient(port: port) }
    }

    @Test func shutdownTimeoutForcesStalledConnectionsClosed() throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, loopThreads: 1, workerThreads: 1), responder: TestResponder())
        try server.start()
        let client = try TestClient(port: server.port)
        try client.send("GET /delay?ms=10000 HTTP/1.1\r\nHost: h\r\n\r\n")
        usleep(50_000)
        let start = monotonicSeconds()
        server.shutdown(timeout: .milliseconds(300))
        let elapsed = monotonicSeconds() - start
        #expect(elapsed >= 0.25 && elapsed < 2)
        #expect(client.awaitPeer(seconds: 1) == .closed)
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
            #expect(quick.awaitPeer(seconds: 2) == .data)
            #expect(try quick.readResponse().status == 200)
        }
        for _ in 0..<6 { gate.signal() }
        for client in waiting { #expect(try client.readResponse().text == "waited") }
    }
}
