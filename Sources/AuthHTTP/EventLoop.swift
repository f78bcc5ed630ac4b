import AuthPlatform
import Synchronization

/// A connection accepted by the accepting loop and handed to another one.
struct AcceptedSocket: Sendable {
    var fd: Int32
    var address: String
    var port: Int
}

/// State shared by every thread of one server.
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    /// How sockets are accepted and written (`HTTPIOMode`).
    let transport: Transport
    let queue: WorkQueue
    let loops: [LoopHandle]
    let listenerFD: Int32
    /// Open client connections across all loops, against `maxConnections`.
    let connectionCount = Atomic<Int>(0)
    /// Set when shutdown begins: responses then announce `Connection: close`.
    let draining = Atomic<Bool>(false)
    /// The drain's deadline, stored before `draining` is set. A loop that sees `draining`
    /// begins its own drain before it handles any completion, even if its wake-up has not
    /// arrived yet: otherwise a request answered between two loops' wake-ups would finish
    /// as an ordinary keep-alive exchange and count in neither figure of the `DrainReport`.
    let drainDeadline = Atomic<UInt64>(0)
    /// Requests in flight when the drain began, and those of them cut off at its deadline,
    /// summed over the loops as each one ends (`DrainReport`).
    let drainInFlight = Atomic<Int>(0)
    let drainCutOff = Atomic<Int>(0)

    init(
        configuration: HTTPServerConfiguration, responder: any HTTPResponder, transport: Transport, loops: [LoopHandle],
        listenerFD: Int32
    ) {
        self.configuration = configuration
        self.responder = responder
        self.transport = transport
        self.loops = loops
        self.listenerFD = listenerFD
        queue = WorkQueue(workerCount: max(1, configuration.workerThreads), maxBlockedPerLane: configuration.maxBlockedPerLane)
    }
}

/// The part of a loop that other threads may touch: its poller (to wake it) and its inbox.
final class LoopHandle: Sendable {
    struct Inbox {
        var completions: [Completion] = []
        var sockets: [AcceptedSocket] = []
        var drainDeadline: UInt64? = nil
        /// A wake-up is already on its way; later deliveries ride along with it, so a burst of
        /// completions costs one eventfd (or pipe) write.
        var wakePending = false
        /// Set when the loop has stopped: a completion that arrives later is reported to its
        /// observer here, as answered with 503 at the drain's deadline (its token in `refused`)
        /// or cut off.
        var stopped = false
        var refused: Set<UInt64> = []
    }

    let index: Int
    let poller: any Poller
    private let inbox = Lock(Inbox())

    init(index: Int, poller: any Poller) {
        self.index = index
        self.poller = poller
    }

    func deliver(_ completion: Completion) {
        let (wake, late) = inbox.withLock { box -> (Bool, HTTPResponse.Delivered?) in
            if box.stopped { return (false, box.refused.contains(completion.token) ? .replaced(status: 503) : .cutOff) }
            box.completions.append(completion)
            if box.wakePending { return (false, nil) }
            box.wakePending = true
            return (true, nil)
        }
        if let late { completion.report(late) }
        if wake { poller.wake() }
    }

    /// The loop has stopped: completions still in the inbox, and any delivered later, are
    /// reported to their observers instead of being written.
    func stop(refused: Set<UInt64>) {
        let left = inbox.withLock { box -> [Completion] in
            box.stopped = true
            box.refused = refused
            defer { box.completions = [] }
            return box.completions
        }
        for completion in left { completion.report(refused.contains(completion.token) ? .replaced(status: 503) : .cutOff) }
    }

    func handOff(_ socket: AcceptedSocket) {
        let wake = inbox.withLock { box -> Bool in
            box.sockets.append(socket)
            if box.wakePending { return false }
            box.wakePending = true
            return true
        }
        if wake { poller.wake() }
    }

    func requestDrain(deadline: UInt64) {
        inbox.withLock { $0.drainDeadline = deadline }
        poller.wake()
    }

    /// Swaps the inbox arrays with the loop's (empty) ones, so neither side reallocates.
    func take(_ completions: inout [Completion], _ sockets: inout [AcceptedSocket]) -> UInt64? {
        inbox.withLock { box in
            swap(&box.completions, &completions)
            swap(&box.sockets, &sockets)
            box.wakePending = false
            return box.drainDeadline
        }
    }
}

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

