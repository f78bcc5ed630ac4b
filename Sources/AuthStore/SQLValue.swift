import GoFormats
import Synchronization

/// A value bound to a `?` placeholder or read from a result column, mirroring SQLite's five
/// storage classes (https://sqlite.org/datatype3.html §2).
///
/// Deliberately not `CustomStringConvertible`: values are passwords hashes, tokens and personal
/// data, so nothing in this module ever renders them.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public init(_ value: String?) {
        self = value.map { .text($0) } ?? .null
    }

    public init(_ value: Int?) {
        self = value.map { .integer(Int64($0)) } ?? .null
    }

    public init(_ value: Int64?) {
        self = value.map { .integer($0) } ?? .null
    }

    /// SQLite has no boolean type; GoTrue's booleans are stored as INTEGER 0/1.
    public init(_ value: Bool?) {
        self = value.map { .integer($0 ? 1 : 0) } ?? .null
    }

    public init(_ value: Double?) {
        self = value.map { .real($0) } ?? .null
    }

    public init(_ value: [UInt8]?) {
        self = value.map { .blob($0) } ?? .null
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The text, or `nil` for any other storage class.
    public var stringValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The integer; a REAL converts only when it is integral and in range.
    public var int64Value: Int64? {
        switch self {
        case .integer(let value): return value
        case .real(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// The number as a Double (INTEGER widens).
    public var doubleValue: Double? {
        switch self {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }

    public var blobValue: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }
}

extension SQLValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
}

extension SQLValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension SQLValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension SQLValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}

extension SQLValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .real(value) }
}

/// One result row. Rows of one query share their column list and name index (copy-on-write),
/// so a row costs little more than its values.
public struct Row: Sendable, Hashable {
    /// Column names in result order (as SQLite reports them: the `AS` alias when given).
    public let columns: [String]
    private let values: [SQLValue]
    private let positions: ColumnPositions

    public init(columns: [String], values: [SQLValue]) {
        self.init(columns: columns, positions: ColumnPositions(columns), values: values)
    }

    init(columns: [String], positions: ColumnPositions, values: [SQLValue]) {
        precondition(columns.count == values.count, "Row needs one value per column")
        self.columns = columns
        self.positions = positions
        self.values = values
    }

    /// Rows are equal when their columns and values are (the index derives from the columns).
    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.columns == rhs.columns && lhs.values == rhs.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(columns)
        hasher.combine(values)
    }

    /// The value of `column`, or `.null` when the row has no such column.
    public subscript(_ column: String) -> SQLValue {
        guard let position = positions.table[column] else { return .null }
        return values[position]
    }

    /// The value at a 0-based result position.
    public subscript(position position: Int) -> SQLValue {
        values[position]
    }

    /// Whether this row's columns are exactly `layout`'s, in order.
    func matches(_ layout: RowLayout) -> Bool { positions.match(layout, columns) }

    public func string(_ column: String) -> String? { self[column].stringValue }
    public func int64(_ column: String) -> Int64? { self[column].int64Value }
    public func int(_ column: String) -> Int? { int64(column).flatMap { Int(exactly: $0) } }
    public func double(_ column: String) -> Double? { self[column].doubleValue }
    /// INTEGER 0/1 columns (GoTrue booleans); any non-zero integer is `true`.
    public func bool(_ column: String) -> Bool? { int64(column).map { $0 != 0 } }
    public func blob(_ column: String) -> [UInt8]? { self[column].blobValue }
}

/// Result column name → first position, built once per prepared statement and shared by its
/// rows (a `StringTable`: column lookups are the bulk of turning rows into records).
final class ColumnPositions: Sendable {
    let table: StringTable<Int>
    /// The `RowLayout` these columns were last found to equal, and the last found to differ, by
    /// `RowLayout.id` (0: none yet). Relaxed atomics: a lost store only repeats a comparison.
    private let matched = Atomic<Int>(0)
    private let mismatched = Atomic<Int>(0)

    init(_ columns: [String]) {
        var table = StringTable<Int>(capacity: columns.count)
        for (index, name) in columns.enumerated() where table[name] == nil {
            table.set(index, for: name)  // the first of duplicated names wins, as in SQLite's own lookup
        }
        self.table = table
    }

    /// Whether `columns` (the names these positions were built from) are exactly `layout`'s,
    /// compared once per statement preparation and layout.
    func match(_ layout: RowLayout, _ columns: [String]) -> Bool {
        if matched.load(ordering: .relaxed) == layout.id { return true }
        if mismatched.load(ordering: .relaxed) == layout.id { return false }
        let equal = columns == layout.names
        if equal {
            matched.store(layout.id, ordering: .relaxed)
        } else {
            mismatched.store(layout.id, ordering: .relaxed)
        }
        return equal
    }
}

/// The columns a record type selects, in order: the source of its SELECT list
/// (`RowLayout.list`) and of the order its `init(row:)` reads them (`RowReader`).
///
/// Looking a column up by name costs a hash and a string comparison, ~200 instructions; a
/// `users` row has 33 columns, and a `GET /user` reads ~57 columns. A row whose columns are
/// exactly a layout's (checked once per prepared statement, `ColumnPositions.match`) is read by
/// position instead; any other row (another query's column order, a hand-built row) by name, as
/// before.
final class RowLayout: Sendable {
    let names: [String]
    /// Unique per layout for the life of the process (never reused, unlike an address).
    let id: Int

    private static let lastID = Atomic<Int>(0)

    /// `names` joined for a SELECT list.
    var list: String { names.joined(separator: ", ") }

    /// `columns`: a comma-separated list, as written in the SELECT.
    init(_ columns: String) {
        names = columns.split(separator: ",").map { GoStrings.trim($0, " \n") }
        id = Self.lastID.add(1, ordering: .relaxed).newValue
    }
}

/// Reads a row's columns in its layout's order: by position when the row's columns are the
/// layout's, by name otherwise. Each read names its column; debug builds (every test) check the
/// name against the layout, so a record's reads cannot drift out of its SELECT's order.
struct RowReader {
    private let row: Row
    private let layout: RowLayout
    private let positional: Bool
    private var next = 0

    init(_ row: Row, _ layout: RowLayout) {
        self.row = row
        self.layout = layout
        positional = row.matches(layout)
    }

    mutating func value(_ column: String) -> SQLValue {
        assert(next < layout.names.count && layout.names[next] == column,
               "RowReader: read \(column) where the layout has \(next < layout.names.count ? layout.names[next] : "no more columns")")
        defer { next += 1 }
        return positional ? row[position: next] : row[column]
    }

    mutating func string(_ column: String) -> String? { value(column).stringValue }
    mutating func int64(_ column: String) -> Int64? { value(column).int64Value }
    mutating func int(_ column: String) -> Int? { int64(column).flatMap { Int(exactly: $0) } }
    mutating func bool(_ column: String) -> Bool? { int64(column).map { $0 != 0 } }

    /// Whether every column of the layout was read: records check it in debug builds.
    var isComplete: Bool { next == layout.names.count }
}
