/// A small TOML reader (TOML v1.0.0, https://toml.io/en/v1.0.0), enough for the Supabase CLI's
/// `supabase/config.toml`: tables and arrays of tables, bare/quoted/dotted keys, basic and literal
/// strings (single- and multi-line), integers (decimal, hex, octal, binary, `_` separators),
/// floats, booleans, arrays, inline tables and comments. Dates and times are kept as written
/// (no configuration key the emulator reads is one). Two TOML 1.1 relaxations are accepted:
/// newlines and a trailing comma inside inline tables.
///
/// Errors carry the line number (`config.toml:12: expected '=' after the key`), because the
/// person reading them fixes the file in an editor.
/// `package`: AuthEmulator reads `config.toml` through it, and the fuzz target (Tests/Fuzz/TOML)
/// reads documents through it too.
package enum TOML {
    package static func parse(_ text: String, file: String = "config.toml") throws(TOMLError) -> TOMLTable {
        try parse(Array(text.utf8), file: file)
    }

    package static func parse(_ bytes: [UInt8], file: String = "config.toml") throws(TOMLError) -> TOMLTable {
        // TOML documents must be valid UTF-8 (spec: "A TOML file must be a valid UTF-8 encoded
        // Unicode document").
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw TOMLError(file: file, line: 1, message: "the file is not valid UTF-8")
        }
        var parser = TOMLParser(bytes: bytes, file: file)
        return try parser.parseDocument()
    }
}

package struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    package let file: String
    package let line: Int
    package let message: String
    package var description: String { "\(file):\(line): \(message)" }
}

package indirect enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    /// An offset/local date-time, date or time, as written.
    case datetime(String)
    case array([TOMLValue])
    case table(TOMLTable)

    /// What the value is, for error messages ("expected a boolean, found a string").
    package var kindName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .boolean: "a boolean"
        case .datetime: "a date-time"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

/// A TOML table: keys in the order they were written, each with the line that defined it.
package struct TOMLTable: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var value: TOMLValue
        var line: Int
        /// Created by `[[name]]`: more tables may be appended to it by later headers.
        var isArrayOfTables = false
    }

    /// How a table came to exist; decides which later definitions are duplicates (TOML v1.0.0
    /// "Table" section: a table may be defined once, by a header, by dotted keys, or inline).
    enum Origin: Sendable, Equatable {
        /// Only mentioned as a prefix of a header (`[a.b]` creates `a`); may still get a header.
        case implicit
        /// Defined by a `[header]`.
        case header
        /// Created by a dotted key (`a.b = 1` creates `a`); later dotted keys may extend it.
        case dotted
        /// An inline table `{ ... }`: complete and closed to additions.
        case inline
    }

    package private(set) var keys: [String] = []
    private var entries: [String: Entry] = [:]
    var origin: Origin = .implicit

    init(origin: Origin = .implicit) { self.origin = origin }

    package subscript(key: String) -> TOMLValue? { entries[key]?.value }

    /// The line where `key` was defined in this table.
    package func line(of key: String) -> Int? { entries[key]?.line }

    package var isEmpty: Bool { keys.isEmpty }

    fileprivate func entry(_ key: String) -> Entry? { entries[key] }

    fileprivate mutating func set(_ key: String, _ entry: Entry) {
        if entries.updateValue(entry, forKey: key) == nil { keys.append(key) }
    }

    fileprivate mutating func modifyEntry<R>(_ key: String, _ body: (inout Entry) throws(TOMLError) -> R) throws(TOMLError) -> R {
        var entry = entries.removeValue(forKey: key)!
        defer { entries[key] = entry }
        return try body(&entry)
    }

    /// This inline table, and the tables its dotted keys created, marked complete.
    func closed() -> TOMLTable {
        var result = TOMLTable(origin: .inline)
        for key in keys {
            guard var entry = self.entry(key) else { continue }
            if case .table(let sub) = entry.value { entry.value = .table(sub.closed()) }
            result.set(key, entry)
        }
        return result
    }

    package static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool {
        // Equality is structural (values by key), independent of lines and origins.
        guard lhs.keys.count == rhs.keys.count else { return false }
        for key in lhs.keys where lhs[key] != rhs[key] { return false }
        return true
    }
}

extension UInt8 {
    static let quote = UInt8(ascii: "\""), apostrophe = UInt8(ascii: "'"), backslash = UInt8(ascii: "\\")
    static let hash = UInt8(ascii: "#"), equals = UInt8(ascii: "="), dot = UInt8(ascii: "."), comma = UInt8(ascii: ",")
    static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    static let newline = UInt8(ascii: "\n"), carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), underscore = UInt8(ascii: "_")

    var isDigit: Bool { self >= 0x30 && self <= 0x39 }
    var isHexDigit: Bool { isDigit || (self >= 0x41 && self <= 0x46) || (self >= 0x61 && self <= 0x66) }
    var isLetter: Bool { (self >= 0x41 && self <= 0x5A) || (self >= 0x61 && self <= 0x7A) }
    /// TOML v1.0.0 "Keys": bare keys are `A-Za-z0-9_-`.
    var isBareKeyByte: Bool { isLetter || isDigit || self == .underscore || self == UInt8(ascii: "-") }
    /// Bytes that may appear in an unquoted scalar (numbers, booleans, dates and times).
    var isScalarByte: Bool {
        isLetter || isDigit || self == .underscore || self == UInt8(ascii: "-") || self == UInt8(ascii: "+")
            || self == .dot || self == UInt8(ascii: ":")
    }
}

