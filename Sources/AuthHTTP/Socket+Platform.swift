// Every socket system call of AuthHTTP, with the Linux/macOS differences kept in this file
// (docs/platforms.md lists them, with how each macOS branch runs on Linux):
// - SOCK_* constants are an enum on Glibc and plain integers on Darwin;
// - accepting: Linux's native mode takes a non-blocking, close-on-exec socket from accept4; the
//   portable mode, and macOS, which has no accept4, accept and then set both with fcntl;
// - SIGPIPE: Linux's native mode sends with MSG_NOSIGNAL; macOS sets SO_NOSIGPIPE on each
//   socket and sends with no flags; Linux's portable mode sends with no flags too, and, having
//   no SO_NOSIGPIPE, ignores SIGPIPE process-wide;
// - buffer caps: set on the listener (Linux copies them into accepted sockets), and in the
//   portable mode on each accepted socket too;
// - the open-file limit: Darwin caps RLIMIT_NOFILE at OPEN_MAX;
// - what the peer acknowledged (the write timeout's progress): Linux's native mode asks the
//   kernel (SIOCOUTQ); macOS, and Linux's portable mode, count sends alone.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if os(Linux) || os(Android)
import CAuthPlatform
#endif

/// Outcome of one non-blocking read or write.
enum IOResult {
    case transferred(Int)
    case wouldBlock
    case endOfStream
    case failed(Int32)
}

enum AcceptResult {
    case accepted(fd: Int32, address: String, port: Int)
    case wouldBlock
    /// Transient per-connection failures (ECONNABORTED, EINTR, EPROTO): just accept again.
    case retry
    case failed(Int32)
}

enum SocketOps {
    #if canImport(Darwin)
    private static let streamType = SOCK_STREAM
    #else
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #endif

