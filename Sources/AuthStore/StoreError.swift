import CSQLite

/// The single error type of AuthStore: an SQLite result code plus a message.
///
/// `message` is SQLite's own text (`sqlite3_errmsg`) prefixed by the step that failed. SQLite's
/// messages name tables and columns ("UNIQUE constraint failed: users.phone") but never bound
/// values, and this module never adds any, so the description is safe to log.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    /// The extended result code (https://sqlite.org/rescode.html), e.g. 2067 for
    /// SQLITE_CONSTRAINT_UNIQUE. Its low 8 bits are the primary code.
    public let code: Int32
    public let message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    public var primaryCode: Int32 { code & 0xFF }

    public var description: String { "StoreError(\(code)): \(message)" }

    /// A UNIQUE index or PRIMARY KEY rejected the row (GoTrue maps these to "already exists").
    public var isUniqueViolation: Bool {
        code == ResultCode.constraintUnique || code == ResultCode.constraintPrimaryKey
    }

    public var isForeignKeyViolation: Bool { code == ResultCode.constraintForeignKey }

    /// Any constraint failure (UNIQUE, FOREIGN KEY, CHECK, NOT NULL, ...).
    public var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }

    /// Another connection (possibly another process) held the lock past the busy timeout.
    public var isBusy: Bool { primaryCode == SQLITE_BUSY }

    /// The `Database` was closed before or while the call was made.
    public var isClosed: Bool { code == SQLITE_MISUSE && message == StoreError.closedMessage }

    static let closedMessage = "database is closed"
    static var closed: StoreError { StoreError(code: SQLITE_MISUSE, message: closedMessage) }
}

/// Extended result codes. The C header defines them as macro expressions
/// (`SQLITE_CONSTRAINT | (8<<8)`), which Swift does not import, so they are spelled out here
/// from https://sqlite.org/rescode.html.
enum ResultCode {
    static let constraintForeignKey: Int32 = SQLITE_CONSTRAINT | (3 << 8)  // 787
    static let constraintPrimaryKey: Int32 = SQLITE_CONSTRAINT | (6 << 8)  // 1555
    static let constraintUnique: Int32 = SQLITE_CONSTRAINT | (8 << 8)  // 2067
    /// SQLITE_OPEN_EXRESCODE (3.37+): extended codes from sqlite3_open_v2 itself.
    static let openExtendedResultCodes: Int32 = 0x0200_0000
}
