/// Per-connection state. Owned by exactly one loop thread, and it owns the socket.
final class Connection {
    enum Phase {
        /// Waiting for (more of) a request.
        case reading
        /// A worker has the request.
        case processing
        /// The response is ready and held by a `delay` directive's timer.
        case delayed
        /// The response is being written (partially sent, waiting for writability).
        case writing
        /// `drip` directive: the response goes out piece by piece on timers.
        case dripping
        /// `stall` directive: never answer.
        case stalled
        /// Write side shut down; draining the peer's input until it closes (RFC 9112 §9.6).
        case lingering
        case closed
    }

    let fd: Int32
    let token: UInt64
    let remoteAddress: String
    let remotePort: Int
    /// False for connections refused over the cap: they are not in `connectionCount`.
    let counted: Bool
    var phase: Phase = .reading
    var parser: HTTPParser
    /// Received bytes not yet consumed by the parser (partial or pipelined requests).
    var input: [UInt8] = []
    var output: [UInt8] = []
    var outputOffset = 0
    /// Bytes the kernel has taken from this connection's sends, all responses together.
    var handedToKernel: UInt64 = 0
    /// How many of those the peer had acknowledged at the last check of the write timeout
    /// (`EventLoop.peerTookBytes`).
    var acknowledgedAtCheck: UInt64 = 0
    var closeAfterWrite = false
    var held: Completion? = nil
    /// The observer of the response being written (`HTTPResponse.onDelivery`), told once.
    var onDelivery: (@Sendable (HTTPResponse.Delivered) -> Void)? = nil
    /// `drip` directive: the pieces still to send, the pause between them, and whether the
    /// connection closes after the last.
    var dripPieces: [[UInt8]] = []
    var dripInterval: UInt64 = 0
    var dripCloses = false
    /// Edge-triggered readiness: true until a read returns EAGAIN (or a short read), when the
    /// poller is told (`Poller.readBlocked`).
    var readReady = false
    var hungUp = false
    var peerClosed = false
    var broken = false
    var deadline: UInt64 = 0
    /// Earliest deadline this connection has in the timer heap (0 = none).
    var heapMin: UInt64 = 0
    var headStartedAt: UInt64 = 0
    var bodyStartedAt: UInt64 = 0
    var served = 0

    init(socket: AcceptedSocket, token: UInt64, counted: Bool, limits: HTTPParser.Limits) {
        fd = socket.fd
        self.token = token
        remoteAddress = socket.address
        remotePort = socket.port
        self.counted = counted
        parser = HTTPParser(limits: limits)
    }

    var hasPendingOutput: Bool { outputOffset < output.count }
}
