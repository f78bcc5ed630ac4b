/// Why a document was rejected, and where (byte offset into the UTF-8 input).
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int
    public let message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(message) at offset \(offset)" }
}

extension JSON {
    /// Nesting limit for arrays and objects, so hostile input cannot exhaust the stack.
    public static let defaultMaximumDepth = 512

    /// Parses one JSON text (RFC 8259) strictly: a single value with only JSON whitespace
    /// around it; no comments, trailing commas, leading zeros, `+`, bare `.5`, `NaN`; numbers
    /// must fit a double (Go refuses `1e400` too).
    ///
    /// Where RFC 8259 leaves behaviour open this follows Go's `encoding/json`, which produced
    /// what the real server accepts: for duplicate object keys the last value wins; an
    /// unpaired UTF-16 surrogate in a `\u` escape decodes to U+FFFD; each byte of invalid
    /// UTF-8 inside a string decodes to U+FFFD.
    public init(parsing bytes: some Sequence<UInt8>, maximumDepth: Int = JSON.defaultMaximumDepth) throws(JSONError) {
        let input = Array(bytes)
        let result: Result<JSON, JSONError> = input.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer, maximumDepth: maximumDepth)
            do throws(JSONError) {
                return .success(try parser.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    public init(parsing text: String, maximumDepth: Int = JSON.defaultMaximumDepth) throws(JSONError) {
        try self.init(parsing: text.utf8, maximumDepth: maximumDepth)
    }
}

struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private func fail(_ message: String, at offset: Int? = nil) -> JSONError {
        JSONError(offset: offset ?? position, message: message)
    }

    private var atEnd: Bool { position >= bytes.count }

    /// RFC 8259 section 2: only space, tab, LF and CR.
    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0a, 0x0d: position += 1
            default: return
            }
        }
    }

    mutating func parseDocument() throws(JSONError) -> JSON {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard atEnd else { throw fail("invalid character after top-level value") }
        return value
    }

    private mutating func parseValue(depth: Int) throws(JSONError) -> JSON {
        guard !atEnd else { throw fail("unexpected end of JSON input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw fail("invalid character looking for beginning of value")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for byte in expected {
            guard !atEnd else { throw fail("unexpected end of JSON input") }
            guard bytes[position] == byte else { throw fail("invalid character in literal") }
            position += 1
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONError) -> JSON {
        guard depth <= maximumDepth else { throw fail("exceeded maximum nesting depth") }
        position += 1  // {
        var object = JSONObject()
        skipWhitespace()
        if !atEnd, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard !atEnd else { throw fail("unexpected end of JSON input") }
            guard bytes[position] == UInt8(ascii: "\"") else {
                throw fail("invalid character looking for beginning of object key string")
            }
            let key = try parseString()
            skipWhitespace()
            guard !atEnd else { throw fail("unexpected end of JSON input") }
            guard bytes[position] == UInt8(ascii: ":") else { throw fail("invalid character after object key") }
            position += 1
            skipWhitespace()
            object[key] = try parseValue(depth: depth)
            skipWhitespace()
            guard !atEnd else { throw fail("unexpected end of JSON input") }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(object)
            default: throw fail("invalid character after object key:value pair")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONError) -> JSON {
        guard depth <= maximumDepth else { throw fail("exceeded maximum nesting depth") }
        position += 1  // [
        var elements: [JSON] = []
        skipWhitespace()
        if !atEnd, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard !atEnd else { throw fail("unexpected end of JSON input") }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(elements)
            default: throw fail("invalid character after array element")
            }
        }
    }

    /// RFC 8259 section 6 grammar, then the correctly rounded double.
    private mutating func parseNumber() throws(JSONError) -> Double {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard !atEnd, isDigit(bytes[position]) else { throw fail("invalid character in numeric literal") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1  // a leading zero stands alone; a digit after it ends the value
        } else {
            while !atEnd, isDigit(bytes[position]) { position += 1 }
        }
        if !atEnd, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard !atEnd, isDigit(bytes[position]) else { throw fail("invalid character after decimal point in numeric literal") }
            while !atEnd, isDigit(bytes[position]) { position += 1 }
        }
        if !atEnd, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if !atEnd, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard !atEnd, isDigit(bytes[position]) else { throw fail("invalid character in exponent of numeric literal") }
            while !atEnd, isDigit(bytes[position]) { position += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw fail("number out of range", at: start) }
        return value
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws(JSONError) -> String {
        position += 1  // opening quote
        var out: [UInt8] = []
        var runStart = position
        while true {
            guard !atEnd else { throw fail("unexpected end of JSON input") }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                if out.isEmpty {
                    // Common case: no escapes and no repairs; still validated below.
                    let raw = UnsafeBufferPointer(rebasing: bytes[runStart..<position])
                    position += 1
                    return String(validating: raw, as: UTF8.self) ?? repairUTF8(Array(raw))
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                position += 1
                return String(validating: out, as: UTF8.self) ?? repairUTF8(out)
            }
            if byte < 0x20 { throw fail("invalid character in string literal") }
            if byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
            position += 1
            guard !atEnd else { throw fail("unexpected end of JSON input") }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xd800...0xdfff).contains(scalar) {
                    // A high surrogate followed by an escaped low one is a pair; anything else
                    // is U+FFFD, and a following escape is decoded on its own (Go's behaviour).
                    if scalar <= 0xdbff, position + 6 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                       bytes[position + 1] == UInt8(ascii: "u"),
                       let low = peekHex4(at: position + 2), (0xdc00...0xdfff).contains(low)
                    {
                        scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
                        position += 6
                    } else {
                        scalar = 0xfffd
                    }
                }
                appendUTF8(Unicode.Scalar(scalar)!, to: &out)
            default:
                throw fail("invalid character in string escape code", at: position - 1)
            }
            runStart = position
        }
    }

    private mutating func hex4() throws(JSONError) -> UInt32 {
        guard let value = peekHex4(at: position) else {
            throw fail("invalid character in \\u hexadecimal character escape")
        }
        position += 4
        return value
    }

    private func peekHex4(at offset: Int) -> UInt32? {
        guard offset + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for i in offset..<(offset + 4) {
            let c = bytes[i]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private func appendUTF8(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        for unit in UTF8.encode(scalar)! { out.append(unit) }
    }

    /// Replaces each byte that does not start a well-formed UTF-8 sequence with U+FFFD,
    /// one replacement per byte as Go's `utf8.DecodeRune` does (Swift's own repair would
    /// merge a truncated sequence into a single U+FFFD).
    private func repairUTF8(_ input: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(input.count + 8)
        var i = 0
        while i < input.count {
            let length = wellFormedLength(input, i)
            if length == 0 {
                out.append(contentsOf: [0xef, 0xbf, 0xbd])
                i += 1
            } else {
                out.append(contentsOf: input[i..<(i + length)])
                i += length
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Length of the well-formed sequence at `i` (Unicode Table 3-7), or 0.
    private func wellFormedLength(_ s: [UInt8], _ i: Int) -> Int {
        let b0 = s[i]
        if b0 < 0x80 { return 1 }
        func cont(_ j: Int, _ range: ClosedRange<UInt8> = 0x80...0xbf) -> Bool {
            j < s.count && range.contains(s[j])
        }
        switch b0 {
        case 0xc2...0xdf: return cont(i + 1) ? 2 : 0
        case 0xe0: return cont(i + 1, 0xa0...0xbf) && cont(i + 2) ? 3 : 0
        case 0xe1...0xec, 0xee...0xef: return cont(i + 1) && cont(i + 2) ? 3 : 0
        case 0xed: return cont(i + 1, 0x80...0x9f) && cont(i + 2) ? 3 : 0
        case 0xf0: return cont(i + 1, 0x90...0xbf) && cont(i + 2) && cont(i + 3) ? 4 : 0
        case 0xf1...0xf3: return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0
        case 0xf4: return cont(i + 1, 0x80...0x8f) && cont(i + 2) && cont(i + 3) ? 4 : 0
        default: return 0
        }
    }
}
