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
