// Readiness notification on Linux: epoll, with an eventfd as the cross-thread wake-up.
// The macOS counterpart with the same shape is Poller+Kqueue.swift.
//
// The Swift toolchain's Glibc module does not include <sys/epoll.h> or <sys/eventfd.h>, and
// this package has no C target for them, so the four functions are looked up once in the
// already-loaded C library and called through C function pointers (the C calling convention,
// exactly as a header would declare them). The constants and the `struct epoll_event` layout
// are the Linux kernel ABI.
#if os(Linux) || os(Android)
import Glibc

private struct EpollCalls: @unchecked Sendable {
    // C function pointers: immutable code addresses, safe to share between threads.
    typealias Create1 = @convention(c) (Int32) -> Int32
    typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    typealias EventFD = @convention(c) (UInt32, Int32) -> Int32

    let create1: Create1
    let control: Control
    let wait: Wait
    let eventfd: EventFD

    static let shared: EpollCalls = {
        let library = dlopen(nil, RTLD_NOW)
        func resolve<Function>(_ name: String, as type: Function.Type) -> Function {
            guard let symbol = dlsym(library, name) else { fatalError("libc lacks \(name)") }
            return unsafeBitCast(symbol, to: type)
        }
        return EpollCalls(
            create1: resolve("epoll_create1", as: Create1.self),
            control: resolve("epoll_ctl", as: Control.self),
            wait: resolve("epoll_wait", as: Wait.self),
            eventfd: resolve("eventfd", as: EventFD.self)
        )
    }()
}

/// <sys/epoll.h> constants (kernel ABI).
private enum EpollFlag {
    static let input: UInt32 = 0x001
    static let output: UInt32 = 0x004
    static let error: UInt32 = 0x008
    static let hangup: UInt32 = 0x010
    static let readHangup: UInt32 = 0x2000
    static let edgeTriggered: UInt32 = 1 << 31
    static let add: Int32 = 1
    static let delete: Int32 = 2
}

/// `struct epoll_event { uint32_t events; epoll_data_t data; }` is packed on x86-64 (12 bytes)
/// and naturally aligned elsewhere (16 bytes).
private enum EpollEventLayout {
    #if arch(x86_64)
    static let stride = 12
    static let dataOffset = 4
    #else
    static let stride = 16
    static let dataOffset = 8
    #endif

    static func store(_ events: UInt32, _ data: UInt64, at pointer: UnsafeMutableRawPointer) {
        pointer.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
        pointer.storeBytes(of: data, toByteOffset: dataOffset, as: UInt64.self)
    }
}

/// Owns one epoll instance and its wake-up eventfd. Registration and `wake()` are thread-safe
/// system calls; `wait` is only called by the loop thread that owns the poller.
final class Poller: Sendable {
    private let epollFD: Int32
    private let wakeFD: Int32

    init() throws(SocketError) {
        let calls = EpollCalls.shared
        let epollFD = calls.create1(Int32(O_CLOEXEC))
        guard epollFD >= 0 else { throw SocketError(operation: "epoll_create1", errno: errno) }
        let wakeFD = calls.eventfd(0, Int32(O_CLOEXEC) | Int32(O_NONBLOCK))
        guard wakeFD >= 0 else {
            let code = errno
            _ = Glibc.close(epollFD)
            throw SocketError(operation: "eventfd", errno: code)
        }
        guard Poller.control(epollFD, EpollFlag.add, wakeFD, EpollFlag.input | EpollFlag.edgeTriggered, PollToken.wake) else {
            let code = errno
            _ = Glibc.close(wakeFD)
            _ = Glibc.close(epollFD)
            throw SocketError(operation: "epoll_ctl", errno: code)
        }
        self.epollFD = epollFD
        self.wakeFD = wakeFD
    }

    deinit {
        _ = Glibc.close(wakeFD)
        _ = Glibc.close(epollFD)
    }

    private static func control(_ epollFD: Int32, _ operation: Int32, _ fd: Int32, _ events: UInt32, _ token: UInt64) -> Bool {
        var event: (UInt64, UInt64) = (0, 0)  // 16 bytes: room for either layout
        return withUnsafeMutableBytes(of: &event) { raw in
            EpollEventLayout.store(events, token, at: raw.baseAddress!)
            return EpollCalls.shared.control(epollFD, operation, fd, raw.baseAddress) == 0
        }
    }

    /// Edge-triggered read and write interest, registered once for the connection's lifetime,
    /// so the hot path never needs `epoll_ctl` (EPOLLRDHUP reports a peer's half-close).
    func addConnection(_ fd: Int32, token: UInt64) -> Bool {
        let events = EpollFlag.input | EpollFlag.output | EpollFlag.readHangup | EpollFlag.edgeTriggered
        return Poller.control(epollFD, EpollFlag.add, fd, events, token)
    }

    /// Level-triggered: the accepting loop takes a bounded batch per wake-up and is told again
    /// while the backlog still holds connections.
    func addListener(_ fd: Int32) -> Bool {
        Poller.control(epollFD, EpollFlag.add, fd, EpollFlag.input, PollToken.listener)
    }

    func removeListener(_ fd: Int32) {
        _ = Poller.control(epollFD, EpollFlag.delete, fd, 0, 0)
    }

    /// Callable from any thread.
    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// Nothing to do: the eventfd is edge-triggered, and every write raises a new edge whatever
    /// the counter holds, so it is never read (one system call less per wake-up). At one per
    /// write the counter cannot reach its 2^64 - 2 ceiling.
    func consumeWake() {}

    /// Blocks until readiness or the timeout (nil = no timeout); returns the number of events.
    func wait(_ buffer: PollBuffer, timeoutNanoseconds: UInt64?) -> Int {
        let milliseconds: Int32
        if let timeout = timeoutNanoseconds {
            // Round up so a timer never wakes the loop a hair early and spins.
            milliseconds = Int32(min((timeout + 999_999) / 1_000_000, UInt64(Int32.max)))
        } else {
            milliseconds = -1
        }
        let count = EpollCalls.shared.wait(epollFD, buffer.storage, Int32(buffer.capacity), milliseconds)
        return count < 0 ? 0 : Int(count)
    }
}

/// The loop's reusable event array.
final class PollBuffer {
    let capacity: Int
    fileprivate let storage: UnsafeMutableRawPointer

    init(capacity: Int) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity * EpollEventLayout.stride, alignment: 8)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * EpollEventLayout.stride)
    }

    deinit {
        storage.deallocate()
    }

    func event(at index: Int) -> PollEvent {
        let base = storage + index * EpollEventLayout.stride
        let flags = base.loadUnaligned(as: UInt32.self)
        let token = base.loadUnaligned(fromByteOffset: EpollEventLayout.dataOffset, as: UInt64.self)
        let readMask = EpollFlag.input | EpollFlag.readHangup | EpollFlag.hangup | EpollFlag.error
        let writeMask = EpollFlag.output | EpollFlag.error
        let hangupMask = EpollFlag.readHangup | EpollFlag.hangup | EpollFlag.error
        return PollEvent(
            token: token, readable: flags & readMask != 0, writable: flags & writeMask != 0,
            hangup: flags & hangupMask != 0
        )
    }
}
#endif
