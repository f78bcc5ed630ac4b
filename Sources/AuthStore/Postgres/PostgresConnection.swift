import CAuthPlatform

/// libpq, loaded once per process on first use (CAuthPlatform's postgres_client.c).
public enum PostgresLibrary {
    /// Loads libpq: `AUTH_EMULATOR_LIBPQ` when set, else the platform's usual places. Cheap
    /// after the first success. Throws one error naming every path tried and what to install.
    public static func load() throws(PostgresError) {
        var problem = [CChar](repeating: 0, count: 2048)
        guard cauth_pq_load(nil, &problem, problem.count) == 1 else {
            throw PostgresError(sqlstate: PostgresError.libraryMissing, step: "load libpq", message: string(problem))
        }
    }

    /// Whether libpq would load with `environment`'s `AUTH_EMULATOR_LIBPQ` (absent: the usual
    /// places), without keeping it loaded or changing the library this process uses: the same
    /// search and the same error as `load()`. For a start-up check and for tests.
    public static func probe(environment: [String: String]) throws(PostgresError) {
        var problem = [CChar](repeating: 0, count: 2048)
        let path = environment["AUTH_EMULATOR_LIBPQ"].flatMap { $0.isEmpty ? nil : $0 }
        guard cauth_pq_probe(path, &problem, problem.count) == 1 else {
            throw PostgresError(sqlstate: PostgresError.libraryMissing, step: "load libpq", message: string(problem))
        }
    }

    /// libpq's version as PQlibVersion reports it (150018 for 15.18); loads it first.
    public static func version() throws(PostgresError) -> Int {
        try load()
        return Int(cauth_pq_lib_version())
    }

