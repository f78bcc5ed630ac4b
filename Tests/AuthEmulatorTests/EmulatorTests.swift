#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthEmulator
import GoTrue
import Testing

/// A minimal blocking HTTP/1.1 exchange over a loopback socket: one request, read until the
/// server closes (the request asks for `Connection: close`).
func exchange(port: Int, _ raw: String) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #expect(fd >= 0)
    defer { close(fd) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    try #require(connected == 0)
    let bytes = Array(raw.utf8)
    #expect(send(fd, bytes, bytes.count, 0) == bytes.count)
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n <= 0 { break }
        response += buffer[0..<n]
    }
    return String(decoding: response, as: UTF8.self)
}

@Suite struct EmulatorTests {
    @Test func startsInProcessOnEphemeralPortAndStops() throws {
        let emulator = try Emulator.start(.testing())
        #expect(emulator.port > 0)
        #expect(emulator.url == "http://127.0.0.1:\(emulator.port)")
        let response = try exchange(port: emulator.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(response.hasPrefix("HTTP/1.1 200"))
        #expect(response.contains(#""name":"GoTrue""#))
        emulator.stop()
        emulator.stop()  // idempotent
        emulator.waitUntilStopped()
    }

    @Test func twoEmulatorsAreIsolated() throws {
        var options = EmulatorOptions.testing()
        options.configuration.jwt.secret = "a-different-secret-of-at-least-32-characters"
        options.configuration.apiKeys = APIKeys.standard(secret: options.configuration.jwt.secret)
        let a = try Emulator.start(.testing())
        let b = try Emulator.start(options)
        defer { a.stop(); b.stop() }
        #expect(a.port != b.port)
        let keyA = a.project.configuration.apiKeys.anon
        let viaA = try exchange(port: a.port, "GET /auth/v1/health HTTP/1.1\r\nHost: x\r\napikey: \(keyA)\r\nConnection: close\r\n\r\n")
        #expect(viaA.hasPrefix("HTTP/1.1 200"))
        let viaB = try exchange(port: b.port, "GET /auth/v1/health HTTP/1.1\r\nHost: x\r\napikey: \(keyA)\r\nConnection: close\r\n\r\n")
        #expect(viaB.hasPrefix("HTTP/1.1 401"))
    }

    @Test func busyPortIsAClearError() throws {
        let first = try Emulator.start(.testing())
        defer { first.stop() }
        var options = EmulatorOptions.testing()
        options.port = first.port
        #expect(throws: EmulatorError.self) { try Emulator.start(options) }
    }

    @Test func unopenableDatabaseIsAClearError() throws {
        var options = EmulatorOptions.testing()
        options.databasePath = "/proc/definitely/not/writable/auth.db"
        #expect(throws: EmulatorError.self) { try Emulator(options: options) }
    }

    @Test func fileDatabaseIsCreatedWithParents() throws {
        let directory = "/tmp/auth-emulator-test-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        var options = EmulatorOptions.testing()
        options.databasePath = directory + "/a/b/auth.db"
        let emulator = try Emulator.start(options)
        emulator.stop()
        #expect(access(options.databasePath, F_OK) == 0)
        for suffix in ["", "-wal", "-shm"] { unlink(options.databasePath + suffix) }
        rmdir(directory + "/a/b"); rmdir(directory + "/a"); rmdir(directory)
    }
}