struct TOMLParser {
    let bytes: [UInt8]
    let file: String
    var index = 0
    var line = 1
    /// How deep the value being read sits: the parts of the table header and key above it, plus
    /// one per array or inline table it is inside (and the parts of the keys inside those).
    var depth = 0

    /// The deepest a value may sit, counted as `depth` is. Reading nests a call per array or
    /// inline table, and inserting one per key part; unoptimized (Package.swift) a level costs
    /// about 2.5 KiB of stack, and the reader runs on a 512 KiB HTTP worker for a
    /// `config_toml` sent to the control API, so 200 nested arrays or a 1,000-part dotted key
    /// crashed it. At 64 the deepest document allowed takes well under half a worker's stack;
    /// the Supabase CLI's config.toml nests 4 levels. (TOML sets no limit, and the CLI's Go
    /// reader has a growing stack instead.)
    static let maxDepth = 64

    /// Fails when `levels` (the key parts or the container just entered) take `depth` past
    /// `maxDepth`.
    mutating func nest(_ levels: Int) throws(TOMLError) {
        depth += levels
        if depth > Self.maxDepth {
            throw error("nesting too deep: more than \(Self.maxDepth) levels of tables, dotted key parts, arrays and inline tables")
        }
    }

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
    }

    // MARK: Document

    mutating func parseDocument() throws(TOMLError) -> TOMLTable {
        var root = TOMLTable(origin: .header)
        var current: [String] = []  // the table the following key/values go into
        while true {
            skipSpaces()
            guard let byte = peek() else { break }
            switch byte {
            case .hash:
                skipComment()
            case .newline, .carriageReturn:
                try consumeNewline()
            case .openBracket:
                current = try parseHeader(into: &root)
                depth = 0
                try expectEndOfLine(after: "the table header")
            default:
                let (path, keyLine) = try parseKeyAndEquals()
                depth = 0
                try nest(current.count + path.count)
                let value = try parseValue()
                depth = 0
                try insert(value, at: path, line: keyLine, under: current, in: &root)
                try expectEndOfLine(after: "the value of '\(path.joined(separator: "."))'")
            }
        }
        return root
    }

    /// `[a.b]` or `[[a.b]]`; returns the path that later key/values are relative to.
    mutating func parseHeader(into root: inout TOMLTable) throws(TOMLError) -> [String] {
        let headerLine = line
        index += 1  // [
        let isArray = peek() == .openBracket
        if isArray { index += 1 }
        skipSpaces()
        let path = try parseKey()
        depth = 0
        try nest(path.count)
        skipSpaces()
        guard peek() == .closeBracket else { throw error("expected ']' to close the table header") }
        index += 1
        if isArray {
            guard peek() == .closeBracket else { throw error("expected ']]' to close the array-of-tables header") }
            index += 1
        }
        let name = path.joined(separator: ".")
        let parentPath = Array(path.dropLast())
        let last = path[path.count - 1]
        try Self.descend(&root, through: parentPath[...], creating: .implicit, file: file, line: headerLine, mode: .header) { (table: inout TOMLTable) throws(TOMLError) in
            if let existing = table.entry(last) {
                if isArray {
                    guard existing.isArrayOfTables, case .array(var tables) = existing.value else {
                        throw TOMLError(file: file, line: headerLine, message: "[[\(name)]] conflicts with '\(name)' defined on line \(existing.line)")
                    }
                    tables.append(.table(TOMLTable(origin: .header)))
                    table.set(last, TOMLTable.Entry(value: .array(tables), line: existing.line, isArrayOfTables: true))
                    return
                }
                guard case .table(var sub) = existing.value, !existing.isArrayOfTables else {
                    throw TOMLError(file: file, line: headerLine, message: "table [\(name)] conflicts with the key '\(name)' defined on line \(existing.line)")
                }
                guard sub.origin == .implicit else {
                    throw TOMLError(file: file, line: headerLine, message: "table [\(name)] is defined twice (first on line \(existing.line))")
                }
                sub.origin = .header
                table.set(last, TOMLTable.Entry(value: .table(sub), line: headerLine))
            } else if isArray {
                table.set(last, TOMLTable.Entry(value: .array([.table(TOMLTable(origin: .header))]), line: headerLine, isArrayOfTables: true))
            } else {
                table.set(last, TOMLTable.Entry(value: .table(TOMLTable(origin: .header)), line: headerLine))
            }
        }
        return path
    }

    enum DescendMode { case header, dottedKey }

    /// Walks (creating missing tables) down `path` and runs `body` on the table found there.
    /// Arrays of tables are entered at their last element, as TOML specifies for headers.
    static func descend(
        _ table: inout TOMLTable, through path: ArraySlice<String>, creating origin: TOMLTable.Origin,
        file: String, line: Int, mode: DescendMode, _ body: (inout TOMLTable) throws(TOMLError) -> Void
    ) throws(TOMLError) {
        guard let key = path.first else { return try body(&table) }
        let rest = path.dropFirst()
        guard let existing = table.entry(key) else {
            var sub = TOMLTable(origin: origin)
            try descend(&sub, through: rest, creating: origin, file: file, line: line, mode: mode, body)
            table.set(key, TOMLTable.Entry(value: .table(sub), line: line))
            return
        }
        switch existing.value {
        case .table(let sub):
            if sub.origin == .inline {
                throw TOMLError(file: file, line: line, message: "'\(key)' is an inline table (line \(existing.line)) and cannot be extended")
            }
            // Dotted keys may only extend tables that dotted keys created (TOML v1.0.0 "Table").
            if mode == .dottedKey && sub.origin != .dotted {
                throw TOMLError(file: file, line: line, message: "the dotted key cannot add to the table '\(key)' defined on line \(existing.line)")
            }
            try table.modifyEntry(key) { (entry: inout TOMLTable.Entry) throws(TOMLError) in
                guard case .table(var sub) = entry.value else { return }
                entry.value = .string("")  // drop the reference so `sub` is mutated in place
                defer { entry.value = .table(sub) }
                try descend(&sub, through: rest, creating: origin, file: file, line: line, mode: mode, body)
            }
        case .array(var elements) where existing.isArrayOfTables && mode == .header:
            guard case .table(var sub) = elements[elements.count - 1] else { return }
            try descend(&sub, through: rest, creating: origin, file: file, line: line, mode: mode, body)
            elements[elements.count - 1] = .table(sub)
            table.set(key, TOMLTable.Entry(value: .array(elements), line: existing.line, isArrayOfTables: true))
        default:
            throw TOMLError(file: file, line: line, message: "'\(key)' is already \(existing.value.kindName) (line \(existing.line)), not a table")
        }
    }

    /// Inserts `key.path = value` into the table at `base`.
    mutating func insert(_ value: TOMLValue, at path: [String], line: Int, under base: [String], in root: inout TOMLTable) throws(TOMLError) {
        let file = self.file
        try Self.descend(&root, through: base[...], creating: .implicit, file: file, line: line, mode: .header) { (table: inout TOMLTable) throws(TOMLError) in
            try Self.insert(value, at: path[...], line: line, into: &table, file: file)
        }
    }

    static func insert(_ value: TOMLValue, at path: ArraySlice<String>, line: Int, into table: inout TOMLTable, file: String) throws(TOMLError) {
        let last = path[path.endIndex - 1]
        try descend(&table, through: path.dropLast(), creating: .dotted, file: file, line: line, mode: .dottedKey) { (target: inout TOMLTable) throws(TOMLError) in
            if let existing = target.entry(last) {
                throw TOMLError(file: file, line: line, message: "duplicate key '\(path.joined(separator: "."))' (first defined on line \(existing.line))")
            }
            target.set(last, TOMLTable.Entry(value: value, line: line))
        }
    }

    // MARK: Keys

    /// A key-value pair up to its value: the dotted key, the `=` and the spaces around it. The
    /// line is the key's, for the duplicate-key message.
    mutating func parseKeyAndEquals() throws(TOMLError) -> (path: [String], line: Int) {
        let keyLine = line
        let path = try parseKey()
        skipSpaces()
        guard peek() == .equals else { throw error("expected '=' after the key '\(path.joined(separator: "."))'") }
        index += 1
        skipSpaces()
        return (path, keyLine)
    }

    /// A key: simple keys joined by dots, with optional spaces around the dots.
    mutating func parseKey() throws(TOMLError) -> [String] {
        var parts: [String] = []
        while true {
            skipSpaces()
            parts.append(try parseSimpleKey())
            skipSpaces()
            guard peek() == .dot else { return parts }
            index += 1
        }
    }

    mutating func parseSimpleKey() throws(TOMLError) -> String {
        switch peek() {
        case .quote:
            if peek(1) == .quote && peek(2) == .quote { throw error("a key cannot be a multi-line string") }
            return try parseBasicString()
        case .apostrophe:
            if peek(1) == .apostrophe && peek(2) == .apostrophe { throw error("a key cannot be a multi-line string") }
            return try parseLiteralString()
        default:
            let start = index
            while let byte = peek(), byte.isBareKeyByte { index += 1 }
            guard index > start else {
                if let byte = peek(), byte != .newline, byte != .carriageReturn {
                    throw error("expected a key, found '\(Self.describe(byte))'")
                }
                throw error("expected a key")
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
    }
}
