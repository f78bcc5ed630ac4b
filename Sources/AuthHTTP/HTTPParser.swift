/// Incremental HTTP/1.1 request parser (RFC 9112) over raw bytes.
///
/// Feed it the unconsumed bytes of a connection, from the start of the current message (or of
/// the chunk being decoded). It returns how many bytes it consumed and what happened. Bytes it
/// did not consume must be offered again, followed by whatever arrives next; the parser
/// remembers how far it already scanned, so a head arriving one byte at a time costs linear
/// time. It never reads past the end of one request, so pipelined requests stay in the buffer.
///
/// Strictness, chosen to leave no room for request smuggling: lines must end in CRLF (a bare LF
/// is rejected with 400; RFC 9112 §2.2 allows either choice), obs-fold and whitespace before a
/// field colon are rejected (RFC 9112 §5.1, §5.2), and so are Content-Length together with
/// Transfer-Encoding (RFC 9112 §6.1).
public struct HTTPParser: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Request line plus header section, including the final empty line.
        public var maxHeaderBytes: Int
        public var maxBodyBytes: Int

        public init(maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1 << 20) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }

    public enum Event: Sendable {
        /// Offer the unconsumed bytes again once more have arrived.
        case needMore
        /// The head asked for `Expect: 100-continue` and no body byte has arrived yet: the
        /// server should send `100 Continue` (RFC 9110 §10.1.1), then keep feeding the parser.
        case expectContinue
        /// A complete request; `keepAlive` tells whether the connection may carry another one
        /// (RFC 9112 §9.3).
        case request(HTTPRequest, keepAlive: Bool)
        /// The message is unacceptable; answer and close. The parser is unusable afterwards.
        case failure(HTTPProtocolFailure, HTTPHeaders?)
    }

    private enum State: Sendable {
        case head(scanned: Int, lineStart: Int)
        case fixedBody(remaining: Int)
        case chunkSize(scanned: Int)
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailer(scanned: Int)
        case failed
    }

    private enum Framing {
        case none
        case length(Int)
        case chunked
    }

    private struct Head: Sendable {
        var method: String
        var target: String
        var version: String
        var headers: HTTPHeaders
        var keepAlive: Bool
    }

    private enum HeadOutcome {
        case parsed(Head, Framing, expectContinue: Bool)
        case failed(HTTPProtocolFailure, HTTPHeaders?)
    }

    /// A chunk-size line with extensions longer than this is refused: extensions are ignored, so
    /// a long one only costs memory (RFC 9112 §7.1.1 lets servers limit them).
    static let maxChunkLineBytes = 4096

    public let limits: Limits
    private var state: State = .head(scanned: 0, lineStart: 0)
    private var head: Head? = nil
    private var body: [UInt8] = []
    private var trailerBytes = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// True between messages: no byte of a next request has been scanned yet.
    public var isBetweenMessages: Bool {
        if case .head(let scanned, _) = state { return scanned == 0 }
        return false
    }

    /// True once a head is complete and its body is still arriving.
    public var isReadingBody: Bool {
        switch state {
        case .fixedBody, .chunkSize, .chunkData, .chunkDataEnd, .trailer: true
        case .head, .failed: false
        }
    }

    public mutating func parse(_ bytes: [UInt8]) -> (consumed: Int, event: Event) {
        bytes.withUnsafeBufferPointer { parse($0) }
    }

    public mutating func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> (consumed: Int, event: Event) {
        let count = buffer.count
        var position = 0
        while true {
            switch state {
            case .failed:
                return (count, .needMore)

            case .head(let scanned, let relativeLineStart):
                var index = position + scanned
                var lineStart = position + relativeLineStart
                var headEnd = -1
                while index < count {
                    // Straight to the next LF: the only byte the head's framing turns on.
                    index = ASCII.firstLF(in: buffer, from: index)
                    guard index < count else { break }
                    if index == position || buffer[index - 1] != ASCII.cr {
                        return fail(.badRequest("bare LF line terminator"), nil, position)
                    }
                    if index - 1 == lineStart {
                        if lineStart == position {
                            // RFC 9112 §2.2: ignore empty lines received before the request-line.
                            position = index + 1
                            lineStart = position
                            index = position
                            continue
                        }
                        headEnd = index + 1
                        break
                    }
                    lineStart = index + 1
                    if index + 1 - position > limits.maxHeaderBytes {
                        return fail(.headersTooLarge, nil, position)
                    }
                    index += 1
                }
                if headEnd < 0 {
                    if index - position > limits.maxHeaderBytes {
                        return fail(.headersTooLarge, nil, position)
                    }
                    state = .head(scanned: index - position, lineStart: lineStart - position)
                    return (position, .needMore)
                }
                if headEnd - position > limits.maxHeaderBytes {
                    return fail(.headersTooLarge, nil, position)
                }
                let outcome = parseHead(UnsafeBufferPointer(rebasing: buffer[position..<headEnd]))
                position = headEnd
                switch outcome {
                case .failed(let failure, let headers):
                    return fail(failure, headers, position)
                case .parsed(let parsed, let framing, let expectContinue):
                    head = parsed
                    switch framing {
                    case .none:
                        return (position, finish())
                    case .length(let length):
                        if position + length <= count {
                            // Whole body already here: one copy, no incremental growth.
                            body = Array(UnsafeBufferPointer(rebasing: buffer[position..<(position + length)]))
                            return (position + length, finish())
                        }
                        body.reserveCapacity(length)
                        state = .fixedBody(remaining: length)
                    case .chunked:
                        state = .chunkSize(scanned: 0)
                    }
                    if expectContinue && position == count {
                        return (position, .expectContinue)
                    }
                }

            case .fixedBody(let remaining):
                let take = min(count - position, remaining)
                if take > 0 {
                    body.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[position..<(position + take)]))
                    position += take
                }
                if take == remaining { return (position, finish()) }
                state = .fixedBody(remaining: remaining - take)
                return (position, .needMore)

            case .chunkSize(let scanned):
                var index = position + scanned
                while index < count, buffer[index] != ASCII.lf { index += 1 }
                // Capped whether or not the line is complete, so how the bytes were split into
                // reads cannot decide whether a request is accepted.
                if index - position > Self.maxChunkLineBytes {
                    return fail(.badRequest("chunk size line too long"), head?.headers, position)
                }
                if index == count {
                    state = .chunkSize(scanned: index - position)
                    return (position, .needMore)
                }
                guard index > position, buffer[index - 1] == ASCII.cr else {
                    return fail(.badRequest("bare LF line terminator"), head?.headers, position)
                }
                let line = UnsafeBufferPointer(rebasing: buffer[position..<(index - 1)])
                guard let size = Self.chunkSize(line) else {
                    return fail(.badRequest("invalid chunk size"), head?.headers, position)
                }
                if size < 0 {
                    return fail(.badRequest("chunk size overflow"), head?.headers, position)
                }
                if size > limits.maxBodyBytes - body.count {
                    return fail(.bodyTooLarge(limit: limits.maxBodyBytes), head?.headers, position)
                }
                position = index + 1
                if size == 0 {
                    trailerBytes = 0
                    state = .trailer(scanned: 0)
                } else {
                    state = .chunkData(remaining: size)
                }

            case .chunkData(let remaining):
                let take = min(count - position, remaining)
                if take > 0 {
                    body.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[position..<(position + take)]))
                    position += take
                }
                if take < remaining {
                    state = .chunkData(remaining: remaining - take)
                    return (position, .needMore)
                }
                state = .chunkDataEnd

            case .chunkDataEnd:
                let available = count - position
                if available >= 1, buffer[position] != ASCII.cr {
                    return fail(.badRequest("missing CRLF after chunk data"), head?.headers, position)
                }
                if available < 2 { return (position, .needMore) }
                if buffer[position + 1] != ASCII.lf {
                    return fail(.badRequest("missing CRLF after chunk data"), head?.headers, position)
                }
                position += 2
                state = .chunkSize(scanned: 0)

            case .trailer(let scanned):
                // Trailer fields are read and discarded (RFC 9112 §7.1.2 lets a recipient ignore them).
                var index = position + scanned
                while index < count, buffer[index] != ASCII.lf { index += 1 }
                if index == count {
                    if trailerBytes + (index - position) > limits.maxHeaderBytes {
                        return fail(.headersTooLarge, head?.headers, position)
                    }
                    state = .trailer(scanned: index - position)
                    return (position, .needMore)
                }
                guard index > position, buffer[index - 1] == ASCII.cr else {
                    return fail(.badRequest("bare LF line terminator"), head?.headers, position)
                }
                let isEmptyLine = index - 1 == position
                trailerBytes += index + 1 - position
                if trailerBytes > limits.maxHeaderBytes {
                    return fail(.headersTooLarge, head?.headers, position)
                }
                position = index + 1
                if isEmptyLine { return (position, finish()) }
                state = .trailer(scanned: 0)
            }
        }
    }

    private mutating func fail(
        _ failure: HTTPProtocolFailure, _ headers: HTTPHeaders?, _ position: Int
    ) -> (consumed: Int, event: Event) {
        state = .failed
        head = nil
        body = []
        return (position, .failure(failure, headers))
    }

    private mutating func finish() -> Event {
        let done = head!
        let request = HTTPRequest(
            method: done.method, target: done.target, version: done.version,
            headers: done.headers, body: body
        )
        head = nil
        body = []
        state = .head(scanned: 0, lineStart: 0)
        return .request(request, keepAlive: done.keepAlive)
    }

    /// chunk-size [ BWS ";" chunk-ext ] (RFC 9112 §7.1, §7.1.1). Returns nil when malformed and
    /// -1 when the size does not fit an Int.
    private static func chunkSize(_ line: UnsafeBufferPointer<UInt8>) -> Int? {
        var size = 0
        var index = 0
        var overflow = false
        while index < line.count, let digit = ASCII.hexValue(line[index]) {
            if size > (Int.max - digit) >> 4 { overflow = true }
            if !overflow { size = size << 4 | digit }
            index += 1
        }
        guard index > 0 else { return nil }
        while index < line.count, line[index] == ASCII.space || line[index] == ASCII.tab { index += 1 }
        guard index == line.count || line[index] == UInt8(ascii: ";") else { return nil }
        return overflow ? -1 : size
    }

    // MARK: - head

    /// Parses a complete head: request line, fields, and the final empty line, all CRLF-terminated.
    private func parseHead(_ bytes: UnsafeBufferPointer<UInt8>) -> HeadOutcome {
        // Request line (RFC 9112 §3): method SP request-target SP HTTP-version.
        // Lines are split at LF (each is known to follow a CR), so a stray CR inside a line stays
        // in it and fails validation below (RFC 9112 §2.2).
        // The head was checked to end in CRLF CRLF: every search below finds its LF.
        let lineEnd = ASCII.firstLF(in: bytes, from: 0)
        let line = UnsafeBufferPointer(rebasing: bytes[0..<(lineEnd - 1)])
        guard let firstSpace = line.firstIndex(of: ASCII.space), firstSpace > 0 else {
            return .failed(.badRequest("malformed request line"), nil)
        }
        for byte in line[0..<firstSpace] where !ASCII.isTokenCharacter(byte) {
            return .failed(.badRequest("invalid method"), nil)
        }
        var secondSpace = firstSpace + 1
        while secondSpace < line.count, line[secondSpace] != ASCII.space { secondSpace += 1 }
        guard secondSpace < line.count, secondSpace > firstSpace + 1 else {
            return .failed(.badRequest("malformed request line"), nil)
        }
        let targetBytes = UnsafeBufferPointer(rebasing: line[(firstSpace + 1)..<secondSpace])
        // Visible characters only: no controls, no whitespace (RFC 9112 §3.2). Bytes above
        // 0x7F are tolerated as some clients send raw UTF-8 paths.
        for byte in targetBytes where byte <= 0x20 || byte == 0x7F {
            return .failed(.badRequest("invalid request-target"), nil)
        }
        let versionBytes = UnsafeBufferPointer(rebasing: line[(secondSpace + 1)...])
        // HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive (RFC 9112 §2.3).
        guard versionBytes.count == 8,
              versionBytes[0] == UInt8(ascii: "H"), versionBytes[1] == UInt8(ascii: "T"),
              versionBytes[2] == UInt8(ascii: "T"), versionBytes[3] == UInt8(ascii: "P"),
              versionBytes[4] == UInt8(ascii: "/"), versionBytes[6] == UInt8(ascii: "."),
              ASCII.isDigit(versionBytes[5]), ASCII.isDigit(versionBytes[7])
        else {
            return .failed(.badRequest("malformed HTTP version"), nil)
        }
        guard versionBytes[5] == UInt8(ascii: "1") else { return .failed(.unsupportedVersion, nil) }
        // A higher minor version is answered as the highest we implement (RFC 9110 §2.5).
        let isHTTP10 = versionBytes[7] == UInt8(ascii: "0")
        let method = String(decoding: UnsafeBufferPointer(rebasing: line[0..<firstSpace]), as: UTF8.self)
        let target = String(decoding: targetBytes, as: UTF8.self)
        let startsWithSlash = targetBytes[0] == UInt8(ascii: "/")
        if !startsWithSlash {
            // asterisk-form, absolute-form, or authority-form for CONNECT (RFC 9112 §3.2.1-4).
            let isAsterisk = targetBytes.count == 1 && targetBytes[0] == UInt8(ascii: "*")
            let isAbsolute = Self.containsSchemeSeparator(targetBytes)
            guard isAsterisk || isAbsolute || method == "CONNECT" else {
                return .failed(.badRequest("invalid request-target"), nil)
            }
        }

        // Field lines (RFC 9112 §5).
        var headers = HTTPHeaders()
        headers.fields.reserveCapacity(8)
        var hostCount = 0
        var contentLength: Int? = nil
        var sawTransferEncoding = false
        var chunkedCount = 0
        var chunkedIsLast = false
        var unsupportedCoding: String? = nil
        var wantsClose = false
        var wantsKeepAlive = false
        var expectsContinue = false

        var start = lineEnd + 1
        while start < bytes.count {
            let end = ASCII.firstLF(in: bytes, from: start)
            if end == start + 1 { break }  // the empty line ending the head
            let field = UnsafeBufferPointer(rebasing: bytes[start..<(end - 1)])
            start = end + 1
            if field[0] == ASCII.space || field[0] == ASCII.tab {
                return .failed(.badRequest("obsolete line folding"), headers)
            }
            guard let colon = field.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
                return .failed(.badRequest("header field without a colon"), headers)
            }
            if field[colon - 1] == ASCII.space || field[colon - 1] == ASCII.tab {
                // RFC 9112 §5.1: MUST reject with 400.
                return .failed(.badRequest("whitespace before a header field colon"), headers)
            }
            for byte in field[0..<colon] where !ASCII.isTokenCharacter(byte) {
                return .failed(.badRequest("invalid header field name"), headers)
            }
            var valueStart = colon + 1
            var valueEnd = field.count
            while valueStart < valueEnd, field[valueStart] == ASCII.space || field[valueStart] == ASCII.tab { valueStart += 1 }
            while valueEnd > valueStart, field[valueEnd - 1] == ASCII.space || field[valueEnd - 1] == ASCII.tab { valueEnd -= 1 }
            let nameBytes = UnsafeBufferPointer(rebasing: field[0..<colon])
            let valueBytes = UnsafeBufferPointer(rebasing: field[valueStart..<valueEnd])
            // field-value: visible characters, SP, HTAB, obs-text; never NUL, CR or LF (RFC 9110 §5.5).
            guard ASCII.isFieldValue(valueBytes) else {
                return .failed(.badRequest("invalid header field value"), headers)
            }
            headers.fields.append(HTTPHeaders.Field(
                name: String(decoding: nameBytes, as: UTF8.self),
                value: String(decoding: valueBytes, as: UTF8.self)
            ))

            switch nameBytes.count {
            case 4 where ASCII.equalsIgnoringCase(nameBytes, lowercase: "host"):
                hostCount += 1
            case 6 where ASCII.equalsIgnoringCase(nameBytes, lowercase: "expect"):
                if ASCII.equalsIgnoringCase(valueBytes, lowercase: "100-continue") { expectsContinue = true }
            case 10 where ASCII.equalsIgnoringCase(nameBytes, lowercase: "connection"):
                HeaderTokens.forEach(valueBytes) { token in
                    if ASCII.equalsIgnoringCase(token, lowercase: "close") { wantsClose = true }
                    if ASCII.equalsIgnoringCase(token, lowercase: "keep-alive") { wantsKeepAlive = true }
                }
            case 14 where ASCII.equalsIgnoringCase(nameBytes, lowercase: "content-length"):
                // A list of identical values is one value (RFC 9110 §8.6); anything else is an
                // unrecoverable framing error (RFC 9112 §6.3).
                var elements = 0
                var invalid = false
                HeaderTokens.forEach(valueBytes) { element in
                    elements += 1
                    guard let value = Self.decimal(element) else { invalid = true; return }
                    if let previous = contentLength, previous != value { invalid = true }
                    contentLength = value
                }
                if invalid || elements == 0 {
                    return .failed(.badRequest("invalid Content-Length"), headers)
                }
            case 17 where ASCII.equalsIgnoringCase(nameBytes, lowercase: "transfer-encoding"):
                sawTransferEncoding = true
                HeaderTokens.forEach(valueBytes) { element in
                    var nameEnd = 0
                    while nameEnd < element.count, element[nameEnd] != UInt8(ascii: ";"),
                          element[nameEnd] != ASCII.space, element[nameEnd] != ASCII.tab { nameEnd += 1 }
                    let coding = UnsafeBufferPointer(rebasing: element[0..<nameEnd])
                    if ASCII.equalsIgnoringCase(coding, lowercase: "chunked") {
                        chunkedCount += 1
                        chunkedIsLast = true
                    } else {
                        chunkedIsLast = false
                        if unsupportedCoding == nil { unsupportedCoding = String(decoding: coding, as: UTF8.self) }
                    }
                }
            default:
                break
            }
        }

        // RFC 9112 §3.2: exactly one Host in HTTP/1.1; never more than one.
        if hostCount > 1 { return .failed(.badRequest("multiple Host header fields"), headers) }
        if hostCount == 0 && !isHTTP10 { return .failed(.badRequest("missing Host header field"), headers) }

        let framing: Framing
        if sawTransferEncoding {
            if contentLength != nil {
                // RFC 9112 §6.1: a server MAY reject both together; doing so closes the
                // classic request-smuggling gap between intermediaries.
                return .failed(.badRequest("both Content-Length and Transfer-Encoding"), headers)
            }
            if isHTTP10 {
                // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
                return .failed(.badRequest("Transfer-Encoding in an HTTP/1.0 request"), headers)
            }
            if let unsupportedCoding {
                return .failed(.notImplemented("transfer-coding \(unsupportedCoding)"), headers)
            }
            // RFC 9112 §6.3 (4): chunked must be the final coding, and applied once (§7).
            guard chunkedIsLast, chunkedCount == 1 else {
                return .failed(.badRequest("chunked must be the final transfer coding, applied once"), headers)
            }
            framing = .chunked
        } else if let contentLength {
            if contentLength > limits.maxBodyBytes {
                return .failed(.bodyTooLarge(limit: limits.maxBodyBytes), headers)
            }
            framing = contentLength > 0 ? .length(contentLength) : .none
        } else {
            // A request without either has no body (RFC 9112 §6.3 (7)).
            framing = .none
        }

        let keepAlive = wantsClose ? false : (isHTTP10 ? wantsKeepAlive : true)
        var expectContinue = false
        if case .none = framing {} else if expectsContinue && !isHTTP10 {
            // Never a 100 to an HTTP/1.0 client (RFC 9110 §10.1.1).
            expectContinue = true
        }
        let head = Head(
            method: method, target: target, version: isHTTP10 ? "HTTP/1.0" : "HTTP/1.1",
            headers: headers, keepAlive: keepAlive
        )
        return .parsed(head, framing, expectContinue: expectContinue)
    }

    /// 1*DIGIT with at most 18 digits, so the value always fits an Int.
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard ASCII.isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func containsSchemeSeparator(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 4 else { return false }
        for index in 1..<(bytes.count - 2)
        where bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/") && bytes[index + 2] == UInt8(ascii: "/") {
            return true
        }
        return false
    }
}

extension ASCII {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09

    static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }
}
