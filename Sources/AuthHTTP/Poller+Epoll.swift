// Readiness notification on Linux: epoll, with an eventfd as the cross-thread wake-up.
// The macOS counterpart with the same shape is Poller+Kqueue.swift. The Glibc module lacks
// <sys/epoll.h> and <sys/eventfd.h>; the CAuthPlatform shim module declares them.
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
final class Poller: Sendable {
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
        guard Poller.control(epollFD, EpollFlag.add, wakeFD, EpollFlag.input | EpollFlag.edgeTriggered, PollToken.wake) else {
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
        return Poller.control(epollFD, EpollFlag.add, fd, events, token)
    }

    /// Level-triggered: the accepting loop takes a bounded batch per wake-up and is told again
    /// while the backlog still holds connections.
    func addListener(_ fd: Int32) -> Bool {
        Poller.control(epollFD, EpollFlag.add, fd, EpollFlag.input, PollToken.listener)
    }

    func removeListener(_ fd: Int32) {
        _ = Poller.control(epollFD, EpollFlag.delete, fd, 0, 0)
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

    /// Blocks until readiness or the timeout (nil = no timeout); returns the number of events.
    func wait(_ buffer: PollBuffer, timeoutNanoseconds: UInt64?) -> Int {
        let milliseconds: Int32
        if let timeout = timeoutNanoseconds {
            // Round up so a timer never wakes the loop a hair early and spins.
            milliseconds = Int32(min((timeout + 999_999) / 1_000_000, UInt64(Int32.max)))
        } else {
            milliseconds = -1
        }
        let count = epoll_wait(epollFD, buffer.storage, Int32(buffer.capacity), milliseconds)
        return count < 0 ? 0 : Int(count)
    }
}

/// The loop's reusable event array.
final class PollBuffer {
    let capacity: Int
    fileprivate let storage: UnsafeMutablePointer<epoll_event>

    init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: epoll_event(), count: capacity)
    }

    deinit {
        storage.deallocate()
    }

    func event(at index: Int) -> PollEvent {
        let flags = storage[index].events
        let token = storage[index].data.u64
        let readMask = EpollFlag.input | EpollFlag.readHangup | EpollFlag.hangup | EpollFlag.error
        let writeMask = EpollFlag.output | EpollFlag.error
        let hangupMask = EpollFlag.readHangup | EpollFlag.hangup | EpollFlag.error
        return PollEvent(
            token: token, readable: flags & readMask != 0, writable: flags & writeMask != 0,
            hangup: flags & hangupMask != 0
        )
    }
}
#endif
