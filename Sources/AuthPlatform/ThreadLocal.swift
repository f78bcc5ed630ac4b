#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("AuthPlatform needs pthreads")
#endif

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
