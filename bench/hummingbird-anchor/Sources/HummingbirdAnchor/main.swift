// Minimal Hummingbird 2 server used as the throughput and memory yardstick by bench/http.sh.
//
// It mirrors the contract of `auth-emulator serve` so the benchmark scripts can drive both
// servers the same way:
//   hummingbird-anchor serve --host 127.0.0.1 --port 0 [--db IGNORED]
// prints `listening on http://HOST:PORT` as its first stdout line once the socket accepts
// connections, answers `GET /health` with GoTrue's small health object (and `GET /health-static`
// with the same bytes pre-encoded), and shuts down gracefully on SIGTERM/SIGINT.
//
// The handler is written the way a Hummingbird application normally is (a Codable value
// returned from a router closure, encoded by the framework's JSON encoder), so the comparison
// is against idiomatic framework use rather than a hand-tuned special case.
import Hummingbird

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// GoTrue's health object (`GET /health`), same keys and roughly the same size as the product's.
struct Health: ResponseEncodable {
    let version: String
    let name: String
    let description: String
}

struct Options {
    var host = "127.0.0.1"
    var port = 9999
}

func usage(_ message: String) -> Never {
    let text = "error: \(message)\nusage: hummingbird-anchor serve [--host HOST] [--port PORT] [--db PATH]\n"
    // write(2) on the descriptor: the C `stderr` global is not concurrency-safe in Swift 6.
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(64)  // EX_USAGE, as the product's CLI does
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments.dropFirst()
    if rest.first == "serve" { rest = rest.dropFirst() }
    while let flag = rest.popFirst() {
        switch flag {
        case "--host":
            guard let value = rest.popFirst() else { usage("--host needs a value") }
            options.host = value
        case "--port":
            guard let value = rest.popFirst(), let port = Int(value), (0...65535).contains(port) else {
                usage("--port needs a number in 0...65535")
            }
            options.port = port
        case "--db":
            // Accepted for command-line compatibility with the product; there is no store here.
            guard rest.popFirst() != nil else { usage("--db needs a value") }
        case "-h", "--help":
            print("usage: hummingbird-anchor serve [--host HOST] [--port PORT] [--db PATH]")
            exit(0)
        default:
            usage("unknown argument '\(flag)'")
        }
    }
    return options
}

let options = parseOptions(CommandLine.arguments)
let health = Health(
    version: "hummingbird-2.28.1",
    name: "GoTrue",
    description: "GoTrue is a user registration and authentication API"
)

let router = Router()
router.get("/health") { _, _ -> Health in health }
// The same body pre-encoded once: shows how much of the anchor's cost is per-request JSON
// encoding, so a throughput ratio can be read against both (`bench/http.sh --anchor-static`).
let staticBody = ByteBuffer(
    string: #"{"version":"hummingbird-2.28.1","name":"GoTrue","description":"GoTrue is a user registration and authentication API"}"#
)
router.get("/health-static") { _, _ -> Response in
    Response(
        status: .ok,
        headers: [.contentType: "application/json; charset=utf-8"],
        body: .init(byteBuffer: staticBody)
    )
}

let host = options.host
let app = Application(
    router: router,
    configuration: .init(address: .hostname(host, port: options.port)),
    onServerRunning: { channel in
        // Port 0 asks the kernel for a free port; report the one actually bound, and flush at
        // once because stdout is a pipe (fully buffered) when a script reads it. fflush(nil)
        // flushes every stream without touching the non-Sendable C `stdout` global.
        let port = channel.localAddress?.port ?? options.port
        print("listening on http://\(host):\(port)")
        fflush(nil)
    }
)
try await app.runService()
