// Readiness notification on Linux: epoll, with an eventfd as the cross-thread wake-up; the
// native mode's backend (`HTTPIOMode.native`). The portable mode, and macOS, use
// Poller+Poll.swift instead. The Glibc module lacks <sys/epoll.h> and <sys/eventfd.h>; the
// CAuthPlatform shim module declares them.
#if os(Linux) || os(Android)
import CAuthPlatform
import Glibc

/// <sys/epoll.h> flags as the `UInt32` event mask and `Int32` operations the calls take.
private enum EpollFlag {
    static let input = EPOLLIN.rawValue
    static let output = EPOLLOUT.rawValue
    static let error = EPOLLERR.rawValue
    static let hangup = EPOLLHUP.rawValue
    static let readHangup = EPOLLRDHUP.rawValue
    static let edgeTriggered = EPOLLET.rawValue
    static let add = EPOLL_CTL_ADD
    static let delete = EPOLL_CTL_DEL
}

/// Owns one epoll instance and its wake-up eventfd. Registration and `wake()` are thread-safe
/// system calls; `wait` is only called by the loop thread that owns the poller.
final class EpollPoller: Poller {
    /// Events taken per epoll_wait; more stay queued for the next call.
    private static let batch = 256
    private let epollFD: Int32
    private let wakeFD: Int32

    init() throws(SocketError) {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SocketError(operation: "epoll_create1", errno: errno) }
        let wakeFD = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            let code = errno
            _ = Glibc.close(epollFD)
            throw SocketError(operation: "eventfd", errno: code)
        }
        guard EpollPoller.control(epollFD, EpollFlag.add, wakeFD, EpollFlag.input | EpollFlag.edgeTriggered, PollToken.wake) else {
            let code = errno
            _ = Glibc.close(wakeFD)
            _ = Glibc.close(epollFD)
            throw SocketError(operation: "epoll_ctl", errno: code)
        }
        self.epollFD = epollFD
        self.wakeFD = wakeFD
    }

    deinit {
        _ = Glibc.close(wakeFD)
        _ = Glibc.close(epollFD)
    }

    private static func control(_ epollFD: Int32, _ operation: Int32, _ fd: Int32, _ events: UInt32, _ token: UInt64) -> Bool {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        return epoll_ctl(epollFD, operation, fd, &event) == 0
    }

    /// Edge-triggered read and write interest, registered once for the connection's lifetime,
    /// so the hot path never needs `epoll_ctl` (EPOLLRDHUP reports a peer's half-close).
    func addConnection(_ fd: Int32, token: UInt64) -> Bool {
        let events = EpollFlag.input | EpollFlag.output | EpollFlag.readHangup | EpollFlag.edgeTriggered
        return EpollPoller.control(epollFD, EpollFlag.add, fd, events, token)
    }

    /// Nothing to do: closing the descriptor removes it from the interest list (epoll(7), as
    /// long as no duplicate of it is open, and the loop never duplicates one).
    func removeConnection(_ fd: Int32) {}

    /// Nothing to do: with EPOLLET the next arrival raises a new edge by itself.
    func readBlocked(_ fd: Int32) {}

    /// Nothing to do: with EPOLLET the socket becoming writable again raises a new edge.
    func writeBlocked(_ fd: Int32) {}

    /// Level-triggered: the accepting loop takes a bounded batch per wake-up and is told again
    /// while the backlog still holds connections.
    func addListener(_ fd: Int32) -> Bool {
        EpollPoller.control(epollFD, EpollFlag.add, fd, EpollFlag.input, PollToken.listener)
    }

    func removeListener(_ fd: Int32) {
        _ = EpollPoller.control(epollFD, EpollFlag.delete, fd, 0, 0)
    }

    /// Callable from any thread.
    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// Nothing to do: the eventfd is edge-triggered, and every write raises a new edge whatever
    /// the counter holds, so it is never read (one system call less per wake-up). At one per
    /// write the counter cannot reach its 2^64 - 2 ceiling.
    func consumeWake() {}

    func wait(_ events: inout [PollEvent], timeoutNanoseconds: UInt64?) {
        events.removeAll(keepingCapacity: true)
        let milliseconds = waitMilliseconds(timeoutNanoseconds)
        // On the loop thread's stack: the raw array lives only for this call, so the poller
        // shares no mutable memory between threads.
        withUnsafeTemporaryAllocation(of: epoll_event.self, capacity: Self.batch) { buffer in
            let count = epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), milliseconds)
            guard count > 0 else { return }
            for index in 0..<Int(count) {
                let flags = buffer[index].events
                let readMask = EpollFlag.input | EpollFlag.readHangup | EpollFlag.hangup | EpollFlag.error
                let writeMask = EpollFlag.output | EpollFlag.error
                let hangupMask = EpollFlag.readHangup | EpollFlag.hangup | EpollFlag.error
                events.append(PollEvent(
                    token: buffer[index].data.u64, readable: flags & readMask != 0, writable: flags & writeMask != 0,
                    hangup: flags & hangupMask != 0
                ))
            }
        }
    }
}
#endif
