// Readiness notification with poll(2), with a pipe as the cross-thread wake-up: what macOS runs,
// and what Linux runs in the portable mode (`HTTPIOMode.portable`), so that the code macOS
// serves through runs in the test suite here. Only POSIX calls and flags (poll, pipe, fcntl,
// read, write; POLLIN, POLLOUT, POLLERR, POLLHUP, POLLNVAL): no POLLRDHUP, which is Linux's own.
//
// Why poll(2) and not kqueue on macOS: kqueue does not exist on Linux, so its code would never
// run before a user's Mac did; poll(2) is the same call on both. Its cost, one pass over the
// loop's descriptors per wait, is small for the connections a development tool holds
// (docs/platforms.md: within the noise at 50 connections, about a sixth fewer requests per
// second beside 1,000 idle ones).
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one pipe for wake-ups and the loop's poll set.
///
/// poll(2) is level-triggered: a readable or writable socket is reported by every call while it
/// stays so. The loop is written for edge-triggered readiness (the `Poller` contract), so a
/// connection's direction is polled only while the loop waits on it: read from registration or
/// `readBlocked` until it is reported, write from `writeBlocked` until it is reported. A
/// connection waiting on neither is left out of the call (a negative descriptor, which poll(2)
/// skips), or its POLLHUP, which poll reports whatever was asked, would wake the loop on every
/// call while, say, a worker still has the request.
///
/// The poll set is confined to the loop thread that owns the poller (registration before that
/// thread starts is ordered by its creation); only `wake()`, which touches nothing but the
/// pipe's write end, is called from other threads. That confinement is what makes the
/// `@unchecked Sendable` sound.
final class PortablePoller: Poller, @unchecked Sendable {
    private struct Entry {
        var fd: Int32
        var token: UInt64
    }

    private static let readable = Int16(POLLIN)
    private static let writable = Int16(POLLOUT)

    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// What poll(2) gets: one slot per registered descriptor, in no particular order. `fd` is
    /// negative while nothing is wanted from the descriptor.
    private var set: [pollfd] = []
    /// Parallel to `set`: each slot's real descriptor and token.
    private var entries: [Entry] = []
    /// A descriptor's slot in `set`, or -1; indexed by descriptor number, which POSIX keeps
    /// small (the lowest free number is always used).
    private var slots: [Int32] = []

