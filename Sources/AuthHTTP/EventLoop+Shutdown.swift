// Shutdown: the drain (finish what is in flight, accept nothing new) and its deadline.
extension EventLoop {
    func beginDrain(deadline: UInt64) {
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
    func closeAll() {
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
