extension TOMLParser {
    // MARK: Values

    mutating func parseValue() throws(TOMLError) -> TOMLValue {
        guard let byte = peek() else { throw error("expected a value") }
        switch byte {
        case .quote:
            if peek(1) == .quote && peek(2) == .quote { return .string(try parseMultilineString(.quote)) }
            return .string(try parseBasicString())
        case .apostrophe:
            if peek(1) == .apostrophe && peek(2) == .apostrophe { return .string(try parseMultilineString(.apostrophe)) }
            return .string(try parseLiteralString())
        case .openBracket:
            return try parseArray()
        case .openBrace:
            return try parseInlineTable()
        case .newline, .carriageReturn, .hash:
            throw error("expected a value")
        default:
            return try parseScalar()
        }
    }

    mutating func parseArray() throws(TOMLError) -> TOMLValue {
        let startLine = line
        try nest(1)
        defer { depth -= 1 }
        index += 1  // [
        var elements: [TOMLValue] = []
        while true {
            try skipSpacesCommentsAndNewlines()
            guard let byte = peek() else { throw TOMLError(file: file, line: startLine, message: "unterminated array (missing ']')") }
            if byte == .closeBracket {
                index += 1
                return .array(elements)
            }
            elements.append(try parseValue())
            try skipSpacesCommentsAndNewlines()
            switch peek() {
            case .comma: index += 1
            case .closeBracket:
                index += 1
                return .array(elements)
            case nil: throw TOMLError(file: file, line: startLine, message: "unterminated array (missing ']')")
            default: throw error("expected ',' or ']' in the array")
            }
        }
    }

    mutating func parseInlineTable() throws(TOMLError) -> TOMLValue {
        let startLine = line
        try nest(1)
        defer { depth -= 1 }
        index += 1  // {
        var table = TOMLTable(origin: .inline)
        while true {
            try skipSpacesCommentsAndNewlines()
            guard let byte = peek() else { throw TOMLError(file: file, line: startLine, message: "unterminated inline table (missing '}')") }
            if byte == .closeBrace {
                index += 1
                return .table(table.closed())
            }
            let (path, keyLine) = try parseKeyAndEquals()
            try nest(path.count)
            let value = try parseValue()
            depth -= path.count
            try Self.insert(value, at: path[...], line: keyLine, into: &table, file: file)
            try skipSpacesCommentsAndNewlines()
            switch peek() {
            case .comma: index += 1
            case .closeBrace:
                index += 1
                return .table(table.closed())
            case nil: throw TOMLError(file: file, line: startLine, message: "unterminated inline table (missing '}')")
            default: throw error("expected ',' or '}' in the inline table")
            }
        }
    }

    /// Booleans, numbers and dates: an unquoted run of scalar bytes.
    mutating func parseScalar() throws(TOMLError) -> TOMLValue {
        let start = index
        while let byte = peek(), byte.isScalarByte { index += 1 }
        // A local date followed by a space and a time is one date-time (TOML v1.0.0 "Offset
        // Date-Time": "you may replace the T delimiter ... with a space").
        if index - start == 10, bytes[start + 4] == UInt8(ascii: "-"), peek() == .space,
           let a = peek(1), let b = peek(2), a.isDigit, b.isDigit, peek(3) == UInt8(ascii: ":") {
            index += 1
            while let byte = peek(), byte.isScalarByte { index += 1 }
        }
        guard index > start else {
            throw error("expected a value, found '\(Self.describe(bytes[start]))' (strings need quotes)")
        }
        let token = String(decoding: bytes[start..<index], as: UTF8.self)
        switch token {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        let scalar = Array(bytes[start..<index])
        if Self.looksLikeDateTime(scalar) { return .datetime(token) }
        if let integer = try integerValue(scalar, token: token) { return .integer(integer) }
        if let float = Self.floatValue(scalar) { return .float(float) }
        throw error("'\(token)' is not a valid value (strings need quotes)")
    }

    static func looksLikeDateTime(_ s: [UInt8]) -> Bool {
        // 1979-05-27..., or 07:32:00...
        if s.count >= 10, s[0...3].allSatisfy(\.isDigit), s[4] == UInt8(ascii: "-") { return true }
        if s.count >= 8, s[0].isDigit, s[1].isDigit, s[2] == UInt8(ascii: ":") { return true }
        return false
    }

    /// Digits with single underscores between them (TOML v1.0.0 "Integer").
    static func validDigits(_ s: ArraySlice<UInt8>, _ isDigit: (UInt8) -> Bool) -> Bool {
        guard let first = s.first, let last = s.last, isDigit(first), isDigit(last) else { return false }
        var previousUnderscore = false
        for byte in s {
            if byte == .underscore {
                if previousUnderscore { return false }
                previousUnderscore = true
            } else {
                guard isDigit(byte) else { return false }
                previousUnderscore = false
            }
        }
        return true
    }

    func integerValue(_ s: [UInt8], token: String) throws(TOMLError) -> Int64? {
        var body = s[...]
        var negative = false
        var radix: Int64 = 10
        if s.count > 2, s[0] == UInt8(ascii: "0"), [UInt8(ascii: "x"), UInt8(ascii: "o"), UInt8(ascii: "b")].contains(s[1]) {
            radix = s[1] == UInt8(ascii: "x") ? 16 : s[1] == UInt8(ascii: "o") ? 8 : 2
            body = s[2...]
            let valid: (UInt8) -> Bool = switch radix {
            case 16: { $0.isHexDigit }
            case 8: { $0 >= 0x30 && $0 <= 0x37 }
            default: { $0 == 0x30 || $0 == 0x31 }
            }
            guard Self.validDigits(body, valid) else { throw error("'\(token)' is not a valid integer") }
        } else {
            if let sign = body.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                negative = sign == UInt8(ascii: "-")
                body = body.dropFirst()
            }
            guard Self.validDigits(body, \.isDigit) else { return nil }
            // Leading zeros are not allowed (TOML v1.0.0 "Integer").
            if body.count > 1, body.first == UInt8(ascii: "0") { throw error("'\(token)' is not a valid integer (leading zero)") }
        }
        var value: Int64 = 0
        for byte in body where byte != .underscore {
            let digit: Int64 = byte.isDigit ? Int64(byte - 0x30) : Int64((byte | 0x20) - 0x61 + 10)
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: radix)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { throw error("the integer '\(token)' is out of range") }
            value = next
        }
        return value
    }

    static func floatValue(_ s: [UInt8]) -> Double? {
        // [+-] int-part ( . digits )? ( [eE] [+-] digits )?, with the TOML underscore rule.
        var body = s[...]
        if let sign = body.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { body = body.dropFirst() }
        let exponentIndex = body.firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        let mantissa = exponentIndex.map { body[..<$0] } ?? body
        let dotIndex = mantissa.firstIndex(of: .dot)
        let integerPart = dotIndex.map { mantissa[..<$0] } ?? mantissa
        guard validDigits(integerPart, \.isDigit) else { return nil }
        if integerPart.count > 1, integerPart.first == UInt8(ascii: "0") { return nil }
        if let dotIndex { guard validDigits(mantissa[(dotIndex + 1)...], \.isDigit) else { return nil } }
        if let exponentIndex {
            var exponent = body[(exponentIndex + 1)...]
            if let sign = exponent.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { exponent = exponent.dropFirst() }
            guard validDigits(exponent, \.isDigit) else { return nil }
        }
        guard dotIndex != nil || exponentIndex != nil else { return nil }
        return Double(String(decoding: s.filter { $0 != .underscore }, as: UTF8.self))
    }
}
