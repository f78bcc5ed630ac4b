// The only file in AuthStore that touches the platform C library: a mutex with a condition
// variable (the reader pool must block until a connection is returned, which `Mutex` alone
// cannot express) and the calling thread's identity (to recognise nested read/write calls).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("AuthStore needs pthreads")
#endif

/// A pthread mutex paired with one condition variable.
///
/// Both live in manually allocated memory because pthread objects must never move once
/// initialised (POSIX leaves copying them undefined; on Darwin it really breaks).
final class Monitor: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let mutexStatus = pthread_mutex_init(mutex, nil)
        let conditionStatus = pthread_cond_init(condition, nil)
        precondition(mutexStatus == 0 && conditionStatus == 0, "pthread initialisation failed")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deinitialize(count: 1)
        condition.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held. `body` may call `wait()` and `broadcast()`.
    func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Atomically releases the mutex and sleeps until `broadcast()`; callers re-check their
    /// predicate in a loop because POSIX allows spurious wake-ups.
    func wait() {
        pthread_cond_wait(condition, mutex)
    }

    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// An opaque identity for the calling OS thread, stable while the thread lives.
func currentThreadIdentity() -> UInt {
    #if canImport(Darwin)
    return UInt(bitPattern: pthread_self())
    #else
    return UInt(pthread_self())
    #endif
}

/// Blocks the calling thread (a worker thread, never the event loop) for `milliseconds`.
func sleepCurrentThread(milliseconds: Int) {
    var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR {
        request = remaining
    }
}
