// Timers: one deadline per connection in the loop's `TimerHeap`, and what its expiry means in
// each phase.
extension EventLoop {
    func setDeadline(_ connection: Connection, _ deadline: UInt64) {
        connection.deadline = deadline
        if deadline != 0 && (connection.heapMin == 0 || deadline < connection.heapMin) {
            timers.push(TimerHeap.Entry(deadline: deadline, token: connection.token))
            connection.heapMin = deadline
        }
    }

    func fireTimers() {
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
            if peerTookBytes(connection) {
                // Acknowledged since the last check, however slowly: wait on.
                setDeadline(connection, now + writeNanoseconds)
                return
            }
            // The peer took no byte for `writeTimeout`. A plain close would leave the kernel
            // holding the unsent queue of an orphaned socket, probing a zero window for minutes;
            // a reset frees it now, and the response could not be delivered anyway.
            abort(connection)
        case .processing, .stalled, .closed:
            break
        }
    }
}
