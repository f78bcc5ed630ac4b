/// Whole-database operations behind the emulator's reset, export and import: they work on
/// every data table the schema has (read from `sqlite_schema`), so a table added by a later
/// migration is reset, exported and imported without changes here. In Postgres mode the same
/// operations run over the `auth` and `auth_emulator` schemas (`Snapshot+Postgres.swift`).
///
/// Table and column names are only ever taken from the schema itself (`sqlite_schema`,
/// `pragma_table_xinfo`) before being spliced into SQL, and quoted; values travel as `?`
/// arguments.
public struct TableDump: Sendable, Equatable {
    public var name: String
    /// The writable columns (generated columns are left out: the database recomputes them).
    public var columns: [String]
    /// Rows in insertion (`rowid`) order, values in `columns` order.
    public var rows: [[SQLValue]]

    public init(name: String, columns: [String], rows: [[SQLValue]]) {
        self.name = name
        self.columns = columns
        self.rows = rows
    }
}

extension TableDump {
    /// Data tables that hold the emulator's own private keys: the fake identity providers' RSA
    /// key (`idp_signing_keys`) and the software authenticator's credential keys
    /// (`emulator_authenticator_keys`). An export leaves them out unless asked for. A project
    /// restored without them still works: the providers make a new key when they next sign, and
    /// the authenticator holds no credentials until it registers new ones.
    public static let secretTables: Set<String> = ["idp_signing_keys", "emulator_authenticator_keys"]
}

extension Connection {
    /// The tables holding project data: every table except SQLite's own, the migration record
    /// and the project's signing keys (configuration kept across resets and imports), parents
    /// before the tables whose foreign keys point at them.
    public func dataTables() throws(StoreError) -> [String] {
        if let postgres { return try postgres.store { try $0.dataTables().map(\.name) } }
        let names = try query(
            """
            SELECT name FROM sqlite_schema
            WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'schema_migrations'
            ORDER BY name
            """
        ).compactMap { $0.string("name") }.filter { $0 != ProjectSigningKeysSchema.table }
        var parents: [String: Set<String>] = [:]
        for name in names {
            let referenced = try query("SELECT \"table\" AS parent FROM pragma_foreign_key_list(?)", .text(name))
                .compactMap { $0.string("parent") }
            parents[name] = Set(referenced).subtracting([name]).intersection(names)
        }
        return Connection.parentsFirst(names, parents: parents)
    }

    /// `names` with every table after the tables in `parents[name]`: Kahn's algorithm, in
    /// `names` order among the ready ones so the order is stable.
    static func parentsFirst(_ names: [String], parents: [String: Set<String>]) -> [String] {
        var ordered: [String] = []
        var remaining = names
        while !remaining.isEmpty {
            let placed = Set(ordered)
            guard let next = remaining.first(where: { parents[$0, default: []].isSubset(of: placed) }) else {
                // A reference cycle (none in these schemas): keep the rest in order.
                ordered += remaining
                break
            }
            ordered.append(next)
            remaining.removeAll { $0 == next }
        }
        return ordered
    }

    /// The columns of `table` that can be written: generated and hidden columns are excluded.
    public func writableColumns(of table: String) throws(StoreError) -> [String] {
        if let postgres {
            return try postgres.store { connection in
                guard let found = try connection.dataTable(named: table) else { return [] }
                return try connection.writableColumns(of: found).map(\.name)
            }
        }
        return try query("SELECT name, hidden FROM pragma_table_xinfo(?) ORDER BY cid", .text(table))
            .filter { ($0.int64("hidden") ?? 0) == 0 }
            .compactMap { $0.string("name") }
    }

    /// Every row of a data table.
    public func dumpTable(_ table: String) throws(StoreError) -> TableDump {
        if let postgres { return try postgres.store { try $0.dumpTable(table) } }
        guard try dataTables().contains(table) else {
            throw StoreError(code: 1, message: "dump: no data table named \(table)")
        }
        let columns = try writableColumns(of: table)
        let list = columns.map(Connection.quoted).joined(separator: ", ")
        let rows = try query("SELECT \(list) FROM \(Connection.quoted(table)) ORDER BY rowid")
        return TableDump(name: table, columns: columns, rows: rows.map { row in columns.indices.map { row[position: $0] } })
    }

    /// Inserts rows into a data table. `dump.columns` must be writable columns of the table
    /// (checked against the schema); columns left out take their defaults.
    public func restoreTable(_ dump: TableDump) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.restoreTable(dump) } }
        let writable = Set(try writableColumns(of: dump.name))
        guard !writable.isEmpty else { throw StoreError(code: 1, message: "restore: no data table named \(dump.name)") }
        for column in dump.columns where !writable.contains(column) {
            throw StoreError(code: 1, message: "restore: table \(dump.name) has no writable column \(column)")
        }
        guard !dump.rows.isEmpty, !dump.columns.isEmpty else { return }
        let list = dump.columns.map(Connection.quoted).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: dump.columns.count).joined(separator: ", ")
        let sql = "INSERT INTO \(Connection.quoted(dump.name)) (\(list)) VALUES (\(placeholders))"
        for row in dump.rows {
            guard row.count == dump.columns.count else {
                throw StoreError(code: 1, message: "restore: a row of \(dump.name) has \(row.count) values for \(dump.columns.count) columns")
            }
            try execute(sql, row)
        }
    }

    /// Deletes every row of every data table (children first) and restarts AUTOINCREMENT
    /// counters: the state of a freshly migrated database. Run it inside `Database.write`.
    ///
    /// In Postgres mode the rows go with DELETE, so the app's foreign keys to `auth` cascade
    /// (or, without ON DELETE CASCADE, fail the reset with an error naming the constraint).
    public func deleteAllData() throws(StoreError) {
        if let postgres { return try postgres.store { try $0.deleteAllData() } }
        // Foreign keys stay immediate: a violation fails its own statement. Deferring them to
        // COMMIT would, under group commit, fail the other writes sharing that COMMIT too.
        for table in try dataTables().reversed() {
            try execute("DELETE FROM \(Connection.quoted(table))")
        }
        let hasSequence = try scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_sequence'")
        if hasSequence.int64Value == 1 { try execute("DELETE FROM sqlite_sequence") }
    }

    /// An SQL identifier in double quotes (https://sqlite.org/lang_keywords.html).
    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
