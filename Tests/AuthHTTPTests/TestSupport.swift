// The AuthHTTP tests' own pieces: a small responder with one route per behaviour and a function
// that runs a server on an ephemeral port for the duration of one test. The loopback client is
// AuthTestSupport's `TestClient`.
@_exported import AuthTestSupport
import Foundation
import Testing
@testable import AuthHTTP

/// Holds `/block` requests (on worker threads) until the test signals it once per request.
let workerGate = DispatchSemaphore(value: 0)

/// One route per behaviour under test.
struct TestResponder: HTTPResponder {
    /// `/inline…` paths are answered by the event loop itself.
    func respondsInline(to request: HTTPRequest) -> Bool { request.path.hasPrefix("/inline") }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        let milliseconds = Int(request.queryValue("ms") ?? "") ?? 0
        switch request.path {
        case "/inline":
            return HTTPResponse(status: 200, body: Array("inline \(request.queryValue("n") ?? "")".utf8))
        case "/inline-busy":
            // Holds the loop, so that requests arriving meanwhile are answered as one batch.
            usleep(UInt32(milliseconds * 1000))
            return HTTPResponse(status: 200, body: Array("inline busy".utf8))
        case "/inline-delay":
            return HTTPResponse(status: 200, body: Array("inline delayed".utf8), directive: ResponseDirective(delay: .milliseconds(milliseconds)))
        case "/block":
            workerGate.wait()
            return HTTPResponse(status: 200, body: Array("unblocked".utf8))
        case "/health":
            return HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: Array("ok".utf8))
        case "/delay":
            return HTTPResponse(status: 200, body: Array("delayed".utf8), directive: ResponseDirective(delay: .milliseconds(milliseconds)))
        case "/slow":
            // Blocks the worker thread, like a slow SQLite transaction or PBKDF2.
            usleep(UInt32(milliseconds * 1000))
            return HTTPResponse(status: 200, body: Array("slow".utf8))
        case "/close-after":
            return HTTPResponse(
                status: 200, body: Array("0123456789abcdefghij".utf8),
                directive: ResponseDirective(closeAfterBytes: Int(request.queryValue("n") ?? "") ?? 0)
            )
        case "/drip":
            let chunks = Int(request.queryValue("chunks") ?? "") ?? 4
            return HTTPResponse(
                status: 200, body: Array("0123456789abcdefghij".utf8),
                directive: ResponseDirective(drip: .init(chunks: chunks, duration: .milliseconds(milliseconds)))
            )
        case "/reset":
            return HTTPResponse(status: 200, body: Array("never".utf8), directive: ResponseDirective(reset: true))
        case "/stall":
            return HTTPResponse(status: 200, body: Array("never".utf8), directive: ResponseDirective(stall: true))
        case "/big":
            let size = Int(request.queryValue("n") ?? "") ?? 0
            // Built by whole copies of the 251-byte pattern: a byte-by-byte map of megabytes
            // takes seconds in a debug build on a loaded machine, longer than the timeouts the
            // tests measure.
            let pattern = (0..<251).map { UInt8($0) }
            var body: [UInt8] = []
            body.reserveCapacity(size)
            while body.count < size { body.append(contentsOf: pattern.prefix(size - body.count)) }
            return HTTPResponse(status: 200, body: body)
        case "/close":
            return HTTPResponse(status: 200, headers: ["Connection": "close"], body: Array("bye".utf8))
        default:
            // Echo: a line per fact, easy to assert on.
            var lines = [
                "method=\(request.method)",
                "path=\(request.path)",
                "target=\(request.target)",
                "version=\(request.version)",
                "remote=\(request.remoteAddress):\(request.remotePort)",
                "body=\(String(decoding: request.body, as: UTF8.self))",
            ]
            for item in request.query { lines.append("query \(item.name)=\(item.value)") }
            if let test = request.headers["x-test"] { lines.append("x-test=\(test)") }
            return HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: Array(lines.joined(separator: "\n").utf8))
        }
    }
}

/// `TestResponder` with two hooks that order a test's steps without sleeping: a request for one
/// of `signalled` paths signals `entered` when it reaches the responder (on a worker, or on the
/// loop for inline paths), and one for `gated` paths then waits for `gate` (one signal per
/// request) before it is answered.
struct ObservedResponder: HTTPResponder {
    var signalled: Set<String> = []
    var gated: Set<String> = []
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)

    func respondsInline(to request: HTTPRequest) -> Bool { TestResponder().respondsInline(to: request) }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        if signalled.contains(request.path) { entered.signal() }
        if gated.contains(request.path) { gate.wait() }
        return TestResponder().respond(to: request)
    }

    /// Waits for `count` signals of `entered`; false if they did not all come within the
    /// (hang-guarding) deadline.
    func awaitEntered(_ count: Int = 1, seconds: Double = 30) -> Bool {
        let deadline = DispatchTime.now() + seconds
        for _ in 0..<count where entered.wait(timeout: deadline) == .timedOut { return false }
        return true
    }
}

/// Runs `body` against a fresh server on an ephemeral port, then shuts it down.
func withServer(
    _ adjust: (inout HTTPServerConfiguration) -> Void = { _ in },
    _ body: (HTTPServer) throws -> Void
) throws {
    try withServer(adjust, responder: TestResponder(), body)
}

/// Runs `body` against a fresh server answering with `responder`, then shuts it down.
func withServer(
    _ adjust: (inout HTTPServerConfiguration) -> Void = { _ in },
    responder: some HTTPResponder,
    _ body: (HTTPServer) throws -> Void
) throws {
    var configuration = HTTPServerConfiguration(port: 0, loopThreads: 2, workerThreads: 4)
    adjust(&configuration)
    let server = HTTPServer(configuration: configuration, responder: responder)
    try server.start()
    defer { server.shutdown(timeout: .seconds(2)) }
    try body(server)
}

func echoLines(_ response: WireResponse) -> [String] {
    response.text.components(separatedBy: "\n")
}