    static func errorDescription(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// Creates a non-blocking listening socket. SO_REUSEADDR lets a restarted emulator rebind
    /// while old connections sit in TIME_WAIT; port 0 asks the kernel for an ephemeral port,
    /// read back with getsockname.
    ///
    /// `sendBuffer` and `receiveBuffer` (bytes, nil = the kernel's autotuning) are set on the
    /// listener before `listen`: accepted sockets inherit both (Linux copies the listener's
    /// socket in `sk_clone_lock`; Darwin's `sonewconn` reserves the listener's high-water marks
    /// and keeps `SB_USRSIZE`, which turns off its auto-sizing), so it costs no call per accept,
    /// and tcp(7) asks for the receive buffer to be set before `listen` so the window scale
    /// offered in the SYN-ACK matches it.
    static func listen(
        host: String, port: Int, backlog: Int32, sendBuffer: Int? = nil, receiveBuffer: Int? = nil
    ) throws(SocketError) -> (fd: Int32, port: Int) {
        guard (0...65535).contains(port) else { throw SocketError(operation: "listen", errno: EINVAL) }
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SocketError(operation: "getaddrinfo \(host)", errno: EADDRNOTAVAIL)
        }
        defer { freeaddrinfo(list) }

        var lastError = SocketError(operation: "bind", errno: EADDRNOTAVAIL)
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            cursor = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, streamType, 0)
            if fd < 0 { lastError = SocketError(operation: "socket", errno: errno); continue }
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            setCloseOnExec(fd)
            if let sendBuffer { setBufferSize(fd, SO_SNDBUF, sendBuffer) }
            if let receiveBuffer { setBufferSize(fd, SO_RCVBUF, receiveBuffer) }
            if bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
                lastError = SocketError(operation: "bind", errno: errno)
                _ = systemClose(fd)
                continue
            }
            if systemListen(fd, max(backlog, 512)) != 0 {
                lastError = SocketError(operation: "listen", errno: errno)
                _ = systemClose(fd)
                continue
            }
            guard setNonBlocking(fd) else {
                lastError = SocketError(operation: "fcntl", errno: errno)
                _ = systemClose(fd)
                continue
            }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0 else {
                lastError = SocketError(operation: "getsockname", errno: errno)
                _ = systemClose(fd)
                continue
            }
            return (fd, describe(&storage).port)
        }
        throw lastError
    }

    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int) -> IOResult {
        while true {
            let n = recv(fd, buffer, count, 0)
            if n > 0 { return .transferred(n) }
            if n == 0 { return .endOfStream }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .failed(code)
        }
    }

    /// Half-close: the peer reads our FIN after the last response byte, while we can still drain
    /// what it already sent (closing with unread input would make the kernel send RST and could
    /// destroy the response in flight, RFC 9112 §9.6).
    static func shutdownWrite(_ fd: Int32) {
        #if canImport(Darwin)
        _ = Darwin.shutdown(fd, SHUT_WR)
        #else
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        #endif
    }

    static func close(_ fd: Int32) {
        _ = systemClose(fd)
    }

    /// Closes with SO_LINGER {on, 0 s}: the kernel discards unsent data and answers with RST,
    /// which the peer sees as ECONNRESET.
    static func abortiveClose(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        _ = systemClose(fd)
    }

    /// Raises the open-file soft limit to the hard limit, as Go's runtime does at start-up, so
    /// thousands of keep-alive connections fit under the default soft limit of 1024.
    static func raiseOpenFileLimit() {
        var limits = rlimit()
        #if canImport(Darwin)
        let resource = RLIMIT_NOFILE
        #else
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #endif
        guard getrlimit(resource, &limits) == 0 else { return }
        var target = limits.rlim_max
        #if canImport(Darwin)
        // Darwin rejects values above OPEN_MAX for RLIMIT_NOFILE.
        target = min(target, rlim_t(OPEN_MAX))
        #endif
        if limits.rlim_cur < target {
            limits.rlim_cur = target
            _ = setrlimit(resource, &limits)
        }
    }

    /// Linux doubles the value for its bookkeeping (socket(7)) and clamps it to
    /// `net.core.wmem_max`/`rmem_max`; Darwin takes it as the high-water mark. Either way setting
    /// it pins the size: the kernel no longer grows the buffer (Linux: tcp_wmem/tcp_rmem
    /// autotuning, up to 4 and 6 MiB by default).
    fileprivate static func setBufferSize(_ fd: Int32, _ option: Int32, _ bytes: Int) {
        var value = Int32(clamping: bytes)
        setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    // MARK: - internals

    fileprivate static func setNonBlocking(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL, 0)
        return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0
    }

    fileprivate static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    private static func systemClose(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        return Darwin.close(fd)
        #else
        return Glibc.close(fd)
        #endif
    }

    fileprivate static func describe(_ storage: inout sockaddr_storage) -> (address: String, port: Int) {
        switch Int32(storage.ss_family) {
        case AF_INET: describe(&storage, as: sockaddr_in.self, family: AF_INET) { ($0.sin_addr, $0.sin_port) }
        case AF_INET6: describe(&storage, as: sockaddr_in6.self, family: AF_INET6) { ($0.sin6_addr, $0.sin6_port) }
        default: ("", 0)
        }
    }

    /// The address text (`inet_ntop`) and host-order port of a `sockaddr_in` or `sockaddr_in6`.
    private static func describe<Address, Raw>(_ storage: inout sockaddr_storage, as _: Address.Type, family: Int32,
                                               _ parts: (Address) -> (Raw, in_port_t)) -> (address: String, port: Int) {
        withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: Address.self, capacity: 1) { address in
                var (raw, port) = parts(address.pointee)
                var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
                inet_ntop(family, &raw, &text, socklen_t(text.count))
                return (cString(text), Int(UInt16(bigEndian: port)))
            }
        }
    }

    private static func cString(_ chars: [CChar]) -> String {
        let end = chars.firstIndex(of: 0) ?? chars.count
        return String(decoding: chars[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The calls whose form depends on the I/O mode, fixed when a server starts.
struct Transport: Sendable {
    /// The mode this platform runs for the one asked (`HTTPIOMode.resolved`).
    let mode: HTTPIOMode
    private let sendFlags: Int32
    private let sendBuffer: Int?
    private let receiveBuffer: Int?

    init(_ requested: HTTPIOMode, sendBuffer: Int?, receiveBuffer: Int?) {
        mode = requested.resolved
        self.sendBuffer = sendBuffer
        self.receiveBuffer = receiveBuffer
        #if os(Linux) || os(Android)
        // A peer that went away must surface as EPIPE, not as a process-killing SIGPIPE. The
        // portable mode sends as macOS does, with no flags (`prepareProcess`).
        sendFlags = mode == .native ? Int32(MSG_NOSIGNAL) : 0
        #else
        // SO_NOSIGPIPE, set on each accepted socket, does MSG_NOSIGNAL's work.
        sendFlags = 0
        #endif
    }

    /// Before the first socket is accepted. Linux's portable mode sends without MSG_NOSIGNAL
    /// and has no SO_NOSIGPIPE to set instead, so SIGPIPE is ignored for the whole process: a
    /// send to a peer that is gone then fails with EPIPE (signal(7), send(2)), which is what
    /// macOS's SO_NOSIGPIPE gives each socket. Never restored: other servers of the process may
    /// be relying on it, and the mode is for tests (the disposition is inherited by children
    /// started afterwards, execve(2)).
    func prepareProcess() {
        #if os(Linux) || os(Android)
        if mode == .portable { _ = signal(SIGPIPE, SIG_IGN) }
        #endif
    }

    /// The readiness backend of one loop.
    func makePoller() throws(SocketError) -> any Poller {
        try AuthHTTP.makePoller(for: mode)
    }

    /// Accepts one connection as a non-blocking, close-on-exec socket with TCP_NODELAY: a
    /// response is written with a single send, and Nagle's algorithm would otherwise hold its
    /// tail behind the peer's delayed ACK (about 40 ms per keep-alive exchange).
    func accept(_ listener: Int32) -> AcceptResult {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> Int32 in
                #if os(Linux) || os(Android)
                if mode == .native { return cauth_accept_nonblocking(listener, address, &length) }
                #endif
                return systemAccept(listener, address, &length)
            }
        }
        if fd < 0 {
            let code = errno
            switch code {
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EINTR, ECONNABORTED, EPROTO, EPERM: return .retry
            default: return .failed(code)
            }
        }
        if mode == .portable { preparePortable(fd) }
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let peer = SocketOps.describe(&storage)
        return .accepted(fd: fd, address: peer.address, port: peer.port)
    }

    /// What accept4 does in one call, and what the kernel may or may not have copied from the
    /// listener, set explicitly on a socket from plain accept.
    private func preparePortable(_ fd: Int32) {
        // Whether O_NONBLOCK carries over from the listener differs (Linux: no; BSD and macOS:
        // yes), and accept(2) on Linux tells portable programs to set it; FD_CLOEXEC is a
        // descriptor flag, never inherited (fcntl(2)).
        _ = SocketOps.setNonBlocking(fd)
        SocketOps.setCloseOnExec(fd)
        #if canImport(Darwin)
        // macOS's per-socket SIGPIPE suppression: a send to a peer that is gone fails with EPIPE.
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        // POSIX does not say which options an accepted socket inherits. Linux copies the
        // listener's buffer sizes (the native mode relies on it); macOS's sonewconn reserves the
        // listener's sizes too, but that is its source, not its documentation, and no macOS
        // machine runs this suite: the cap is set again here, at two calls per connection.
        if let sendBuffer { SocketOps.setBufferSize(fd, SO_SNDBUF, sendBuffer) }
        if let receiveBuffer { SocketOps.setBufferSize(fd, SO_RCVBUF, receiveBuffer) }
    }

    /// The bytes handed to the kernel for `fd` that the peer has not acknowledged yet, sent or
    /// not: Linux's SIOCOUTQ, which linux/sockios.h defines as TIOCOUTQ (the Glibc module
    /// exports only the latter), and which TCP answers with `write_seq - snd_una`. Nil on macOS
    /// and in the portable mode, which runs macOS's calls: there the write timeout counts sends
    /// alone. Nil too when the call fails.
    func unacknowledgedBytes(_ fd: Int32) -> Int? {
        #if os(Linux) || os(Android)
        guard mode == .native else { return nil }
        var queued: Int32 = 0
        guard ioctl(fd, UInt(TIOCOUTQ), &queued) == 0, queued >= 0 else { return nil }
        return Int(queued)
        #else
        return nil
        #endif
    }

    func send(_ fd: Int32, _ bytes: UnsafeRawPointer, count: Int) -> IOResult {
        while true {
            let n = systemSend(fd, bytes, count, sendFlags)
            if n >= 0 { return .transferred(n) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .failed(code)
        }
    }
}

extension HTTPIOMode {
    /// What this platform runs for the mode asked: the native mode is Linux's (epoll, eventfd,
    /// accept4, MSG_NOSIGNAL); elsewhere, macOS included, every server runs the portable one.
    var resolved: HTTPIOMode {
        #if os(Linux) || os(Android)
        return self
        #else
        return .portable
        #endif
    }
}

// `listen`, `send` and `accept` are shadowed by the methods above; these reach the C functions.
@inline(__always)
private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 {
    #if canImport(Darwin)
    return Darwin.listen(fd, backlog)
    #else
    return Glibc.listen(fd, backlog)
    #endif
}

@inline(__always)
private func systemSend(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    #if canImport(Darwin)
    return Darwin.send(fd, bytes, count, flags)
    #else
    return Glibc.send(fd, bytes, count, flags)
    #endif
}

@inline(__always)
private func systemAccept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: inout socklen_t) -> Int32 {
    #if canImport(Darwin)
    return Darwin.accept(fd, address, &length)
    #else
    return Glibc.accept(fd, address, &length)
    #endif
}

extension SocketOps {
    static var alreadyStartedErrno: Int32 { EALREADY }
    static var lastErrno: Int32 { errno }

    /// A variable of the process environment (nil when unset), read through the C library so
    /// the module needs no Foundation.
    static func environmentValue(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
