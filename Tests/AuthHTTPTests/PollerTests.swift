// The `Poller` contract, checked on each backend this platform has (epoll and poll(2) on Linux,
// poll(2) on macOS) with a socket pair: a direction is reported once, then not again until the
// loop says it found it blocked; wake-ups cross threads; a removed descriptor is never reported.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import AuthHTTP

/// A connected pair of non-blocking stream sockets: `near` is registered, `far` plays the peer.
private final class SocketPair {
    let near: Int32
    let far: Int32
    private var open = true

    init() throws {
        var ends: [Int32] = [-1, -1]
        #if canImport(Darwin)
        let type = SOCK_STREAM
        #else
        let type = Int32(SOCK_STREAM.rawValue)
        #endif
        guard socketpair(AF_UNIX, type, 0, &ends) == 0 else { throw SocketError(operation: "socketpair", errno: errno) }
        for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL, 0) | O_NONBLOCK) }
        near = ends[0]
        far = ends[1]
    }

    deinit { closeBoth() }

    func closeBoth() {
        guard open else { return }
        open = false
        close(near)
        close(far)
    }

    func writeFar(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { write(far, $0.baseAddress, $0.count) }
    }

    /// Reads `fd` until EAGAIN (or EOF); the bytes read.
    @discardableResult
    static func drain(_ fd: Int32) -> Int {
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return total }
            total += n
        }
    }

    /// Writes to `near` until EAGAIN.
    func fillNear() {
        let chunk = [UInt8](repeating: 0x2E, count: 65536)
        while chunk.withUnsafeBytes({ write(near, $0.baseAddress, $0.count) }) > 0 {}
    }
}

@Suite("Poller contract")
struct PollerTests {
    private static let token: UInt64 = 7
    private static let short: UInt64 = 30_000_000
    private static let long: UInt64 = 5_000_000_000

    private func waitFor(_ poller: any Poller, _ timeout: UInt64?) -> [PollEvent] {
        var events: [PollEvent] = []
        poller.wait(&events, timeoutNanoseconds: timeout)
        return events
    }

    private func readable(_ events: [PollEvent], _ token: UInt64 = token) -> Bool {
        events.contains { $0.token == token && $0.readable }
    }

    private func writable(_ events: [PollEvent], _ token: UInt64 = token) -> Bool {
        events.contains { $0.token == token && $0.writable }
    }

    @Test(arguments: HTTPIOMode.allCases)
    func readIsReportedOnceUntilTheLoopFindsItBlocked(mode: HTTPIOMode) throws {
        let poller = try makePoller(for: mode.resolved)
        let pair = try SocketPair()
        #expect(poller.addConnection(pair.near, token: Self.token))
        #expect(!readable(waitFor(poller, Self.short)))

        pair.writeFar("a")
        #expect(readable(waitFor(poller, Self.long)))
        // Not read yet, and nothing new: poll(2) would report it on every call, the contract not.
        #expect(!readable(waitFor(poller, Self.short)))

        SocketPair.drain(pair.near)
        poller.readBlocked(pair.near)
        #expect(!readable(waitFor(poller, Self.short)))
        pair.writeFar("b")
        #expect(readable(waitFor(poller, Self.long)))
        poller.removeConnection(pair.near)
    }

    @Test(arguments: HTTPIOMode.allCases)
    func writeIsReportedWhenABlockedSocketDrains(mode: HTTPIOMode) throws {
        let poller = try makePoller(for: mode.resolved)
        let pair = try SocketPair()
        #expect(poller.addConnection(pair.near, token: Self.token))
        _ = waitFor(poller, Self.short)

        pair.fillNear()
        poller.writeBlocked(pair.near)
        #expect(!writable(waitFor(poller, Self.short)))
        SocketPair.drain(pair.far)
        #expect(writable(waitFor(poller, Self.long)))
        // Reported once: the loop flushed, and asks again only after another EAGAIN.
        #expect(!writable(waitFor(poller, Self.short)))
        poller.removeConnection(pair.near)
    }

    @Test(arguments: HTTPIOMode.allCases)
    func aPeersCloseIsReportedAsReadable(mode: HTTPIOMode) throws {
        let poller = try makePoller(for: mode.resolved)
        let pair = try SocketPair()
        #expect(poller.addConnection(pair.near, token: Self.token))
        close(pair.far)
        let events = waitFor(poller, Self.long)
        #expect(readable(events))
        var byte: UInt8 = 0
        #expect(read(pair.near, &byte, 1) == 0, "the event stands for EOF")
        poller.removeConnection(pair.near)
        close(pair.near)
    }

    /// A descriptor leaves the poller before it is closed, and its number, reused at once by the
    /// next socket (POSIX hands out the lowest free one), is a new registration: no event for
    /// the old token, none for a closed descriptor (poll(2)'s POLLNVAL).
    @Test(arguments: HTTPIOMode.allCases)
    func aRemovedDescriptorIsNeverReported(mode: HTTPIOMode) throws {
        let poller = try makePoller(for: mode.resolved)
        let first = try SocketPair()
        #expect(poller.addConnection(first.near, token: 1))
        first.writeFar("x")
        poller.removeConnection(first.near)
        let number = first.near
        first.closeBoth()
        #expect(waitFor(poller, Self.short).isEmpty)

        let second = try SocketPair()
        #expect(poller.addConnection(second.near, token: 2))
        second.writeFar("y")
        let events = waitFor(poller, Self.long)
        #expect(readable(events, 2))
        #expect(!events.contains { $0.token == 1 }, "descriptor \(number) reused as \(second.near)")
        poller.removeConnection(second.near)
    }

    @Test(arguments: HTTPIOMode.allCases)
    func wakeUpsCrossThreadsAndAreConsumed(mode: HTTPIOMode) throws {
        let poller = try makePoller(for: mode.resolved)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            usleep(50_000)
            for _ in 0..<1000 { poller.wake() }
            done.signal()
        }
        // No timeout: only the other thread's wake-up ends this wait.
        #expect(waitFor(poller, nil).contains { $0.token == PollToken.wake })
        done.wait()
        poller.consumeWake()
        // Wake-ups that landed after the wait returned may be reported once more (the loop then
        // finds its inbox empty); once consumed again, nothing is left to report.
        _ = waitFor(poller, Self.short)
        poller.consumeWake()
        #expect(!waitFor(poller, Self.short).contains { $0.token == PollToken.wake })
    }

    @Test(arguments: HTTPIOMode.allCases)
    func aWaitLastsAtLeastItsTimeout(mode: HTTPIOMode) throws {
        let poller = try makePoller(for: mode.resolved)
        let start = monotonicSeconds()
        #expect(waitFor(poller, 40_500_000).isEmpty)
        // Rounded up to whole milliseconds: never early, so a due timer is never missed.
        #expect(monotonicSeconds() - start >= 0.0405)
    }

    @Test func timeoutsRoundUpToWholeMilliseconds() {
        #expect(waitMilliseconds(nil) == -1)
        #expect(waitMilliseconds(0) == 0)
        #expect(waitMilliseconds(1) == 1)
        #expect(waitMilliseconds(1_000_000) == 1)
        #expect(waitMilliseconds(1_000_001) == 2)
        #expect(waitMilliseconds(UInt64.max / 2) == Int32.max)
    }
}
