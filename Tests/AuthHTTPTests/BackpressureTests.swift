// Output backpressure: a client that pipelines requests and never reads must stop being served
// once its unsent responses reach the per-connection cap, and be served again when it reads.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import Testing
@testable import AuthHTTP

/// Answers `/seq?i=N&pad=P` with "N\n" and P filler bytes, counting the requests it served.
private final class CountingResponder: HTTPResponder, Sendable {
    let served = Atomic<Int>(0)

    func respond(to request: HTTPRequest) -> HTTPResponse {
        served.add(1, ordering: .relaxed)
        let index = request.queryValue("i") ?? "?"
        let pad = Int(request.queryValue("pad") ?? "") ?? 0
        return HTTPResponse(status: 200, body: Array("\(index)\n".utf8) + [UInt8](repeating: 0x2E, count: pad))
    }
}

@Suite("Output backpressure")
struct BackpressureTests {
    /// Waits until `value` has not changed for `quiet` seconds (or `limit` passed); returns it.
    private func settled(_ value: () -> Int, quiet: Double = 1, limit: Double = 15) -> Int {
        let start = monotonicSeconds()
        var last = value()
        var since = monotonicSeconds()
        while monotonicSeconds() - start < limit {
            usleep(50_000)
            let now = value()
            if now != last {
                last = now
                since = monotonicSeconds()
            } else if monotonicSeconds() - since >= quiet {
                break
            }
        }
        return last
    }

    @Test func neverReadingPipelinerIsPausedThenAnsweredInOrder() throws {
        let responder = CountingResponder()
        var configuration = HTTPServerConfiguration(port: 0, loopThreads: 1, workerThreads: 2)
        configuration.sendBufferBytes = 64 * 1024
        let server = HTTPServer(configuration: configuration, responder: responder)
        try server.start()
        defer { server.shutdown(timeout: .seconds(2)) }

        // 2,000 requests whose answers total ~8 MiB: without a cap, Linux's send-buffer
        // autotuning (tcp_wmem, up to 4 MiB) would take about half of them unread.
        let count = 2000
        let pad = 4096
        let client = try TestClient(port: server.port, receiveTimeout: 10)
        // The client's own receive queue takes answers too; pin its size (setting it turns off
        // the kernel's receive autotuning on Linux and Darwin) so the count below is the
        // server's doing. Not smaller: below the 64 KiB loopback MTU, reading back crawls.
        var small: Int32 = 64 * 1024
        setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var requests: [UInt8] = []
        for index in 0..<count {
            requests += Array("GET /seq?i=\(index)&pad=\(pad) HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
        }
        // Sent from another thread: once the server stops reading, TCP flow control blocks the
        // sender too, until this test starts reading below.
        let fd = client.fd
        let sent = DispatchSemaphore(value: 0)
        let payload = requests
        Thread.detachNewThread {
            var offset = 0
            while offset < payload.count {
                #if canImport(Darwin)
                let n = payload.withUnsafeBytes { Darwin.send(fd, $0.baseAddress! + offset, $0.count - offset, 0) }
                #else
                let n = payload.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                #endif
                if n <= 0 { break }
                offset += n
            }
            sent.signal()
        }

        // The server answers what fits in the capped queues, then stops parsing.
        let paused = settled { responder.served.load(ordering: .relaxed) }
        #expect(paused > 0)
        // Send queue (64 KiB, doubled by Linux for bookkeeping) + the client's receive queue +
        // one response waiting in user space: about 60 answers of 4 KiB on Linux, against ~930
        // with the kernel's autotuning. 256 leaves room for other kernels' accounting.
        #expect(paused <= 256, "served \(paused) of \(count) requests nobody read")
        usleep(300_000)
        #expect(responder.served.load(ordering: .relaxed) == paused, "the server kept parsing")

        // Reading resumes service: every request answered, in order.
        for index in 0..<count {
            let response = try client.readResponse()
            #expect(response.status == 200)
            let line = response.body.prefix { $0 != 0x0A }
            guard String(decoding: line, as: UTF8.self) == String(index), response.body.count == line.count + 1 + pad else {
                Issue.record("response \(index) is \(String(decoding: line, as: UTF8.self)), \(response.body.count) bytes")
                return
            }
        }
        #expect(sent.wait(timeout: .now() + 30) == .success)
        #expect(responder.served.load(ordering: .relaxed) == count)
    }

    @Test func largeResponseArrivesCompleteThroughTheCap() throws {
        try withServer { server in
            let client = try TestClient(port: server.port, receiveTimeout: 10)
            let size = 8 * 1024 * 1024
            try client.send("GET /big?n=\(size) HTTP/1.1\r\nHost: h\r\n\r\n")
            // A late reader: the capped queue fills and the server waits for writability.
            usleep(200_000)
            let response = try client.readResponse()
            #expect(response.body.count == size)
            #expect(response.body.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset % 251) })
            // The connection is still good for the next request.
            try client.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try client.readResponse().text == "ok")
        }
    }

