import AuthPlatform
import GoFormats

extension JSON {
    /// Nesting limit for arrays and objects the parser builds, so hostile input cannot exhaust
    /// the stack: building, destroying and writing a value recurse once per level, and a debug
    /// build's frames overflow a 512 KiB worker stack at about 200 levels (release: ~1000).
    /// Real documents (claims, metadata, config) nest a handful of levels.
    public static let defaultMaximumDepth = 100

    /// How deep `goDecode` builds request bodies by default: below `defaultMaximumDepth`, so
    /// what a body stores (metadata, then the claims and hook payloads that wrap it a level or
    /// two deeper) always parses again.
    public static let requestBodyMaterializedDepth = 64

    /// Go's `maxNestingDepth` (encoding/json scanner.go): the deepest nesting `json.Unmarshal`
    /// accepts.
    public static let goMaximumDepth = 10_000

    /// Parses one JSON text (RFC 8259) strictly: a single value with only JSON whitespace
    /// around it; no comments, trailing commas, leading zeros, `+`, bare `.5`, `NaN`; numbers
    /// must fit a double (Go refuses `1e400` too).
    ///
    /// Where RFC 8259 leaves behaviour open this follows Go's `encoding/json`, which produced
    /// what the real server accepts: for duplicate object keys the last value wins; an
    /// unpaired UTF-16 surrogate in a `\u` escape decodes to U+FFFD; each byte of invalid
    /// UTF-8 inside a string decodes to U+FFFD.
    public init(parsing bytes: some Sequence<UInt8>, maximumDepth: Int = JSON.defaultMaximumDepth) throws(JSONError) {
        self = try JSONParser.run(Array(bytes), mode: .strict(maximumDepth: maximumDepth)).value
    }

    /// The common case without the generic copy: an unspecialized `Array(some Sequence)` walks
    /// the bytes one by one through witness tables.
    public init(parsing bytes: [UInt8], maximumDepth: Int = JSON.defaultMaximumDepth) throws(JSONError) {
        self = try JSONParser.run(bytes, mode: .strict(maximumDepth: maximumDepth)).value
    }

    public init(parsing text: String, maximumDepth: Int = JSON.defaultMaximumDepth) throws(JSONError) {
        try self.init(parsing: Array(text.utf8), maximumDepth: maximumDepth)
    }

    /// Reads a request body as Go's `json.Unmarshal` does before it fills a struct: the whole
    /// input is checked with Go's syntax rules and its nesting limit (`goMaximumDepth`), and a
    /// number too large for a float64 is not a syntax error (Go fails on it only when it
    /// decodes it into a field, and never for a field it skips). Such numbers are ±infinity
    /// in `value` and listed by top-level key in `overflowingNumbers`. Containers nested deeper
    /// than `materializedDepth` are checked but not built (`.null` in `value`), so a deep
    /// document cannot exhaust a worker's stack; their top-level keys are in `truncatedKeys`.
    public static func goDecode(_ bytes: some Sequence<UInt8>,
                                materializedDepth: Int = JSON.requestBodyMaterializedDepth) throws(JSONError) -> GoDecodedDocument {
        try JSONParser.run(Array(bytes), mode: .go(materializedDepth: materializedDepth))
    }

    public static func goDecode(_ bytes: [UInt8],
                                materializedDepth: Int = JSON.requestBodyMaterializedDepth) throws(JSONError) -> GoDecodedDocument {
        try JSONParser.run(bytes, mode: .go(materializedDepth: materializedDepth))
    }
}

struct JSONParser {
    struct Mode {
        var maximumDepth: Int
        var materializedDepth: Int
        var goDecode: Bool

        static func strict(maximumDepth: Int) -> Mode {
            Mode(maximumDepth: maximumDepth, materializedDepth: maximumDepth, goDecode: false)
        }

        static func go(materializedDepth: Int) -> Mode {
            Mode(maximumDepth: JSON.goMaximumDepth, materializedDepth: min(materializedDepth, JSON.goMaximumDepth),
                 goDecode: true)
        }
    }

