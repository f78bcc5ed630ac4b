import AuthPlatform
import Synchronization

/// A parsed request on its way to a worker.
struct Job: Sendable {
    var request: HTTPRequest
    /// Identifies the connection on its loop (`generation << 32 | fd`).
    var token: UInt64
    var loop: Int
    var keepAlive: Bool
    /// Monotonic time of submission, to spot jobs left waiting.
    var enqueuedAt: UInt64
    /// The lane it waits in (`HTTPResponder.dispatch`).
    var lane = 0
}

/// A serialized response on its way back to the connection's loop.
struct Completion: Sendable {
    var token: UInt64
    var bytes: [UInt8]
    var directive: ResponseDirective
    var keepAlive: Bool
    /// `HTTPResponse.onDelivery`.
    var onDelivery: (@Sendable (HTTPResponse.Delivered) -> Void)? = nil

    /// Tells the response's observer, once.
    func report(_ delivered: HTTPResponse.Delivered) { onDelivery?(delivered) }
}

/// First-in first-out storage that reuses its slots, so steady traffic does not allocate.
struct RingBuffer<Element> {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    var first: Element? { count > 0 ? storage[head] : nil }

    mutating func push(_ element: Element) {
        if count == storage.count { grow() }
        var slot = head + count
        if slot >= storage.count { slot -= storage.count }
        storage[slot] = element
        count += 1
    }

    mutating func pop() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        return element
    }

    private mutating func grow() {
        var larger = [Element?](repeating: nil, count: max(16, storage.count * 2))
        for offset in 0..<count {
            var slot = head + offset
            if slot >= storage.count { slot -= storage.count }
            larger[offset] = storage[slot].take()
        }
        storage = larger
        head = 0
    }
}

/// Jobs waiting for a worker, in lanes that take turns: `pop` serves the lane whose turn it is,
/// one job, then moves that lane to the back of the turn order if it has more. Within a lane,
/// first in, first out. With one lane (a server hosting one project) it is a plain FIFO; lane 0
/// lives outside the dictionary, so that case never hashes.
struct LaneQueue {
    private var main = RingBuffer<Job>()
    private var others: [Int: RingBuffer<Job>] = [:]
    /// The lanes with jobs, in the order they are served.
    private var turns = RingBuffer<Int>()
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The job `pop` would return.
    var first: Job? {
        guard let lane = turns.first else { return nil }
        return lane == 0 ? main.first : others[lane]?.first
    }

    mutating func push(_ job: Job) {
        let lane = job.lane
        if lane == 0 {
            if main.isEmpty { turns.push(0) }
            main.push(job)
        } else {
            if others[lane] == nil { turns.push(lane) }
            others[lane, default: RingBuffer()].push(job)
        }
        count += 1
    }

    mutating func pop() -> Job? {
        guard let lane = turns.pop() else { return nil }
        count -= 1
        if lane == 0 {
            let job = main.pop()
            if !main.isEmpty { turns.push(0) }
            return job
        }
        let job = others[lane]?.pop()
        // An emptied lane is dropped, so lanes of projects gone quiet hold no memory.
        if others[lane]?.isEmpty == true { others[lane] = nil } else { turns.push(lane) }
        return job
    }
}

/// The bounded pool's queue: loops submit batches, workers sleep on a condition variable until
/// work arrives. One lock acquisition per loop iteration, however many requests it parsed.
///
/// How many sleeping workers a batch wakes depends on how long jobs have recently taken: each
/// wake-up is a context switch, and on a small machine waking four workers for sixteen
/// two-microsecond responses costs more than the responses. Jobs that block (PBKDF2, SQLite)
/// make the average long, and then every job gets a worker of its own, as before.
final class WorkQueue: Sendable {
    private struct State {
        var jobs = LaneQueue()
        var idleWorkers = 0
        var stopping = false
        /// Workers inside `BlockingIO.perform`, waiting on something outside the process.
        var blocked = 0
        /// Stand-in workers alive (see `beginBlocking`).
        var standIns = 0
        /// Blocked calls per lane other than 0 (lane 0's count is `blockedInMain`), for the
        /// per-lane bound; a lane with none holds no entry.
        var blockedByLane: [Int: Int] = [:]
        var blockedInMain = 0
    }

    /// At most this many stand-ins at once: past it, requests queue behind the blocked calls
    /// again, as they would with a fixed pool.
    static let maxStandIns = 256

    /// Threads that take from this queue.
    private let workerCount: Int
    /// At most this many calls of one lane may wait in `BlockingIO.perform(refusing:)` at once
    /// (`HTTPServerConfiguration.maxBlockedPerLane`).
    let maxBlockedPerLane: Int

    /// Work one woken worker should have in front of it before another is woken.
    private static let wakeBudgetNanoseconds = 50_000

    private let lock = ConditionLock(State())
    /// Moving average of recent service times (respond + serialize), in nanoseconds. Updated
    /// without synchronisation beyond atomicity: a lost update only nudges a heuristic.
    private let averageServiceNanoseconds = Atomic<Int>(wakeBudgetNanoseconds)

