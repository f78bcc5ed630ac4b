import AuthPlatform
import GoFormats

/// How the transport delivers a response; the seam that fault injection drives.
public struct ResponseDirective: Sendable, Equatable {
    /// Hold the response this long before writing it. A loop timer does the waiting, so no
    /// thread is occupied however long the delay.
    public var delay: Duration?
    /// Write only the first N bytes of the serialized response, then close the connection.
    public var closeAfterBytes: Int?
    /// Abort the connection with a TCP RST instead of answering.
    public var reset: Bool
    /// Never answer; keep the connection open until the peer closes it or the server shuts down.
    public var stall: Bool
    /// Send the response slowly: the head with the first piece of the body at once, the other
    /// pieces on loop timers, the last one `duration` after the first (a slow or congested link).
    public var drip: Drip?

    /// How `drip` paces a body.
    public struct Drip: Sendable, Equatable {
        /// Pieces the body is cut into (at most one per byte).
        public var chunks: Int
        /// Time from the first piece to the last.
        public var duration: Duration

        public init(chunks: Int, duration: Duration) {
            self.chunks = chunks
            self.duration = duration
        }
    }

    public static let none = ResponseDirective()

    public init(delay: Duration? = nil, closeAfterBytes: Int? = nil, reset: Bool = false, stall: Bool = false, drip: Drip? = nil) {
        self.delay = delay
        self.closeAfterBytes = closeAfterBytes
        self.reset = reset
        self.stall = stall
        self.drip = drip
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Reason phrase; nil uses the standard one for `status`.
    public var reason: String?
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var directive: ResponseDirective
    /// Facts about how the response was made (which fault rule fired, whether the client will see
    /// a status line), for the server's own log; never written to the wire.
    public var annotations: [String: String]
    /// Called once by the transport with what became of this response on the wire, when a
    /// request came over a socket (`HTTPRequest.reportsDelivery`); never for a response made
    /// in-process. On the thread of the connection's loop, or on a worker's after the loop has
    /// stopped: it must not block.
    public var onDelivery: (@Sendable (Delivered) -> Void)?

    /// What the client got of a response.
    public enum Delivered: Sendable, Equatable {
        /// Every byte planned went to the peer's socket (a fault's cut included).
        case written
        /// The connection ended before the response was out (the peer left, a write timeout,
        /// a `reset`/`stall` fault, or shutdown cut it off): no complete answer.
        case cutOff
        /// The server answered this status in its place (503 when the drain's time ran out).
        case replaced(status: Int)
    }

    /// The monotonic clock the transport stamps deliveries with, in nanoseconds.
    public static func deliveryClock() -> UInt64 { Clock.monotonicNanoseconds() }

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = [], directive: ResponseDirective = .none) {
        self.status = status
        self.reason = nil
        self.headers = headers
        self.body = body
        self.directive = directive
        self.annotations = [:]
        self.onDelivery = nil
    }

    /// The reason phrase of a status line, as Go's `net/http` writes it: GoTrue is a Go server,
    /// and clients and proxies see its status lines. Go's `StatusText` table (`net/http/status.go`)
    /// keeps the older names where RFC 9110 §15 renamed a status (413 "Request Entity Too Large",
    /// 414 "Request URI Too Long", 416 "Requested Range Not Satisfiable", 422 "Unprocessable
    /// Entity"); a code it does not know is written "status code N" (`writeStatusLine` in
    /// `net/http/server.go`). Every code from 100 to 599 can be sent (a scenario's status fault),
    /// so the whole table is here.
    public static func standardReason(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 102: "Processing"
        case 103: "Early Hints"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 205: "Reset Content"
        case 206: "Partial Content"
        case 207: "Multi-Status"
        case 208: "Already Reported"
        case 226: "IM Used"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 305: "Use Proxy"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Request Entity Too Large"
        case 414: "Request URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Requested Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 418: "I'm a teapot"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Entity"
        case 423: "Locked"
        case 424: "Failed Dependency"
        case 425: "Too Early"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 451: "Unavailable For Legal Reasons"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 506: "Variant Also Negotiates"
        case 507: "Insufficient Storage"
        case 508: "Loop Detected"
        case 510: "Not Extended"
        case 511: "Network Authentication Required"
        default: "status code \(status)"
        }
    }
}

