import AuthPlatform

/// The application side of the server.
public protocol HTTPResponder: Sendable {
    /// Runs on a worker thread of the server's bounded pool; may block (SQLite, PBKDF2).
    func respond(to request: HTTPRequest) -> HTTPResponse

    /// True when `respond(to:)` is quick for this request and never waits for another thread:
    /// no password hashing, no outbound call, no lock held across slow work; at most an indexed
    /// read on a database connection of its own. The event loop then answers it itself: for a
    /// small response the hand-off to a worker and back (two thread wake-ups) costs more than
    /// the response, but every other connection of that loop waits while it runs. Asked on the
    /// loop for every request, so it must be cheap. Default: false.
    func respondsInline(to request: HTTPRequest) -> Bool

    /// How the loop runs `request`: by itself (`respondsInline`) or through the worker queue,
    /// in a lane. Lanes take turns at the workers, one job each, so a flood of requests in one
    /// lane (one project of several) delays another lane's request by about one job per busy
    /// lane, not by the whole backlog. Asked on the loop for every request. Default: lane 0, or
    /// inline when `respondsInline` says so.
    func dispatch(_ request: HTTPRequest) -> HTTPDispatch
}

/// See `HTTPResponder.dispatch`.
public enum HTTPDispatch: Sendable, Equatable {
    case inline
    case queued(lane: Int)
}

extension HTTPResponder {
    public func respondsInline(to request: HTTPRequest) -> Bool { false }

    public func dispatch(_ request: HTTPRequest) -> HTTPDispatch {
        respondsInline(to: request) ? .inline : .queued(lane: 0)
    }
}

/// A request the transport refuses before any responder sees it. Each is answered once and the
/// connection is then closed, because after a framing error the position of the next message
/// in the byte stream is unknown (RFC 9112 §2.2, §6.3).
public enum HTTPProtocolFailure: Sendable, Equatable {
    /// Malformed framing or syntax -> 400.
    case badRequest(String)
    /// Request line plus header section over the cap -> 431 (RFC 6585 §5).
    case headersTooLarge
    /// Body over the cap -> 413 (RFC 9110 §15.5.14).
    case bodyTooLarge(limit: Int)
    /// Over `maxConnections` -> 503.
    case connectionLimit
    /// A major version other than 1 -> 505 (RFC 9110 §15.6.6).
    case unsupportedVersion
    /// E.g. a transfer-coding other than chunked -> 501 (RFC 9112 §6.1).
    case notImplemented(String)
    /// A request still waiting for its answer when a graceful shutdown's time ran out -> 503:
    /// the client learns it was not served rather than seeing the connection drop.
    case shuttingDown

    public var status: Int {
        switch self {
        case .badRequest: 400
        case .headersTooLarge: 431
        case .bodyTooLarge: 413
        case .connectionLimit: 503
        case .unsupportedVersion: 505
        case .notImplemented: 501
        case .shuttingDown: 503
        }
    }

    /// Short plain-text explanation used by the default renderer.
    public var message: String {
        switch self {
        case .badRequest(let detail): "Bad Request: \(detail)"
        case .headersTooLarge: "Request Header Fields Too Large"
        case .bodyTooLarge(let limit): "Content Too Large: the limit is \(limit) bytes"
        case .connectionLimit: "Service Unavailable: too many connections"
        case .unsupportedVersion: "HTTP Version Not Supported"
        case .notImplemented(let detail): "Not Implemented: \(detail)"
        case .shuttingDown: "Service Unavailable: the server is shutting down"
        }
    }

    /// The default rendering: status and a one-line text/plain body.
    public static func defaultResponse(_ failure: HTTPProtocolFailure, _ headers: HTTPHeaders?) -> HTTPResponse {
        HTTPResponse(
            status: failure.status,
            headers: ["Content-Type": "text/plain; charset=utf-8"],
            body: Array((failure.message + "\n").utf8)
        )
    }
}

