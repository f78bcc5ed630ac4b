import AuthPlatform
import CSQLite

/// One SQLite connection, or one Postgres connection in Postgres mode (`postgres`). Reachable
/// only inside `Database.read` / `Database.write` closures and used by one thread at a time
/// (opened with SQLITE_OPEN_NOMUTEX), hence not `Sendable`.
///
/// The backend is one stored optional: each store method tests it once and runs either its
/// SQLite statements (below) or its Postgres ones (`Postgres/*+Postgres.swift`), so the SQLite
/// path pays one predictable branch per call. In Postgres mode the generic statement methods
/// (`execute`, `query`, ...) run only transaction control (what `Database` issues); a store
/// method not yet written for Postgres throws `StoreError` naming itself instead of sending
/// SQLite's SQL to Postgres.
///
/// Every statement is prepared once with SQLITE_PREPARE_PERSISTENT and cached by its SQL text.
/// Cached statements stay valid across schema changes, including ones made by other connections
/// or processes: `sqlite3_prepare_v3` statements re-prepare themselves on SQLITE_SCHEMA
/// (https://sqlite.org/c3ref/prepare.html). Rows are never cached, so several processes can
/// share one database file without serving stale data.
public final class Connection {
    /// nil in Postgres mode.
    private let sqlite: OpaquePointer?
    /// The SQLite handle: used only on the SQLite path (after `postgres` was found nil, or by
    /// the SQLite pool and checkpointer, which never hold a Postgres connection).
    var handle: OpaquePointer { sqlite.unsafelyUnwrapped }
    /// The Postgres connection in Postgres mode; nil for SQLite.
    let postgres: PostgresConnection?
    private var statements = StringTable<CachedStatement>(capacity: 64)
    private var isClosed = false
    /// This connection's number in the statement trace (`StatementTrace`), 0 when not tracing.
    private let traceNumber: Int

    /// Set while the connection serves `Database.read`: statements that would write are refused
    /// (checked with `sqlite3_stmt_readonly`, so it also holds for the single `:memory:`
    /// connection, which cannot carry `PRAGMA query_only` permanently).
    var readOnly = false

    /// Depth of nested `write` calls, to name their savepoints.
    var savepointDepth = 0

    /// Enough for every distinct statement the API issues; SQL built at run time (IN lists of
    /// varying length) could otherwise grow the cache without bound.
    private static let statementCacheLimit = 256

