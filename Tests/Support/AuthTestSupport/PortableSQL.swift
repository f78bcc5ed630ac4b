// SQL a test runs on the harness's store itself (to count rows, read a column, age a row, write
// a value no endpoint would), on whichever backend `TestStore` gave it: the same statement runs
// on SQLite and, in the Postgres pass, on GoTrue's `auth` schema. The store's generic statement
// methods take only SQLite SQL in Postgres mode (anything else there is a store method not yet
// written for Postgres), so these go to the Postgres connection directly.
@testable import AuthStore

extension Connection {
    /// Runs `sql`, written in what both stores take: unqualified table names (the store's
    /// Postgres session has `search_path = auth`), `?` placeholders, `true`/`false` for
    /// booleans, and `timestamp(_:)` for a time argument.
    public func execute(portable sql: String, _ arguments: SQLValue...) throws {
        _ = try query(portable: sql, arguments)
    }

    public func query(portable sql: String, _ arguments: SQLValue...) throws -> [Row] {
        try query(portable: sql, arguments)
    }

    /// The first column of the first row, or `.null`.
    public func scalar(portable sql: String, _ arguments: SQLValue...) throws -> SQLValue {
        guard let row = try query(portable: sql, arguments).first, !row.columns.isEmpty else { return .null }
        return row[position: 0]
    }

    /// A time argument: SQLite's columns hold microseconds since the epoch, GoTrue's hold
    /// `timestamptz`.
    public func timestamp(_ microseconds: Int64) -> SQLValue {
        postgres == nil ? .integer(microseconds) : .postgresTimestamp(microseconds)
    }

    /// Moves `column` of every row of `table` `seconds` into the past (a session made a day
    /// ago, a code sent an hour ago), in the column's own unit.
    public func moveBack(_ table: String, _ column: String, seconds: Int64) throws {
        let earlier = postgres == nil ? "\(column) - \(seconds * 1_000_000)" : "\(column) - interval '\(seconds) seconds'"
        try execute(portable: "UPDATE \(table) SET \(column) = \(earlier)")
    }

    private func query(portable sql: String, _ arguments: [SQLValue]) throws -> [Row] {
        guard let postgres else { return try query(sql, arguments) }
        // libpq numbers its placeholders ($1, $2, ...); no test's SQL has a `?` in a literal.
        var numbered = ""
        var count = 0
        for character in sql {
            if character == "?" {
                count += 1
                numbered += "$\(count)"
            } else {
                numbered.append(character)
            }
        }
        return try postgres.store { try $0.query(numbered, arguments) }
    }
}

extension Connection {
    /// Postgres mode: every row of GoTrue's and the emulator's tables but the migration records
    /// gone, and their sequences restarted, as in a database whose schema was just made.
    /// TRUNCATE gives each table new, empty files, so rows are stored in insertion order as in
    /// a new database (which rows of one microsecond come back in).
    func emptyEveryTable() throws {
        let tables = try query(portable: """
            SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
            WHERE (schemaname = 'auth' AND tablename <> 'schema_migrations')
               OR (schemaname = 'auth_emulator' AND tablename <> 'migrations')
            """).compactMap { $0.string("name") }
        guard !tables.isEmpty else { return }
        try execute(portable: "TRUNCATE \(tables.joined(separator: ", ")) RESTART IDENTITY")
    }
}
