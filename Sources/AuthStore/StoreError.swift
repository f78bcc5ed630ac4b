import CSQLite

/// The single error type of AuthStore's public API: an SQLite result code plus a message.
///
/// `message` is SQLite's own text (`sqlite3_errmsg`) prefixed by the step that failed. SQLite's
/// messages name tables and columns ("UNIQUE constraint failed: users.phone") but never bound
/// values, and this module never adds any, so the description is safe to log.
///
/// In Postgres mode a failure of the server carries the `PostgresError` itself (`postgres`),
/// and `code` is the SQLite code of the same kind (23505 → SQLITE_CONSTRAINT_UNIQUE, …), so
/// callers that test `isUniqueViolation` and the like behave alike on both backends.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    /// The extended result code (https://sqlite.org/rescode.html), e.g. 2067 for
    /// SQLITE_CONSTRAINT_UNIQUE. Its low 8 bits are the primary code.
    public let code: Int32
    public let message: String

    /// The Postgres server's error when it is the cause (Postgres mode), nil otherwise.
    public var postgres: PostgresError? { cause?.error }
    /// Boxed: a `PostgresError` is a dozen strings, and every `throws(StoreError)` call of the
    /// SQLite path would otherwise carry room for it.
    private let cause: PostgresCause?

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
        cause = nil
    }

    /// A Postgres failure. `message` is `PostgresError.diagnostics`: SQLSTATE, message, DETAIL,
    /// HINT and CONTEXT (the trigger function and line that raised), for the developer's log of
    /// their own database; a client never sees it (GoTrue answers "Database error ...").
    public init(_ postgres: PostgresError) {
        code = Self.sqliteCode(sqlstate: postgres.sqlstate)
        message = postgres.diagnostics
        cause = PostgresCause(error: postgres)
    }

    /// Any failure of Postgres mode's code, as the store reports it: a `PostgresError` carried,
    /// a `StoreError` as it is, anything else (a Swift error of the code around the statements)
    /// by its description. One initializer, so that each of the store's hundred or so Postgres
    /// branches (generic over their result, so specialized where they are) calls it rather than
    /// carrying the casts itself: AuthStore's optimized code is about 7 % smaller for it.
    init(postgresMode error: any Error) {
        switch error {
        case let error as PostgresError: self.init(error)
        case let error as StoreError: self = error
        default: self.init(code: 1, message: "Postgres mode: \(error)")
        }
    }

    /// What a store method not yet written for Postgres answers there, rather than running
    /// SQLite's SQL on the wrong server.
    static func notInPostgresMode(_ method: StaticString) -> StoreError {
        StoreError(code: SQLITE_ERROR, message: "\(notInPostgresModePrefix)\(method) is not available in Postgres mode yet")
    }

    private static let notInPostgresModePrefix = "Postgres mode: "

    /// A store method not yet written for Postgres was called in that mode (`notInPostgresMode`).
    public var isNotInPostgresMode: Bool {
        cause == nil && code == SQLITE_ERROR && message.hasPrefix(Self.notInPostgresModePrefix) && message.hasSuffix(" yet")
    }

    /// The SQLite result code of the same kind as a SQLSTATE (https://www.postgresql.org/docs/current/errcodes-appendix.html).
    static func sqliteCode(sqlstate: String) -> Int32 {
        switch sqlstate {
        case "23505": return ResultCode.constraintUnique
        case "23503": return ResultCode.constraintForeignKey
        case "40001", "40P01", "55P03": return SQLITE_BUSY
        case "25006": return SQLITE_READONLY
        case _ where sqlstate.hasPrefix("23"): return SQLITE_CONSTRAINT
        default: return SQLITE_ERROR
        }
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

    /// Postgres ended the transaction so that another could go on (40P01 deadlock_detected,
    /// 40001 serialization_failure): nothing of it was kept, and running it again may succeed.
    public var isTransactionConflict: Bool { postgres?.isRetryable == true }

    /// The `Database` was closed before or while the call was made.
    public var isClosed: Bool { code == SQLITE_MISUSE && message == StoreError.closedMessage }

    static let closedMessage = "database is closed"
    static var closed: StoreError { StoreError(code: SQLITE_MISUSE, message: closedMessage) }
}

private final class PostgresCause: Sendable {
    let error: PostgresError
    init(error: PostgresError) { self.error = error }
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
