// What several test targets share: a blocking loopback client that controls every byte and
// write boundary (with receive timeouts, so no test can hang), and a monotonic clock reading.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

public struct ClientError: Error, CustomStringConvertible {
    public var description: String
}

/// A parsed response as seen on the wire.
public struct WireResponse {
    public var status: Int
    public var reason: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// What a read that waits for the peer found.
public enum PeerEnd: Equatable, Sendable {
    case closed          // orderly EOF
    case reset           // ECONNRESET
    case stillOpen       // nothing arrived before the timeout
    case data            // bytes arrived
}

/// Blocking client socket with receive timeouts, so no test can hang.
public final class TestClient {
    public let fd: Int32
    private var buffer: [UInt8] = []
    /// The receive timeout reads fall back to after a bounded wait (`awaitPeer`, `readAll`).
    private var standingTimeout: Double

    /// `receiveTimeout` only guards against a hang: a busy machine may take seconds to answer.
    public init(port: Int, receiveTimeout: Double = 30) throws {
        #if canImport(Darwin)
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { throw ClientError(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw ClientError(description: "connect: \(code)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        self.fd = fd
        standingTimeout = receiveTimeout
        setReceiveTimeout(receiveTimeout)
    }

    deinit {
        close(fd)
    }

    public func setReceiveTimeout(_ seconds: Double) {
        standingTimeout = seconds
        applyReceiveTimeout(seconds)
    }

    private func applyReceiveTimeout(_ seconds: Double) {
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: .init(Int((seconds - Double(Int(seconds))) * 1_000_000)))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Darwin)
            let flags: Int32 = 0
            #else
            let flags = Int32(MSG_NOSIGNAL)
            #endif
            let n = bytes.withUnsafeBytes { rawSend(fd, $0.baseAddress! + offset, $0.count - offset, flags) }
            if n < 0 { throw ClientError(description: "send: \(errno)") }
            offset += n
        }
    }

    /// One `send` per byte, with a pause so the server sees separate segments.
    public func sendByteByByte(_ text: String, pauseMicroseconds: UInt32 = 200) throws {
        for byte in text.utf8 {
            try send([byte])
            usleep(pauseMicroseconds)
        }
    }

    public func shutdownWrite() {
        #if canImport(Darwin)
        shutdown(fd, SHUT_WR)
        #else
        shutdown(fd, Int32(SHUT_WR))
        #endif
    }

    /// Reads more bytes into the buffer; returns false on EOF, throws on timeout or error.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        if n == 0 { return false }
        throw ClientError(description: "recv: errno \(errno)")
    }

    /// Reads one complete response (Content-Length framing, or none for 1xx/204/304/HEAD).
    public func readResponse(isHead: Bool = false) throws -> WireResponse {
        while true {
            if let end = find([13, 10, 13, 10]) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst()
                let parts = statusLine.split(separator: " ", maxSplits: 2).map(String.init)
                guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else {
                    throw ClientError(description: "bad status line: \(statusLine)")
                }
                let headers: [(String, String)] = lines.map { line in
                    let colon = line.firstIndex(of: ":")!
                    return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
                var response = WireResponse(status: status, reason: parts.count > 2 ? parts[2] : "", headers: headers, body: [])
                let length = (isHead || status < 200 || status == 204 || status == 304)
                    ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
                while buffer.count < end + 4 + length {
                    guard try fill() else { throw ClientError(description: "EOF inside body") }
                }
                response.body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                return response
            }
            guard try fill() else { throw ClientError(description: "EOF before a response (\(buffer.count) bytes buffered)") }
        }
    }

    /// Reads until EOF and returns everything received.
    public func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Waits up to `seconds` for the peer: EOF, RST, data, or nothing. Later reads wait as long
    /// as before.
    public func awaitPeer(seconds: Double) -> PeerEnd {
        if !buffer.isEmpty { return .data }
        applyReceiveTimeout(seconds)
        defer { applyReceiveTimeout(standingTimeout) }
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, 0)
        if n > 0 {
            buffer.append(byte)
            return .data
        }
        if n == 0 { return .closed }
        let code = errno
        if code == ECONNRESET { return .reset }
        return .stillOpen
    }

    /// Everything received so far, without waiting: what has arrived at this instant (kept for
    /// the next read). Lets a test assert that a response is still incomplete.
    public func receivedSoFar() -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n > 0 else { return buffer }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Sends a request with a JSON body and the headers a client would add.
    public func post(_ target: String, _ body: String, headers: [String] = []) throws {
        var head = "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
        for header in headers { head += header + "\r\n" }
        try send(head + "\r\n" + body)
    }

    /// Reads until EOF, reset or timeout; reports how it ended and everything that arrived.
    public func readAll(timeout: Double = 30) -> (bytes: [UInt8], end: PeerEnd) {
        applyReceiveTimeout(timeout)
        defer { applyReceiveTimeout(standingTimeout) }
        var collected = buffer
        buffer = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                collected += chunk[0..<n]
                continue
            }
            if n == 0 { return (collected, .closed) }
            return (collected, errno == ECONNRESET ? .reset : .stillOpen)
        }
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for index in 0...(buffer.count - pattern.count) where buffer[index] == pattern[0] {
            if Array(buffer[index..<(index + pattern.count)]) == pattern { return index }
        }
        return nil
    }
}

#if canImport(Darwin)
private func rawSend(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int, _ flags: Int32) -> Int { Darwin.send(fd, p, n, flags) }
#else
private func rawSend(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int, _ flags: Int32) -> Int { Glibc.send(fd, p, n, flags) }
#endif

/// Seconds on the monotonic clock, for elapsed-time assertions (lower bounds: that a delay or
/// timeout was honoured; how fast the machine is belongs in bench/).
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Polls `condition` until it holds or `seconds` have passed; says whether it held. For an event
/// the code under test gives no signal for: the deadline only guards against a hang, so it is
/// generous (a busy machine may take seconds to get there).
public func waitUntil(seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = monotonicSeconds() + seconds
    while try !condition() {
        if monotonicSeconds() > deadline { return false }
        usleep(2_000)
    }
    return true
}