/// Builds the bytes of a response: status line, fields, blank line and body in one buffer, so
/// the loop hands it to a single `send` (split writes of head and body would wait on the peer's
/// delayed ACK).
enum ResponseSerializer {
    struct Context {
        var isHead: Bool
        var isHTTP10: Bool
        var keepAlive: Bool
        var date: [UInt8]?
        var server: String?
    }

    /// Returns the serialized response and whether the connection may stay open afterwards.
    static func serialize(_ response: HTTPResponse, _ context: Context) -> (bytes: [UInt8], keepAlive: Bool) {
        let status = response.status
        // RFC 9110 §6.4.1 / §15.3.5 / §15.4.5: 1xx, 204 and 304 never carry content.
        let bodyless = status < 200 || status == 204 || status == 304
        let sendsBody = !bodyless && !context.isHead
        var keepAlive = context.keepAlive

        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + response.headers.count * 32 + (sendsBody ? response.body.count : 0))
        // Always our highest version, also to HTTP/1.0 clients (RFC 9110 §2.5).
        append("HTTP/1.1 ", to: &bytes)
        appendDecimal(max(0, min(status, 999)), to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendSanitized(response.reason ?? HTTPResponse.standardReason(for: status), to: &bytes)
        append("\r\n", to: &bytes)

        var sawDate = false
        var sawServer = false
        var sawConnection = false
        var explicitLength: String? = nil
        for field in response.headers.fields {
            let name = field.name
            // Framing is ours alone: a stale Content-Length or a Transfer-Encoding from the
            // responder would desynchronize the connection (RFC 9112 §6).
            if ASCII.equalsIgnoringCase(name, lowercase: "content-length") {
                explicitLength = field.value
                continue
            }
            if ASCII.equalsIgnoringCase(name, lowercase: "transfer-encoding") { continue }
            if ASCII.equalsIgnoringCase(name, lowercase: "connection") {
                sawConnection = true
                if HeaderTokens.contains(field.value, lowercase: "close") { keepAlive = false }
            } else if ASCII.equalsIgnoringCase(name, lowercase: "date") {
                sawDate = true
            } else if ASCII.equalsIgnoringCase(name, lowercase: "server") {
                sawServer = true
            }
            appendSanitized(name, to: &bytes)
            append(": ", to: &bytes)
            appendSanitized(field.value, to: &bytes)
            append("\r\n", to: &bytes)
        }
        if !bodyless {
            append("Content-Length: ", to: &bytes)
            if context.isHead, response.body.isEmpty, let explicitLength, let length = Int(explicitLength), length >= 0 {
                // A HEAD responder may announce the length of the GET body it did not build.
                appendDecimal(length, to: &bytes)
            } else {
                appendDecimal(response.body.count, to: &bytes)
            }
            append("\r\n", to: &bytes)
        }
        if !sawDate, let date = context.date {
            append("Date: ", to: &bytes)
            bytes.append(contentsOf: date)
            append("\r\n", to: &bytes)
        }
        if !sawServer, let server = context.server {
            append("Server: ", to: &bytes)
            appendSanitized(server, to: &bytes)
            append("\r\n", to: &bytes)
        }
        if !sawConnection {
            if !keepAlive {
                // RFC 9112 §9.6: announce the close so the client does not reuse the connection.
                append("Connection: close\r\n", to: &bytes)
            } else if context.isHTTP10 {
                // HTTP/1.0 persistence is opt-in and must be confirmed (RFC 9112 §9.3, Appendix C.2.2).
                append("Connection: keep-alive\r\n", to: &bytes)
            }
        }
        append("\r\n", to: &bytes)
        if sendsBody { bytes.append(contentsOf: response.body) }
        return (bytes, keepAlive)
    }

