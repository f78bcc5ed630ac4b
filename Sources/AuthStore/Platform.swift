// The only file in AuthStore that touches the platform C library: the calling thread's identity
// (to recognise nested read/write calls), a sleep, and the statement trace's file. The pool's
// lock with its condition variable is AuthPlatform's `ConditionLock`.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("AuthStore needs pthreads")
#endif
import AuthPlatform

/// The connection pool's lock; its guarded state lives in `Database` beside it.
typealias Monitor = ConditionLock<Void>

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

/// Opens `path` for writing at its end, created (owner-only) or emptied; -1 on failure
/// (`lastErrno()` says why).
func openTruncatedForAppend(_ path: String) -> Int32 {
    open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
}

/// Writes all of `bytes` (write(2) may take fewer than asked); stops at the first failure.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if written <= 0 { break }
        offset += written
    }
}

func closeFile(_ fd: Int32) {
    _ = close(fd)
}

func lastErrno() -> Int32 { errno }