/// Which system interfaces a server's sockets go through (docs/platforms.md).
///
/// macOS runs one set of calls, `.portable`. Linux runs its own by default, `.native`, and can
/// run macOS's, so that every branch macOS takes runs in the test suite on Linux too (CI runs
/// the HTTP suites a second time with `AUTH_EMULATOR_PORTABLE_IO=1`).
public enum HTTPIOMode: String, Sendable, Equatable, CaseIterable {
    /// Linux: epoll, an eventfd for wake-ups, accept4, send with MSG_NOSIGNAL. On macOS, which
    /// has none of these, a server asked for it runs `.portable`.
    case native
    /// What macOS runs: poll(2), a pipe for wake-ups, accept then fcntl, send with no flags
    /// (macOS sets SO_NOSIGPIPE on each socket; Linux, which has no such option, ignores SIGPIPE
    /// for the whole process instead), and the buffer caps set on each accepted socket.
    case portable

    /// The environment variable that turns the portable mode on for every server the process
    /// starts without choosing a mode itself, in-process test servers included.
    public static let environmentVariable = "AUTH_EMULATOR_PORTABLE_IO"

    /// `.portable` when `AUTH_EMULATOR_PORTABLE_IO` holds a true value, else `.native`. Read once,
    /// the first time a configuration is made, and kept for the life of the process.
    public static let fromEnvironment = HTTPIOMode(environmentValue: SocketOps.environmentValue(environmentVariable))

    /// True values as Go's strconv.ParseBool reads them (1, t, T, TRUE, true, True), the syntax
    /// of the emulator's other boolean variables; anything else, or no value, is `.native`.
    init(environmentValue: String?) {
        switch environmentValue {
        case "1", "t", "T", "TRUE", "true", "True": self = .portable
        default: self = .native
        }
    }
}

