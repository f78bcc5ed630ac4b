import Testing
@testable import AuthHTTP

/// Feeds `text` in pieces of `step` bytes, honouring the parser's contract (unconsumed bytes
/// are offered again with the next piece), and collects every event.
private func feed(
    _ text: String, step: Int = .max, limits: HTTPParser.Limits = .init()
) -> (events: [HTTPParser.Event], leftover: [UInt8]) {
    var parser = HTTPParser(limits: limits)
    let bytes = Array(text.utf8)
    var pending: [UInt8] = []
    var events: [HTTPParser.Event] = []
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset &+ step)
        pending.append(contentsOf: bytes[offset..<end])
        offset = end
        while true {
            let (consumed, event) = parser.parse(pending)
            pending.removeFirst(consumed)
            if case .needMore = event { break }
            events.append(event)
            if case .failure = event { return (events, pending) }
            if pending.isEmpty { break }
        }
    }
    return (events, pending)
}

private func requests(_ events: [HTTPParser.Event]) -> [(HTTPRequest, Bool)] {
    events.compactMap { if case .request(let request, let keepAlive) = $0 { (request, keepAlive) } else { nil } }
}

private func failure(_ events: [HTTPParser.Event]) -> HTTPProtocolFailure? {
    for event in events { if case .failure(let failure, _) = event { return failure } }
    return nil
}

@Suite("HTTPParser")
struct HTTPParserTests {
    @Test func parsesSimpleGet() throws {
        let (events, leftover) = feed("GET /auth/v1/health?x=1 HTTP/1.1\r\nHost: localhost:9999\r\nAccept: */*\r\n\r\n")
        let parsed = requests(events)
        try #require(parsed.count == 1)
        let (request, keepAlive) = parsed[0]
        #expect(request.method == "GET")
        #expect(request.target == "/auth/v1/health?x=1")
        #expect(request.path == "/auth/v1/health")
        #expect(request.queryValue("x") == "1")
        #expect(request.version == "HTTP/1.1")
        #expect(request.headers["host"] == "localhost:9999")
        #expect(request.headers["ACCEPT"] == "*/*")
        #expect(request.body.isEmpty)
        #expect(keepAlive)
        #expect(leftover.isEmpty)
    }

    @Test func sameResultWhenFedOneByteAtATime() throws {
        let text = "POST /signup HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\nX-A:  spaced value \t\r\n\r\nhello world"
        let parsed = requests(feed(text, step: 1).events)
        try #require(parsed.count == 1)
        #expect(parsed[0].0.body == Array("hello world".utf8))
        // RFC 9112 §5.1: optional whitespace around the value is not part of it.
        #expect(parsed[0].0.headers["x-a"] == "spaced value")
    }

    @Test func stopsAtTheEndOfEachPipelinedRequest() {
        let text = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
        var parser = HTTPParser()
        var bytes = Array(text.utf8)
        var paths: [String] = []
        while !bytes.isEmpty {
            let (consumed, event) = parser.parse(bytes)
            guard case .request(let request, _) = event else { Issue.record("expected a request"); return }
            paths.append(request.path + ":" + String(decoding: request.body, as: UTF8.self))
            bytes.removeFirst(consumed)
        }
        #expect(paths == ["/1:", "/2:abc", "/3:"])
    }

    @Test func ignoresLeadingEmptyLines() {
        // RFC 9112 §2.2.
        let parsed = requests(feed("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n").events)
        #expect(parsed.count == 1)
    }

    @Test func decodesChunkedBodiesWithExtensionsAndTrailers() throws {
        let text = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n1 ; ext\r\n \r\n5\r\nworld\r\n0\r\nTrailer-One: x\r\nTrailer-Two: y\r\n\r\n"
        for step in [1, 3, Int.max] {
            let parsed = requests(feed(text, step: step).events)
            try #require(parsed.count == 1)
            #expect(parsed[0].0.body == Array("hello world".utf8))
            #expect(parsed[0].0.headers["trailer-one"] == nil)
        }
    }

    @Test func decodesManySmallChunks() throws {
        var text = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        for index in 0..<500 { text += "1\r\n\(index % 10)\r\n" }
        text += "0\r\n\r\n"
        let parsed = requests(feed(text, step: 7).events)
        try #require(parsed.count == 1)
        #expect(parsed[0].0.body.count == 500)
    }

    @Test func chunkSizeOverflowIs400() {
        let text = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n"
        #expect(failure(feed(text).events) == .badRequest("chunk size overflow"))
    }

