// Real loopback sockets against a running server: framing, keep-alive, caps, timeouts.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import AuthHTTP

@Suite("HTTPServer over sockets")
struct HTTPServerTests {
    @Test func ephemeralPortAndBasicGet() throws {
        try withServer { server in
            #expect(server.port > 0)
            #expect(server.host == "127.0.0.1")
            let client = try TestClient(port: server.port)
            try client.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.reason == "OK")
            #expect(response.text == "ok")
            #expect(response.header("Content-Length") == "2")
            #expect(response.header("Date")?.hasSuffix(" GMT") == true)
            #expect(response.header("Connection") == nil)
        }
    }

    @Test func bindConflictIsReported() throws {
        try withServer { server in
            let second = HTTPServer(
                configuration: HTTPServerConfiguration(port: server.port, loopThreads: 1, workerThreads: 1),
                responder: TestResponder()
            )
            #expect(throws: SocketError.self) { try second.start() }
            do throws(SocketError) {
                try second.start()
            } catch {
                #expect(error.operation == "bind")
                #expect(error.errno == EADDRINUSE)
            }
        }
    }

    @Test func servesIPv6Loopback() throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "::1", port: 0, loopThreads: 1, workerThreads: 1), responder: TestResponder())
        do {
            try server.start()
        } catch {
            // No IPv6 loopback in this environment; nothing to test.
            return
        }
        defer { server.shutdown() }
        #expect(server.port > 0)
    }

    @Test func requestArrivingOneByteAtATime() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.sendByteByByte("POST /echo?a=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(echoLines(response).contains("body=hello"))
            #expect(echoLines(response).contains("query a=1"))
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send(
                "GET /echo?n=1 HTTP/1.1\r\nHost: h\r\n\r\n"
                + "POST /echo?n=2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
                + "GET /slow?ms=50&n=3 HTTP/1.1\r\nHost: h\r\n\r\n"
            )
            let first = try client.readResponse()
            let second = try client.readResponse()
            let third = try client.readResponse()
            #expect(echoLines(first).contains("query n=1"))
            #expect(echoLines(second).contains("query n=2"))
            #expect(echoLines(second).contains("body=abc"))
            #expect(third.text == "slow")
            // And the connection is still usable.
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse().text == "ok")
        }
    }

    @Test func inlineRequestsAreAnsweredByTheLoopInOrderWithTheOthers() throws {
        try withServer { server in
            // Every worker blocked: only the loop itself can answer what follows.
            var blocked: [TestClient] = []
            for _ in 0..<4 {
                let client = try TestClient(port: server.port)
                try client.send("GET /block HTTP/1.1\r\nHost: h\r\n\r\n")
                blocked.append(client)
            }
            let client = try TestClient(port: server.port)
            try client.send("GET /inline?n=1 HTTP/1.1\r\nHost: h\r\n\r\nGET /inline?n=2 HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse().text == "inline 1")
            #expect(try client.readResponse().text == "inline 2")
            // Directives apply as for worker responses.
            try client.send("GET /inline-delay?ms=20 HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse().text == "inline delayed")
            for _ in blocked { workerGate.signal() }
            for other in blocked { #expect(try other.readResponse().text == "unblocked") }
            // Pipelined inline and worker requests keep their order.
            try client.send(
                "GET /inline?n=3 HTTP/1.1\r\nHost: h\r\n\r\n"
                + "GET /slow?ms=30 HTTP/1.1\r\nHost: h\r\n\r\n"
                + "GET /inline?n=4 HTTP/1.1\r\nHost: h\r\n\r\n"
            )
            #expect(try client.readResponse().text == "inline 3")
            #expect(try client.readResponse().text == "slow")
            #expect(try client.readResponse().text == "inline 4")
        }
    }

    /// Inline requests from several connections that one wake-up of the loop finds are answered
    /// together, then sent: each connection gets its own answer, a delayed one among them too.
    @Test func inlineRequestsOfOneWakeUpAreEachAnswered() throws {
        // `/inline-busy` holds the loop until the test has sent the others.
        let responder = ObservedResponder(signalled: ["/inline-busy"], gated: ["/inline-busy"])
        try withServer({ $0.loopThreads = 1 }, responder: responder) { server in
            let holder = try TestClient(port: server.port)
            var clients: [TestClient] = []
            for _ in 0..<6 { clients.append(try TestClient(port: server.port)) }
            try holder.send("GET /inline-busy?ms=0 HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(responder.awaitEntered())
            for (n, client) in clients.enumerated() {
                let target = n == 2 ? "/inline-delay?ms=20" : "/inline?n=\(n)"
                try client.send("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n")
            }
            responder.gate.signal()
            #expect(try holder.readResponse().text == "inline busy")
            for (n, client) in clients.enumerated().reversed() {
                #expect(try client.readResponse().text == (n == 2 ? "inline delayed" : "inline \(n)"))
            }
            // Each connection is still usable on its own.
            for (n, client) in clients.enumerated() {
                try client.send("GET /inline?n=\(n + 10) HTTP/1.1\r\nHost: h\r\n\r\n")
                #expect(try client.readResponse().text == "inline \(n + 10)")
            }
        }
    }

    @Test func keepAliveReusesTheConnection() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            var remotes: Set<String> = []
            for _ in 0..<5 {
                try client.send("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.header("Connection") == nil)
                remotes.formUnion(echoLines(response).filter { $0.hasPrefix("remote=127.0.0.1:") })
            }
            #expect(remotes.count == 1)
        }
    }

    @Test func connectionCloseIsHonoured() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.header("Connection") == "close")
            #expect(client.awaitPeer(seconds: 30) == .closed)

            // A responder can ask for the close too.
            let other = try TestClient(port: server.port)
            try other.send("GET /close HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try other.readResponse().header("Connection") == "close")
            #expect(other.awaitPeer(seconds: 30) == .closed)
        }
    }

    @Test func http10ClosesUnlessKeepAliveIsAsked() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /echo HTTP/1.0\r\n\r\n")
            let response = try client.readResponse()
            #expect(echoLines(response).contains("version=HTTP/1.0"))
            #expect(response.header("Connection") == "close")
            #expect(client.awaitPeer(seconds: 30) == .closed)

            let persistent = try TestClient(port: server.port)
            try persistent.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try persistent.readResponse().header("Connection") == "keep-alive")
            try persistent.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try persistent.readResponse().text == "ok")
        }
    }

    @Test func chunkedBodies() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
            try client.sendByteByByte("4;ext=1\r\nWiki\r\n6\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nExpires: never\r\n\r\n", pauseMicroseconds: 50)
            // The example of RFC 9112 §7.1 style: chunk data may contain CRLF.
            let text = try client.readResponse().text
            #expect(text.hasSuffix("body=Wikipedia in \r\n\r\nchunks."), "\(text.debugDescription)")

            var many = "POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            for _ in 0..<300 { many += "1\r\nx\r\n" }
            many += "0\r\n\r\n"
            try client.send(many)
            #expect(echoLines(try client.readResponse()).contains("body=" + String(repeating: "x", count: 300)))
        }
    }

    @Test func expectContinue() throws {
        try withServer({ $0.maxBodyBytes = 1024 }) { server in
            let client = try TestClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            let interim = try client.readResponse()
            #expect(interim.status == 100)
            try client.send("data")
            let final = try client.readResponse()
            #expect(final.status == 200)
            #expect(echoLines(final).contains("body=data"))

            // Over the cap: 413 straight away, no 100 (RFC 9110 §10.1.1).
            let big = try TestClient(port: server.port)
            try big.send("POST /echo HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n")
            let refused = try big.readResponse()
            #expect(refused.status == 413)
            #expect(big.awaitPeer(seconds: 30) == .closed)
        }
    }

    @Test func queryAndPathDecoding() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /echo/a%20b?email=a%2Bb%40x.test&name=J+Doe&empty= HTTP/1.1\r\nHost: h\r\n\r\n")
            let lines = echoLines(try client.readResponse())
            #expect(lines.contains("path=/echo/a b"))
            #expect(lines.contains("query email=a+b@x.test"))
            #expect(lines.contains("query name=J Doe"))
            #expect(lines.contains("query empty="))
        }
    }

    @Test func headRequests() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send("HEAD /health HTTP/1.1\r\nHost: h\r\n\r\nGET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            let head = try client.readResponse(isHead: true)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "2")
            #expect(head.body.isEmpty)
            // Had the HEAD response carried a body, this read would see "ok" instead of a status line.
            let get = try client.readResponse()
            #expect(get.text == "ok")
        }
    }

    @Test func largeResponsesSurvivePartialWrites() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            let size = 3 * 1024 * 1024
            try client.send("GET /big?n=\(size) HTTP/1.1\r\nHost: h\r\n\r\n")
            usleep(100_000)  // let the socket buffers fill so the server must wait for writability
            let response = try client.readResponse()
            #expect(response.body.count == size)
            #expect(response.body.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset % 251) })
        }
    }

    // MARK: - refusals

    @Test func oversizedHeadersAre431AndClose() throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send("GET / HTTP/1.1\r\nHost: h\r\nX-Big: \(String(repeating: "a", count: 17 * 1024))\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 431)
            #expect(response.header("Connection") == "close")
            #expect(client.awaitPeer(seconds: 30) == .closed)
        }
    }

    @Test func oversizedBodiesAre413AndClose() throws {
        try withServer { server in
            let declared = try TestClient(port: server.port)
            try declared.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: \(2 * 1024 * 1024)\r\n\r\n")
            try declared.send(Array(repeating: UInt8(ascii: "a"), count: 100_000))
            #expect(try declared.readResponse().status == 413)
            #expect(declared.awaitPeer(seconds: 30) == .closed)

            let chunked = try TestClient(port: server.port)
            try chunked.send("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
            let piece = "8000\r\n" + String(repeating: "b", count: 0x8000) + "\r\n"
            for _ in 0..<40 {
                // The server stops reading after its answer; later sends may fail, which is fine.
                if (try? chunked.send(piece)) == nil { break }
            }
            #expect(try chunked.readResponse().status == 413)
            #expect(chunked.awaitPeer(seconds: 30) == .closed)
        }
    }

    @Test func usesTheProtocolErrorRenderer() throws {
        let renderer: @Sendable (HTTPProtocolFailure, HTTPHeaders?) -> HTTPResponse = { failure, headers in
            HTTPResponse(
                status: failure.status,
                headers: ["Content-Type": "application/json"],
                body: Array(#"{"code":\#(failure.status),"had_headers":\#(headers != nil)}"#.utf8)
            )
        }
        try withServer({ $0.protocolErrorRenderer = renderer; $0.maxBodyBytes = 10 }) { server in
            let client = try TestClient(port: server.port)
            try client.send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(response.text == #"{"code":413,"had_headers":true}"#)
        }
    }

    @Test(arguments: [
        ("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        ("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3x\r\n\r\nabc", 400),
        ("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
        ("GET /echo HTTP/1.1\r\nAccept: */*\r\n\r\n", 400),
        ("GET /echo http/1.1\r\nHost: h\r\n\r\n", 400),
        ("GET /echo HTTP/2.0\r\nHost: h\r\n\r\n", 505),
        ("POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        ("GET /echo HTTP/1.1\r\nHost: h\r\nX: a\r\n  folded\r\n\r\n", 400),
    ])
    func malformedRequestsAreRefusedAndClosed(text: String, status: Int) throws {
        try withServer { server in
            let client = try TestClient(port: server.port)
            try client.send(text)
            let response = try client.readResponse()
            #expect(response.status == status)
            #expect(response.header("Connection") == "close")
            #expect(client.awaitPeer(seconds: 30) == .closed)
        }
    }

    // MARK: - timeouts and limits

    @Test func slowlorisHeadIsCutOff() throws {
        try withServer({ $0.headerTimeout = .milliseconds(300) }) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET / HTTP/1.1\r\nHost: h\r\n")
            // Keep trickling header lines, one every 100 ms for up to 30 s: progress must not
            // extend the head deadline, so the cut-off comes while the client still trickles.
            var end = PeerEnd.stillOpen
            for _ in 0..<300 where end == .stillOpen {
                _ = try? client.send("X-A: b\r\n")
                end = client.awaitPeer(seconds: 0.1)
            }
            #expect(end == .closed || end == .reset)

            // A connection that sends nothing at all is cut off too.
            let silent = try TestClient(port: server.port)
            #expect(silent.awaitPeer(seconds: 30) == .closed)
        }
    }

    @Test func slowBodyIsCutOff() throws {
        try withServer({ $0.bodyTimeout = .milliseconds(300) }) { server in
            let client = try TestClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
            let end = client.awaitPeer(seconds: 30)
            #expect(end == .closed || end == .reset)
        }
    }

    @Test func idleKeepAliveConnectionsAreClosed() throws {
        try withServer({ $0.idleTimeout = .milliseconds(300) }) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            let start = monotonicSeconds()
            #expect(client.awaitPeer(seconds: 30) == .closed)
            // Not before the idle timeout (less a little for the timer's granularity).
            #expect(monotonicSeconds() - start > 0.2)
        }
    }

    @Test func connectionCapAnswers503() throws {
        try withServer({ $0.maxConnections = 2 }) { server in
            let first = try TestClient(port: server.port)
            let second = try TestClient(port: server.port)
            for client in [first, second] {
                try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
                #expect(try client.readResponse().status == 200)
            }
            let third = try TestClient(port: server.port)
            try third.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            let refused = try third.readResponse()
            #expect(refused.status == 503)
            #expect(refused.header("Connection") == "close")
            #expect(third.awaitPeer(seconds: 30) == .closed)

            // Capacity comes back when a connection goes away: once the server has seen the
            // close (it says so by no longer refusing), a new connection is served.
            _ = consume first
            let served = waitUntil {
                do {
                    let fourth = try TestClient(port: server.port)
                    try fourth.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
                    return try fourth.readResponse().status == 200
                } catch {
                    return false  // refused before the server saw the close: try again
                }
            }
            #expect(served)
        }
    }

    @Test func holdsManyIdleConnectionsWhileServing() throws {
        var limits = rlimit()
        getrlimit(RLIMIT_NOFILE_VALUE, &limits)
        #if canImport(Darwin)
        let ceiling = min(limits.rlim_max, rlim_t(OPEN_MAX))
        #else
        let ceiling = limits.rlim_max
        #endif
        if limits.rlim_cur < ceiling {
            limits.rlim_cur = ceiling
            setrlimit(RLIMIT_NOFILE_VALUE, &limits)
        }
        getrlimit(RLIMIT_NOFILE_VALUE, &limits)
        // Client and server ends both live in this process, next to other tests' sockets:
        // 2,000 when the descriptor limit allows, fewer otherwise.
        let count = limits.rlim_cur >= 5000 ? 2000 : max(50, (Int(limits.rlim_cur) - 300) / 2)
        try withServer({ $0.workerThreads = 2 }) { server in
            var idle: [TestClient] = []
            idle.reserveCapacity(count)
            for _ in 0..<count {
                let client = try TestClient(port: server.port)
                try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
                idle.append(client)
            }
            for client in idle { #expect(try client.readResponse().status == 200) }

            // Two workers and thousands of idle connections: a new one is still answered (with
            // a thread per connection it would wait for ever).
            let fresh = try TestClient(port: server.port)
            try fresh.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try fresh.readResponse().text == "ok")

            // The idle ones are all still open and usable.
            for client in [idle[0], idle[count / 2], idle[count - 1]] {
                try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
                #expect(try client.readResponse().status == 200)
            }
        }
    }
}

#if canImport(Darwin)
let RLIMIT_NOFILE_VALUE = RLIMIT_NOFILE
#else
let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#endif
