extension TOMLParser {
    // MARK: Strings

    mutating func parseBasicString() throws(TOMLError) -> String {
        index += 1  // "
        var out: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("unterminated string (missing '\"')") }
            switch byte {
            case .quote:
                index += 1
                return String(decoding: out, as: UTF8.self)
            case .newline, .carriageReturn:
                throw error("unterminated string (a \"...\" string cannot span lines; use \"\"\"...\"\"\")")
            case .backslash:
                try parseEscape(into: &out)
            default:
                try checkControl(byte)
                out.append(byte)
                index += 1
            }
        }
    }

    /// A multi-line string, opened by three `quote`s: basic (`"""`: escapes, and a line-ending
    /// backslash that trims the newline and the whitespace after it) or literal (`'''`: the
    /// text as written). Both turn CRLF into LF.
    mutating func parseMultilineString(_ quote: UInt8) throws(TOMLError) -> String {
        let startLine = line
        let basic = quote == .quote
        index += 3
        try trimLeadingNewline()
        var out: [UInt8] = []
        while true {
            guard let byte = peek() else {
                throw TOMLError(file: file, line: startLine, message: basic ? "unterminated multi-line string (missing '\"\"\"')"
                                : "unterminated multi-line literal string (missing \"'''\")")
            }
            if closeMultiline(quote, appendingTo: &out) { return String(decoding: out, as: UTF8.self) }
            switch byte {
            case .backslash where basic:
                var look = 1
                while let next = peek(look), next == .space || next == .tab { look += 1 }
                if let next = peek(look), next == .newline || (next == .carriageReturn && peek(look + 1) == .newline) {
                    index += look
                    while let next = peek(), next == .space || next == .tab || next == .newline || next == .carriageReturn {
                        if next == .space || next == .tab { index += 1 } else { try consumeNewline() }
                    }
                } else {
                    try parseEscape(into: &out)
                }
            case .newline, .carriageReturn:
                try consumeNewline()
                out.append(.newline)
            default:
                try checkControl(byte)
                out.append(byte)
                index += 1
            }
        }
    }

    /// At three `quote`s: consumes the closing delimiter and returns true. Up to two more quotes
    /// may directly precede it; they belong to the string.
    mutating func closeMultiline(_ quote: UInt8, appendingTo out: inout [UInt8]) -> Bool {
        guard peek() == quote, peek(1) == quote, peek(2) == quote else { return false }
        var extra = 0
        while extra < 2, peek(3 + extra) == quote { extra += 1 }
        out.append(contentsOf: repeatElement(quote, count: extra))
        index += 3 + extra
        return true
    }

    mutating func parseLiteralString() throws(TOMLError) -> String {
        index += 1  // '
        let start = index
        while true {
            guard let byte = peek() else { throw error("unterminated literal string (missing \"'\")") }
            if byte == .apostrophe { break }
            if byte == .newline || byte == .carriageReturn { throw error("unterminated literal string (a '...' string cannot span lines)") }
            try checkControl(byte)
            index += 1
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        index += 1
        return text
    }

    /// "A newline immediately following the opening delimiter will be trimmed."
    mutating func trimLeadingNewline() throws(TOMLError) {
        if peek() == .newline || (peek() == .carriageReturn && peek(1) == .newline) { try consumeNewline() }
    }

    /// TOML v1.0.0 "String": \b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX; anything else is an error.
    mutating func parseEscape(into out: inout [UInt8]) throws(TOMLError) {
        index += 1  // backslash
        guard let code = peek() else { throw error("unterminated string") }
        index += 1
        switch code {
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "e"): out.append(0x1B)  // TOML 1.1
        case .quote: out.append(.quote)
        case .backslash: out.append(.backslash)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = code == UInt8(ascii: "u") ? 4 : 8
            var scalar: UInt32 = 0
            for _ in 0..<count {
                guard let digit = peek(), digit.isHexDigit else { throw error("\\\(Character(Unicode.Scalar(code))) needs \(count) hexadecimal digits") }
                scalar = scalar << 4 | UInt32(digit.isDigit ? digit - 0x30 : (digit | 0x20) - 0x61 + 10)
                index += 1
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("\\\(Character(Unicode.Scalar(code))) escape is not a Unicode scalar value") }
            out.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw error("invalid escape sequence '\\\(Self.describe(code))'")
        }
    }

    func checkControl(_ byte: UInt8) throws(TOMLError) {
        if (byte < 0x20 && byte != .tab) || byte == 0x7F {
            throw error("control character U+\(String(byte, radix: 16, uppercase: true)) must be escaped")
        }
    }

    // MARK: Whitespace, comments, lines

    func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    mutating func skipSpaces() {
        while let byte = peek(), byte == .space || byte == .tab { index += 1 }
    }

    mutating func skipComment() {
        while let byte = peek(), byte != .newline, byte != .carriageReturn { index += 1 }
    }

    mutating func consumeNewline() throws(TOMLError) {
        if peek() == .carriageReturn {
            guard peek(1) == .newline else { throw error("a carriage return must be followed by a line feed") }
            index += 1
        }
        index += 1
        line += 1
    }

    mutating func skipSpacesCommentsAndNewlines() throws(TOMLError) {
        while let byte = peek() {
            switch byte {
            case .space, .tab: index += 1
            case .hash: skipComment()
            case .newline, .carriageReturn: try consumeNewline()
            default: return
            }
        }
    }

    mutating func expectEndOfLine(after what: String) throws(TOMLError) {
        skipSpaces()
        if peek() == .hash { skipComment() }
        guard let byte = peek() else { return }
        guard byte == .newline || byte == .carriageReturn else {
            throw error("expected a new line after \(what), found '\(Self.describe(byte))'")
        }
        try consumeNewline()
    }

    func error(_ message: String) -> TOMLError { TOMLError(file: file, line: line, message: message) }

    static func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? String(Character(Unicode.Scalar(byte))) : "\\u{\(String(byte, radix: 16))}"
    }
}
