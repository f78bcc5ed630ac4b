import AuthPlatform

/// One event-loop thread: non-blocking sockets, edge-triggered readiness (the `Poller`
/// contract), timers. Complete requests go to the worker pool and their responses come back
/// through the inbox; only those the responder declares non-blocking
/// (`HTTPResponder.respondsInline`: no SQLite, no hashing) are answered by the loop itself.
/// Everything here is confined to the loop's own thread.
///
/// The steps live beside this file, by concern: `EventLoop+Accepting.swift`,
/// `EventLoop+Reading.swift`, `EventLoop+Writing.swift`, `EventLoop+Timers.swift` and
/// `EventLoop+Shutdown.swift`.
final class EventLoop {
    /// How long submitted jobs may wait before sleeping workers are woken regardless.
    private static let queuePatienceNanoseconds: UInt64 = 1_000_000
    /// Bytes read per recv; also the largest chunk parsed without copying.
    private static let scratchSize = 64 * 1024

    // The loop's state is internal, not private, only so that the steps kept in
    // EventLoop+*.swift (accepting, reading, writing, timers, shutdown) can reach it; nothing
    // else in the module touches it. What one file alone uses stays private there.
    let core: ServerCore
    let handle: LoopHandle
    let index: Int
    let limits: HTTPParser.Limits
    let idleNanoseconds: UInt64
    let headerNanoseconds: UInt64
    let bodyNanoseconds: UInt64
    let writeNanoseconds: UInt64
    let maxConnections: Int

    var connections: [Connection?] = []
    var liveCount = 0
    var refusing = 0
    var generation: UInt32 = 0
    var timers = TimerHeap()
    var pendingJobs: [Job] = []
    /// Requests the responder answers inline (`HTTPResponder.respondsInline`), run by this loop
    /// once the parse that produced them has settled.
    var inlineJobs: [Job] = []
    private var inboxCompletions: [Completion] = []
    private var inlineBatch: [Job] = []
    private var inlineCompletions: [Completion] = []
    private var inboxSockets: [AcceptedSocket] = []
    private(set) var now: UInt64 = 0
    var draining = false
    var forceDeadline: UInt64 = 0
    /// This loop's requests in flight when the drain began, and those cut off (`DrainReport`).
    var drainInFlight = 0
    var drainCutOff = 0
    /// Requests answered 503 at the drain's deadline while a worker still had them.
    var refusedAtDrain: Set<UInt64> = []
    var listening: Bool
    var acceptPausedUntil: UInt64 = 0
    private var queueCheckAt: UInt64 = 0
    var nextLoop = 0
    var dates = DateCache()
    let scratch: UnsafeMutableRawBufferPointer

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
}
