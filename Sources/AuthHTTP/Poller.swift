// What the event loop asks of a readiness backend, and which backend a server gets. The backends:
// Poller+Epoll.swift (epoll, Linux's default) and Poller+Poll.swift (poll(2): macOS, and Linux in
// the portable mode). macOS has no backend of its own: kqueue cannot run on Linux, so a kqueue
// backend would be code no test here ever runs, while poll(2) is POSIX and runs the same on both
// (Poller+Poll.swift; docs/platforms.md).

/// One readiness notification from the poller.
///
/// An event only says "something changed": the loop then reads until EAGAIN (or a short read)
/// and flushes pending output. Hang-ups and errors are reported as readable, because the next
/// `recv` reports them precisely (EOF or the errno), and a stale event for a reused descriptor
/// then costs nothing.
struct PollEvent {
    var token: UInt64
    var readable: Bool
    var writable: Bool
    /// The peer has closed (at least its sending side); its EOF is already queued.
    var hangup: Bool = false
}

/// Tokens the loop reserves; connection tokens are `generation << 32 | fd` and never reach them.
enum PollToken {
    static let wake = UInt64.max
    static let listener = UInt64.max - 1
}

/// A readiness backend, as the event loop uses it.
///
/// Connections follow the edge-triggered contract: once a direction of a connection has been
/// reported ready, it need not be reported again until the loop has found it blocked (EAGAIN,
/// or a read shorter than asked) and said so with `readBlocked` / `writeBlocked`; reports the
/// loop did not need are harmless (it re-checks with the system call). Epoll with EPOLLET keeps
/// that contract on its own, so there those two calls do nothing; poll(2) is level-triggered, and
/// the portable backend keeps it by polling a direction only between its `...Blocked` call and its
/// next report. A connection starts with reading wanted and writing not.
///
/// The listener and the wake-up are level-triggered: reported while a connection waits in the
/// backlog, or until `consumeWake`.
///
/// A connection's descriptor leaves the poller (`removeConnection`) before it is closed: epoll
/// forgets a closed descriptor by itself, but poll(2) would report it invalid, or watch whatever
/// reuses its number.
///
/// `wake()` may be called from any thread. Everything else is called only by the loop thread
/// that owns the poller, or before that thread starts (`HTTPServer` registers the listener).
protocol Poller: AnyObject, Sendable {
    func addConnection(_ fd: Int32, token: UInt64) -> Bool
    func removeConnection(_ fd: Int32)
    func readBlocked(_ fd: Int32)
    func writeBlocked(_ fd: Int32)
    func addListener(_ fd: Int32) -> Bool
    func removeListener(_ fd: Int32)
    func wake()
    func consumeWake()
    /// Blocks until readiness or the timeout (nil = no timeout); replaces `events` with what is
    /// ready (none after a timeout or an interrupting signal).
    func wait(_ events: inout [PollEvent], timeoutNanoseconds: UInt64?)
}

/// The backend for `mode`: epoll for `.native` where it exists (Linux), poll(2) otherwise.
func makePoller(for mode: HTTPIOMode) throws(SocketError) -> any Poller {
    #if os(Linux) || os(Android)
    if mode == .native { return try EpollPoller() }
    #endif
    return try PortablePoller()
}

/// A wait's timeout in the milliseconds epoll_wait(2) and poll(2) take (-1 = none), rounded up so
/// a timer never wakes the loop a hair early and spins.
func waitMilliseconds(_ timeoutNanoseconds: UInt64?) -> Int32 {
    guard let timeout = timeoutNanoseconds else { return -1 }
    return Int32(min((timeout + 999_999) / 1_000_000, UInt64(Int32.max)))
}
