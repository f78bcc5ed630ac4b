import AuthPlatform

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
