import GoFormats

/// The Postgres side of `Connection`: the transaction control `Database` issues, and the
/// glue the per-table Postgres statements (`*+Postgres.swift`) share.
extension Connection {
    /// Runs one of the transaction-control statements `ConnectionPool` and `Connection` issue
    /// (written for SQLite) in its Postgres form; any other SQL reaching the generic statement
    /// methods in Postgres mode comes from a store method not yet written for Postgres.
    ///
    /// - `BEGIN IMMEDIATE` (a write) is `BEGIN`: read committed, as GoTrue runs. A connection
    ///   the server dropped is re-opened first (nothing of a transaction is lost then).
    /// - `BEGIN DEFERRED` (a read) is `BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ` on a
    ///   read-only connection, so a read sees one snapshot as in SQLite; `BEGIN` otherwise.
    /// - `COMMIT` of a transaction a failed statement aborted would answer ROLLBACK without an
    ///   error: it is rolled back and reported instead, so no caller believes it saved.
    /// - SAVEPOINT, RELEASE, ROLLBACK [TO] are the same statements in Postgres.
    func runTransactionControl(_ sql: String, on postgres: PostgresConnection, caller: StaticString) throws(StoreError) {
        let statement: String
        switch sql {
        case "BEGIN IMMEDIATE":
            try reopenIfDropped(postgres)
            statement = "BEGIN"
        case "BEGIN DEFERRED":
            try reopenIfDropped(postgres)
            statement = readOnly ? "BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ" : "BEGIN"
        case "COMMIT":
            if postgres.isTransactionAborted {
                try? postgres.executeScript("ROLLBACK")
                throw StoreError(PostgresError(
                    sqlstate: "25P02", step: "commit",
                    message: "the transaction was aborted by an earlier failed statement and was rolled back"))
            }
            statement = sql
        case "ROLLBACK":
            statement = sql
        case _ where sql.hasPrefix("SAVEPOINT ") || sql.hasPrefix("RELEASE ") || sql.hasPrefix("ROLLBACK TO "):
            statement = sql
        default:
            throw StoreError.notInPostgresMode(caller)
        }
        do {
            if statement.hasPrefix("BEGIN") {
                // Sent with the transaction's first statement, in one round trip: a GET /user
                // in this mode is six round trips otherwise (bench/results/HISTORY.md).
                try postgres.beginLazily(statement)
            } else {
                // The simple query protocol: control statements are not worth a prepared
                // statement each (savepoint names vary with depth).
                try postgres.executeScript(statement)
            }
        } catch {
            throw StoreError(error)
        }
    }

    /// A statement with no result that each backend spells its own way: `sqlite` with `?`
    /// placeholders, `pgSQL` on GoTrue's `auth` schema with `$n` ones, bound to `pgArguments`
    /// when its values differ from SQLite's (times), else to `arguments`. In Postgres mode each
    /// of `uuids` must be a uuid or nothing runs: such an id names no row there, as in SQLite,
    /// where binding it to a uuid column would raise 22P02 instead. `pgArguments` is built only
    /// in Postgres mode: a SQLite refresh revokes a token through here.
    func execute(_ sqlite: String, _ arguments: [SQLValue], postgres pgSQL: String,
                 _ pgArguments: @autoclosure () -> [SQLValue]? = nil, ifUUID uuids: String...) throws(StoreError) {
        if let postgres {
            guard uuids.allSatisfy({ UUIDText.isValid($0) }) else { return }
            return try postgres.store { try $0.execute(pgSQL, pgArguments() ?? arguments) }
        }
        try execute(sqlite, arguments)
    }

    private func reopenIfDropped(_ postgres: PostgresConnection) throws(StoreError) {
        guard !postgres.isConnected else { return }
        do {
            try postgres.reconnect()
        } catch {
            throw StoreError(error)
        }
    }
}

extension PostgresConnection {
    /// Runs a store method's Postgres statements: a Postgres failure becomes the store's error
    /// (carrying it), a `StoreError` passes as it is (`StoreError(postgresMode:)`).
    func store<T>(_ body: (PostgresConnection) throws -> T) throws(StoreError) -> T {
        do {
            return try body(self)
        } catch {
            throw StoreError(postgresMode: error)
        }
    }

    /// `store(_:)` for a lookup or change by id: when one of `ids` is not a uuid, `absent`
    /// without asking the server. Such an id names no row, as in SQLite, where its TEXT column
    /// simply matches nothing; bound to a `uuid` column here it would raise 22P02
    /// (invalid_text_representation) instead, and abort the transaction.
    func store<T>(ifUUID ids: String..., else absent: @autoclosure () -> T,
                  _ body: (PostgresConnection) throws -> T) throws(StoreError) -> T {
        guard ids.allSatisfy({ UUIDText.isValid($0) }) else { return absent() }
        return try store(body)
    }
}

/// Conversions the Postgres statements share.
enum PostgresArguments {
    /// GoTrue's `instance_id` on every row it writes: the nil uuid.
    static let instanceID = "00000000-0000-0000-0000-000000000000"

    /// A timestamptz/timestamp argument.
    static func time(_ microseconds: Int64?) -> SQLValue { .postgresTimestamp(microseconds) }

    /// A column GoTrue models as a non-pointer Go string: never NULL, '' for none.
    static func goString(_ text: String?) -> SQLValue { .text(text ?? "") }

    /// An `inet` argument: NULL for none or '' (which `inet` refuses).
    static func inet(_ address: String?) -> SQLValue {
        guard let address, !address.isEmpty else { return .null }
        return .text(address)
    }
}