    init(path: String, flags: Int32) throws(StoreError) {
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, flags | ResultCode.openExtendedResultCodes, nil)
        guard status == SQLITE_OK, let db else {
            let reason = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            let code = db.map { sqlite3_extended_errcode($0) } ?? status
            sqlite3_close_v2(db)
            throw StoreError(code: code, message: "open \"\(path)\": \(reason)")
        }
        sqlite = db
        postgres = nil
        sqlite3_extended_result_codes(db, 1)
        traceNumber = StatementTrace.enabled.load(ordering: .relaxed) ? StatementTrace.connectionNumber() : 0
    }

    /// A Postgres-mode connection around an open `PostgresConnection`.
    init(postgres connection: PostgresConnection) {
        sqlite = nil
        postgres = connection
        traceNumber = 0
    }

    deinit {
        close()
    }

    /// Finalizes cached statements and closes the handle. Idempotent.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let postgres {
            postgres.close()
            return
        }
        for cached in statements.allValues {
            sqlite3_finalize(cached.statement)
        }
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// The main database as one SQLite file image (`sqlite3_serialize`); nil when SQLite
    /// cannot make one.
    func serialized() -> [UInt8]? {
        guard postgres == nil else { return nil }
        var size: sqlite3_int64 = 0
        guard let bytes = sqlite3_serialize(handle, "main", &size, 0) else { return nil }
        defer { sqlite3_free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(size)))
    }

    /// Replaces the main database with a copy of `image` held in memory by SQLite
    /// (`sqlite3_deserialize`), which frees it when the connection closes and grows it as
    /// writes need. Returns false when SQLite refuses it.
    func deserialize(_ image: [UInt8]) -> Bool {
        guard postgres == nil, let copy = sqlite3_malloc64(sqlite3_uint64(image.count))?.assumingMemoryBound(to: UInt8.self) else { return false }
        image.withUnsafeBufferPointer { copy.update(from: $0.baseAddress!, count: image.count) }
        let size = sqlite3_int64(image.count)
        let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
        // On failure SQLite has already freed the copy (FREEONCLOSE).
        return sqlite3_deserialize(handle, "main", copy, size, size, flags) == SQLITE_OK
    }

    // MARK: Public API

    /// The page cache every file-backed connection keeps (`PRAGMA cache_size`): pages are
    /// re-read cheaply from the OS cache, so 1 MiB per connection keeps the server's resident
    /// memory low after load (SQLite's default is 2 MiB).
    static let pageCacheKiB = 1024

    /// Runs `body` with the page cache raised to `kibibytes`, then returns it to the default,
    /// which frees the extra pages. For bulk writes in one transaction (a large fixture): with
    /// the default cache, pages of the 13 indexes on `users` are evicted between inserts, spilled
    /// to the WAL mid-transaction and read back (https://sqlite.org/pragma.html#pragma_cache_spill).
    /// Only a hint: when the pragma fails, the body runs with the cache it has.
    public func withPageCache<T, E: Error>(kibibytes: Int, _ body: () throws(E) -> T) throws(E) -> T {
        // Postgres keeps its own shared buffers: nothing to raise per connection.
        guard kibibytes > Self.pageCacheKiB, postgres == nil else { return try body() }
        try? execute("PRAGMA cache_size = -\(kibibytes)")
        defer { try? execute("PRAGMA cache_size = -\(Self.pageCacheKiB)") }
        return try body()
    }

    /// Runs one statement to completion, discarding any rows.
    ///
    /// `caller` names the store method in Postgres mode's "not available yet" error.
    public func execute(_ sql: String, _ arguments: SQLValue..., caller: StaticString = #function) throws(StoreError) {
        try execute(sql, arguments, caller: caller)
    }

    public func execute(_ sql: String, _ arguments: [SQLValue], caller: StaticString = #function) throws(StoreError) {
        _ = try run(sql, arguments, collect: 0, stopEarly: false, caller: caller)
    }

    /// Runs one statement and returns all its rows.
    public func query(_ sql: String, _ arguments: SQLValue..., caller: StaticString = #function) throws(StoreError) -> [Row] {
        try query(sql, arguments, caller: caller)
    }

    public func query(_ sql: String, _ arguments: [SQLValue], caller: StaticString = #function) throws(StoreError) -> [Row] {
        try run(sql, arguments, collect: .max, stopEarly: false, caller: caller)
    }

    /// The first row, or `nil`. Stepping stops after it; for `INSERT … RETURNING` SQLite has
    /// already made every change on the first step (https://sqlite.org/lang_returning.html).
    public func queryFirst(_ sql: String, _ arguments: SQLValue..., caller: StaticString = #function) throws(StoreError) -> Row? {
        try queryFirst(sql, arguments, caller: caller)
    }

    public func queryFirst(_ sql: String, _ arguments: [SQLValue], caller: StaticString = #function) throws(StoreError) -> Row? {
        try run(sql, arguments, collect: 1, stopEarly: true, caller: caller).first
    }

    /// The first column of the first row, or `.null` when there is no row.
    public func scalar(_ sql: String, _ arguments: SQLValue..., caller: StaticString = #function) throws(StoreError) -> SQLValue {
        try scalar(sql, arguments, caller: caller)
    }

    public func scalar(_ sql: String, _ arguments: [SQLValue], caller: StaticString = #function) throws(StoreError) -> SQLValue {
        guard let row = try run(sql, arguments, collect: 1, stopEarly: true, caller: caller).first,
              !row.columns.isEmpty else { return .null }
        return row[position: 0]
    }

    /// Runs several `;`-separated statements without arguments (migrations, bulk resets).
    /// Not cached: scripts run once.
    public func executeScript(_ sql: String, caller: StaticString = #function) throws(StoreError) {
        if postgres != nil { throw StoreError.notInPostgresMode(caller) }
        let result: Result<Void, StoreError> = sql.withCString { start in
            var cursor: UnsafePointer<CChar>? = start
            while let current = cursor, current.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let status = sqlite3_prepare_v2(handle, current, -1, &statement, &tail)
                guard status == SQLITE_OK else {
                    return .failure(error(status, "prepare script"))
                }
                cursor = tail
                guard let statement else { continue }  // whitespace or a comment
                defer { sqlite3_finalize(statement) }
                if readOnly && sqlite3_stmt_readonly(statement) == 0 && !Self.isPragma(String(cString: current)) {
                    return .failure(Self.writeInReadError)
                }
                var step = sqlite3_step(statement)
                while step == SQLITE_ROW { step = sqlite3_step(statement) }
                guard step == SQLITE_DONE else { return .failure(error(step, "step script")) }
            }
            return .success(())
        }
        try result.get()
    }

    /// Rows inserted, updated or deleted by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int {
        if let postgres { return postgres.changes }
        return Int(sqlite3_changes64(handle))
    }

    /// SQLite only (Postgres mode answers 0: its inserts return their ids with RETURNING).
    public var lastInsertRowID: Int64 {
        guard postgres == nil else { return 0 }
        return sqlite3_last_insert_rowid(handle)
    }

    /// Whether a transaction is open on this connection (in Postgres, also one an error
    /// aborted, which still awaits its ROLLBACK).
    public var isInTransaction: Bool {
        if let postgres { return postgres.isInTransaction }
        return sqlite3_get_autocommit(handle) == 0
    }

    // MARK: Statement execution

    private static var writeInReadError: StoreError {
        StoreError(code: SQLITE_READONLY, message: "step: a statement that writes was run inside Database.read")
    }

    private func run(_ sql: String, _ arguments: [SQLValue], collect limit: Int, stopEarly: Bool,
                     caller: StaticString) throws(StoreError) -> [Row] {
        guard !isClosed else { throw StoreError.closed }
        if let postgres {
            try runTransactionControl(sql, on: postgres, caller: caller)
            return []
        }
        let (statement, cachedNames) = try cachedStatement(sql)
        // Reset and drop bindings even on failure: a statement left mid-step would hold its read
        // snapshot open, and cleared bindings free SQLite's copies of bound secrets.
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        if readOnly && sqlite3_stmt_readonly(statement) == 0 && !Self.isPragma(sql) {
            throw Self.writeInReadError
        }
        try bind(arguments, to: statement)
        if traceNumber != 0 { StatementTrace.record(connection: traceNumber, sql: sql, arguments: arguments) }

        var rows: [Row] = []
        var names: ColumnNames?
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw error(status, "step") }
            guard rows.count < limit else { continue }
            let count = sqlite3_column_count(statement)
            if names == nil { names = columnNames(sql, statement, cached: cachedNames) }
            let values = (0..<count).map { column(statement, $0) }
            rows.append(Row(columns: names!.columns, positions: names!.positions, values: values))
            if stopEarly && rows.count >= limit { break }
        }
        return rows
    }

    /// The result column names of a cached statement and their first positions, built once
    /// per (re-)preparation. SQLite re-prepares a statement after a schema change
    /// (https://sqlite.org/c3ref/prepare.html), which may change its columns (`SELECT *`), and
    /// counts each re-preparation (SQLITE_STMTSTATUS_REPREPARE,
    /// https://sqlite.org/c3ref/c_stmtstatus_counter.html): names are rebuilt when that count
    /// moved. Building them per execution (a String and a hash insert per column) was a
    /// measurable share of every query of a wide row such as `users`.
    private func columnNames(_ sql: String, _ statement: OpaquePointer, cached: ColumnNames?) -> ColumnNames {
        let reprepares = sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_REPREPARE, 0)
        let count = sqlite3_column_count(statement)
        if let cached, cached.reprepares == reprepares, cached.columns.count == Int(count) {
            return cached
        }
        let columns = (0..<count).map { index in
            sqlite3_column_name(statement, index).map { String(cString: $0) } ?? ""
        }
        let names = ColumnNames(columns: columns, positions: ColumnPositions(columns), reprepares: reprepares)
        if var cached = statements[sql] {
            cached.names = names
            statements.set(cached, for: sql)
        }
        return names
    }

    /// SQLite marks even pragma queries such as `PRAGMA journal_mode` as not read-only; they
    /// touch connection settings, not rows, so reads may run them.
    private static func isPragma(_ sql: String) -> Bool {
        let start = sql.drop(while: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" })
        return start.prefix(6).lowercased() == "pragma"
    }

    private func cachedStatement(_ sql: String) throws(StoreError) -> (OpaquePointer, ColumnNames?) {
        if let cached = statements[sql] { return (cached.statement, cached.names) }
        if statements.count >= Self.statementCacheLimit {
            for cached in statements.allValues { sqlite3_finalize(cached.statement) }
            statements.removeAll()
        }
        let prepared: Result<OpaquePointer, StoreError> = sql.withCString { text in
            var statement: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            let status = sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            guard status == SQLITE_OK else {
                return .failure(error(status, "prepare \"\(Self.excerpt(sql))\""))
            }
            guard let statement else {
                return .failure(StoreError(code: SQLITE_MISUSE, message: "prepare: empty SQL"))
            }
            // prepare compiles only the first statement and silently ignores the rest; refuse
            // SQL that carries a second statement instead of dropping it.
            if let tail, tail.pointee != 0 {
                var extra: OpaquePointer?
                let extraStatus = sqlite3_prepare_v2(handle, tail, -1, &extra, nil)
                sqlite3_finalize(extra)
                if extraStatus != SQLITE_OK || extra != nil {
                    sqlite3_finalize(statement)
                    return .failure(StoreError(
                        code: SQLITE_MISUSE,
                        message: "prepare: more than one statement in \"\(Self.excerpt(sql))\"; use executeScript"))
                }
            }
            return .success(statement)
        }
        let statement = try prepared.get()
        statements.set(CachedStatement(statement: statement), for: sql)
        return (statement, nil)
    }

    private func bind(_ arguments: [SQLValue], to statement: OpaquePointer) throws(StoreError) {
        let expected = Int(sqlite3_bind_parameter_count(statement))
        guard expected == arguments.count else {
            throw StoreError(code: SQLITE_RANGE, message: "bind: statement expects \(expected) arguments, got \(arguments.count)")
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch argument {
            case .null:
                status = sqlite3_bind_null(statement, index)
            case .integer(let value):
                status = sqlite3_bind_int64(statement, index, value)
            case .real(let value):
                status = sqlite3_bind_double(statement, index, value)
            case .text(let value):
                // Explicit length, so text containing NUL survives; an empty buffer may have no
                // base address, and binding a null pointer would store NULL instead of ''.
                status = value.withUTF8Bytes { bytes in
                    if let base = bytes.baseAddress, bytes.count > 0 {
                        return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                            sqlite3_bind_text64(statement, index, $0, UInt64(bytes.count), sqliteTransient, UInt8(SQLITE_UTF8))
                        }
                    }
                    return sqlite3_bind_text(statement, index, "", 0, sqliteTransient)
                }
            case .blob(let value):
                status = value.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress, bytes.count > 0 {
                        return sqlite3_bind_blob64(statement, index, base, UInt64(bytes.count), sqliteTransient)
                    }
                    return sqlite3_bind_zeroblob(statement, index, 0)
                }
            }
            guard status == SQLITE_OK else { throw error(status, "bind argument \(index)") }
        }
    }

    private func column(_ statement: OpaquePointer, _ index: Int32) -> SQLValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    /// The error for a failed call: the code SQLite returned (extended, since extended result
    /// codes are on) and its message for this connection.
    func error(_ status: Int32, _ context: String) -> StoreError {
        let reason = String(cString: sqlite3_errmsg(handle))
        return StoreError(code: status, message: "\(context): \(reason)")
    }

    /// SQL text is the program's own (values travel only as `?` arguments), so a short excerpt
    /// in prepare errors helps find the statement without exposing data.
    private static func excerpt(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: { $0 == "\n" || $0 == "\t" }).joined(separator: " ")
        return flat.count > 120 ? String(flat.prefix(120)) + "…" : flat
    }
}