    init() throws(SocketError) {
        var ends: [Int32] = [-1, -1]
        // pipe, then fcntl: macOS has no pipe2 (Linux has; the portable mode uses the call both
        // have). A full pipe must not block a waker: a full pipe is readable anyway.
        guard pipe(&ends) == 0 else { throw SocketError(operation: "pipe", errno: errno) }
        for end in ends {
            let flags = fcntl(end, F_GETFL, 0)
            guard flags >= 0, fcntl(end, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(end, F_SETFD, FD_CLOEXEC) == 0 else {
                let code = errno
                _ = close(ends[0])
                _ = close(ends[1])
                throw SocketError(operation: "fcntl", errno: code)
            }
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        insert(wakeRead, token: PollToken.wake, events: Self.readable)
    }

    deinit {
        // Both ends together, once no thread can wake the loop any more: a write to a pipe
        // without a reader would raise SIGPIPE (pipe(7)).
        _ = close(wakeRead)
        _ = close(wakeWrite)
    }

    func addConnection(_ fd: Int32, token: UInt64) -> Bool {
        insert(fd, token: token, events: Self.readable)
        return true
    }

    func removeConnection(_ fd: Int32) {
        remove(fd)
    }

    func readBlocked(_ fd: Int32) {
        want(fd, Self.readable)
    }

    func writeBlocked(_ fd: Int32) {
        want(fd, Self.writable)
    }

    /// Level-triggered, never disarmed: the accepting loop takes a bounded batch per wake-up and
    /// is told again while the backlog still holds connections.
    func addListener(_ fd: Int32) -> Bool {
        insert(fd, token: PollToken.listener, events: Self.readable)
        return true
    }

    func removeListener(_ fd: Int32) {
        remove(fd)
    }

    /// Callable from any thread. EAGAIN means the pipe is full, hence readable: the loop wakes.
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Empties the pipe: it is level-triggered, and a byte left in it would wake every wait.
    func consumeWake() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while true {
            let count = withUnsafeMutableBytes(of: &buffer) { read(wakeRead, $0.baseAddress, $0.count) }
            if count > 0 { continue }
            if count < 0 && errno == EINTR { continue }
            return
        }
    }

    func wait(_ events: inout [PollEvent], timeoutNanoseconds: UInt64?) {
        events.removeAll(keepingCapacity: true)
        // nfds never exceeds RLIMIT_NOFILE, past which poll(2) fails with EINVAL: each slot is a
        // descriptor this process holds open.
        let ready = set.withUnsafeMutableBufferPointer {
            poll($0.baseAddress, nfds_t($0.count), waitMilliseconds(timeoutNanoseconds))
        }
        // 0: timed out; -1: EINTR (or EAGAIN, which POSIX allows for a transient shortage); the
        // loop recomputes its timers and waits again either way.
        guard ready > 0 else { return }
        var remaining = Int(ready)
        var slot = 0
        var listener: PollEvent? = nil
        // poll returns how many slots have revents set, so the pass stops at the last of them.
        while remaining > 0 && slot < set.count {
            let revents = set[slot].revents
            if revents != 0 {
                remaining -= 1
                set[slot].revents = 0
                let event = report(slot, revents)
                if event.token == PollToken.listener { listener = event } else { events.append(event) }
            }
            slot += 1
        }
        // The listener last: connections that closed meanwhile give back their places under
        // `maxConnections` before the backlog is taken, as epoll's order (by readiness) mostly
        // has it, rather than a newcomer being refused for a place already free.
        if let listener { events.append(listener) }
    }

    // MARK: - the poll set

    /// Turns a slot's revents into an event, and stops polling what it reports for a connection
    /// until the loop asks again. Errors and hang-ups read as both directions, as with epoll:
    /// the loop's next recv or send then says what happened. POLLNVAL (a descriptor closed
    /// while registered, which the loop never does) reads the same, so the loop's recv fails and
    /// closes the connection rather than leaving a slot that fires forever.
    private func report(_ slot: Int, _ revents: Int16) -> PollEvent {
        let trouble = Int16(POLLERR) | Int16(POLLHUP) | Int16(POLLNVAL)
        let entry = entries[slot]
        let event = PollEvent(
            token: entry.token,
            readable: revents & (Self.readable | trouble) != 0,
            writable: revents & (Self.writable | trouble) != 0,
            hangup: revents & trouble != 0
        )
        if entry.token != PollToken.wake && entry.token != PollToken.listener {
            var events = set[slot].events
            if event.readable { events &= ~Self.readable }
            if event.writable { events &= ~Self.writable }
            set[slot].events = events
            if events == 0 { set[slot].fd = -1 }
        }
        return event
    }

    private func insert(_ fd: Int32, token: UInt64, events: Int16) {
        let index = Int(fd)
        if index >= slots.count {
            slots.append(contentsOf: repeatElement(-1, count: max(index + 1, slots.count * 2, 64) - slots.count))
        }
        if slots[index] >= 0 { remove(fd) }
        slots[index] = Int32(set.count)
        set.append(pollfd(fd: fd, events: events, revents: 0))
        entries.append(Entry(fd: fd, token: token))
    }

    /// Swaps the last slot into the removed one: O(1), and order in the set means nothing.
    private func remove(_ fd: Int32) {
        let index = Int(fd)
        guard index < slots.count, slots[index] >= 0 else { return }
        let slot = Int(slots[index])
        let last = set.count - 1
        if slot != last {
            set[slot] = set[last]
            entries[slot] = entries[last]
            slots[Int(entries[slot].fd)] = Int32(slot)
        }
        set.removeLast()
        entries.removeLast()
        slots[index] = -1
    }

    private func want(_ fd: Int32, _ direction: Int16) {
        let index = Int(fd)
        guard index < slots.count, slots[index] >= 0 else { return }
        let slot = Int(slots[index])
        set[slot].events |= direction
        set[slot].fd = fd
    }
}
