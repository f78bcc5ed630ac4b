// Accepting: taking connections off the listener, spreading them over the loops, refusing
// those over the cap.
extension EventLoop {
    /// Accepting pauses this long when the process runs out of descriptors.
    private static let acceptPauseNanoseconds: UInt64 = 100_000_000
    /// Refusals (503 then close) in progress at once; beyond this, refused sockets are closed.
    private static let maxRefusing = 256
    private static let acceptBatch = 128

    func acceptConnections() {
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

    func resumeAcceptingIfDue() {
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
    func adopt(_ socket: AcceptedSocket, counted: Bool) -> Connection? {
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
}
