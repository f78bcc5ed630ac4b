// Both I/O modes serve alike. Every other server test runs in the mode the environment selects
// (`AUTH_EMULATOR_PORTABLE_IO`, which CI sets for a second pass); these run both modes in every
// pass, so neither backend goes unexercised whichever pass runs, on Linux and on macOS (where
// both name the portable mode).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import AuthHTTP

@Suite("I/O modes")
struct IOModeTests {
    @Test func theVariableReadsAsGoReadsABoolean() {
        for text in ["1", "t", "T", "TRUE", "true", "True"] {
            #expect(HTTPIOMode(environmentValue: text) == .portable, "\(text)")
        }
        for text in [nil, "", "0", "f", "false", "yes", "on", " 1"] {
            #expect(HTTPIOMode(environmentValue: text) == .native, "\(String(describing: text))")
        }
    }

    @Test func aConfigurationDefaultsToTheEnvironmentsMode() {
        let expected = HTTPIOMode(environmentValue: ProcessInfo.processInfo.environment[HTTPIOMode.environmentVariable])
        #expect(HTTPServerConfiguration().ioMode == expected)
        #expect(HTTPServerConfiguration(port: 0).ioMode == expected)
    }

    @Test(arguments: HTTPIOMode.allCases)
    func servesKeepAlivePipelinedLargeDelayedAndManyConnections(mode: HTTPIOMode) throws {
        try withServer({ $0.ioMode = mode }) { server in
            #if os(Linux)
            #expect(server.ioMode == mode)
            #else
            #expect(server.ioMode == .portable)
            #endif
            let port = server.port

            // Keep-alive, then twenty pipelined requests in one write, answered in order.
            let client = try TestClient(port: port, receiveTimeout: 10)
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse().text == "ok")
            var batch = ""
            for index in 0..<20 { batch += "GET /echo?n=\(index) HTTP/1.1\r\nHost: h\r\n\r\n" }
            try client.send(batch)
            for index in 0..<20 { #expect(echoLines(try client.readResponse()).contains("query n=\(index)")) }

            // A response far larger than the capped send queue, read late: sends hit EAGAIN and
            // the rest goes out on writability.
            let size = 4 * 1024 * 1024
            try client.send("GET /big?n=\(size) HTTP/1.1\r\nHost: h\r\n\r\n")
            usleep(100_000)
            let big = try client.readResponse()
            #expect(big.body.count == size)
            #expect(big.body.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset % 251) })

            // A timer: the response is held, the connection stays served afterwards.
            let start = monotonicSeconds()
            try client.send("GET /delay?ms=150 HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse().text == "delayed")
            #expect(monotonicSeconds() - start >= 0.14)

            // Many connections at once, opened and closed in a shuffled order.
            var many: [TestClient] = []
            for _ in 0..<200 { many.append(try TestClient(port: port, receiveTimeout: 10)) }
            for (index, other) in many.enumerated() { try other.send("GET /echo?n=\(index) HTTP/1.1\r\nHost: h\r\n\r\n") }
            for (index, other) in many.enumerated().reversed() {
                #expect(echoLines(try other.readResponse()).contains("query n=\(index)"))
            }
            many = many.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
            for other in many.prefix(10) {
                try other.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
                #expect(try other.readResponse().text == "ok")
            }
        }
    }

    /// Timers end a wait on time: the loop's timeout, in the milliseconds epoll_wait and poll take.
    @Test(arguments: HTTPIOMode.allCases)
    func theIdleTimeoutClosesAKeepAliveConnection(mode: HTTPIOMode) throws {
        try withServer({
            $0.ioMode = mode
            $0.idleTimeout = .milliseconds(300)
        }) { server in
            let client = try TestClient(port: server.port)
            // Taken before the request: the idle timer starts after the response, so the close
            // comes at least 300 ms later however late this thread reads that response (taken
            // after the read, a busy machine made the gap look shorter than the timeout).
            let start = monotonicSeconds()
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            #expect(client.awaitPeer(seconds: 30) == .closed)
            #expect(monotonicSeconds() - start >= 0.25)
        }
    }

    /// The send that meets a peer that is gone fails with EPIPE rather than killing the process
    /// with SIGPIPE: MSG_NOSIGNAL in the native mode, SO_NOSIGPIPE on macOS, SIGPIPE ignored in
    /// Linux's portable mode. The client half-closes, so the server (in CLOSE_WAIT, still
    /// answering, RFC 9112 §9.6) takes its reset as EPIPE (tcp_reset sets it there), and the next
    /// send raises SIGPIPE unless suppressed. A failure here ends the test process.
    @Test(arguments: HTTPIOMode.allCases)
    func aPeerGoneMidResponseCostsOnlyItsConnection(mode: HTTPIOMode) throws {
        try withServer({ $0.ioMode = mode }) { server in
            for _ in 0..<3 {
                let client = try TestClient(port: server.port)
                var small: Int32 = 16 * 1024
                setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
                try client.send("GET /big?n=\(8 * 1024 * 1024) HTTP/1.1\r\nHost: h\r\n\r\n")
                usleep(100_000)
                client.shutdownWrite()
                usleep(50_000)
                var reset = linger(l_onoff: 1, l_linger: 0)
                setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
                _ = consume client
                usleep(50_000)
            }
            let fresh = try TestClient(port: server.port)
            try fresh.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try fresh.readResponse().text == "ok")
        }
    }

    #if os(Linux)
    /// Linux has no SO_NOSIGPIPE: the portable mode's stand-in is the process-wide disposition.
    @Test func thePortableModeIgnoresSIGPIPEOnLinux() throws {
        try withServer({ $0.ioMode = .portable }) { _ in
            var current = sigaction()
            sigaction(SIGPIPE, nil, &current)
            #expect(unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self))
        }
    }
    #endif

    @Test(arguments: HTTPIOMode.allCases)
    func shutdownFinishesTheRequestInFlight(mode: HTTPIOMode) throws {
        var configuration = HTTPServerConfiguration(port: 0, loopThreads: 2, workerThreads: 2)
        configuration.ioMode = mode
        let responder = ObservedResponder(signalled: ["/delay"])
        let server = HTTPServer(configuration: configuration, responder: responder)
        try server.start()
        let idle = try TestClient(port: server.port)
        try idle.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(try idle.readResponse().status == 200)
        let busy = try TestClient(port: server.port)
        try busy.send("GET /delay?ms=300 HTTP/1.1\r\nHost: h\r\n\r\n")
        // The request is in flight (its response held) before the stop begins.
        #expect(responder.awaitEntered())
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            server.shutdown(timeout: .seconds(30))
            stopped.signal()
        }
        #expect(idle.awaitPeer(seconds: 30) == .closed)
        #expect(try busy.readResponse().text == "delayed")
        #expect(busy.awaitPeer(seconds: 30) == .closed)
        #expect(stopped.wait(timeout: .now() + 30) == .success)
    }
}
