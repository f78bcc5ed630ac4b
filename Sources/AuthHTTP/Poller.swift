/// One readiness notification from the poller.
///
/// Connection sockets are registered edge-triggered for both directions, so an event only says
/// "something changed": the loop then reads until EAGAIN (or a short read) and flushes pending
/// output. Hang-ups and errors are reported as readable, because the next `recv` reports them
/// precisely (EOF or the errno), and a stale event for a reused descriptor then costs nothing.
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
