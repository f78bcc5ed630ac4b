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

    // Framing, Head and HeadOutcome are internal, not private, only so that the head's grammar
    // in HTTPParser+Head.swift can build them; nothing else uses them.
    enum Framing {
        case none
        case length(Int)
        case chunked
    }

    struct Head: Sendable {
        var method: String
        var target: String
        var version: String
        var headers: HTTPHeaders
        var keepAlive: Bool
    }

    enum HeadOutcome {
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
