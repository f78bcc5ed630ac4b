// Reading: readiness events, receiving, and driving the parser until a request is handed to
// a worker (or answered inline), with the deadlines of a request still arriving.
extension EventLoop {
    private enum DriveOutcome {
        case needMore
        case dispatched
        case failed(HTTPProtocolFailure, HTTPHeaders?)
    }

    /// While a request is in flight, pipelined input is buffered up to this much, then reading
    /// pauses until the response is out (the next request is parsed only then, which together
    /// with the capped send queue is the output backpressure; see `sendBufferBytes`).
    private static let pipelineBufferLimit = 64 * 1024

    func lookup(_ token: UInt64) -> Connection? {
        let slot = Int(token & 0xFFFF_FFFF)
        guard slot < connections.count, let connection = connections[slot], connection.token == token else {
            return nil
        }
        return connection
    }

    func connectionEvent(_ event: PollEvent) {
        guard let connection = lookup(event.token) else { return }
        if event.writable && connection.hasPendingOutput { flush(connection) }
        if event.readable && connection.phase != .closed {
            connection.readReady = true
            if event.hangup { connection.hungUp = true }
            readAvailable(connection)
        }
    }

    func readAvailable(_ connection: Connection) {
        let buffer = scratch.baseAddress!
        while connection.readReady {
            var wanted = scratch.count
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

    func processBuffered(_ connection: Connection) {
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

    func armReadingDeadline(_ connection: Connection) {
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

    func peerClosed(_ connection: Connection) {
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
}
