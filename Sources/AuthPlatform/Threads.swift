// Threads: the HTTP server's loops and workers, and AuthStore's checkpoint thread. Every
// pthread_create of the package lives here, so the Linux/macOS differences in `pthread_t` and
// the thread entry signature stay in one place.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A joinable OS thread. `pthread_t` is an opaque identifier (an integer on Linux, a pointer on
/// Darwin); passing it between threads is what pthreads is designed for.
public struct ThreadHandle: @unchecked Sendable {
    fileprivate let thread: pthread_t

    public func join() {
        pthread_join(thread, nil)
    }

    public func detach() {
        pthread_detach(thread)
    }

    /// True when called on this very thread (joining oneself would deadlock).
    public var isCurrent: Bool {
        pthread_equal(thread, pthread_self()) != 0
    }
}

private final class ThreadStart {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

private func runThreadStart(_ raw: UnsafeMutableRawPointer) {
    let start = Unmanaged<ThreadStart>.fromOpaque(raw).takeRetainedValue()
    // Names show up in debuggers, crash logs, `top -H`, `perf --sort comm` and the per-thread CPU
    // split of bench/cost.sh.
    #if canImport(Darwin)
    pthread_setname_np(start.name)
    #else
    Threads.setCurrentName(start.name)
    #endif
    start.body()
}

/// `pthread_create` failed with `code` (an errno value such as EAGAIN).
public struct ThreadStartError: Error {
    public let code: Int32
}

public enum Threads {
    #if !canImport(Darwin)
    /// The Glibc module exports neither `pthread_setname_np` nor `prctl`; the calling thread's
    /// own `/proc/thread-self/comm` (Linux 3.17+) is writable by it and is what both set. The
    /// kernel keeps 15 bytes (TASK_COMM_LEN 16 with the NUL), so longer names are cut to that.
    /// Best effort: without /proc mounted the thread keeps the process name.
    static func setCurrentName(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
    #endif

    /// The calling thread's name as the OS reports it (15 bytes at most on Linux).
    public static func currentName() -> String {
        #if canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: 64)
        pthread_getname_np(pthread_self(), &buffer, buffer.count)
        return String(cString: buffer)
        #else
        let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        var name = Array(buffer.prefix(count))
        if name.last == UInt8(ascii: "\n") { name.removeLast() }
        return String(decoding: name, as: UTF8.self)
        #endif
    }

    /// Starts a joinable thread with an explicit stack size. Worker stacks are smaller than the
    /// 8 MiB default to keep RSS low, yet large enough for SQLite and PBKDF2 running on them.
    public static func spawn(
        name: String, stackSize: Int, _ body: @escaping @Sendable () -> Void
    ) throws(ThreadStartError) -> ThreadHandle {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        let pageSize = max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
        let rounded = (max(stackSize, 64 * 1024) + pageSize - 1) / pageSize * pageSize
        pthread_attr_setstacksize(&attributes, rounded)

        let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t? = nil
        let result = pthread_create(&thread, &attributes, { raw in
            runThreadStart(raw)
            return nil
        }, start)
        guard result == 0, let created = thread else {
            Unmanaged<ThreadStart>.fromOpaque(start).release()
            throw ThreadStartError(code: result)
        }
        return ThreadHandle(thread: created)
        #else
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { raw in
            if let raw { runThreadStart(raw) }
            return nil
        }, start)
        guard result == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(start).release()
            throw ThreadStartError(code: result)
        }
        return ThreadHandle(thread: thread)
        #endif
    }
}
