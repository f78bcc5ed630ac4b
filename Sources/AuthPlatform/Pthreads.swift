// The package's pthread primitives: the one blocking lock, shared by AuthHTTP (worker pool, server
// stop) and AuthStore (connection pool, group commit), which must not import each other; the
// plain lock of state every request touches; and per-thread values for caches GoTrue's workers
// read on every request.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("AuthPlatform needs pthreads")
#endif

/// A pthread mutex with its condition variable, guarding one value.
///
/// `Mutex` from Synchronization has no condition variable, and the pools must sleep without
/// spinning until work or a connection arrives, so this owns a `pthread_mutex_t` /
/// `pthread_cond_t` pair. Both live in manually allocated memory because pthread objects must
/// never move once initialised (POSIX leaves copying them undefined; on Darwin it really breaks).
/// `state` is only read or written between `lock()` and `unlock()`; that discipline is what
/// makes the `@unchecked Sendable` sound.
public final class ConditionLock<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Only touch while locked.
    public var state: State

    public init(_ initial: State) {
        state = initial
        mutex = makeMutex()
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        // Timed waits measure on the monotonic clock, so a wall-clock step cannot stretch or cut
        // them short. Darwin has no pthread_condattr_setclock; its waits below are relative.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread initialisation failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        destroyMutex(mutex)
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Atomically releases the lock and sleeps until signalled; holds the lock again on return.
    /// Callers re-check their predicate in a loop because POSIX allows spurious wake-ups.
    public func wait() { pthread_cond_wait(condition, mutex) }
    /// `wait()` for at most `nanoseconds`; false when that time ran out without a signal. A true
    /// result may still be spurious, as with `wait()`.
    @discardableResult
    public func wait(nanoseconds: UInt64) -> Bool {
        let billion: UInt64 = 1_000_000_000
        #if canImport(Darwin)
        var relative = timespec(tv_sec: Int(nanoseconds / billion), tv_nsec: Int(nanoseconds % billion))
        return pthread_cond_timedwait_relative_np(condition, mutex, &relative) != ETIMEDOUT
        #else
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanos = UInt64(now.tv_nsec) + nanoseconds % billion
        var deadline = timespec(
            tv_sec: now.tv_sec + Int(nanoseconds / billion) + Int(nanos / billion),
            tv_nsec: Int(nanos % billion))
        return pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT
        #endif
    }
    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Runs `body` with the lock held. `body` may call `signal()` and `broadcast()`, but must not
    /// `wait()` for a change to its `inout` value: during the access the optimizer may keep that
    /// value in registers, so changes other threads make while it sleeps go unseen. Wait in a
    /// `lock()` / `while !predicate(state) { wait() }` / `unlock()` loop instead.
    public func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body(&state)
    }
}

extension ConditionLock where State == Void {
    public convenience init() { self.init(()) }

    /// Runs `body` with the lock held, for callers whose guarded state lives beside the lock.
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A default pthread mutex, in memory that never moves (see `ConditionLock`).
private func makeMutex() -> UnsafeMutablePointer<pthread_mutex_t> {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    precondition(pthread_mutex_init(mutex, nil) == 0, "pthread initialisation failed")
    return mutex
}

private func destroyMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
}

/// A plain pthread mutex guarding one value: for state that every request touches (the
/// request journal, the loops' inboxes, the live configuration, rate limits, the hook log).
///
/// Why not `Mutex` from Synchronization: on Linux it is a priority-inheritance futex
/// (FUTEX_LOCK_PI) that spins before sleeping. With more worker threads than cores (there are
/// two per core by default) a holder is often preempted, and then waiters spin and enter the
/// kernel's rt-mutex path: with 8 workers on 2 cores, `GET /user` spent 20-30 % of its CPU in
/// `Mutex._lockSlow` and took 104-130 µs instead of 50-54 (perf, bench/cost.sh). A default
/// pthread mutex sleeps at once on a plain futex and costs the same when uncontended.
public final class Lock<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Only touched inside `withLock`.
    private var state: State

    public init(_ initial: State) {
        state = initial
        mutex = makeMutex()
    }

    deinit {
        destroyMutex(mutex)
    }

    public func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

/// One value per thread, made on the thread's first use and released when the thread exits
/// (a POSIX thread-specific data key with a destructor).
///
/// For caches that every worker reads on every request: a value shared behind a lock made the
/// workers queue on it (`GET /user` spent ~4 % of its CPU spinning in the lock's slow path),
/// while a copy per thread needs no lock at all. Meant for process-lifetime instances (`static
/// let`): the key itself is never deleted.
public final class ThreadLocal<Value>: @unchecked Sendable {
    // @unchecked: `key` is written once in init; each box is only touched by its own thread.
    private final class Box {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private var key = pthread_key_t()
    private let make: @Sendable () -> Value

    public init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
        let status = pthread_key_create(&key, ThreadLocalRelease.destructor)
        precondition(status == 0, "pthread_key_create failed")
    }

    /// Runs `body` with this thread's value, making it first if needed.
    public func withValue<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        let box: Box
        if let pointer = pthread_getspecific(key) {
            box = Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue()
        } else {
            box = Box(make())
            pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        }
        return try body(&box.value)
    }
}

/// The key destructor: balances the `passRetained` of `withValue` when a thread exits.
private enum ThreadLocalRelease {
    #if canImport(Darwin)
    static let destructor: @convention(c) (UnsafeMutableRawPointer) -> Void = { pointer in
        Unmanaged<AnyObject>.fromOpaque(pointer).release()
    }
    #else
    static let destructor: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
        if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
    }
    #endif
}

/// Processors currently online (`sysconf(_SC_NPROCESSORS_ONLN)`), at least 1: the default number of
/// event loops, and of threads hashing a fixture's passwords.
public var onlineProcessorCount: Int {
    max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
}
