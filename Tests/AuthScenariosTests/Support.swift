// Shared pieces of the scenario tests: a GoTrue API with the scenario middleware in front, a
// hand-moved clock, request helpers, and a raw loopback socket client that observes transport
// faults byte by byte.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Foundation
import GoTrue
import Synchronization
@testable import AuthScenarios

final class ManualClock: AuthClock, Sendable {
    private let current: Mutex<Int64>
    init(_ start: Int64 = 1_767_225_600_000_000) { current = Mutex(start) }  // 2026-01-01T00:00:00Z
    func now() -> Timestamp { Timestamp(microseconds: current.withLock { $0 }) }
    func advance(seconds: Double) { current.withLock { $0 += Int64(seconds * 1_000_000) } }
}

/// One emulated project with the scenario engine and journal plugged in, answering in-process.
struct Harness {
    let clock = ManualClock()
    let project: Project
    let engine: ScenarioEngine
    let journal: Journal
    let api: GoTrueAPI

    init(journalCapacity: Int = 100, configure: (inout Configuration) -> Void = { _ in }) throws {
        var configuration = Configuration()
        configuration.passwordHashIterations = PasswordHasher.insecureTestIterations
        configure(&configuration)
        project = Project(configuration: configuration, database: try Database(path: ":memory:"),
                          environment: Environment(clock: clock))
        engine = ScenarioEngine(environment: project.environment)
        journal = Journal(capacity: journalCapacity)
        api = GoTrueAPI(project: project, middleware: [ScenarioMiddleware(engine: engine, journal: journal, project: project)],
                        extensions: ControlRoutes.routes(engine: engine, journal: journal))
    }

    var serviceRole: String { project.configuration.apiKeys.serviceRole }

    func call(_ method: String, _ target: String, _ body: JSON? = nil, bearer: String? = nil,
              headers: HTTPHeaders = [:], raw: String? = nil) -> HTTPResponse {
        var headers = headers
        if headers["Host"] == nil { headers["Host"] = "127.0.0.1" }
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        let text = raw ?? body?.serialized() ?? ""
        return api.respond(to: HTTPRequest(method: method, target: target, headers: headers, body: Array(text.utf8)))
    }

    /// A control call with the service_role key.
    func control(_ method: String, _ path: String, raw: String? = nil) -> HTTPResponse {
        call(method, GoTrueAPI.emulatorPrefix + path, bearer: serviceRole, raw: raw)
    }

    @discardableResult
    func load(_ json: String) throws -> Scenario {
        let scenario = try Scenario(json: json, source: "test")
        engine.add(scenario)
        return scenario
    }

    func signUp(_ email: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        call("POST", "/signup", ["email": .string(email), "password": "password1"], headers: headers)
    }

    func signIn(_ email: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        call("POST", "/token?grant_type=password", ["email": .string(email), "password": "password1"], headers: headers)
    }

    func refresh(_ token: String) -> HTTPResponse {
        call("POST", "/token?grant_type=refresh_token", ["refresh_token": .string(token)])
    }
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSON { (try? JSON(parsing: body)) ?? .null }
}

/// The repository root, found from this file's path.
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

// MARK: - raw sockets

enum PeerEnd: Equatable {
    case closed, reset, stillOpen, data
}

/// A blocking loopback client with receive timeouts, so no test can hang.
final class RawClient {
    let fd: Int32

    init(port: Int) throws {
        #if canImport(Darwin)
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 {
            close(fd)
            throw NSError(domain: "connect", code: Int(errno))
        }
        setTimeout(5)
    }

    deinit { close(fd) }

    func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: .init(Int(seconds)), tv_usec: .init((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { rawSend(fd, $0.baseAddress!, $0.count, 0) }
    }

    /// Sends a request with a JSON body and the service headers a client would add.
    func post(_ target: String, _ body: String, headers: [String] = []) {
        var head = "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
        for header in headers { head += header + "\r\n" }
        send(head + "\r\n" + body)
    }

    /// Reads until EOF, reset or timeout; reports how it ended and what arrived.
    func readAll(timeout: Double = 5) -> (bytes: [UInt8], end: PeerEnd) {
        setTimeout(timeout)
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 {
                collected += buffer[0..<n]
                continue
            }
            if n == 0 { return (collected, .closed) }
            return (collected, errno == ECONNRESET ? .reset : .stillOpen)
        }
    }

    /// Reads one response whose head carries Content-Length; returns when the body is complete.
    func readResponse(timeout: Double = 5) -> (head: String, body: [UInt8])? {
        setTimeout(timeout)
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = collected.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: collected[..<end.lowerBound], as: UTF8.self)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if collected.count - end.upperBound >= length { return (head, Array(collected[end.upperBound...].prefix(length))) }
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return nil }
            collected += buffer[0..<n]
        }
    }
}

#if canImport(Darwin)
private func rawSend(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int, _ flags: Int32) -> Int { Darwin.send(fd, p, n, flags) }
#else
private func rawSend(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int, _ flags: Int32) -> Int { Glibc.send(fd, p, n, flags) }
#endif

func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}

/// Runs `body` against a real server with the harness's API as responder.
func withServer(_ harness: Harness, _ body: (Int) throws -> Void) throws {
    var configuration = HTTPServerConfiguration(port: 0, loopThreads: 1, workerThreads: 2)
    configuration.host = "127.0.0.1"
    let server = HTTPServer(configuration: configuration, responder: harness.api)
    try server.start()
    defer { server.shutdown(timeout: .seconds(2)) }
    try body(server.port)
}