    static let continueLine: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    @inline(__always)
    static func append(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Copies a field name, value or reason, turning CR, LF and NUL into spaces so a value built
    /// from client input can never split the response (RFC 9110 §5.5).
    static func appendSanitized(_ text: String, to bytes: inout [UInt8]) {
        text.withUTF8Bytes { source in
            var clean = true
            for byte in source where byte == 0x0D || byte == 0x0A || byte == 0 {
                clean = false
                break
            }
            if clean {
                bytes.append(contentsOf: source)
            } else {
                for byte in source {
                    bytes.append(byte == 0x0D || byte == 0x0A || byte == 0 ? UInt8(ascii: " ") : byte)
                }
            }
        }
    }

    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var remaining = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while remaining > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }
}

/// Comma-separated token lists such as `Connection: keep-alive, Upgrade` (RFC 9110 §5.6.1).
enum HeaderTokens {
    static func contains(_ value: String, lowercase token: StaticString) -> Bool {
        value.withUTF8Bytes { contains($0, lowercase: token) }
    }

    static func contains(_ bytes: UnsafeBufferPointer<UInt8>, lowercase token: StaticString) -> Bool {
        var found = false
        forEach(bytes) { element in
            if ASCII.equalsIgnoringCase(element, lowercase: token) { found = true }
        }
        return found
    }

    /// Calls `body` with each element, trimmed of optional whitespace; empty elements skipped.
    static func forEach(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        var index = 0
        while index <= bytes.count {
            if index == bytes.count || bytes[index] == UInt8(ascii: ",") {
                var low = start
                var high = index
                while low < high, bytes[low] == 0x20 || bytes[low] == 0x09 { low += 1 }
                while high > low, bytes[high - 1] == 0x20 || bytes[high - 1] == 0x09 { high -= 1 }
                if high > low { body(UnsafeBufferPointer(rebasing: bytes[low..<high])) }
                start = index + 1
            }
            index += 1
        }
    }
}

/// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`, computed from the epoch
/// without the C library so it is the same on every platform.
public enum HTTPDate {
    public static func format(epochSeconds: Int) -> String {
        String(decoding: bytes(epochSeconds: epochSeconds), as: UTF8.self)
    }

    static func bytes(epochSeconds: Int) -> [UInt8] {
        let days = epochSeconds >= 0 ? epochSeconds / 86_400 : (epochSeconds - 86_399) / 86_400
        let secondOfDay = epochSeconds - days * 86_400
        // 1970-01-01 was a Thursday.
        let weekday = ((days % 7) + 7 + 4) % 7
        let (year, month, day) = GoTime.civil(days: Int64(days))

        let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var out: [UInt8] = []
        out.reserveCapacity(29)
        out.append(contentsOf: dayNames[weekday].utf8)
        out.append(contentsOf: ", ".utf8)
        twoDigits(day, &out)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: monthNames[month - 1].utf8)
        out.append(UInt8(ascii: " "))
        let clampedYear = max(0, min(year, 9999))
        twoDigits(clampedYear / 100, &out)
        twoDigits(clampedYear % 100, &out)
        out.append(UInt8(ascii: " "))
        twoDigits(secondOfDay / 3600, &out)
        out.append(UInt8(ascii: ":"))
        twoDigits(secondOfDay / 60 % 60, &out)
        out.append(UInt8(ascii: ":"))
        twoDigits(secondOfDay % 60, &out)
        out.append(contentsOf: " GMT".utf8)
        return out
    }

    private static func twoDigits(_ value: Int, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "0") + UInt8(value / 10))
        out.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
}

/// The formatted `Date` value of the current second, rebuilt only when the second changes.
struct DateCache {
    private var second = Int.min
    private var cached: [UInt8] = []

    mutating func current() -> [UInt8] {
        let now = Clock.wallSeconds()
        if now != second {
            second = now
            cached = HTTPDate.bytes(epochSeconds: now)
        }
        return cached
    }
}