/// Binary min-heap of connection deadlines. Entries are never removed early: a popped entry
/// is checked against the connection's current deadline (lazy deletion), so re-arming an idle
/// timer after every keep-alive response usually costs no heap operation at all.
struct TimerHeap {
    struct Entry {
        var deadline: UInt64
        var token: UInt64
    }

    private var entries: [Entry] = []

    var first: Entry? { entries.first }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if entries[parent].deadline <= entries[child].deadline { break }
            entries.swapAt(parent, child)
            child = parent
        }
    }

    mutating func removeFirst() {
        let last = entries.removeLast()
        guard !entries.isEmpty else { return }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            if left >= entries.count { break }
            let right = left + 1
            let smaller = right < entries.count && entries[right].deadline < entries[left].deadline ? right : left
            if entries[parent].deadline <= entries[smaller].deadline { break }
            entries.swapAt(parent, smaller)
            parent = smaller
        }
    }
}

/// One event-loop thread: non-blocking sockets, edge-triggered readiness (the `Poller`
/// contract), timers. Complete requests go to the worker pool and their responses come back
/// through the inbox; only those the responder declares non-blocking
/// (`HTTPResponder.respondsInline`: no SQLite, no hashing) are answered by the loop itself.
/// Everything here is confined to the loop's own thread.
final class EventLoop {
    private enum DriveOutcome {
        case needMore
        case dispatched
        case failed(HTTPProtocolFailure, HTTPHeaders?)
    }

    /// Bytes read per recv; also the largest chunk parsed without copying.
    private static let scratchSize = 64 * 1024
    /// While a request is in flight, pipelined input is buffered up to this much, then reading
    /// pauses until the response is out (the next request is parsed only then, which together
    /// with the capped send queue is the output backpressure; see `sendBufferBytes`).
    private static let pipelineBufferLimit = 64 * 1024
    /// How long a closing connection may take to send its FIN after ours.
    private static let lingerNanoseconds: UInt64 = 2_000_000_000
    /// Accepting pauses this long when the process runs out of descriptors.
    private static let acceptPauseNanoseconds: UInt64 = 100_000_000
    /// Refusals (503 then close) in progress at once; beyond this, refused sockets are closed.
    private static let maxRefusing = 256
    private static let acceptBatch = 128
    /// How long submitted jobs may wait before sleeping workers are woken regardless.
    private static let queuePatienceNanoseconds: UInt64 = 1_000_000

    private let core: ServerCore
    private let handle: LoopHandle
    private let index: Int
    private let limits: HTTPParser.Limits
    private let idleNanoseconds: UInt64
    private let headerNanoseconds: UInt64
    private let bodyNanoseconds: UInt64
    private let writeNanoseconds: UInt64
    private let maxConnections: Int

    private var connections: [Connection?] = []
    private var liveCount = 0
    private var refusing = 0
    private var generation: UInt32 = 0
    private var timers = TimerHeap()
    private var pendingJobs: [Job] = []
    /// Requests the responder answers inline (`HTTPResponder.respondsInline`), run by this loop
    /// once the parse that produced them has settled.
    private var inlineJobs: [Job] = []
    private var inboxCompletions: [Completion] = []
    private var inlineBatch: [Job] = []
    private var inlineCompletions: [Completion] = []
    private var inboxSockets: [AcceptedSocket] = []
    private var now: UInt64 = 0
    private var draining = false
    private var forceDeadline: UInt64 = 0
    /// This loop's requests in flight when the drain began, and those cut off (`DrainReport`).
    private var drainInFlight = 0
    private var drainCutOff = 0
    /// Requests answered 503 at the drain's deadline while a worker still had them.
    private var refusedAtDrain: Set<UInt64> = []
    private var listening: Bool
    private var acceptPausedUntil: UInt64 = 0
    private var queueCheckAt: UInt64 = 0
    private var nextLoop = 0
    private var dates = DateCache()
    private let scratch: UnsafeMutableRawBufferPointer