    @Test func pipelinedLargeResponsesAllArrive() throws {
        // Several big answers queued behind each other: each waits for the one before to be in
        // the kernel, none is cut short.
        try withServer { server in
            let client = try TestClient(port: server.port, receiveTimeout: 10)
            let size = 1024 * 1024
            var requests = ""
            for _ in 0..<4 { requests += "GET /big?n=\(size) HTTP/1.1\r\nHost: h\r\n\r\n" }
            try client.send(requests)
            for _ in 0..<4 {
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.body.count == size)
            }
        }
    }
}

@Suite("Write timeout")
struct WriteTimeoutTests {
    /// Waits until the peer resets or closes `fd` (POLLHUP/POLLERR; the unread response keeps
    /// POLLIN raised all along); the seconds it took, or nil after `limit`.
    private func secondsUntilHangUp(_ fd: Int32, limit: Double) -> Double? {
        let start = monotonicSeconds()
        while monotonicSeconds() - start < limit {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, 20)
            if entry.revents & Int16(POLLHUP | POLLERR) != 0 { return monotonicSeconds() - start }
        }
        return nil
    }

    @Test func aClientThatNeverReadsIsResetWhileASlowReaderIsServed() throws {
        let timeout = 0.8
        // The slow reader pauses an eighth of the timeout between reads: a busy machine that
        // stretches a pause several times over still stays well inside the timeout.
        let pause = timeout / 8
        try withServer({ $0.writeTimeout = .milliseconds(Int(timeout * 1000)) }) { server in
            let port = server.port
            // The stuck client: a response far larger than both sockets' queues, never read.
            let size = 8 * 1024 * 1024
            let stuck = try TestClient(port: port, receiveTimeout: 10)
            var small: Int32 = 64 * 1024
            setsockopt(stuck.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            try stuck.send("GET /big?n=\(size) HTTP/1.1\r\nHost: h\r\n\r\n")

            // A slow reader alongside: 64 KiB at a time with pauses far under the timeout, taking
            // several timeouts in all. Each send that makes progress starts the timeout again.
            let slow = Mutex<(bytes: Int, seconds: Double)?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                defer { done.signal() }
                guard let client = try? TestClient(port: port, receiveTimeout: 10) else { return }
                var small: Int32 = 64 * 1024
                setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
                let length = 2 * 1024 * 1024
                guard (try? client.send("GET /big?n=\(length) HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")) != nil else { return }
                let start = monotonicSeconds()
                var total = 0
                var chunk = [UInt8](repeating: 0, count: 64 * 1024)
                while true {
                    usleep(UInt32(pause * 1_000_000))
                    let n = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { break }
                    total += n
                }
                slow.withLock { $0 = (total, monotonicSeconds() - start) }
            }

            let hungUp = secondsUntilHangUp(stuck.fd, limit: 30)
            #expect(hungUp != nil, "the never-reading connection was not closed")
            if let hungUp { #expect(hungUp >= timeout * 0.8, "reset after \(hungUp) s, before the timeout") }
            // Reset, not finished: what the queues held arrives, then ECONNRESET.
            let (bytes, end) = stuck.readAll(timeout: 30)
            #expect(end == .reset)
            #expect(bytes.count < size)

            #expect(done.wait(timeout: .now() + 30) == .success)
            let result = slow.withLock { $0 }
            #expect(result != nil)
            if let result {
                #expect(result.bytes > 2 * 1024 * 1024, "the slow reader got \(result.bytes) bytes")
                #expect(result.seconds > 2 * timeout, "the slow read took only \(result.seconds) s")
            }
            // The server serves as before.
            let fresh = try TestClient(port: port)
            try fresh.send("GET /health HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(try fresh.readResponse().text == "ok")
        }
    }

    // Behind a large send queue, a client reading steadily but slowly: the kernel's autotuning
    // (sendBufferBytes nil) lets the send queue grow to megabytes (Linux: tcp_wmem, 4 MiB by
    // default), and Linux reports it writable again only once a third of it has drained, so the
    // loop's sends go seconds without progress while the client takes bytes all along. The
    // client reads like a real slow one: a 256 KiB receive buffer, 128 KiB at a time, every
    // 200 ms. Each read opens the window by more than the loopback MSS (~64 KiB), so the
    // client's kernel sends a window update and the server's sees acknowledgements in every
    // second; tinier reads would leave the window shut below the MSS, with the server probing
    // it at growing intervals (RFC 9293 §3.8.6.1) and no acknowledgement for a second or more.

    /// The write timeout these tests run with; far longer than the slow reader's pauses.
    private static let timeout = 1.0

    /// A lower bound on when the server's bytes last reached the client's kernel, which
    /// acknowledges them: the client's count of bytes received (read, plus queued: FIONREAD) is
    /// sampled, and when it grew, they arrived after the sample before.
    private struct Arrivals {
        private var received = 0
        private var sampledAt = monotonicSeconds()
        private(set) var lastAfter = monotonicSeconds()

        mutating func sample(_ fd: Int32, read: Int) {
            var queued: Int32 = 0
            _ = ioctl(fd, UInt(FIONREAD), &queued)
            let now = monotonicSeconds()
            if read + Int(queued) > received {
                received = read + Int(queued)
                lastAfter = sampledAt
            }
            sampledAt = now
        }
    }

    /// Reads `chunk` bytes every `pause` seconds until `limit` bytes (nil: to the end), an error
    /// or the receive timeout (the hang guard); returns what arrived, how the read ended, the
    /// seconds it took, and when bytes last arrived (sampled at each round).
    private func readSteadily(
        _ client: TestClient, chunk: Int, pause: Double, limit: Int? = nil
    ) -> (bytes: [UInt8], end: PeerEnd, seconds: Double, arrivals: Arrivals) {
        let start = monotonicSeconds()
        var arrivals = Arrivals()
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while limit.map({ bytes.count < $0 }) ?? true {
            usleep(UInt32(pause * 1_000_000))
            arrivals.sample(client.fd, read: bytes.count)
            var taken = 0
            while taken < chunk {
                let n = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, chunk - taken, 0) }
                if n <= 0 {
                    let end: PeerEnd = n == 0 ? .closed : errno == ECONNRESET ? .reset : .stillOpen
                    return (bytes, end, monotonicSeconds() - start, arrivals)
                }
                bytes += buffer[0..<n]
                taken += n
            }
        }
        return (bytes, .data, monotonicSeconds() - start, arrivals)
    }

    /// A client with a 256 KiB receive buffer that has asked for `size` bytes.
    private func request(_ size: Int, from server: HTTPServer, close: Bool = false) throws -> TestClient {
        let client = try TestClient(port: server.port, receiveTimeout: 30)
        var buffer: Int32 = 256 * 1024
        setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &buffer, socklen_t(MemoryLayout<Int32>.size))
        try client.send("GET /big?n=\(size) HTTP/1.1\r\nHost: h\r\n\(close ? "Connection: close\r\n" : "")\r\n")
        return client
    }

    private func largeSendQueue(_ configuration: inout HTTPServerConfiguration) {
        configuration.writeTimeout = .milliseconds(Int(Self.timeout * 1000))
        configuration.sendBufferBytes = nil
    }

    @Test func aSteadySlowReaderBehindALargeSendQueueGetsTheWholeResponse() throws {
        try withServer(largeSendQueue) { server in
            // Linux's native mode counts what the peer acknowledged; on macOS, and in the
            // portable mode that runs its calls, only sends count (docs/running.md), and such a
            // reader may be reset there.
            guard server.ioMode == .native else { return }
            let size = 6 * 1024 * 1024
            let client = try request(size, from: server, close: true)
            let read = readSteadily(client, chunk: 128 * 1024, pause: 0.2)
            #expect(read.end == .closed, "the read ended with \(read.end) after \(read.bytes.count) bytes")
            // Several timeouts long at this pace: the client was never idle for one of them.
            #expect(read.seconds > 2 * Self.timeout)
            guard let headEnd = EventLoop.headEnd(read.bytes) else {
                Issue.record("no response head in \(read.bytes.count) bytes")
                return
            }
            let body = read.bytes[headEnd...]
            #expect(body.count == size)
            #expect(body.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset % 251) })
        }
    }

    @Test func aClientThatTakesNoByteIsResetAfterTheTimeoutNotBefore() throws {
        try withServer(largeSendQueue) { server in
            let size = 16 * 1024 * 1024
            // Counted from before the request is sent: the server starts its count later.
            let start = monotonicSeconds()
            let client = try request(size, from: server)
            let hungUp = secondsUntilHangUp(client.fd, limit: 30)
            #expect(hungUp != nil, "the never-reading connection was not reset")
            if hungUp != nil {
                let elapsed = monotonicSeconds() - start
                #expect(elapsed >= Self.timeout, "reset after \(elapsed) s, before the timeout")
            }
            let (bytes, end) = client.readAll(timeout: 30)
            #expect(end == .reset)
            #expect(bytes.count < size)
        }
    }

    @Test func aReaderThatStopsIsResetOnceItTakesNoMore() throws {
        try withServer(largeSendQueue) { server in
            // Its steady reading is served where acknowledgements count (above).
            guard server.ioMode == .native else { return }
            let size = 16 * 1024 * 1024
            let client = try request(size, from: server)
            // Reads steadily for a few timeouts, then takes nothing more.
            let read = readSteadily(client, chunk: 128 * 1024, pause: 0.2, limit: 3 * 1024 * 1024)
            guard read.end == .data else {
                Issue.record("the read ended with \(read.end) after \(read.bytes.count) bytes")
                return
            }
            // Its kernel may still take bytes into the room the last reads made: watched on
            // until the reset. The server's count starts from the last acknowledgement, so no
            // earlier than the last arrival. (Not from the last read: a read that frees less
            // than the window's step is not announced, and is invisible to the server.)
            var arrivals = read.arrivals
            let waitStart = monotonicSeconds()
            var hungUp = false
            while !hungUp && monotonicSeconds() - waitStart < 30 {
                var entry = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, 20)
                hungUp = entry.revents & Int16(POLLHUP | POLLERR) != 0
                if !hungUp { arrivals.sample(client.fd, read: read.bytes.count) }
            }
            #expect(hungUp, "the connection was kept though its client stopped reading")
            if hungUp {
                let idle = monotonicSeconds() - arrivals.lastAfter
                #expect(idle >= Self.timeout, "reset \(idle) s after the last bytes arrived, before the timeout")
            }
            let (bytes, end) = client.readAll(timeout: 30)
            #expect(end == .reset)
            #expect(read.bytes.count + bytes.count < size)
        }
    }
}