    fileprivate static func string(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// How a connection sets up its session after connecting (and after a reconnect).
public struct PostgresSessionOptions: Sendable {
    /// Schemas for unqualified names, first first. GoTrue's role has `search_path = auth`, so an
    /// app trigger's unqualified table name resolves (or fails) as it would under GoTrue.
    public var searchPath: [String]
    /// The role to `SET ROLE` to when the login role may: GoTrue runs as
    /// `supabase_auth_admin`, so app triggers run with that role's rights. nil: stay the login role.
    public var role: String?
    /// Set when the connection string names none, so the session is recognisable in
    /// `pg_stat_activity`.
    public var applicationName: String

    public init(searchPath: [String] = ["auth"], role: String? = "supabase_auth_admin", applicationName: String = "auth-emulator") {
        self.searchPath = searchPath
        self.role = role
        self.applicationName = applicationName
    }
}

/// What session setup found out about the login.
public struct PostgresSession: Sendable, Equatable {
    /// The role the connection string logged in as.
    public let loginRole: String
    /// The role statements run as (`current_user`) after setup.
    public let currentRole: String
    public let loginIsSuperuser: Bool
    /// `server_version_num`, e.g. 150018.
    public let serverVersion: Int
    /// Names this database on this server, whatever connection string reached it (a URL, a
    /// socket, another user): `current_database()` and the server's start time, which no two
    /// running servers share. Two projects on one database would share one `auth` schema.
    public var databaseIdentity: String = ""
    /// Things a developer should hear at start-up (running as a superuser without
    /// supabase_auth_admin, a role that cannot be assumed).
    public let warnings: [String]
}

/// A NOTICE or WARNING the server sent (an app trigger's RAISE NOTICE, a server warning).
public struct PostgresNotice: Sendable, Equatable {
    public let severity: String
    public let sqlstate: String
    public let message: String
    public let context: String?
}

/// One libpq connection. Like `Connection`, used by one thread at a time and not `Sendable`;
/// every call blocks until the server answers, so callers run it on worker threads, never on
/// the event loop.
///
/// Statements with arguments are prepared once per connection and cached by their SQL text;
/// arguments travel as `$1…$n` in text format with server-inferred types; results come back
/// normalised by column type (`PostgresText`) into the store's `Row`s.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    private let options: PostgresSessionOptions
    private var statements: [String: PreparedStatement] = [:]
    private var nextStatementNumber = 0
    private var transactionDepth = 0
    /// A BEGIN not sent yet (`beginLazily`): it goes out with the transaction's first statement,
    /// in the same round trip, or is dropped with a COMMIT/ROLLBACK of a transaction that ran
    /// nothing.
    private var pendingBegin: String?
    private let notices = NoticeBox()
    /// Rows changed by the last INSERT/UPDATE/DELETE (PQcmdTuples).
    public private(set) var changes = 0
    public private(set) var session: PostgresSession
    /// This connection's number in the statement trace (`StatementTrace`: bench/cost's Postgres
    /// floor replays it through libpq), 0 when not tracing.
    private let traceNumber: Int

    /// Enough for every distinct statement the store issues; SQL assembled at run time could
    /// otherwise grow the cache (and the server's memory) without bound.
    static let statementCacheLimit = 256

    /// Connects with `conninfo`, a `postgres://` URL or `key=value` pairs; libpq also reads the
    /// PG* environment variables, `~/.pgpass` and service files for what it leaves out. Then
    /// sets up the session (`options`).
    public init(_ conninfo: String, options: PostgresSessionOptions = PostgresSessionOptions()) throws(PostgresError) {
        try PostgresLibrary.load()
        self.options = options
        traceNumber = StatementTrace.enabled.load(ordering: .relaxed) ? StatementTrace.connectionNumber() : 0
        guard !conninfo.utf8.contains(0) else {
            throw PostgresError(sqlstate: PostgresError.connectionFailure, step: "connect", message: "the connection string contains a NUL character")
        }
        let connection = cauth_pq_connectdb(conninfo)
        guard let connection else {
            throw PostgresError(sqlstate: PostgresError.connectionFailure, step: "connect", message: "libpq could not allocate a connection")
        }
        guard cauth_pq_status(connection) == Int32(CAUTH_PG_CONNECTION_OK) else {
            // libpq's message names the host/socket and the reason, never the password.
            let message = Self.trimmed(String(cString: cauth_pq_error_message(connection)))
            cauth_pq_finish(connection)
            throw PostgresError(sqlstate: PostgresError.connectionFailure, step: "connect", message: message)
        }
        handle = connection
        session = PostgresSession(loginRole: "", currentRole: "", loginIsSuperuser: false, serverVersion: 0, warnings: [])
        cauth_pq_set_notice_receiver(connection, receiveNotice, Unmanaged.passUnretained(notices).toOpaque())
        do {
            session = try setUpSession()
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Closes the connection (the server drops its prepared statements). Idempotent.
    public func close() {
        guard let handle else { return }
        cauth_pq_finish(handle)
        self.handle = nil
        statements.removeAll()
        pendingBegin = nil
    }

    public var isClosed: Bool { handle == nil }

    /// Whether libpq still considers the connection usable.
    public var isConnected: Bool {
        guard let handle else { return false }
        return cauth_pq_status(handle) == Int32(CAUTH_PG_CONNECTION_OK)
    }

    /// Re-opens a broken connection with the same parameters (PQreset) and sets the session up
    /// again; prepared statements are gone with the old server process.
    public func reconnect() throws(PostgresError) {
        guard let handle else { throw Self.closedError }
        statements.removeAll()
        transactionDepth = 0
        pendingBegin = nil
        cauth_pq_reset(handle)
        guard cauth_pq_status(handle) == Int32(CAUTH_PG_CONNECTION_OK) else {
            throw PostgresError(sqlstate: PostgresError.connectionFailure, step: "reconnect",
                                message: Self.trimmed(String(cString: cauth_pq_error_message(handle))))
        }
        session = try setUpSession()
    }

    /// The notices received since the last call, oldest first (at most the last 100).
    public func takeNotices() -> [PostgresNotice] {
        notices.take()
    }

    // MARK: Statements

    /// Runs one statement, discarding any rows.
    public func execute(_ sql: String, _ arguments: SQLValue...) throws(PostgresError) {
        _ = try run(sql, arguments)
    }

    public func execute(_ sql: String, _ arguments: [SQLValue]) throws(PostgresError) {
        _ = try run(sql, arguments)
    }

    /// Runs one statement and returns its rows.
    public func query(_ sql: String, _ arguments: SQLValue...) throws(PostgresError) -> [Row] {
        try run(sql, arguments)
    }

    public func query(_ sql: String, _ arguments: [SQLValue]) throws(PostgresError) -> [Row] {
        try run(sql, arguments)
    }

    public func queryFirst(_ sql: String, _ arguments: SQLValue...) throws(PostgresError) -> Row? {
        try run(sql, arguments).first
    }

    public func queryFirst(_ sql: String, _ arguments: [SQLValue]) throws(PostgresError) -> Row? {
        try run(sql, arguments).first
    }

    /// The first column of the first row, or `.null`.
    public func scalar(_ sql: String, _ arguments: SQLValue...) throws(PostgresError) -> SQLValue {
        try scalar(sql, arguments)
    }

    public func scalar(_ sql: String, _ arguments: [SQLValue]) throws(PostgresError) -> SQLValue {
        guard let row = try run(sql, arguments).first, !row.columns.isEmpty else { return .null }
        return row[position: 0]
    }

    /// Runs `;`-separated statements without arguments in one round trip (the simple query
    /// protocol: DDL scripts, session settings). Outside a transaction the server runs them as
    /// one implicit transaction. Not prepared, not cached.
    public func executeScript(_ sql: String) throws(PostgresError) {
        let handle = try open()
        guard !sql.utf8.contains(0) else {
            throw PostgresError(sqlstate: "22021", step: "execute script", message: "the script contains a NUL character")
        }
        var sql = sql
        if let begin = pendingBegin {
            pendingBegin = nil
            // A transaction that ran nothing ends without a word to the server.
            if sql == "COMMIT" || sql == "ROLLBACK" { return }
            // In one Query message; BEGIN turns its implicit block into the transaction.
            sql = begin + "; " + sql
        }
        if traceNumber != 0 { StatementTrace.recordScript(connection: traceNumber, sql: sql) }
        let result = cauth_pq_exec(handle, sql)
        defer { cauth_pq_clear(result) }
        try check(result, step: "execute script")
    }

    /// Starts a transaction with `statement` (a BEGIN) sent with the next statement, in the
    /// same round trip (libpq's pipeline mode; two round trips on a libpq older than 14). Until
    /// then the connection counts as in a transaction.
    public func beginLazily(_ statement: String) throws(PostgresError) {
        _ = try open()
        if pendingBegin != nil || isInTransaction {
            throw PostgresError(sqlstate: "25001", step: "begin", message: "a transaction is already open on this connection")
        }
        pendingBegin = statement
    }

    /// Whether a transaction (or a failed one awaiting ROLLBACK) is open.
    public var isInTransaction: Bool {
        if pendingBegin != nil { return true }
        guard let handle else { return false }
        let status = cauth_pq_transaction_status(handle)
        return status == Int32(CAUTH_PQTRANS_INTRANS) || status == Int32(CAUTH_PQTRANS_INERROR)
    }

    /// Whether the open transaction was aborted by a failed statement: its COMMIT would answer
    /// ROLLBACK without an error.
    var isTransactionAborted: Bool {
        guard let handle else { return false }
        return cauth_pq_transaction_status(handle) == Int32(CAUTH_PQTRANS_INERROR)
    }

    private func run(_ sql: String, _ arguments: [SQLValue]) throws(PostgresError) -> [Row] {
        let handle = try open()
        var texts: [String?] = []
        texts.reserveCapacity(arguments.count)
        for (index, argument) in arguments.enumerated() {
            texts.append(try PostgresText.parameter(argument, index: index))
        }
        guard !sql.utf8.contains(0) else {
            throw PostgresError(sqlstate: "22021", step: "prepare", message: "the statement contains a NUL character")
        }
        var statement = try prepared(sql, handle)
        if let begin = pendingBegin {
            pendingBegin = nil
            return try run(after: begin, statement, sql: sql, texts: texts, handle)
        }
        if traceNumber != 0 { StatementTrace.record(connection: traceNumber, sql: sql, texts: texts) }
        var result = Self.execute(handle, statement.name, texts)
        if let failure = Self.failure(result, handle: handle, step: "execute"), Self.isStalePlan(failure), !isInTransaction {
            // The statement was deallocated under us (DISCARD ALL, a pooler) or a table it
            // reads changed shape: prepare it afresh and run it once more.
            cauth_pq_clear(result)
            forget(sql, handle)
            statement = try prepared(sql, handle)
            result = Self.execute(handle, statement.name, texts)
        }
        defer { cauth_pq_clear(result) }
        try check(result, step: "execute")
        return rows(result, cacheKey: sql)
    }

    /// A transaction's first statement, with its BEGIN in the same round trip.
    private func run(after begin: String, _ statement: PreparedStatement, sql: String, texts: [String?],
                     _ handle: OpaquePointer) throws(PostgresError) -> [Row] {
        if traceNumber != 0 {
            StatementTrace.recordScript(connection: traceNumber, sql: begin)
            StatementTrace.record(connection: traceNumber, sql: sql, texts: texts)
        }
        var beginResult: OpaquePointer?
        let result = withCStrings(texts) { pointers in
            cauth_pq_exec_prepared_after(handle, begin, statement.name, Int32(texts.count), pointers, &beginResult)
        }
        defer { cauth_pq_clear(result) }
        do {
            defer { cauth_pq_clear(beginResult) }
            try check(beginResult, step: "begin")
        }
        try check(result, step: "execute")
        return rows(result, cacheKey: sql)
    }

    private static func execute(_ handle: OpaquePointer, _ name: String, _ texts: [String?]) -> OpaquePointer? {
        withCStrings(texts) { pointers in
            cauth_pq_exec_prepared(handle, name, Int32(texts.count), pointers)
        }
    }

    /// 26000 invalid_sql_statement_name: the prepared statement is gone; 0A000 "cached plan
    /// must not change result type": a table it reads was altered.
    private static func isStalePlan(_ error: PostgresError) -> Bool {
        error.sqlstate == "26000" || (error.sqlstate == "0A000" && error.message.contains("cached plan"))
    }

    private func prepared(_ sql: String, _ handle: OpaquePointer) throws(PostgresError) -> PreparedStatement {
        if let cached = statements[sql] { return cached }
        if statements.count >= Self.statementCacheLimit {
            let dropped = cauth_pq_exec(handle, "DEALLOCATE ALL")
            cauth_pq_clear(dropped)
            statements.removeAll()
        }
        nextStatementNumber += 1
        let name = "auth_emulator_\(nextStatementNumber)"
        let result = cauth_pq_prepare(handle, name, sql)
        defer { cauth_pq_clear(result) }
        // The SQL text is the program's own (values travel as arguments), so an excerpt names
        // the statement a schema lacks a column for without exposing data.
        try check(result, step: "prepare \"\(Self.excerpt(sql))\"")
        let statement = PreparedStatement(name: name)
        statements[sql] = statement
        return statement
    }

    private func forget(_ sql: String, _ handle: OpaquePointer) {
        guard let statement = statements.removeValue(forKey: sql) else { return }
        let result = cauth_pq_exec(handle, "DEALLOCATE \(Self.quoteIdentifier(statement.name))")
        cauth_pq_clear(result)
    }

    /// Rows of a TUPLES_OK result, each cell normalised by its column's type OID. Rows of one
    /// statement share their column list and name index while the columns stay the same.
    private func rows(_ result: OpaquePointer?, cacheKey: String) -> [Row] {
        changes = 0
        guard let result else { return [] }
        let raw = result
        if let count = cauth_pq_cmd_tuples(raw), count.pointee != 0 {
            changes = Int(String(cString: count)) ?? 0
        }
        guard cauth_pq_result_status(raw) == Int32(CAUTH_PGRES_TUPLES_OK) else { return [] }
        let fieldCount = Int(cauth_pq_nfields(raw))
        let rowCount = Int(cauth_pq_ntuples(raw))
        var names: [String] = []
        var types: [UInt32] = []
        names.reserveCapacity(fieldCount)
        types.reserveCapacity(fieldCount)
        for column in 0..<fieldCount {
            names.append(String(cString: cauth_pq_fname(raw, Int32(column))))
            types.append(cauth_pq_ftype(raw, Int32(column)))
        }
        let positions: ColumnPositions
        if let cached = statements[cacheKey]?.layout, cached.names == names {
            positions = cached.positions
        } else {
            positions = ColumnPositions(names)
            statements[cacheKey]?.layout = (names, positions)
        }
        var rows: [Row] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [SQLValue] = []
            values.reserveCapacity(fieldCount)
            for column in 0..<fieldCount {
                if cauth_pq_getisnull(raw, Int32(row), Int32(column)) != 0 {
                    values.append(.null)
                    continue
                }
                let length = Int(cauth_pq_getlength(raw, Int32(row), Int32(column)))
                let start = UnsafeRawPointer(cauth_pq_getvalue(raw, Int32(row), Int32(column))!)
                let bytes = UnsafeBufferPointer(start: start.assumingMemoryBound(to: UInt8.self), count: length)
                values.append(PostgresText.value(bytes, type: types[column]))
            }
            rows.append(Row(columns: names, positions: positions, values: values))
        }
        return rows
    }

    // MARK: Errors

    private func open() throws(PostgresError) -> OpaquePointer {
        guard let handle else { throw Self.closedError }
        return handle
    }

    private static var closedError: PostgresError {
        PostgresError(sqlstate: PostgresError.closed, step: "use", message: "the connection is closed")
    }

    private static func excerpt(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: { $0 == "\n" || $0 == "\t" || $0 == " " }).joined(separator: " ")
        return flat.count > 120 ? String(flat.prefix(120)) + "…" : flat
    }

    private func check(_ result: OpaquePointer?, step: String) throws(PostgresError) {
        guard let handle else { throw Self.closedError }
        if let failure = Self.failure(result, handle: handle, step: step) {
            throw failure
        }
    }

    private static func failure(_ result: OpaquePointer?, handle: OpaquePointer, step: String) -> PostgresError? {
        guard let result else {
            // No result at all: out of memory or the connection is gone.
            return PostgresError(sqlstate: PostgresError.connectionFailure, step: step,
                                 message: trimmed(String(cString: cauth_pq_error_message(handle))))
        }
        let raw = result
        let status = cauth_pq_result_status(raw)
        if status == Int32(CAUTH_PGRES_COMMAND_OK) || status == Int32(CAUTH_PGRES_TUPLES_OK) || status == Int32(CAUTH_PGRES_EMPTY_QUERY) {
            return nil
        }
        return error(from: raw, handle: handle, step: step)
    }

    private static func error(from result: OpaquePointer, handle: OpaquePointer, step: String) -> PostgresError {
        func field(_ code: Int32) -> String? {
            cauth_pq_result_error_field(result, code).map { String(cString: $0) }
        }
        let lost = cauth_pq_status(handle) != Int32(CAUTH_PG_CONNECTION_OK)
        let sqlstate = field(Int32(CAUTH_PG_DIAG_SQLSTATE)) ?? (lost ? PostgresError.connectionFailure : PostgresError.unknown)
        let message = field(Int32(CAUTH_PG_DIAG_MESSAGE_PRIMARY))
            ?? trimmed(String(cString: cauth_pq_result_error_message(result)))
        return PostgresError(
            sqlstate: sqlstate, step: step, message: message.isEmpty ? trimmed(String(cString: cauth_pq_error_message(handle))) : message,
            detail: field(Int32(CAUTH_PG_DIAG_MESSAGE_DETAIL)), hint: field(Int32(CAUTH_PG_DIAG_MESSAGE_HINT)),
            context: field(Int32(CAUTH_PG_DIAG_CONTEXT)), severity: field(Int32(CAUTH_PG_DIAG_SEVERITY_NONLOCALIZED)),
            schema: field(Int32(CAUTH_PG_DIAG_SCHEMA_NAME)), table: field(Int32(CAUTH_PG_DIAG_TABLE_NAME)),
            column: field(Int32(CAUTH_PG_DIAG_COLUMN_NAME)), constraint: field(Int32(CAUTH_PG_DIAG_CONSTRAINT_NAME)))
    }

    fileprivate static func trimmed(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last, last == "\n" || last == " " { text.removeLast() }
        return String(text)
    }

    // MARK: Session

    /// Fixed formats the value codec relies on, the search path, and the role GoTrue runs as.
    private func setUpSession() throws(PostgresError) -> PostgresSession {
        let handle = try open()
        var script = "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'; "
            + "SET bytea_output = 'hex'; SET client_encoding = 'UTF8'; SET extra_float_digits = 1; "
        script += "SET search_path = " + (options.searchPath.isEmpty ? "''" : options.searchPath.map(Self.quoteIdentifier).joined(separator: ", ")) + "; "
        let named = cauth_pq_parameter_status(handle, "application_name").map { String(cString: $0) } ?? ""
        if named.isEmpty {
            script += "SET application_name = " + Self.quoteLiteral(options.applicationName) + "; "
        }
        try executeScript(script)

        let target = options.role ?? ""
        guard let facts = try queryFirst(
            """
            SELECT session_user::text AS login, r.rolsuper AS superuser, t.oid IS NOT NULL AS target_exists,
                   current_database()::text || ' @ ' || pg_postmaster_start_time()::text AS identity,
                   t.oid IS NOT NULL AND pg_has_role(session_user, t.oid, 'MEMBER') AS may_assume
            FROM pg_roles r LEFT JOIN pg_roles t ON t.rolname = $1
            WHERE r.rolname = session_user
            """, .text(target)) else {
            throw PostgresError(sqlstate: PostgresError.unknown, step: "session setup", message: "the login role is not in pg_roles")
        }
        let login = facts.string("login") ?? ""
        let superuser = facts.bool("superuser") ?? false
        var warnings: [String] = []
        if let role = options.role, role != login {
            if facts.bool("may_assume") == true {
                try executeScript("SET ROLE " + Self.quoteIdentifier(role))
            } else if facts.bool("target_exists") != true && superuser {
                warnings.append(
                    "connected as superuser \(login) and role \(role) does not exist: the emulator writes as a superuser, "
                        + "so app triggers and policies that would fail under GoTrue (no SECURITY DEFINER, missing grants) succeed here; "
                        + "create the role (Postgres bootstrap) or connect as \(role)")
            } else if facts.bool("target_exists") != true {
                warnings.append("role \(role) does not exist: the emulator writes as \(login), not as GoTrue's role")
            } else {
                warnings.append("login role \(login) may not SET ROLE \(role): the emulator writes as \(login), not as GoTrue's role")
            }
        }
        let current = try scalar("SELECT current_user::text").stringValue ?? login
        let version = Int(cauth_pq_server_version(handle))
        var session = PostgresSession(loginRole: login, currentRole: current, loginIsSuperuser: superuser, serverVersion: version, warnings: warnings)
        session.databaseIdentity = facts.string("identity") ?? ""
        return session
    }

    /// An SQL identifier in double quotes (embedded quotes doubled).
    static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// An SQL string literal (embedded quotes doubled; standard_conforming_strings is on
    /// since 9.1, so backslashes are plain characters).
    static func quoteLiteral(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
    }
}

// MARK: Transactions

extension PostgresConnection {
    /// Runs `body` in a transaction: BEGIN (READ ONLY when asked) … COMMIT, or ROLLBACK when
    /// `body` throws. Called inside another transaction it nests as a SAVEPOINT: a throw undoes
    /// only the nested part and leaves the outer transaction usable (in Postgres any failed
    /// statement aborts the whole transaction, so a caller that wants to survive one failure
    /// runs that statement in a nested transaction). A nested call inherits the outer
    /// transaction's access mode.
    public func transaction<T>(readOnly: Bool = false, _ body: (PostgresConnection) throws -> T) throws -> T {
        if transactionDepth > 0 { return try savepoint(body) }
        try execute(readOnly ? "BEGIN READ ONLY" : "BEGIN")
        transactionDepth = 1
        defer { transactionDepth = 0 }
        let result: T
        do {
            result = try body(self)
        } catch {
            rollbackIfNeeded()
            throw error
        }
        // COMMIT of a transaction an earlier statement aborted answers ROLLBACK without an
        // error; the caller must hear that nothing was saved.
        if let handle, cauth_pq_transaction_status(handle) == Int32(CAUTH_PQTRANS_INERROR) {
            rollbackIfNeeded()
            throw PostgresError(sqlstate: "25P02", step: "commit", message: "the transaction was aborted by an earlier failed statement and was rolled back")
        }
        do {
            try execute("COMMIT")
        } catch {
            rollbackIfNeeded()
            throw error
        }
        return result
    }