    init(core: ServerCore, handle: LoopHandle) {
        self.core = core
        self.handle = handle
        index = handle.index
        let configuration = core.configuration
        limits = HTTPParser.Limits(maxHeaderBytes: configuration.maxHeaderBytes, maxBodyBytes: configuration.maxBodyBytes)
        idleNanoseconds = configuration.idleTimeout.saturatingNanoseconds
        headerNanoseconds = configuration.headerTimeout.saturatingNanoseconds
        bodyNanoseconds = configuration.bodyTimeout.saturatingNanoseconds
        writeNanoseconds = configuration.writeTimeout.saturatingNanoseconds
        maxConnections = configuration.maxConnections
        listening = handle.index == 0
        scratch = .allocate(byteCount: Self.scratchSize, alignment: 16)
        pendingJobs.reserveCapacity(64)
    }

    deinit {
        scratch.deallocate()
    }

    // MARK: - the loop

    func run() {
        var events: [PollEvent] = []
        events.reserveCapacity(256)
        while true {
            now = Clock.monotonicNanoseconds()
            handle.poller.wait(&events, timeoutNanoseconds: nextTimeout())
            now = Clock.monotonicNanoseconds()
            for event in events {
                switch event.token {
                case PollToken.wake: handle.poller.consumeWake()
                case PollToken.listener: acceptConnections()
                default: connectionEvent(event)
                }
            }
            drainInbox()
            flushJobs()
            fireTimers()
            resumeAcceptingIfDue()
            flushJobs()
            checkQueueIfDue()
            if draining {
                if liveCount == 0 { break }
                if now >= forceDeadline {
                    closeAll()
                    break
                }
            }
        }
        core.drainInFlight.add(drainInFlight, ordering: .relaxed)
        core.drainCutOff.add(drainCutOff, ordering: .relaxed)
        handle.stop(refused: refusedAtDrain)
    }

    private func nextTimeout() -> UInt64? {
        var timeout: UInt64? = nil
        func consider(_ deadline: UInt64) {
            let remaining = deadline > now ? deadline - now : 0
            timeout = min(timeout ?? remaining, remaining)
        }
        if let first = timers.first { consider(first.deadline) }
        if draining { consider(forceDeadline) }
        if acceptPausedUntil != 0 { consider(acceptPausedUntil) }
        if queueCheckAt != 0 { consider(queueCheckAt) }
        return timeout
    }

    /// Answers the inline requests. Not from inside `drive`: completing one writes the response
    /// and may parse the connection's next pipelined request out of the buffer being driven.
    private func runInline() {
        while !inlineJobs.isEmpty {
            // The two buffers trade places, so neither is copied or reallocated per batch;
            // completing may queue more (pipelined requests) for the next pass.
            swap(&inlineJobs, &inlineBatch)
            if inlineBatch.count == 1 {
                complete(Worker.serve(inlineBatch[0], core, &dates))
            } else {
                // All answered first, then all sent: the peer, often asleep waiting for them,
                // is woken once for the batch instead of once per response.
                for job in inlineBatch { inlineCompletions.append(Worker.serve(job, core, &dates)) }
                for completion in inlineCompletions { complete(completion) }
                inlineCompletions.removeAll(keepingCapacity: true)
            }
            inlineBatch.removeAll(keepingCapacity: true)
        }
    }

    private func flushJobs() {
        runInline()
        guard !pendingJobs.isEmpty else { return }
        core.queue.submit(&pendingJobs)
        if queueCheckAt == 0 { queueCheckAt = now + Self.queuePatienceNanoseconds }
    }

    /// Jobs still queued a moment after submission mean the workers woken for them are stuck
    /// in slow work: wake the others.
    private func checkQueueIfDue() {
        guard queueCheckAt != 0, now >= queueCheckAt else { return }
        let queued = core.queue.rebalance(now: now, patience: Self.queuePatienceNanoseconds)
        queueCheckAt = queued ? now + Self.queuePatienceNanoseconds : 0
    }

