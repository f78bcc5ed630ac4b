// Writing: turning a completion into bytes on the socket (with the response directives'
// delay, drip, stall and reset), flushing on writability, and closing.
extension EventLoop {
    /// How long a closing connection may take to send its FIN after ours.
    private static let lingerNanoseconds: UInt64 = 2_000_000_000

    func complete(_ completion: Completion) {
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

    func deliver(_ connection: Connection, _ completion: Completion) {
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

    func continueDrip(_ connection: Connection) {
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

    func writeFailure(_ connection: Connection, _ failure: HTTPProtocolFailure, _ headers: HTTPHeaders?) {
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
            // forever: `writeTimeout`, started again by every send that makes progress (`flush`)
            // and, where the kernel tells, by every byte the peer acknowledged in the meantime
            // (checked when it expires). The count of this response starts here.
            _ = peerTookBytes(connection)
            setDeadline(connection, now + writeNanoseconds)
        } else {
            afterWrite(connection)
        }
    }

    /// Sends now as much as the socket takes; keeps the rest for writability. False when the
    /// connection failed (it is marked broken, not closed, so callers stay in control).
    func enqueueOutput(_ connection: Connection, _ bytes: [UInt8]) -> Bool {
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
                connection.handedToKernel += UInt64(count)
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

    func flush(_ connection: Connection) {
        var progressed = false
        while connection.hasPendingOutput {
            let result = connection.output.withUnsafeBytes { raw in
                core.transport.send(connection.fd, raw.baseAddress! + connection.outputOffset, count: raw.count - connection.outputOffset)
            }
            switch result {
            case .transferred(let count):
                connection.outputOffset += count
                connection.handedToKernel += UInt64(count)
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

    /// Whether the peer acknowledged bytes since the last check, which this one becomes. A send
    /// makes progress only once the send queue has drained by a good part of its size (Linux
    /// reports a socket writable when at most two thirds of its buffer is in use), so a client
    /// reading steadily but slowly behind a large send buffer can go longer than `writeTimeout`
    /// between two sends while it takes bytes all along: the kernel's count of what is still
    /// unacknowledged tells. False where the I/O mode has no such count
    /// (`Transport.unacknowledgedBytes`): there the sends alone count.
    func peerTookBytes(_ connection: Connection) -> Bool {
        guard let queued = core.transport.unacknowledgedBytes(connection.fd) else { return false }
        let acknowledged = connection.handedToKernel - min(UInt64(queued), connection.handedToKernel)
        defer { connection.acknowledgedAtCheck = acknowledged }
        return acknowledged > connection.acknowledgedAtCheck
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

    func close(_ connection: Connection) {
        guard connection.phase != .closed else { return }
        handle.poller.removeConnection(connection.fd)
        SocketOps.close(connection.fd)
        forget(connection)
    }

    /// `reset` directive: RST instead of an answer.
    func abort(_ connection: Connection) {
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
}
