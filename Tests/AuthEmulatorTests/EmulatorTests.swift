#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthEmulator
@_exported import AuthTestSupport
import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Testing

/// A minimal blocking HTTP/1.1 exchange over a loopback socket: one request, read until the
/// server closes (the request asks for `Connection: close`).
func exchange(port: Int, _ raw: String) throws -> String {
    let client = try TestClient(port: port)
    try client.send(raw)
    return String(decoding: try client.readToEnd(), as: UTF8.self)
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
        options.configuration.requireAPIKey = true
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

@Suite struct HeaderLimitTests {
    /// Go's 1 MiB header cap: a 200 KB bearer token is served (a user with big metadata), past
    /// 1 MiB is 431.
    @Test func headersUpToOneMebibyte() throws {
        let emulator = try Emulator.start(.testing())
        defer { emulator.stop() }
        let big = String(repeating: "a", count: 200_000)
        let served = try exchange(port: emulator.port, "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\nConnection: close\r\n\r\n")
        #expect(served.hasPrefix("HTTP/1.1 200"))
        let huge = String(repeating: "a", count: (1 << 20) + 10)
        let refused = try exchange(port: emulator.port, "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(huge)\r\nConnection: close\r\n\r\n")
        #expect(refused.hasPrefix("HTTP/1.1 431"))
    }
}
