import CAuthPlatform
import GoTrue

/// Hook calls through the system's libcurl (HTTP and HTTPS), loaded on the first call rather
/// than linked, so a server without hooks never maps an HTTP or TLS stack (see
/// `CAuthPlatform/http_client.c`). GoTrue calls `post` on a worker thread, never on the event
/// loop; the call blocks that thread until the answer or the deadline.
///
/// Trust roots are the system's, or, as Go's `crypto/x509` reads them on Linux (the real
/// server's client), the file named by `SSL_CERT_FILE` and the directory named by
/// `SSL_CERT_DIR`: the way to trust a local test certificate authority.
package struct CurlHookTransport: HookTransport {
    /// Bytes read from an answer at most; GoTrue refuses anything over its 200 KiB limit, so
    /// this only needs to exceed that to tell "too large" from "just fits".
    static let bodyLimit = 1 << 20

    let caFile: String?
    let caDirectory: String?

    package init(environment: [String: String]) {
        caFile = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        // Go accepts a colon-separated list; libcurl takes one directory: the first.
        caDirectory = environment["SSL_CERT_DIR"].flatMap { $0.split(separator: ":").first.map(String.init) }
    }

    package func post(_ url: String, headers: [(String, String)], body: [UInt8], timeout: Double) -> HookReply {
        let lines = headers.map { "\($0.0): \($0.1)" }
        var reply = cauth_http_reply()
        let milliseconds = max(1, Int((timeout * 1000).rounded(.up)))
        let outcome = withCStrings(lines) { lines in
            body.withUnsafeBufferPointer { body in
                cauth_http_post(url, lines, lines.count, body.baseAddress, body.count, milliseconds, Self.bodyLimit,
                                caFile, caDirectory, &reply)
            }
        }
        switch Int(outcome) {
        case Int(CAUTH_HTTP_RESPONSE):
            defer { cauth_http_reply_free(&reply) }
            let head = reply.headers.map { Array(UnsafeBufferPointer(start: $0, count: reply.headers_count)) } ?? []
            let content = reply.body.map { Array(UnsafeBufferPointer(start: $0, count: reply.body_count)) } ?? []
            return .response(status: Int(reply.status), headers: Self.headerFields(head), body: content)
        case Int(CAUTH_HTTP_TIMED_OUT):
            return .timedOut
        default:
            return .failed(Self.message(reply))
        }
    }

    /// A GET with the same redirect rules (email templates); the body, or why there is none.
    /// With `eachHop`, the fetch stays on this machine: libcurl connects to loopback addresses
    /// only and uses no proxy (`cauth_http_get`), and redirects are followed here, each target
    /// passed to `eachHop` before it is asked for (a problem it names ends the fetch), up to
    /// the 10 redirects Go's client follows.
    func get(_ url: String, timeout: Double, limit: Int,
             eachHop check: ((String) -> String?)? = nil) -> Result<[UInt8], TemplateFetchError> {
        let start = ContinuousClock.now
        var current = url
        var redirects = 0
        while true {
            if let check, let problem = check(current) {
                return .failure(TemplateFetchError(redirects == 0 ? problem : "a redirect to \(current): \(problem)"))
            }
            let elapsed = start.duration(to: .now).components
            let remaining = timeout - (Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
            guard remaining > 0 else { return .failure(TemplateFetchError("timed out")) }
            var reply = cauth_http_reply()
            let milliseconds = max(1, Int((remaining * 1000).rounded(.up)))
            let outcome = cauth_http_get(current, milliseconds, limit + 1, caFile, caDirectory, check == nil ? 0 : 1, &reply)
            guard Int(outcome) == Int(CAUTH_HTTP_RESPONSE) else {
                return .failure(TemplateFetchError(Int(outcome) == Int(CAUTH_HTTP_TIMED_OUT) ? "timed out" : Self.message(reply)))
            }
            defer { cauth_http_reply_free(&reply) }
            if let next = reply.redirect_url {
                // defaultCheckRedirect: the 11th redirect is an error.
                if redirects == 10 { return .failure(TemplateFetchError("stopped after 10 redirects")) }
                redirects += 1
                current = String(cString: next)
                continue
            }
            // templatemailer's fetch: anything but 200 is an error; the body is read up to the limit.
            guard reply.status == 200 else { return .failure(TemplateFetchError("http: GET \(url): status code \(reply.status)")) }
            let content = reply.body.map { Array(UnsafeBufferPointer(start: $0, count: reply.body_count)) } ?? []
            return .success(Array(content.prefix(limit)))
        }
    }

    /// The `Name: value` fields of a header block (its status line and blank end skipped).
    /// Values are trimmed of surrounding spaces and tabs (RFC 9110 §5.5).
    static func headerFields(_ block: [UInt8]) -> [(String, String)] {
        var fields: [(String, String)] = []
        for line in block.split(separator: UInt8(ascii: "\n")).dropFirst() {
            var line = line[...]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            var value = line[line.index(after: colon)...]
            while let first = value.first, isBlank(first) { value = value.dropFirst() }
            while let last = value.last, isBlank(last) { value = value.dropLast() }
            fields.append((String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return fields
    }

    private static func message(_ reply: cauth_http_reply) -> String {
        withUnsafeBytes(of: reply.error) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// Calls `body` with the strings as C strings, laid out in one NUL-separated buffer that
    /// lives for the call only.
    private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        var buffer: [CChar] = []
        var offsets: [Int] = []
        for string in strings {
            offsets.append(buffer.count)
            buffer.append(contentsOf: string.utf8CString)
        }
        return buffer.withUnsafeBufferPointer { base in
            body(offsets.map { offset in base.baseAddress.map { UnsafePointer($0 + offset) } })
        }
    }
}