    private func savepoint<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let name = "nested_\(transactionDepth)"
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        return try inSavepoint(named: name, execute: { (sql) throws(PostgresError) in try execute(sql) },
                               isInTransaction: { isInTransaction }) { try body(self) }
    }

    private func rollbackIfNeeded() {
        if pendingBegin != nil {
            pendingBegin = nil
            return
        }
        if isInTransaction {
            try? executeScript("ROLLBACK")
        }
    }
}

// MARK: libpq glue

private struct PreparedStatement {
    let name: String
    /// The result columns last seen and their shared name index.
    var layout: (names: [String], positions: ColumnPositions)?
}

/// Calls `body` with NUL-terminated copies of `texts` (NULL for nil), alive during the call.
private func withCStrings<R>(_ texts: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    var storage: [UnsafeMutablePointer<CChar>?] = texts.map { text in
        guard let text else { return nil }
        let utf8 = Array(text.utf8CString)
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count)
        copy.initialize(from: utf8, count: utf8.count)
        return copy
    }
    defer { for pointer in storage { pointer?.deallocate() } }
    return storage.withUnsafeMutableBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: max(buffer.count, 1)) { body($0) }
    }
}

/// Notices collected by libpq's notice receiver, read by the connection's owner. Only the
/// connection's thread touches it (libpq calls the receiver inside the call that got the
/// notice), so no lock.
private final class NoticeBox {
    var notices: [PostgresNotice] = []
    static let limit = 100

    func take() -> [PostgresNotice] {
        defer { notices.removeAll() }
        return notices
    }
}

private func receiveNotice(_ context: UnsafeMutableRawPointer?, _ result: OpaquePointer?) {
    guard let context, let result else { return }
    let box = Unmanaged<NoticeBox>.fromOpaque(context).takeUnretainedValue()
    let raw = result
    func field(_ code: Int32) -> String? {
        cauth_pq_result_error_field(raw, code).map { String(cString: $0) }
    }
    if box.notices.count >= NoticeBox.limit { box.notices.removeFirst() }
    box.notices.append(PostgresNotice(
        severity: field(Int32(CAUTH_PG_DIAG_SEVERITY_NONLOCALIZED)) ?? "NOTICE",
        sqlstate: field(Int32(CAUTH_PG_DIAG_SQLSTATE)) ?? "00000",
        message: field(Int32(CAUTH_PG_DIAG_MESSAGE_PRIMARY)) ?? "",
        context: field(Int32(CAUTH_PG_DIAG_CONTEXT))))
}
