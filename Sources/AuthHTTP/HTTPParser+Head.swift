// The head's grammar (RFC 9112 §3, §5): request line, fields, and what they say about framing
// and the connection. The parser's state machine (HTTPParser.swift) calls it once a whole head
// has arrived.
extension HTTPParser {
    /// Parses a complete head: request line, fields, and the final empty line, all CRLF-terminated.
    func parseHead(_ bytes: UnsafeBufferPointer<UInt8>) -> HeadOutcome {
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