public struct HTTPServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    /// 0 asks for an ephemeral port; `HTTPServer.port` reports the real one.
    public var port: Int = 9999
    /// Listen backlog; raised to at least 512 so connection bursts are not refused.
    public var backlog: Int32 = 1024
    /// Event-loop threads; one per online processor by default.
    public var loopThreads: Int = onlineProcessorCount
    /// Worker threads running the responder (blocking work: SQLite, PBKDF2).
    public var workerThreads: Int = max(4, 2 * onlineProcessorCount)
    /// Stack size of each worker thread: below the 8 MiB default to keep RSS small, large enough
    /// for SQLite and PBKDF2.
    public var workerStackSize: Int = 512 * 1024
    /// At most this many requests of one lane (one project) may wait at once on an outgoing call
    /// that can be refused (`BlockingIO.perform(refusing:)`, a hook's HTTP request); the next is
    /// answered at once with the caller's refusal (the hook's timeout error).
    ///
    /// Waiting workers are stood in for by at most `WorkQueue.maxStandIns` (256) extra threads,
    /// shared by every project. 64 is a quarter of them: a hook that never answers in one project
    /// leaves at least 192 for the others, so it takes four projects hanging at once to use them
    /// up, while 64 requests waiting on one project's hook at once is more than a test suite's
    /// clients run in parallel (a healthy hook answers in milliseconds, so calls rarely overlap).
    public var maxBlockedPerLane: Int = defaultMaxBlockedPerLane
    public static let defaultMaxBlockedPerLane = 64
    public var maxConnections: Int = 10_000
    /// Cap on request line plus header section.
    public var maxHeaderBytes: Int = 16 * 1024
    public var maxBodyBytes: Int = 1 << 20
    /// How long a keep-alive connection may sit idle between requests.
    public var idleTimeout: Duration = .seconds(75)
    /// A request head must be complete within this after its first byte (slowloris defence).
    public var headerTimeout: Duration = .seconds(10)
    /// A request body must be complete within this after the head.
    public var bodyTimeout: Duration = .seconds(30)
    /// A response that is waiting for the peer to take it (its unsent bytes in user space, the
    /// capped kernel queue full) may wait this long without the peer taking a byte; then the
    /// connection is reset and its buffers freed. Every send that makes progress starts it
    /// again, and in Linux's native mode so does every byte the peer acknowledged since the
    /// last time it ran out (the kernel's count, `SIOCOUTQ`), so a slow reader of a large
    /// response is never cut off even when the send queue drains too slowly to take a send
    /// within the timeout; a client that stopped reading (or pipelines requests and never
    /// reads) is, between one and two timeouts after its last byte. On macOS and in the
    /// portable mode only sends count. As nginx's `send_timeout`, which also times the gap
    /// between two successful writes, not the whole response.
    ///
    /// GoTrue's `http.Server` (cmd/serve_cmd.go) sets only `ReadHeaderTimeout` (2 s): no
    /// `WriteTimeout` and no `IdleTimeout`, so there a connection that never reads keeps its
    /// goroutine, blocked in `Write`, for as long as the peer keeps the connection open.
    public var writeTimeout: Duration = .seconds(30)
    /// Cap on the response bytes one connection may have queued in the kernel (SO_SNDBUF of every
    /// accepted socket); nil leaves the kernel's autotuning (Linux: up to tcp_wmem's 4 MiB).
    ///
    /// This is the output backpressure. A connection is answered one request at a time, and its
    /// next pipelined request is parsed only once the previous response is entirely in the
    /// kernel. When a peer stops reading, its queue fills to this cap, a send returns EAGAIN,
    /// the rest of that one response waits in user space for writability, and the peer's
    /// further requests stay unparsed (at most 64 KiB read ahead, the rest in the receive queue
    /// below) until it reads again. A large response still goes out completely, in steps, on
    /// writability; only a long fat link notices (one connection's rate is bounded by cap / RTT).
    ///
    /// Keep it at 64 KiB or more: Linux's loopback MTU is 64 KiB, and a smaller queue stalls
    /// there (a 3.8 MB response took 2.4 s at 32 KiB, 60 ms at 64 KiB).
    public var sendBufferBytes: Int? = 64 * 1024
    /// Cap on the request bytes one connection may have queued in the kernel (SO_RCVBUF); nil
    /// leaves the kernel's autotuning (Linux: up to tcp_rmem's maximum, 6 MiB or more). Bounds
    /// what a client pipelining requests the server is not parsing yet can park in the kernel;
    /// TCP flow control then stops the client. A 1 MiB body still uploads in about a millisecond
    /// on loopback.
    public var receiveBufferBytes: Int? = 32 * 1024
    /// Lets the layer above shape protocol-error bodies (e.g. GoTrue's 413 JSON). The headers
    /// parsed so far, if any, are passed. Default: short text/plain bodies.
    public var protocolErrorRenderer: @Sendable (HTTPProtocolFailure, HTTPHeaders?) -> HTTPResponse =
        HTTPProtocolFailure.defaultResponse
    /// Value of the `Server` response header; nil sends none.
    public var serverHeader: String? = nil
    /// Whether responses carry a `Date` header (RFC 9110 §6.6.1: origin servers with a clock should).
    public var sendsDateHeader: Bool = true
    /// The system interfaces the server uses; by default what `AUTH_EMULATOR_PORTABLE_IO` says
    /// (`HTTPIOMode.fromEnvironment`). `HTTPServer.ioMode` reports what really runs.
    public var ioMode: HTTPIOMode = .fromEnvironment

    public init(
        host: String = "127.0.0.1",
        port: Int = 9999,
        backlog: Int32 = 1024,
        loopThreads: Int? = nil,
        workerThreads: Int? = nil,
        maxConnections: Int = 10_000,
        maxHeaderBytes: Int = 16 * 1024,
        maxBodyBytes: Int = 1 << 20,
        idleTimeout: Duration = .seconds(75),
        headerTimeout: Duration = .seconds(10),
        bodyTimeout: Duration = .seconds(30),
        writeTimeout: Duration = .seconds(30),
        protocolErrorRenderer: (@Sendable (HTTPProtocolFailure, HTTPHeaders?) -> HTTPResponse)? = nil,
        serverHeader: String? = nil
    ) {
        self.host = host
        self.port = port
        self.backlog = backlog
        if let loopThreads { self.loopThreads = loopThreads }
        if let workerThreads { self.workerThreads = workerThreads }
        self.maxConnections = maxConnections
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.writeTimeout = writeTimeout
        if let protocolErrorRenderer { self.protocolErrorRenderer = protocolErrorRenderer }
        self.serverHeader = serverHeader
    }
}
