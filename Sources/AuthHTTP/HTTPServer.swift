import AuthPlatform
import Synchronization

/// An HTTP/1.1 server: event loops over non-blocking sockets (epoll on Linux, poll(2) on macOS
/// and in the portable mode) plus a bounded pool of worker threads running the responder.
///
/// Idle keep-alive connections and delayed responses occupy no thread: they are entries in a
/// loop's poller and timer heap. Only a request being answered holds a worker.
public final class HTTPServer: Sendable {
    private struct Runtime: Sendable {
        let core: ServerCore
        let loopThreads: [ThreadHandle]
        let workerThreads: [ThreadHandle]

        var includesCurrentThread: Bool {
            loopThreads.contains { $0.isCurrent } || workerThreads.contains { $0.isCurrent }
        }
    }

    private enum Lifecycle: Sendable {
        case idle
        case starting
        case running(Runtime)
        case stopping
        case stopped
    }

    private let configuration: HTTPServerConfiguration
    private let responder: any HTTPResponder
    private let lifecycle = Mutex(Lifecycle.idle)
    private let stopped = ConditionLock(false)
    private let boundPort: Atomic<Int>
    private let drain = Mutex<DrainReport?>(nil)

    public init(configuration: HTTPServerConfiguration, responder: some HTTPResponder) {
        self.configuration = configuration
        self.responder = responder
        boundPort = Atomic(configuration.port)
    }

    /// The bound port once `start()` returned (the configured one before).
    public var port: Int { boundPort.load(ordering: .acquiring) }
    public var host: String { configuration.host }
    /// The system interfaces this server runs: the configured `ioMode` as this platform has it
    /// (always `.portable` on macOS).
    public var ioMode: HTTPIOMode { configuration.ioMode.resolved }

    /// Binds (SO_REUSEADDR), listens, starts the loop and worker threads; returns when the
    /// listener accepts connections. A server starts at most once.
    public func start() throws(SocketError) {
        let claimed = lifecycle.withLock { state -> Bool in
            guard case .idle = state else { return false }
            state = .starting
            return true
        }
        guard claimed else { throw SocketError(operation: "start", errno: SocketOps.alreadyStartedErrno) }
        do throws(SocketError) {
            let runtime = try launch()
            lifecycle.withLock { $0 = .running(runtime) }
        } catch {
            lifecycle.withLock { $0 = .idle }
            throw error
        }
    }

    private func launch() throws(SocketError) -> Runtime {
        SocketOps.raiseOpenFileLimit()
        let transport = Transport(
            configuration.ioMode, sendBuffer: configuration.sendBufferBytes, receiveBuffer: configuration.receiveBufferBytes
        )
        transport.prepareProcess()
        let listener = try SocketOps.listen(
            host: configuration.host, port: configuration.port, backlog: configuration.backlog,
            sendBuffer: configuration.sendBufferBytes, receiveBuffer: configuration.receiveBufferBytes
        )
        var handles: [LoopHandle] = []
        do throws(SocketError) {
            for index in 0..<max(1, configuration.loopThreads) {
                handles.append(LoopHandle(index: index, poller: try transport.makePoller()))
            }
            guard handles[0].poller.addListener(listener.fd) else {
                throw SocketError(operation: "poller add listener", errno: SocketOps.lastErrno)
            }
        } catch {
            SocketOps.close(listener.fd)
            throw error
        }
        let core = ServerCore(
            configuration: configuration, responder: responder, transport: transport, loops: handles, listenerFD: listener.fd
        )
        var workers: [ThreadHandle] = []
        var loops: [ThreadHandle] = []
        do throws(SocketError) {
            for number in 0..<max(1, configuration.workerThreads) {
                workers.append(try spawn(name: "http-worker-\(number)", stackSize: configuration.workerStackSize) {
                    Worker.run(core)
                })
            }
            for handle in handles {
                loops.append(try spawn(name: "http-loop-\(handle.index)", stackSize: 256 * 1024) {
                    EventLoop(core: core, handle: handle).run()
                })
            }
        } catch {
            stop(Runtime(core: core, loopThreads: loops, workerThreads: workers), timeout: .zero)
            throw error
        }
        boundPort.store(listener.port, ordering: .releasing)
        return Runtime(core: core, loopThreads: loops, workerThreads: workers)
    }