    private func drainInbox() {
        let requested = handle.take(&inboxCompletions, &inboxSockets)
        // The drain begins before the completions below are handled: a request in flight
        // when the stop began counts as such even if its answer arrives in the same batch.
        if !draining {
            if let requested {
                beginDrain(deadline: requested)
            } else if core.draining.load(ordering: .acquiring) {
                beginDrain(deadline: core.drainDeadline.load(ordering: .relaxed))
            }
        }
        if !inboxSockets.isEmpty {
            for socket in inboxSockets {
                if draining {
                    SocketOps.close(socket.fd)
                    core.connectionCount.subtract(1, ordering: .relaxed)
                } else {
                    adopt(socket, counted: true)
                }
            }
            inboxSockets.removeAll(keepingCapacity: true)
        }
        if !inboxCompletions.isEmpty {
            for completion in inboxCompletions { complete(completion) }
            inboxCompletions.removeAll(keepingCapacity: true)
        }
    }

    // MARK: - accepting

    private func acceptConnections() {
        guard listening, !draining else { return }
        for _ in 0..<Self.acceptBatch {
            switch core.transport.accept(core.listenerFD) {
            case .accepted(let fd, let address, let port):
                let socket = AcceptedSocket(fd: fd, address: address, port: port)
                let previous = core.connectionCount.wrappingAdd(1, ordering: .relaxed).oldValue
                if previous >= maxConnections {
                    core.connectionCount.subtract(1, ordering: .relaxed)
                    refuse(socket)
                    continue
                }
                // Round-robin over the loops: long-lived keep-alive connections spread evenly.
                let target = nextLoop
                nextLoop = nextLoop + 1 == core.loops.count ? 0 : nextLoop + 1
                if target == index {
                    adopt(socket, counted: true)
                } else {
                    core.loops[target].handOff(socket)
                }
            case .wouldBlock:
                return
            case .retry:
                continue
            case .failed:
                // Out of descriptors or memory: the backlog stays readable and a level-triggered
                // listener would spin the loop, so stop listening for a moment.
                handle.poller.removeListener(core.listenerFD)
                listening = false
                acceptPausedUntil = now + Self.acceptPauseNanoseconds
                return
            }
        }
    }

    private func resumeAcceptingIfDue() {
        guard acceptPausedUntil != 0, now >= acceptPausedUntil else { return }
        acceptPausedUntil = 0
        if !draining && handle.poller.addListener(core.listenerFD) { listening = true }
    }

    /// Over the connection cap: answer 503 through the renderer and close, a clear refusal
    /// rather than a connection left hanging in the backlog.
    private func refuse(_ socket: AcceptedSocket) {
        guard refusing < Self.maxRefusing, let connection = adopt(socket, counted: false) else {
            SocketOps.close(socket.fd)
            return
        }
        refusing += 1
        writeFailure(connection, .connectionLimit, nil)
    }