    /// Found by the fuzz target (Tests/Fuzz/HTTPParser): the cap on a chunk-size line was only
    /// applied while the line was incomplete, so a long extension was accepted when the whole
    /// line arrived in one read and refused when it arrived in two.
    @Test(arguments: [Int.max, 1000, 1])
    func chunkSizeLineCapHoldsHoweverTheBytesArrive(step: Int) {
        let extensionText = ";" + String(repeating: "x", count: HTTPParser.maxChunkLineBytes)
        let text = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\(extensionText)\r\na\r\n0\r\n\r\n"
        #expect(failure(feed(text, step: step).events) == .badRequest("chunk size line too long"))
        // One byte under the cap is still a valid chunk, whole or split.
        let shorter = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\(extensionText.dropLast(3))\r\na\r\n0\r\n\r\n"
        #expect(requests(feed(shorter, step: step).events).map(\.0.body) == [Array("a".utf8)])
    }

    @Test func chunkedBodyOverTheCapIs413() {
        let limits = HTTPParser.Limits(maxHeaderBytes: 1024, maxBodyBytes: 8)
        let text = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n"
        #expect(failure(feed(text, limits: limits).events) == .bodyTooLarge(limit: 8))
    }

    @Test func contentLengthOverTheCapIs413BeforeTheBody() {
        let limits = HTTPParser.Limits(maxHeaderBytes: 1024, maxBodyBytes: 8)
        let (events, _) = feed("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\n", limits: limits)
        #expect(failure(events) == .bodyTooLarge(limit: 8))
        guard case .failure(_, let headers)? = events.last else { Issue.record("no failure"); return }
        // The renderer gets the parsed headers.
        #expect(headers?["content-length"] == "9")
    }