    static func run(_ input: [UInt8], mode: Mode) throws(JSONError) -> GoDecodedDocument {
        let result: Result<GoDecodedDocument, JSONError> = input.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer, mode: mode)
            do throws(JSONError) {
                let value = try parser.parseDocument()
                return .success(GoDecodedDocument(value: value, overflowingNumbers: parser.overflowingNumbers,
                                                  truncatedKeys: parser.truncatedKeys))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    let materializedDepth: Int
    let goDecode: Bool
    var position = 0
    /// Where the top-level object key whose value is being read starts (Go mode only); an
    /// offset rather than the string keeps the common path free of reference counting.
    var topLevelKeyStart: Int?
    var overflowingNumbers: [String: String] = [:]
    var truncatedKeys: Set<String> = []

    init(bytes: UnsafeBufferPointer<UInt8>, mode: Mode) {
        self.bytes = bytes
        self.maximumDepth = mode.maximumDepth
        self.materializedDepth = mode.materializedDepth
        self.goDecode = mode.goDecode
    }

    // MARK: Errors, as Go's scanner words them

    /// `scanner.error`: "invalid character " + quoteChar(c) + " " + context, for the byte at
    /// `offset`. At the end of the input Go's `eof()` feeds the state a space, so a value cut
    /// off inside a number, literal or escape reports `' '`.
    func syntax(_ context: String, at offset: Int) -> JSONError {
        let character = offset < bytes.count ? JSONParser.quoteChar(bytes[offset]) : "' '"
        return JSONError(offset: offset, message: "invalid character \(character) \(context)")
    }

    func syntax(_ context: String) -> JSONError { syntax(context, at: position) }

    /// Where Go's `eof()` finds the value incomplete with no error from the trailing space.
    var unexpectedEnd: JSONError { JSONError(offset: bytes.count, message: "unexpected end of JSON input") }

    /// Go's `quoteChar`: the byte as a rune (U+0000 to U+00FF) between single quotes, which is
    /// `strconv.QuoteRune`: `'\x00'`, `'\n'`, `'\\'`, `'\''`, `'"'`, `'\u0085'`, `'é'`.
    static func quoteChar(_ byte: UInt8) -> String { GoStrconv.quoteRune(UInt32(byte)) }

    var atEnd: Bool { position >= bytes.count }

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
        guard atEnd else { throw syntax("after top-level value") }
        return value
    }