    @discardableResult
    private func adopt(_ socket: AcceptedSocket, counted: Bool) -> Connection? {
        generation &+= 1
        if generation == 0 { generation = 1 }
        let token = UInt64(generation) << 32 | UInt64(UInt32(bitPattern: socket.fd))
        let connection = Connection(socket: socket, token: token, counted: counted, limits: limits)
        let slot = Int(socket.fd)
        if slot >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: max(slot + 1, connections.count * 2, 64) - connections.count))
        }
        guard handle.poller.addConnection(socket.fd, token: token) else {
            SocketOps.close(socket.fd)
            if counted { core.connectionCount.subtract(1, ordering: .relaxed) }
            return nil
        }
        connections[slot] = connection
        liveCount += 1
        // Like Go's ReadHeaderTimeout, the first request's head must arrive within the header
        // timeout of the accept.
        setDeadline(connection, now + headerNanoseconds)
        return connection
    }

    // MARK: - readiness

    private func lookup(_ token: UInt64) -> Connection? {
        let slot = Int(token & 0xFFFF_FFFF)
        guard slot < connections.count, let connection = connections[slot], connection.token == token else {
            return nil
        }
        return connection
    }

    private func connectionEvent(_ event: PollEvent) {
        guard let connection = lookup(event.token) else { return }
        if event.writable && connection.hasPendingOutput { flush(connection) }
        if event.readable && connection.phase != .closed {
            connection.readReady = true
            if event.hangup { connection.hungUp = true }
            readAvailable(connection)
        }
    }

    private func readAvailable(_ connection: Connection) {
        let buffer = scratch.baseAddress!
        while connection.readReady {
            var wanted = Self.scratchSize
            switch connection.phase {
            case .closed:
                return
            case .processing, .delayed, .writing, .dripping:
                // Read ahead no further than the limit: the rest waits in the kernel's receive
                // queue (bounded by `receiveBufferBytes`), and TCP flow control stops the peer.
                let room = Self.pipelineBufferLimit - connection.input.count
                if room <= 0 { return }
                wanted = min(wanted, room)
            case .reading, .stalled, .lingering:
                break
            }
            switch SocketOps.receive(connection.fd, into: buffer, count: wanted) {
            case .transferred(let count):
                // A short read drained the socket: with edge-triggered readiness, more data would
                // raise a new event. Unless the peer already hung up, whose EOF raises none.
                if count < wanted && !connection.hungUp { readBlocked(connection) }
                ingest(connection, UnsafeBufferPointer(start: buffer.assumingMemoryBound(to: UInt8.self), count: count))
            case .wouldBlock:
                readBlocked(connection)
            case .endOfStream:
                // Nothing more will arrive: the poller is not asked to watch for it.
                connection.readReady = false
                peerClosed(connection)
            case .failed:
                close(connection)
            }
        }
    }

    private func readBlocked(_ connection: Connection) {
        connection.readReady = false
        handle.poller.readBlocked(connection.fd)
    }

    private func ingest(_ connection: Connection, _ bytes: UnsafeBufferPointer<UInt8>) {
        switch connection.phase {
        case .reading:
            if connection.input.isEmpty {
                // Common case: parse straight out of the read buffer; copy only a remainder.
                let (consumed, outcome) = drive(connection, bytes)
                var keepsRemainder = consumed < bytes.count
                if case .failed = outcome { keepsRemainder = false }
                if keepsRemainder {
                    connection.input.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[consumed...]))
                }
                settle(connection, outcome)
            } else {
                connection.input.append(contentsOf: bytes)
                processBuffered(connection)
            }
        case .processing, .delayed, .writing, .dripping:
            connection.input.append(contentsOf: bytes)
        case .stalled, .lingering, .closed:
            break
        }
    }

    private func processBuffered(_ connection: Connection) {
        let (consumed, outcome) = connection.input.withUnsafeBufferPointer { drive(connection, $0) }
        if consumed >= connection.input.count {
            connection.input.removeAll(keepingCapacity: connection.input.capacity <= 4096)
        } else if consumed > 0 {
            connection.input.removeFirst(consumed)
        }
        settle(connection, outcome)
    }

    /// Runs the parser over `bytes`. Must not touch `connection.input`, which may be the
    /// buffer being parsed.
    private func drive(_ connection: Connection, _ bytes: UnsafeBufferPointer<UInt8>) -> (Int, DriveOutcome) {
        var position = 0
        while true {
            let (consumed, event) = connection.parser.parse(UnsafeBufferPointer(rebasing: bytes[position...]))
            position += consumed
            switch event {
            case .needMore:
                return (position, .needMore)
            case .expectContinue:
                if !draining { _ = enqueueOutput(connection, ResponseSerializer.continueLine) }
            case .request(var request, let keepAlive):
                request.remoteAddress = connection.remoteAddress
                request.remotePort = connection.remotePort
                request.reportsDelivery = true
                connection.phase = .processing
                connection.headStartedAt = 0
                connection.bodyStartedAt = 0
                var job = Job(request: request, token: connection.token, loop: index, keepAlive: keepAlive, enqueuedAt: now)
                switch core.responder.dispatch(job.request) {
                case .inline:
                    inlineJobs.append(job)
                case .queued(let lane):
                    job.lane = lane
                    pendingJobs.append(job)
                }
                return (position, .dispatched)
            case .failure(let failure, let headers):
                return (position, .failed(failure, headers))
            }
        }
    }

    private func settle(_ connection: Connection, _ outcome: DriveOutcome) {
        if connection.broken {
            close(connection)
            return
        }
        switch outcome {
        case .needMore:
            armReadingDeadline(connection)
        case .dispatched:
            setDeadline(connection, 0)
        case .failed(let failure, let headers):
            writeFailure(connection, failure, headers)
        }
    }

    private func armReadingDeadline(_ connection: Connection) {
        if connection.parser.isReadingBody {
            if connection.bodyStartedAt == 0 { connection.bodyStartedAt = now }
            setDeadline(connection, connection.bodyStartedAt + bodyNanoseconds)
        } else if !connection.parser.isBetweenMessages {
            if connection.headStartedAt == 0 { connection.headStartedAt = now }
            setDeadline(connection, connection.headStartedAt + headerNanoseconds)
        } else if connection.served > 0 {
            setDeadline(connection, now + idleNanoseconds)
        }
    }

    private func peerClosed(_ connection: Connection) {
        connection.peerClosed = true
        switch connection.phase {
        case .reading, .stalled, .lingering:
            // In `.reading` no complete request is buffered (it would have been dispatched), so
            // nothing is owed to the peer.
            close(connection)
        case .processing, .delayed, .writing, .dripping:
            // A half-closed client still gets its answer (RFC 9112 §9.6); close after it.
            break
        case .closed:
            break
        }
    }

    // MARK: - responses

    private func complete(_ completion: Completion) {
        guard let connection = lookup(completion.token), connection.phase == .processing else {
            // The connection is gone (the peer left, or it was answered 503 at the drain's end).
            completion.report(refusedAtDrain.contains(completion.token) ? .replaced(status: 503) : .cutOff)
            return
        }
        if let delay = completion.directive.delay, delay > .zero {
            connection.phase = .delayed
            connection.held = completion
            setDeadline(connection, now + delay.saturatingNanoseconds)
            return
        }
        deliver(connection, completion)
    }

    private func deliver(_ connection: Connection, _ completion: Completion) {
        connection.onDelivery = completion.onDelivery
        let directive = completion.directive
        if directive.reset {
            abort(connection)
            return
        }
        if directive.stall {
            connection.phase = .stalled
            connection.input = []
            setDeadline(connection, 0)
            if connection.peerClosed {
                close(connection)
            } else if connection.readReady {
                // Reading paused at the pipeline limit, and no poller reports a socket the loop
                // has not found blocked: read on (discarding) now, or the peer's close would go
                // unseen and the connection held until shutdown.
                readAvailable(connection)
            }
            return
        }
        var bytes = completion.bytes
        var closing = !completion.keepAlive
        if let limit = directive.closeAfterBytes {
            closing = true
            if limit < bytes.count { bytes = Array(bytes.prefix(max(0, limit))) }
        }
        if let drip = directive.drip, startDrip(connection, bytes, drip, close: closing) { return }
        writeResponse(connection, bytes, close: closing)
    }

    /// Cuts the body into pieces: the head and the first piece go now, the others on timers.
    /// False when there is no body to pace (the response is then written as usual).
    private func startDrip(_ connection: Connection, _ bytes: [UInt8], _ drip: ResponseDirective.Drip, close closing: Bool) -> Bool {
        guard let headEnd = Self.headEnd(bytes) else { return false }
        let bodyCount = bytes.count - headEnd
        let pieces = min(drip.chunks, bodyCount)
        guard pieces > 1 else { return false }
        var cuts: [[UInt8]] = []
        cuts.reserveCapacity(pieces)
        var start = headEnd
        for index in 0..<pieces {
            let end = headEnd + bodyCount * (index + 1) / pieces
            cuts.append(Array(bytes[(index == 0 ? 0 : start)..<end]))
            start = end
        }
        connection.phase = .dripping
        connection.dripInterval = drip.duration.saturatingNanoseconds / UInt64(pieces - 1)
        connection.dripCloses = closing
        connection.dripPieces = Array(cuts.dropFirst())
        guard enqueueOutput(connection, cuts[0]) else {
            close(connection)
            return true
        }
        setDeadline(connection, now + connection.dripInterval)
        return true
    }

    private func continueDrip(_ connection: Connection) {
        guard !connection.dripPieces.isEmpty else { return }
        let piece = connection.dripPieces.removeFirst()
        if connection.dripPieces.isEmpty {
            writeResponse(connection, piece, close: connection.dripCloses)
            return
        }
        guard enqueueOutput(connection, piece) else {
            close(connection)
            return
        }
        setDeadline(connection, now + connection.dripInterval)
    }

    /// The offset just past the blank line that ends a serialized head.
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A && bytes[index - 3] == 0x0D {
            return index + 1
        }
        return nil
    }

    private func writeFailure(_ connection: Connection, _ failure: HTTPProtocolFailure, _ headers: HTTPHeaders?) {
        let response = core.configuration.protocolErrorRenderer(failure, headers)
        let context = ResponseSerializer.Context(
            isHead: false, isHTTP10: false, keepAlive: false,
            date: core.configuration.sendsDateHeader ? dates.current() : nil,
            server: core.configuration.serverHeader
        )
        connection.input = []
        writeResponse(connection, ResponseSerializer.serialize(response, context).bytes, close: true)
    }

    private func writeResponse(_ connection: Connection, _ bytes: [UInt8], close closing: Bool) {
        connection.phase = .writing
        connection.closeAfterWrite = closing
        guard enqueueOutput(connection, bytes) else {
            close(connection)
            return
        }
        if connection.hasPendingOutput {
            // A peer that stops reading must not hold the connection and its unsent bytes
            // forever: `writeTimeout`, started again by every send that makes progress (`flush`).
            setDeadline(connection, now + writeNanoseconds)
        } else {
            afterWrite(connection)
        }
    }

    /// Sends now as much as the socket takes; keeps the rest for writability. False when the
    /// connection failed (it is marked broken, not closed, so callers stay in control).
    private func enqueueOutput(_ connection: Connection, _ bytes: [UInt8]) -> Bool {
        if connection.hasPendingOutput {
            connection.output.append(contentsOf: bytes)
            return true
        }
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                core.transport.send(connection.fd, raw.baseAddress! + sent, count: raw.count - sent)
            }
            switch result {
            case .transferred(let count):
                sent += count
            case .wouldBlock:
                connection.output = Array(bytes[sent...])
                connection.outputOffset = 0
                handle.poller.writeBlocked(connection.fd)
                return true
            case .failed, .endOfStream:
                connection.broken = true
                return false
            }
        }
        return true
    }

    private func flush(_ connection: Connection) {
        var progressed = false
        while connection.hasPendingOutput {
            let result = connection.output.withUnsafeBytes { raw in
                core.transport.send(connection.fd, raw.baseAddress! + connection.outputOffset, count: raw.count - connection.outputOffset)
            }
            switch result {
            case .transferred(let count):
                connection.outputOffset += count
                progressed = true
            case .wouldBlock:
                // The peer is reading, however slowly: the write timeout counts from here. Only
                // while `.writing`: a dripping response's deadline is its next piece.
                if progressed && connection.phase == .writing { setDeadline(connection, now + writeNanoseconds) }
                handle.poller.writeBlocked(connection.fd)
                return
            case .failed, .endOfStream:
                close(connection)
                return
            }
        }
        connection.output = []
        connection.outputOffset = 0
        if connection.phase == .writing { afterWrite(connection) }
    }

    /// The response is wholly in the socket's send queue: what the client gets of it is
    /// settled (its observer is told so), and the connection goes on.
    private func afterWrite(_ connection: Connection) {
        if let report = connection.onDelivery {
            connection.onDelivery = nil
            report(.written)
        }
        if connection.closeAfterWrite || draining {
            closeGracefully(connection)
            return
        }
        connection.phase = .reading
        connection.served += 1
        if !connection.input.isEmpty { processBuffered(connection) }
        guard connection.phase == .reading else { return }
        if connection.peerClosed {
            close(connection)
            return
        }
        armReadingDeadline(connection)
        if connection.readReady { readAvailable(connection) }
    }

    /// Shut down our side, then read and discard until the peer closes: closing a socket with
    /// unread input makes the kernel send RST, which can destroy the response before the
    /// client reads it (RFC 9112 §9.6).
    private func closeGracefully(_ connection: Connection) {
        if connection.peerClosed {
            close(connection)
            return
        }
        SocketOps.shutdownWrite(connection.fd)
        connection.phase = .lingering
        connection.input = []
        // While shutting down, wait less for the peer's FIN: the response is already out.
        setDeadline(connection, now + (draining ? Self.lingerNanoseconds / 4 : Self.lingerNanoseconds))
        if connection.readReady { readAvailable(connection) }
    }

    private func close(_ connection: Connection) {
        guard connection.phase != .closed else { return }
        handle.poller.removeConnection(connection.fd)
        SocketOps.close(connection.fd)
        forget(connection)
    }

    /// `reset` directive: RST instead of an answer.
    private func abort(_ connection: Connection) {
        guard connection.phase != .closed else { return }
        handle.poller.removeConnection(connection.fd)
        SocketOps.abortiveClose(connection.fd)
        forget(connection)
    }

    private func forget(_ connection: Connection) {
        // A response not (wholly) written by now never will be: held by a delay, stalled,
        // dripping, waiting for writability, or reset on purpose.
        if let report = connection.onDelivery ?? connection.held?.onDelivery {
            connection.onDelivery = nil
            report(.cutOff)
        }
        connection.phase = .closed
        connection.readReady = false
        connection.input = []
        connection.output = []
        connection.held = nil
        connection.dripPieces = []
        connections[Int(connection.fd)] = nil
        liveCount -= 1
        if connection.counted {
            core.connectionCount.subtract(1, ordering: .relaxed)
        } else {
            refusing -= 1
        }
    }

    // MARK: - timers

    private func setDeadline(_ connection: Connection, _ deadline: UInt64) {
        connection.deadline = deadline
        if deadline != 0 && (connection.heapMin == 0 || deadline < connection.heapMin) {
            timers.push(TimerHeap.Entry(deadline: deadline, token: connection.token))
            connection.heapMin = deadline
        }
    }

    private func fireTimers() {
        while let first = timers.first, first.deadline <= now {
            timers.removeFirst()
            guard let connection = lookup(first.token) else { continue }
            if first.deadline == connection.heapMin { connection.heapMin = 0 }
            let deadline = connection.deadline
            if deadline != 0 && deadline <= now {
                connection.deadline = 0
                expire(connection)
            } else if deadline != 0 && connection.heapMin == 0 {
                timers.push(TimerHeap.Entry(deadline: deadline, token: connection.token))
                connection.heapMin = deadline
            }
        }
    }

    private func expire(_ connection: Connection) {
        switch connection.phase {
        case .delayed:
            guard let held = connection.held else { return }
            connection.held = nil
            deliver(connection, held)
        case .dripping:
            continueDrip(connection)
        case .reading, .lingering:
            // Idle keep-alive, slow head (slowloris), slow body or linger: close.
            close(connection)
        case .writing:
            // The peer took no byte for `writeTimeout`. A plain close would leave the kernel
            // holding the unsent queue of an orphaned socket, probing a zero window for minutes;
            // a reset frees it now, and the response could not be delivered anyway.
            abort(connection)
        case .processing, .stalled, .closed:
            break
        }
    }

    // MARK: - shutdown

    private func beginDrain(deadline: UInt64) {
        draining = true
        forceDeadline = deadline
        if listening {
            handle.poller.removeListener(core.listenerFD)
            listening = false
        }
        acceptPausedUntil = 0
        for case let connection? in connections {
            switch connection.phase {
            case .reading:
                // Idle keep-alive or a request still arriving: nothing in flight to finish.
                close(connection)
            case .stalled:
                // A `stall` fault never answers, so waiting cannot finish it: it is cut off now.
                drainInFlight += 1
                drainCutOff += 1
                close(connection)
            case .processing, .delayed, .writing, .dripping:
                drainInFlight += 1
            case .lingering, .closed:
                // Answered already; only the peer's last bytes are awaited.
                break
            }
        }
    }

    /// The drain's time is up: requests a worker has not answered yet get a 503 (best effort,
    /// as much as the socket takes now), then every connection closes.
    private func closeAll() {
        for case let connection? in connections {
            switch connection.phase {
            case .processing, .delayed, .writing, .dripping: drainCutOff += 1
            case .reading, .stalled, .lingering, .closed: break
            }
            if connection.phase == .processing && !connection.hasPendingOutput {
                refusedAtDrain.insert(connection.token)
                let response = core.configuration.protocolErrorRenderer(.shuttingDown, nil)
                let context = ResponseSerializer.Context(
                    isHead: false, isHTTP10: false, keepAlive: false,
                    date: core.configuration.sendsDateHeader ? dates.current() : nil,
                    server: core.configuration.serverHeader
                )
                _ = enqueueOutput(connection, ResponseSerializer.serialize(response, context).bytes)
            }
            close(connection)
        }
    }
}