    @Test func oversizedHeadIs431() {
        let limits = HTTPParser.Limits(maxHeaderBytes: 64, maxBodyBytes: 8)
        let long = "GET / HTTP/1.1\r\nHost: h\r\nX-Long: \(String(repeating: "a", count: 80))\r\n\r\n"
        #expect(failure(feed(long, limits: limits).events) == .headersTooLarge)
        // Also when the terminator never comes.
        #expect(failure(feed("GET /\(String(repeating: "a", count: 100))", step: 10, limits: limits).events) == .headersTooLarge)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", "both Content-Length and Transfer-Encoding"),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n", "invalid Content-Length"),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6\r\n\r\n", "invalid Content-Length"),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "invalid Content-Length"),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", "invalid Content-Length"),
        ("GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", "invalid Content-Length"),
        ("GET / HTTP/1.1\r\n\r\n", "missing Host header field"),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "multiple Host header fields"),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-Folded: a\r\n b\r\n\r\n", "obsolete line folding"),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-Bad : a\r\n\r\n", "whitespace before a header field colon"),
        ("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", "header field without a colon"),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-Bad\u{1}: a\r\n\r\n", "invalid header field name"),
        ("GET / HTTP/1.1\r\nHost: h\r\nX-Bad: a\u{0}b\r\n\r\n", "invalid header field value"),
        ("GET / HTTP/1.1\nHost: h\n\n", "bare LF line terminator"),
        ("G(T / HTTP/1.1\r\nHost: h\r\n\r\n", "invalid method"),
        ("GET /a\u{7F}b HTTP/1.1\r\nHost: h\r\n\r\n", "invalid request-target"),
        ("GET nope HTTP/1.1\r\nHost: h\r\n\r\n", "invalid request-target"),
        ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", "malformed request line"),
        ("GET / HTTP/1.1 extra\r\nHost: h\r\n\r\n", "malformed HTTP version"),
        ("GET / http/1.1\r\nHost: h\r\n\r\n", "malformed HTTP version"),
        ("GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", "chunked must be the final transfer coding, applied once"),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "Transfer-Encoding in an HTTP/1.0 request"),
    ])
    func rejectsMalformedRequestsWith400(text: String, reason: String) {
        #expect(failure(feed(text).events) == .badRequest(reason))
    }

    @Test func rejectsUnknownTransferCodingWith501() {
        let text = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
        #expect(failure(feed(text).events) == .notImplemented("transfer-coding gzip"))
        #expect(HTTPProtocolFailure.notImplemented("x").status == 501)
    }

    @Test func versions() throws {
        #expect(failure(feed("GET / HTTP/2.0\r\nHost: h\r\n\r\n").events) == .unsupportedVersion)
        #expect(HTTPProtocolFailure.unsupportedVersion.status == 505)
        // RFC 9110 §2.5: a higher minor version is handled as the highest we support.
        let parsed = requests(feed("GET / HTTP/1.7\r\nHost: h\r\n\r\n").events)
        try #require(parsed.count == 1)
        #expect(parsed[0].0.version == "HTTP/1.1")
    }

    @Test func acceptsIdenticalContentLengthLists() throws {
        // RFC 9110 §8.6.
        let parsed = requests(feed("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\n\r\nok").events)
        try #require(parsed.count == 1)
        #expect(parsed[0].0.body == Array("ok".utf8))
    }

    @Test func keepAliveRules() {
        // RFC 9112 §9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 only with "keep-alive".
        let cases: [(String, Bool)] = [
            ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade, close\r\n\r\n", false),
            ("GET / HTTP/1.0\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
        ]
        for (text, expected) in cases {
            #expect(requests(feed(text).events).first?.1 == expected, "\(text)")
        }
    }

    @Test func absoluteFormUsesItsPath() throws {
        let parsed = requests(feed("GET http://example.com:9999/auth/v1/user?a=b HTTP/1.1\r\nHost: example.com\r\n\r\n").events)
        try #require(parsed.count == 1)
        #expect(parsed[0].0.path == "/auth/v1/user")
        #expect(parsed[0].0.queryValue("a") == "b")
        #expect(HTTPRequest(method: "GET", target: "http://example.com").path == "/")
        #expect(HTTPRequest(method: "OPTIONS", target: "*").path == "*")
    }

    @Test func expectContinueIsReportedBeforeTheBody() throws {
        var parser = HTTPParser()
        var bytes = Array("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8)
        var (consumed, event) = parser.parse(bytes)
        guard case .expectContinue = event else { Issue.record("expected expectContinue, got \(event)"); return }
        bytes.removeFirst(consumed)
        bytes += Array("hi".utf8)
        (consumed, event) = parser.parse(bytes)
        guard case .request(let request, _) = event else { Issue.record("expected the request"); return }
        #expect(request.body == Array("hi".utf8))
        #expect(consumed == 2)

        // The body already arrived: no interim response is needed.
        let eager = feed("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi").events
        #expect(eager.count == 1)
        // Never for HTTP/1.0 (RFC 9110 §10.1.1).
        let old = feed("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n", step: 1).events
        #expect(old.isEmpty)
    }
}

@Suite struct LineFeedSearchTests {
    /// The sixteen-byte search finds the first LF wherever it sits (in a step, at a step's edge,
    /// in the byte-by-byte tail), next to the bytes most likely to fool it (0x0b, 0x09, 0x8a,
    /// 0xff, 0x00), and reports none when there is none.
    @Test func findsTheFirstLineFeedAtEveryPosition() {
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48] {
            for filler: UInt8 in [0x0b, 0x09, 0x8a, 0xff, 0x00, 0x41] {
                var bytes = [UInt8](repeating: filler, count: length)
                #expect(bytes.withUnsafeBufferPointer { ASCII.firstLF(in: $0, from: 0) } == length)
                for position in 0..<length {
                    bytes = [UInt8](repeating: filler, count: length)
                    bytes[position] = 0x0a
                    if position + 1 < length { bytes[length - 1] = 0x0a }
                    for start in 0...position {
                        let found = bytes.withUnsafeBufferPointer { ASCII.firstLF(in: $0, from: start) }
                        #expect(found == position, "LF at \(position) of \(length), from \(start), filler \(filler)")
                    }
                }
            }
        }
    }

    /// The sixteen-byte field-value check agrees with the byte rule of RFC 9110 §5.5 for every
    /// byte value at every position of values from 0 to 48 bytes (gathered short values, whole
    /// steps, the overlapping last step), over fillers of each kind (visible, SP, HTAB, obs-text).
    @Test func fieldValueCheckMatchesTheByteRule() {
        func rule(_ byte: UInt8) -> Bool { (byte >= 0x20 || byte == 0x09) && byte != 0x7F }
        for length in [0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48] {
            for filler: UInt8 in [0x41, 0x20, 0x09, 0x80, 0xff, 0x7e, 0x21] {
                let plain = [UInt8](repeating: filler, count: length)
                #expect(plain.withUnsafeBufferPointer { ASCII.isFieldValue($0) })
                for position in 0..<length {
                    for byte in UInt8.min...UInt8.max {
                        var bytes = plain
                        bytes[position] = byte
                        let checked = bytes.withUnsafeBufferPointer { ASCII.isFieldValue($0) }
                        if checked != rule(byte) {
                            Issue.record("byte \(byte) at \(position) of \(length), filler \(filler): \(checked)")
                            return
                        }
                    }
                }
            }
        }
    }
}
