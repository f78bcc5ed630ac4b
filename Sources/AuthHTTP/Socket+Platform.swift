// Every socket system call of AuthHTTP, with the Linux/macOS differences kept in this file:
// SOCK_* constants are an enum on Glibc and plain integers on Darwin, Linux has accept4 and
// MSG_NOSIGNAL while Darwin needs fcntl and SO_NOSIGPIPE.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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

    /// Accepts one connection as a non-blocking socket with TCP_NODELAY: a response is written
    /// with a single send, and Nagle's algorithm would otherwise hold its tail behind the peer's
    /// delayed ACK (about 40 ms per keep-alive exchange).
    static func accept(_ listener: Int32) -> AcceptResult {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> Int32 in
                // accept4 is not exported by the Glibc module; connections are long-lived, so two
                // fcntl calls per accept are cheap.
                #if canImport(Darwin)
                return Darwin.accept(listener, address, &length)
                #else
                return Glibc.accept(listener, address, &length)
                #endif
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
        _ = setNonBlocking(fd)
        setCloseOnExec(fd)
        #if canImport(Darwin)
        var one: Int32 = 1
        // Darwin has no MSG_NOSIGNAL: suppress SIGPIPE per socket instead.
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let peer = describe(&storage)
        return .accepted(fd: fd, address: peer.address, port: peer.port)
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

    static func send(_ fd: Int32, _ bytes: UnsafeRawPointer, count: Int) -> IOResult {
        #if canImport(Darwin)
        let flags: Int32 = 0
        #else
        // A peer that went away must surface as EPIPE, not as a process-killing SIGPIPE.
        let flags = Int32(MSG_NOSIGNAL)
        #endif
        while true {
            let n = systemSend(fd, bytes, count, flags)
            if n >= 0 { return .transferred(n) }
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
    private static func setBufferSize(_ fd: Int32, _ option: Int32, _ bytes: Int) {
        var value = Int32(clamping: bytes)
        setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    // MARK: - internals

    private static func setNonBlocking(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL, 0)
        return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0
    }

    private static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    private static func systemClose(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        return Darwin.close(fd)
        #else
        return Glibc.close(fd)
        #endif
    }

    private static func describe(_ storage: inout sockaddr_storage) -> (address: String, port: Int) {
        let family = Int32(storage.ss_family)
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if family == AF_INET {
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                    return (cString(text), Int(UInt16(bigEndian: address.pointee.sin_port)))
                }
            }
        }
        if family == AF_INET6 {
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    return (cString(text), Int(UInt16(bigEndian: address.pointee.sin6_port)))
                }
            }
        }
        return ("", 0)
    }

    private static func cString(_ chars: [CChar]) -> String {
        let end = chars.firstIndex(of: 0) ?? chars.count
        return String(decoding: chars[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

// `listen` and `send` are shadowed by the static methods above; these reach the C functions.
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

extension SocketOps {
    static var alreadyStartedErrno: Int32 { EALREADY }
    static var lastErrno: Int32 { errno }
}