    /// Graceful: stop accepting, let in-flight requests finish and their responses be written
    /// (up to `timeout`), close idle keep-alive connections, stop and join all threads.
    /// Idempotent, callable from any thread (including a signal-handling thread); a second
    /// caller waits for the first to finish.
    public func shutdown(timeout: Duration = .seconds(10)) {
        enum Action {
            case stop(Runtime)
            case wait
            case retry
            case nothing
        }
        while true {
            let action = lifecycle.withLock { state -> Action in
                switch state {
                case .idle:
                    state = .stopped
                    return .nothing
                case .starting:
                    return .retry
                case .running(let runtime):
                    state = .stopping
                    return .stop(runtime)
                case .stopping:
                    return .wait
                case .stopped:
                    return .nothing
                }
            }
            switch action {
            case .retry:
                Threads.sleep(nanoseconds: 1_000_000)
                continue
            case .nothing:
                markStopped()
            case .wait:
                waitUntilStopped()
            case .stop(let runtime):
                if runtime.includesCurrentThread {
                    // Called from inside a responder: joining our own thread would deadlock, so
                    // a separate thread does the stopping while this request completes.
                    let stopper = try? Threads.spawn(name: "http-shutdown", stackSize: 256 * 1024) { [self] in
                        self.finishStop(runtime, timeout: timeout)
                    }
                    stopper?.detach()
                } else {
                    finishStop(runtime, timeout: timeout)
                }
            }
            return
        }
    }

    /// What the graceful stop did with the requests in flight, once `shutdown` has completed
    /// (nil before, and for a server never started).
    public var drainReport: DrainReport? { drain.withLock { $0 } }

    /// Blocks the caller until shutdown completes. Returns at once for a server never started.
    public func waitUntilStopped() {
        let neverStarted = lifecycle.withLock { state -> Bool in
            if case .idle = state { return true }
            return false
        }
        if neverStarted { return }
        stopped.lock()
        while !stopped.state { stopped.wait() }
        stopped.unlock()
    }

    private func finishStop(_ runtime: Runtime, timeout: Duration) {
        stop(runtime, timeout: timeout)
        lifecycle.withLock { $0 = .stopped }
        markStopped()
    }

    private func markStopped() {
        stopped.withLock { $0 = true }
        stopped.broadcast()
    }

    private func stop(_ runtime: Runtime, timeout: Duration) {
        let core = runtime.core
        let deadline = Clock.monotonicNanoseconds() + timeout.saturatingNanoseconds
        core.drainDeadline.store(deadline, ordering: .relaxed)
        core.draining.store(true, ordering: .releasing)
        for loop in core.loops { loop.requestDrain(deadline: deadline) }
        for thread in runtime.loopThreads { thread.join() }
        core.queue.stop()
        for thread in runtime.workerThreads { thread.join() }
        SocketOps.close(core.listenerFD)
        // The loops have ended (joined above), so their sums are complete.
        let inFlight = core.drainInFlight.load(ordering: .relaxed)
        let cutOff = core.drainCutOff.load(ordering: .relaxed)
        drain.withLock { $0 = DrainReport(finished: inFlight - cutOff, cutOff: cutOff) }
    }
}

/// The requests in flight when a graceful stop began: how many were answered within the
/// shutdown timeout, and how many were cut off (answered 503 or closed unanswered at the
/// deadline, or held by a `stall` fault, which never answers). Idle connections count in
/// neither.
public struct DrainReport: Sendable, Equatable {
    public var finished: Int
    public var cutOff: Int

    public init(finished: Int, cutOff: Int) {
        self.finished = finished
        self.cutOff = cutOff
    }
}

/// `Threads.spawn`, with its failure reported as the server's other start-up failures are.
private func spawn(name: String, stackSize: Int, _ body: @escaping @Sendable () -> Void) throws(SocketError) -> ThreadHandle {
    do {
        return try Threads.spawn(name: name, stackSize: stackSize, body)
    } catch {
        throw SocketError(operation: "pthread_create", errno: error.code)
    }
}