    private mutating func parseValue(depth: Int) throws(JSONError) -> JSON {
        guard !atEnd else { throw unexpectedEnd }
        switch bytes[position] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            if depth >= materializedDepth {
                // `pushParseState`: the bracket that goes past the limit is the error.
                guard depth < maximumDepth else { throw syntax("exceeded max depth") }
                try skipContainer(depth: depth + 1)
                if let key = topLevelKey() { truncatedKeys.insert(key) }
                return .null
            }
            return bytes[position] == UInt8(ascii: "{") ? try parseObject(depth: depth + 1) : try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw syntax("looking for beginning of value")
        }
    }

    /// `stateT`, `stateTr`, ...: the first byte that differs names the literal and the byte
    /// expected (`invalid character 'x' in literal true (expecting 'u')`).
    private mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        position += 1  // the first byte chose the literal
        for index in 1..<expected.count {
            guard !atEnd, bytes[position] == expected[index] else {
                let name = String(decoding: expected, as: UTF8.self)
                throw syntax("in literal \(name) (expecting '\(Character(Unicode.Scalar(expected[index])))')")
            }
            position += 1
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONError) -> JSON {
        position += 1  // {
        var object = JSONObject()
        skipWhitespace()
        if !atEnd, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(object)
        }
        // Room for a typical object (metadata, a request body) at once, instead of growing
        // 1 -> 2 -> 4 -> 8 members with a copy each time.
        object.reserveCapacity(8)
        while true {
            skipWhitespace()
            guard !atEnd else { throw unexpectedEnd }
            guard bytes[position] == UInt8(ascii: "\"") else {
                throw syntax("looking for beginning of object key string")
            }
            let keyStart = position
            let key = try parseString()
            skipWhitespace()
            guard !atEnd else { throw unexpectedEnd }
            guard bytes[position] == UInt8(ascii: ":") else { throw syntax("after object key") }
            position += 1
            skipWhitespace()
            if goDecode, depth == 1 { topLevelKeyStart = keyStart }
            object[key] = try parseValue(depth: depth)
            if try closes(UInt8(ascii: "}"), context: "after object key:value pair") { return .object(object) }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONError) -> JSON {
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
            if try closes(UInt8(ascii: "]"), context: "after array element") { return .array(elements) }
        }
    }

    /// After a member or element: steps over a comma (false, another follows) or the
    /// container's closing `bracket` (true); any other byte is the syntax error `context`.
    @inline(__always)
    private mutating func closes(_ bracket: UInt8, context: String) throws(JSONError) -> Bool {
        skipWhitespace()
        guard !atEnd else { throw unexpectedEnd }
        let byte = bytes[position]
        guard byte == UInt8(ascii: ",") || byte == bracket else { throw syntax(context) }
        position += 1
        return byte == bracket
    }

    /// Checks a container without building it, iteratively (it may nest up to Go's 10,000
    /// levels), with the same errors as the parse: what Go's scanner does for a value the
    /// decoder skips. `depth` is the nesting level of the container at `position`.
    private mutating func skipContainer(depth startDepth: Int) throws(JSONError) {
        enum Expect { case keyOrClose, key, valueOrClose, value, separatorOrClose }
        var inObject: [Bool] = [bytes[position] == UInt8(ascii: "{")]
        var expect: Expect = inObject[0] ? .keyOrClose : .valueOrClose
        position += 1
        while true {
            skipWhitespace()
            guard !atEnd else { throw unexpectedEnd }
            let byte = bytes[position]
            let closes = inObject.last! ? UInt8(ascii: "}") : UInt8(ascii: "]")
            if byte == closes, expect == .keyOrClose || expect == .valueOrClose || expect == .separatorOrClose {
                position += 1
                inObject.removeLast()
                if inObject.isEmpty { return }
                expect = .separatorOrClose
                continue
            }
            switch expect {
            case .keyOrClose, .key:
                guard byte == UInt8(ascii: "\"") else { throw syntax("looking for beginning of object key string") }
                try skipString()
                skipWhitespace()
                guard !atEnd else { throw unexpectedEnd }
                guard bytes[position] == UInt8(ascii: ":") else { throw syntax("after object key") }
                position += 1
                expect = .value
            case .valueOrClose, .value:
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard startDepth + inObject.count <= maximumDepth else { throw syntax("exceeded max depth") }
                    inObject.append(byte == UInt8(ascii: "{"))
                    expect = byte == UInt8(ascii: "{") ? .keyOrClose : .valueOrClose
                    position += 1
                    continue
                case UInt8(ascii: "\""): try skipString()
                case UInt8(ascii: "t"): try expectLiteral("true")
                case UInt8(ascii: "f"): try expectLiteral("false")
                case UInt8(ascii: "n"): try expectLiteral("null")
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try scanNumber()
                default: throw syntax("looking for beginning of value")
                }
                expect = .separatorOrClose
            case .separatorOrClose:
                guard byte == UInt8(ascii: ",") else {
                    throw syntax(inObject.last! ? "after object key:value pair" : "after array element")
                }
                position += 1
                expect = inObject.last! ? .key : .value
            }
        }
    }

    /// RFC 8259 section 6 grammar with Go's scanner errors; returns where the literal starts.
    private mutating func scanNumber() throws(JSONError) -> Int {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard !atEnd, isDigit(bytes[position]) else { throw syntax("in numeric literal") }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1  // a leading zero stands alone; a digit after it ends the value
        } else {
            while !atEnd, isDigit(bytes[position]) { position += 1 }
        }
        if !atEnd, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard !atEnd, isDigit(bytes[position]) else { throw syntax("after decimal point in numeric literal") }
            while !atEnd, isDigit(bytes[position]) { position += 1 }
        }
        if !atEnd, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if !atEnd, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard !atEnd, isDigit(bytes[position]) else { throw syntax("in exponent of numeric literal") }
            while !atEnd, isDigit(bytes[position]) { position += 1 }
        }
        return start
    }

    /// The grammar, then the correctly rounded double. A literal beyond a float64 is Go's
    /// `convertNumber` error when parsing strictly; when reading like `json.Unmarshal` it is
    /// kept as ±infinity and remembered, since Go reports it only if a field decodes it.
    private mutating func parseNumber() throws(JSONError) -> Double {
        let start = try scanNumber()
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text) else {
            throw JSONError(offset: start, message: "json: cannot unmarshal number \(text) into Go value of type float64")
        }
        if value.isFinite { return value }
        guard goDecode else {
            throw JSONError(offset: start, message: "json: cannot unmarshal number \(text) into Go value of type float64")
        }
        if let key = topLevelKey(), overflowingNumbers[key] == nil { overflowingNumbers[key] = text }
        return value
    }

    /// The top-level key being read, decoded again from its offset (rare: only on overflow
    /// or truncation).
    private func topLevelKey() -> String? {
        guard let start = topLevelKeyStart else { return nil }
        var probe = self
        probe.position = start
        return try? probe.parseString()
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    @inline(__always)
    func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }
}