/// A prepared statement kept for reuse, with its result column names once a row was read.
private struct CachedStatement {
    let statement: OpaquePointer
    var names: ColumnNames?
}

private struct ColumnNames {
    let columns: [String]
    let positions: ColumnPositions
    /// SQLITE_STMTSTATUS_REPREPARE when the names were read.
    let reprepares: Int32
}

/// SQLITE_TRANSIENT: SQLite copies bound text/blobs before the bind call returns, so Swift's
/// temporary buffers may go away. The header's `((sqlite3_destructor_type)-1)` is not importable.
private var sqliteTransient: sqlite3_destructor_type {
    unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}

// MARK: Transactions

extension Connection {
    /// `begin` … COMMIT around `body`; ROLLBACK when `body` or COMMIT throws, leaving the
    /// connection with no open transaction so the next caller can use it.
    func inTransaction<T>(_ begin: String, _ body: (Connection) throws -> T) throws -> T {
        try execute(begin)
        let result: T
        do {
            result = try body(self)
            try execute("COMMIT")
        } catch {
            rollbackIfNeeded()
            throw error
        }
        return result
    }

    /// A nested `write`: a SAVEPOINT inside the transaction already open on this connection, so
    /// a throw undoes only the nested part (https://sqlite.org/lang_savepoint.html).
    func inSavepoint<T>(_ body: (Connection) throws -> T) throws -> T {
        let name = "nested_write_\(savepointDepth)"
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        return try AuthStore.inSavepoint(named: name, execute: { (sql) throws(StoreError) in try execute(sql) },
                                         isInTransaction: { isInTransaction }) { try body(self) }
    }

    /// Some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) roll back automatically; only roll
    /// back when a transaction is still open.
    func rollbackIfNeeded() {
        if isInTransaction {
            try? execute("ROLLBACK")
        }
    }

    /// Runs `body` with `readOnly` set to `value`, restoring the previous setting.
    func withReadOnly<T>(_ value: Bool, _ body: () throws -> T) rethrows -> T {
        let previous = readOnly
        readOnly = value
        defer { readOnly = previous }
        return try body()
    }
}
