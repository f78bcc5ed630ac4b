// Readiness notification on macOS: kqueue, with an EVFILT_USER event as the cross-thread wake-up.
// Same shape as Poller+Epoll.swift; EV_CLEAR gives the edge-triggered behaviour the loop expects.
#if canImport(Darwin)
import Darwin

/// Owns one kqueue. Registration and `wake()` are thread-safe system calls; `wait` is only
/// called by the loop thread that owns the poller.
final class Poller: Sendable {
    private let queueFD: Int32

    init() throws(SocketError) {
        let queueFD = kqueue()
        guard queueFD >= 0 else { throw SocketError(operation: "kqueue", errno: errno) }
        var change = Poller.change(ident: 0, filter: EVFILT_USER, flags: EV_ADD | EV_CLEAR, token: PollToken.wake)
        guard Darwin.kevent(queueFD, &change, 1, nil, 0, nil) == 0 else {
            let code = errno
            _ = Darwin.close(queueFD)
            throw SocketError(operation: "kevent", errno: code)
        }
        self.queueFD = queueFD
    }

    deinit {
        _ = Darwin.close(queueFD)
    }

    private static func change(ident: UInt, filter: Int32, flags: Int32, token: UInt64, fflags: UInt32 = 0) -> kevent {
        var event = kevent()
        event.ident = ident
        event.filter = Int16(filter)
        event.flags = UInt16(flags)
        event.fflags = fflags
        event.data = 0
        event.udata = UnsafeMutableRawPointer(bitPattern: UInt(truncatingIfNeeded: token))
        return event
    }

    /// Edge-triggered (EV_CLEAR) read and write filters, registered once per connection.
    func addConnection(_ fd: Int32, token: UInt64) -> Bool {
        var changes = [
            Poller.change(ident: UInt(fd), filter: EVFILT_READ, flags: EV_ADD | EV_CLEAR, token: token),
            Poller.change(ident: UInt(fd), filter: EVFILT_WRITE, flags: EV_ADD | EV_CLEAR, token: token),
        ]
        return Darwin.kevent(queueFD, &changes, 2, nil, 0, nil) == 0
    }

    /// Level-triggered: the accepting loop takes a bounded batch per wake-up.
    func addListener(_ fd: Int32) -> Bool {
        var change = Poller.change(ident: UInt(fd), filter: EVFILT_READ, flags: EV_ADD, token: PollToken.listener)
        return Darwin.kevent(queueFD, &change, 1, nil, 0, nil) == 0
    }

    func removeListener(_ fd: Int32) {
        var change = Poller.change(ident: UInt(fd), filter: EVFILT_READ, flags: EV_DELETE, token: PollToken.listener)
        _ = Darwin.kevent(queueFD, &change, 1, nil, 0, nil)
    }

    /// Callable from any thread.
    func wake() {
        var change = Poller.change(
            ident: 0, filter: EVFILT_USER, flags: 0, token: PollToken.wake, fflags: UInt32(NOTE_TRIGGER)
        )
        _ = Darwin.kevent(queueFD, &change, 1, nil, 0, nil)
    }

    /// EV_CLEAR resets the user event when it is delivered; nothing to read.
    func consumeWake() {}

    /// Blocks until readiness or the timeout (nil = no timeout); returns the number of events.
    func wait(_ buffer: PollBuffer, timeoutNanoseconds: UInt64?) -> Int {
        let count: Int32
        if let timeout = timeoutNanoseconds {
            var spec = timespec(tv_sec: Int(timeout / 1_000_000_000), tv_nsec: Int(timeout % 1_000_000_000))
            count = Darwin.kevent(queueFD, nil, 0, buffer.events, Int32(buffer.capacity), &spec)
        } else {
            count = Darwin.kevent(queueFD, nil, 0, buffer.events, Int32(buffer.capacity), nil)
        }
        return count < 0 ? 0 : Int(count)
    }
}

/// The loop's reusable event array.
final class PollBuffer {
    let capacity: Int
    fileprivate let events: UnsafeMutablePointer<kevent>

    init(capacity: Int) {
        self.capacity = capacity
        events = .allocate(capacity: capacity)
        events.initialize(repeating: kevent(), count: capacity)
    }

    deinit {
        events.deallocate()
    }

    func event(at index: Int) -> PollEvent {
        let raw = events[index]
        let token = UInt64(UInt(bitPattern: raw.udata))
        if raw.flags & UInt16(EV_ERROR) != 0 {
            return PollEvent(token: token, readable: true, writable: true, hangup: true)
        }
        switch Int32(raw.filter) {
        case EVFILT_READ:
            let eof = raw.flags & UInt16(EV_EOF) != 0
            return PollEvent(token: token, readable: true, writable: false, hangup: eof)
        case EVFILT_WRITE: return PollEvent(token: token, readable: false, writable: true)
        default: return PollEvent(token: token, readable: true, writable: false)
        }
    }
}
#endif
