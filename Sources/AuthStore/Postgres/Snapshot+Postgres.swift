/// Reset, export and import in Postgres mode, over GoTrue's `auth` schema and the emulator's
/// `auth_emulator` schema, read from the catalog (`pg_class`, `pg_attribute`,
/// `pg_constraint`) so a table a later migration adds is covered without changes here. App
/// tables in other schemas are never read or written directly: only what their foreign keys
/// to `auth` do when GoTrue's rows go.
///
/// A snapshot has the SQLite path's logical form (`TableDump`): tables by name, rows as the
/// store reads them (timestamps as unix microseconds, booleans 0/1, JSON as text, `text[]` as
/// a JSON array, `bytea` as lowercase hex as the SQLite schema stores those columns). Names
/// are GoTrue's for `auth` tables and the SQLite schema's for the emulator's own
/// (`auth_emulator.outbox` is `emulator_outbox`, `idp_signing_keys` keeps its name), and a
/// column the emulator keeps beside a GoTrue table (`SideColumn`) appears in that table's rows,
/// so the two backends' documents read alike and a SQLite snapshot imports here (its NULL
/// `instance_id`s becoming GoTrue's nil uuid, its NULL tokens GoTrue's ''). Tables only
/// Postgres mode has (GoTrue's SSO tables, `instances`, ...) are exported too, so a SQLite
/// emulator refuses such a document.
struct PostgresDataTable: Equatable {
    let schema: String
    let table: String

    /// The table's name in snapshots and in `Connection.dataTables`.
    var name: String {
        if schema == "auth" || table == "idp_signing_keys" { return table }
        return "emulator_" + table
    }

    var qualified: String { PostgresConnection.quoteIdentifier(schema) + "." + PostgresConnection.quoteIdentifier(table) }
    var label: String { "\(schema).\(table)" }

    /// Not project data: the migration records, and the project's signing keys (configuration
    /// kept across resets and imports, as on the SQLite path). Side tables (`SideColumn`) are
    /// exported and imported as their column, and emptied by their foreign key's cascade.
    static let excluded = Set(["auth.schema_migrations", "auth_emulator.migrations", "auth_emulator.project_signing_keys"]
        + SideColumn.all.map(\.sideTable))
}

/// A column the SQLite schema has and GoTrue's table has not, kept in an `auth_emulator` table
/// keyed by the row's id (ON DELETE CASCADE).
struct SideColumn {
    /// `schema.table` of GoTrue's table.
    let table: String
    let column: String
    /// `schema.table` holding it: `key` (the row's id) and `column`.
    let sideTable: String
    let key: String

    static let all = [
        SideColumn(table: "auth.flow_state", column: "redirect_to", sideTable: "auth_emulator.flow_state_redirects", key: "flow_state_id"),
    ]

    static func of(_ table: PostgresDataTable) -> SideColumn? { all.first { $0.table == table.label } }

    /// `key, column`, quoted.
    var insertColumns: String { [key, column].map(PostgresConnection.quoteIdentifier).joined(separator: ", ") }

    var qualifiedSideTable: String {
        sideTable.split(separator: ".").map { PostgresConnection.quoteIdentifier(String($0)) }.joined(separator: ".")
    }
}

/// A writable column (generated ones are left out: the database recomputes them).
struct PostgresColumn {
    let name: String
    /// `pg_type.typname`: `timestamptz`, `bytea`, `_text`, ...
    let type: String
    /// `pg_type.typcategory`: `A` for arrays.
    let category: String
    /// Set for a column kept in a side table.
    var side: SideColumn? = nil
    /// A column GoTrue models as a plain Go string (`UserRecord.goStringColumns`): '' for NULL.
    var goString = false

    /// The VALUES expression for parameter `$index`: arrays travel as JSON arrays, bytea as hex.
    func placeholder(_ index: Int) -> String {
        if category == "A" {
            return "CASE WHEN $\(index)::text IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text($\(index)::text::jsonb)) END"
        }
        if type == "bytea" { return "decode($\(index)::text, 'hex')" }
        return "$\(index)"
    }

    /// The SELECT expression that reads the column in the snapshot's form, from table `t`.
    var selection: String {
        let quoted = PostgresConnection.quoteIdentifier(name)
        if let side {
            return "(SELECT s.\(quoted) FROM \(side.qualifiedSideTable) s WHERE s.\(PostgresConnection.quoteIdentifier(side.key)) = t.id) AS \(quoted)"
        }
        return type == "bytea" ? "encode(t.\(quoted), 'hex') AS \(quoted)" : "t.\(quoted)"
    }