    init(workerCount: Int, maxBlockedPerLane: Int = HTTPServerConfiguration.defaultMaxBlockedPerLane) {
        self.workerCount = workerCount
        self.maxBlockedPerLane = max(1, maxBlockedPerLane)
    }

    /// Moves every job of `batch` into the queue and wakes as many sleeping workers as needed.
    func submit(_ batch: inout [Job]) {
        let average = max(1, averageServiceNanoseconds.load(ordering: .relaxed))
        let jobsPerWorker = max(1, Self.wakeBudgetNanoseconds / average)
        lock.lock()
        for job in batch { lock.state.jobs.push(job) }
        // With quick jobs, workers still awake look at the queue again within microseconds, so
        // they count; with slow jobs they may be busy for long, so every job gets a sleeper.
        let wanted = (lock.state.jobs.count + jobsPerWorker - 1) / jobsPerWorker
        let awake = jobsPerWorker > 1 ? workerCount - lock.state.idleWorkers : 0
        let wakeups = max(0, min(wanted - awake, lock.state.idleWorkers))
        lock.unlock()
        batch.removeAll(keepingCapacity: true)
        // Signalling after unlocking spares the woken worker an immediate wait for the mutex;
        // a surplus signal finds no sleeper and costs nothing.
        for _ in 0..<wakeups { lock.signal() }
    }

    /// Called by loops shortly after submitting: if jobs have been waiting longer than
    /// `patience` while workers sleep (the moving average promised quick jobs, and these are
    /// not), wake those workers. Returns whether jobs are still queued.
    func rebalance(now: UInt64, patience: UInt64) -> Bool {
        lock.lock()
        var wakeups = 0
        if let oldest = lock.state.jobs.first, now &- oldest.enqueuedAt >= patience {
            wakeups = min(lock.state.jobs.count, lock.state.idleWorkers)
        }
        let queued = !lock.state.jobs.isEmpty
        lock.unlock()
        for _ in 0..<wakeups { lock.signal() }
        return queued
    }

    /// Blocks until a job is available; nil once the pool is stopping.
    func take() -> Job? {
        lock.lock()
        defer { lock.unlock() }
        while lock.state.jobs.isEmpty && !lock.state.stopping {
            lock.state.idleWorkers += 1
            lock.wait()
            lock.state.idleWorkers -= 1
        }
        if lock.state.stopping { return nil }
        let job = lock.state.jobs.pop()
        // A backlog of slow jobs fans out: each worker that starts one wakes a colleague.
        if !lock.state.jobs.isEmpty && lock.state.idleWorkers > 0
            && averageServiceNanoseconds.load(ordering: .relaxed) >= Self.wakeBudgetNanoseconds {
            lock.signal()
        }
        return job
    }

    /// A worker is about to wait on an outgoing call (a hook's HTTP request, up to its 5 s
    /// deadline). The pool keeps its strength for everyone else: `.standIn` when a stand-in
    /// worker should be started, one per blocked worker, so six requests stuck on a hanging hook
    /// leave the other requests as many workers as before.
    ///
    /// `.refused` (nothing counted) when `refusable` and `lane` already has `maxBlockedPerLane`
    /// calls waiting: the stand-ins are shared by every lane, and without a bound per lane one
    /// project's hanging hook would take them all, and then every project's requests would
    /// queue behind its calls for up to their deadline.
    func beginBlocking(lane: Int, refusable: Bool) -> BlockingAdmission {
        lock.withLock { s in
            let inLane = lane == 0 ? s.blockedInMain : s.blockedByLane[lane, default: 0]
            if refusable && inLane >= maxBlockedPerLane { return .refused }
            if lane == 0 { s.blockedInMain += 1 } else { s.blockedByLane[lane] = inLane + 1 }
            s.blocked += 1
            guard !s.stopping, s.standIns < s.blocked, s.standIns < Self.maxStandIns else { return .admitted }
            s.standIns += 1
            return .standIn
        }
    }

    /// The blocked call returned; a surplus stand-in leaves once it is idle.
    func endBlocking(lane: Int) {
        lock.withLock { s in
            s.blocked -= 1
            if lane == 0 {
                s.blockedInMain -= 1
            } else if let inLane = s.blockedByLane[lane] {
                // A lane whose calls all returned holds no entry, as an emptied queue lane.
                s.blockedByLane[lane] = inLane > 1 ? inLane - 1 : nil
            }
        }
        lock.broadcast()
    }

    /// `Threads.spawn` refused a stand-in that `beginBlocking` counted.
    func standInNotStarted() {
        lock.withLock { $0.standIns -= 1 }
        lock.broadcast()
    }

    /// `take` for a stand-in: nil (and the stand-in is gone) once it is no longer needed, i.e.
    /// the queue is empty and there are more stand-ins than blocked workers, or when stopping.
    func takeAsStandIn() -> Job? {
        lock.lock()
        defer { lock.unlock() }
        while true {
            if !lock.state.stopping, let job = lock.state.jobs.pop() { return job }
            if lock.state.stopping || lock.state.standIns > lock.state.blocked {
                lock.state.standIns -= 1
                // `stop` may be waiting for the last stand-in.
                lock.broadcast()
                return nil
            }
            lock.state.idleWorkers += 1
            lock.wait()
            lock.state.idleWorkers -= 1
        }
    }

    /// Feeds the moving average (weight 1/8 for the newest sample).
    func record(serviceNanoseconds sample: Int) {
        let previous = averageServiceNanoseconds.load(ordering: .relaxed)
        averageServiceNanoseconds.store(previous + (sample - previous) / 8, ordering: .relaxed)
    }

    /// Stops every worker and waits for the stand-ins (which are not joined) to leave.
    func stop() {
        lock.withLock { $0.stopping = true }
        lock.broadcast()
        lock.lock()
        while lock.state.standIns > 0 { lock.wait() }
        lock.unlock()
    }
}

/// What `WorkQueue.beginBlocking` decided.
enum BlockingAdmission {
    /// Counted; start a stand-in for this worker.
    case standIn
    /// Counted; no stand-in (the pool-wide cap is reached or the pool is stopping).
    case admitted
    /// Not counted: the lane is at its bound and the caller answers at once instead of waiting.
    case refused
}

enum Worker {
    /// The server a worker thread serves, for `BlockingIO.perform` on it.
    static let current = ThreadLocal<ServerCore?> { nil }
    /// The lane of the job this worker thread is serving, for the per-lane bound of
    /// `BlockingIO.perform`.
    static let currentLane = ThreadLocal<Int> { 0 }

    /// The body of each worker thread: run the responder, serialize, hand the bytes back to the
    /// connection's loop. Serializing here keeps that work off the loops.
    static func run(_ core: ServerCore, standIn: Bool = false) {
        current.withValue { $0 = core }
        var dates = DateCache()
        while let job = standIn ? core.queue.takeAsStandIn() : core.queue.take() {
            currentLane.withValue { $0 = job.lane }
            let started = Clock.monotonicNanoseconds()
            let completion = serve(job, core, &dates)
            let elapsed = Clock.monotonicNanoseconds() &- started
            core.queue.record(serviceNanoseconds: Int(min(elapsed, 10_000_000_000)))
            core.loops[job.loop].deliver(completion)
        }
    }

    /// Runs the responder for one job and serializes its response; also what a loop does for
    /// requests the responder answers inline.
    static func serve(_ job: Job, _ core: ServerCore, _ dates: inout DateCache) -> Completion {
        let response = core.responder.respond(to: job.request)
        let context = ResponseSerializer.Context(
            isHead: job.request.method == "HEAD",
            isHTTP10: job.request.version == "HTTP/1.0",
            keepAlive: job.keepAlive && !core.draining.load(ordering: .relaxed),
            date: core.configuration.sendsDateHeader ? dates.current() : nil,
            server: core.configuration.serverHeader
        )
        let (bytes, keepAlive) = ResponseSerializer.serialize(response, context)
        return Completion(token: job.token, bytes: bytes, directive: response.directive, keepAlive: keepAlive,
                          onDelivery: response.onDelivery)
    }
}

/// Outgoing calls made by a responder running on a worker thread.
public enum BlockingIO {
    /// Runs `body`, which waits on something outside the process (an HTTP request to a hook),
    /// while a stand-in worker takes this worker's place in the pool until it returns. On other
    /// threads (an in-process responder call, a test) it just runs `body`.
    ///
    /// The pool is sized for CPU-bound work (PBKDF2, SQLite); without stand-ins, as many slow
    /// outgoing calls as there are workers would leave every other request waiting in the queue.
    public static func perform<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard let core = Worker.current.withValue({ $0 }) else { return try body() }
        let lane = Worker.currentLane.withValue { $0 }
        _ = admit(core, lane: lane, refusable: false)
        defer { core.queue.endBlocking(lane: lane) }
        return try body()
    }

    /// `perform`, except that when the current job's lane (one project's requests) already has
    /// `HTTPServerConfiguration.maxBlockedPerLane` calls waiting, `body` is not run and
    /// `refusal()` is thrown at once: the caller answers as if its call had timed out, rather
    /// than the request queueing behind calls that may hang until their deadline.
    public static func perform<T, E: Error>(refusing refusal: () -> E, _ body: () throws(E) -> T) throws(E) -> T {
        guard let core = Worker.current.withValue({ $0 }) else { return try body() }
        let lane = Worker.currentLane.withValue { $0 }
        guard admit(core, lane: lane, refusable: true) else { throw refusal() }
        defer { core.queue.endBlocking(lane: lane) }
        return try body()
    }

    /// Counts the call in and starts a stand-in when one is due; false when refused (nothing
    /// counted, so no `endBlocking`).
    private static func admit(_ core: ServerCore, lane: Int, refusable: Bool) -> Bool {
        switch core.queue.beginBlocking(lane: lane, refusable: refusable) {
        case .refused:
            return false
        case .standIn:
            do {
                let handle = try Threads.spawn(name: "http-standin", stackSize: core.configuration.workerStackSize) {
                    Worker.run(core, standIn: true)
                }
                handle.detach()
            } catch {
                core.queue.standInNotStarted()
            }
            return true
        case .admitted:
            return true
        }
    }
}