    /// A snapshot value as the parameter `placeholder` expects.
    func argument(_ value: SQLValue) -> SQLValue {
        switch (type, value) {
        case ("timestamptz", .integer(let microseconds)), ("timestamp", .integer(let microseconds)):
            return .postgresTimestamp(microseconds)
        case ("timestamptz", .real(let microseconds)), ("timestamp", .real(let microseconds)):
            return microseconds.isFinite ? .postgresTimestamp(Int64(exactly: microseconds.rounded()) ?? 0) : value
        case ("bytea", .blob(let bytes)):
            return .text(HexText.string(bytes))
        case ("inet", .text("")):
            return .null  // SQLite keeps '' for no address; `inet` refuses it
        case (_, .null) where goString:
            return .text("")  // the SQLite schema's NULL for none; GoTrue cannot load a NULL there
        case ("uuid", .null) where name == "instance_id":
            return .text(PostgresArguments.instanceID)  // GoTrue's value in every row it writes
        default:
            return value
        }
    }
}

extension PostgresConnection {
    /// Every data table, parents before the tables whose foreign keys point at them.
    func dataTables() throws(PostgresError) -> [PostgresDataTable] {
        var tables: [Int64: PostgresDataTable] = [:]
        for row in try query(
            """
            SELECT c.oid::bigint AS oid, n.nspname::text AS schema, c.relname::text AS name
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname IN ('auth', 'auth_emulator') AND c.relkind IN ('r', 'p') AND NOT c.relispartition
            """) {
            let table = PostgresDataTable(schema: row.string("schema") ?? "", table: row.string("name") ?? "")
            if !PostgresDataTable.excluded.contains(table.label), let oid = row.int64("oid") { tables[oid] = table }
        }
        var parents: [String: Set<String>] = [:]
        for row in try query(
            "SELECT conrelid::bigint AS child, confrelid::bigint AS parent FROM pg_constraint WHERE contype = 'f' AND conrelid <> confrelid") {
            guard let child = row.int64("child").flatMap({ tables[$0] }), let parent = row.int64("parent").flatMap({ tables[$0] }) else { continue }
            parents[child.name, default: []].insert(parent.name)
        }
        let byName = Dictionary(tables.values.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return Connection.parentsFirst(byName.keys.sorted(), parents: parents).compactMap { byName[$0] }
    }

    func dataTable(named name: String) throws(PostgresError) -> PostgresDataTable? {
        try dataTables().first { $0.name == name }
    }

    /// The table's writable columns, then its side column if it has one.
    func writableColumns(of table: PostgresDataTable) throws(PostgresError) -> [PostgresColumn] {
        var columns = try query(
            """
            SELECT a.attname::text AS name, t.typname::text AS type, t.typcategory::text AS category
            FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
            WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
            ORDER BY a.attnum
            """, .text(table.qualified)
        ).map {
            let name = $0.string("name") ?? ""
            return PostgresColumn(name: name, type: $0.string("type") ?? "", category: $0.string("category") ?? "",
                                  goString: table.label == "auth.users" && UserRecord.goStringColumns.contains(name))
        }
        if let side = SideColumn.of(table) {
            columns.append(PostgresColumn(name: side.column, type: "text", category: "S", side: side))
        }
        return columns
    }

    /// Every row, oldest first (`created_at` where the table has it, then physical order).
    func dumpTable(_ name: String) throws -> TableDump {
        guard let table = try dataTable(named: name) else {
            throw StoreError(code: 1, message: "dump: no data table named \(name)")
        }
        let columns = try writableColumns(of: table)
        let order = columns.contains { $0.name == "created_at" } ? "t.created_at, t.ctid" : "t.ctid"
        let rows = try query("SELECT \(columns.map(\.selection).joined(separator: ", ")) FROM \(table.qualified) t ORDER BY \(order)")
        return TableDump(name: name, columns: columns.map(\.name), rows: rows.map { row in columns.indices.map { row[position: $0] } })
    }

    /// Inserts the rows (a side column's values into its side table), then moves the table's
    /// serial sequences past the ids restored, so the next row the emulator writes does not
    /// collide with one. A table's `instance_id` left out takes GoTrue's nil uuid.
    func restoreTable(_ dump: TableDump) throws {
        guard let table = try dataTable(named: dump.name) else {
            throw StoreError(code: 1, message: "restore: no data table named \(dump.name)")
        }
        let writable = Dictionary(try writableColumns(of: table).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var columns: [PostgresColumn] = []
        for name in dump.columns {
            guard let column = writable[name] else {
                throw StoreError(code: 1, message: "restore: table \(dump.name) has no writable column \(name)")
            }
            columns.append(column)
        }
        guard !dump.rows.isEmpty, !columns.isEmpty else { return }
        let direct = columns.indices.filter { columns[$0].side == nil }
        var names = direct.map { PostgresConnection.quoteIdentifier(columns[$0].name) }
        var values = direct.enumerated().map { columns[$1].placeholder($0 + 1) }
        if writable["instance_id"] != nil, !dump.columns.contains("instance_id") {
            names.append("instance_id")
            values.append("'\(PostgresArguments.instanceID)'")
        }
        let side = columns.indices.filter { columns[$0].side != nil }
        let sql = """
            INSERT INTO \(table.qualified) (\(names.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))\
            \(side.isEmpty ? "" : " RETURNING id")
            """
        for row in dump.rows {
            guard row.count == columns.count else {
                throw StoreError(code: 1, message: "restore: a row of \(dump.name) has \(row.count) values for \(columns.count) columns")
            }
            let id = try queryFirst(sql, direct.map { columns[$0].argument(row[$0]) })?["id"] ?? .null
            for index in side where row[index] != .null {
                guard let kept = columns[index].side else { continue }
                try execute("INSERT INTO \(kept.qualifiedSideTable) (\(kept.insertColumns)) VALUES ($1, $2)", id, row[index])
            }
        }
        try restartSequences(of: table, afterRows: true)
    }

    /// Deletes every row of every data table, children first, with DELETE (never TRUNCATE):
    /// the app's foreign keys to `auth` act as they do when GoTrue deletes a user. ON DELETE
    /// CASCADE takes the app's rows along; a key without it makes the reset fail with an error
    /// naming the constraint, and the caller's transaction rolls back, so nothing is lost.
    /// Serial sequences restart, as SQLite's AUTOINCREMENT counters do.
    func deleteAllData() throws {
        for table in try dataTables().reversed() {
            do throws(PostgresError) {
                try execute("DELETE FROM \(table.qualified)")
            } catch {
                throw error.sqlstate == "23503" ? Self.resetBlocked(error, deleting: table) : error
            }
            try restartSequences(of: table, afterRows: false)
        }
    }

    /// A foreign-key violation of a reset, told in terms of what to change.
    private static func resetBlocked(_ error: PostgresError, deleting table: PostgresDataTable) -> PostgresError {
        let referencing = [error.schema, error.table].compactMap { $0 }.joined(separator: ".")
        let constraint = error.constraint.map { "foreign key constraint \($0)" } ?? "a foreign key constraint"
        return PostgresError(
            sqlstate: error.sqlstate, step: "reset",
            message: """
                reset cannot delete the rows of \(table.label): \(constraint)\(referencing.isEmpty ? "" : " of table \(referencing)") \
                refers to them without ON DELETE CASCADE. Reset deletes GoTrue's rows as GoTrue does, so an app table's rows \
                go with them only through ON DELETE CASCADE (or SET NULL); change the constraint, or empty \
                \(referencing.isEmpty ? "that table" : referencing) before the reset. Nothing was deleted.
                """,
            hint: error.hint, context: error.context, severity: error.severity, schema: error.schema, table: error.table,
            column: error.column, constraint: error.constraint)
    }

    /// Sets each serial (or identity) sequence of `table` to hand out 1 next, or, `afterRows`,
    /// one past the largest value the column holds. With ALTER SEQUENCE RESTART, which is
    /// transactional, not setval, which is not: a reset or import that fails and rolls back
    /// must leave the sequences past the rows it leaves, or the next insert collides.
    private func restartSequences(of table: PostgresDataTable, afterRows: Bool) throws(PostgresError) {
        let serials = try query(
            """
            SELECT a.attname::text AS name, pg_get_serial_sequence($1, a.attname) AS sequence
            FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
            AND pg_get_serial_sequence($1, a.attname) IS NOT NULL
            """, .text(table.qualified))
        for serial in serials {
            guard let name = serial.string("name"), let sequence = serial.string("sequence") else { continue }
            var next: Int64 = 1
            if afterRows, let largest = try queryFirst("SELECT max(\(Self.quoteIdentifier(name)))::bigint AS m FROM \(table.qualified)")?.int64("m") {
                next = largest + 1
            }
            // pg_get_serial_sequence's answer is already quoted as an identifier needs.
            try execute("ALTER SEQUENCE \(sequence) RESTART WITH \(next)")
        }
    }
}
