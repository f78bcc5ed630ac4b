/// The admin API's listings and the dashboard's search over `auth.users` and
/// `auth.audit_log_entries` in Postgres mode.
///
/// Rows that tie on `created_at` (a frozen virtual clock gives many one time) are ordered by
/// physical position (`ctid`), which for rows never updated is insertion order, where SQLite's
/// `rowid` breaks the tie.
extension PostgresConnection {
    private typealias A = PostgresArguments

    /// GoTrue's `FindUsersInAudience` as it queries Postgres: `instance_id` the nil uuid and
    /// `aud` equal; with a filter, `email LIKE '%filter%'` (case-sensitive; the filter's own
    /// `%`, `_` and `\` keep their LIKE meaning, as GoTrue does not escape them) or
    /// `raw_user_meta_data->>'full_name' ILIKE '%filter%'`; ordered by `created_at`; pop's
    /// `Paginate` (a count of every matching row, then LIMIT/OFFSET). A row a seed script wrote
    /// with a NULL `instance_id` is not listed, as GoTrue does not list it.
    func users(aud: String, filter: String, ascending: Bool, paging: Paging) throws(PostgresError) -> Page<UserRecord> {
        var condition = "instance_id = '\(A.instanceID)' AND aud = $1"
        var arguments: [SQLValue] = [.text(aud)]
        if !filter.isEmpty {
            condition += " AND (email LIKE $2 OR raw_user_meta_data->>'full_name' ILIKE $2)"
            arguments.append(.text("%" + filter + "%"))
        }
        let total = try scalar("SELECT count(*) FROM auth.users WHERE \(condition)", arguments).int64Value ?? 0
        let direction = ascending ? "ASC" : "DESC"
        let rows = try query(
            """
            \(UserRecord.postgresSelect) WHERE \(condition) ORDER BY created_at \(direction), ctid \(direction) \
            LIMIT $\(arguments.count + 1) OFFSET $\(arguments.count + 2)
            """,
            arguments + [.integer(paging.limit), .integer(paging.offset)]
        )
        return Page(items: try rows.map { row throws(PostgresError) in try UserRecord(postgresRow: row) }, total: Int(total))
    }

    /// The dashboard's search (`Connection.searchUsers`): the same fields, matched literally
    /// (`strpos`). Both sides go through Postgres' `lower()`, which also folds letters beyond
    /// ASCII. Every user of the audience is searched, whatever its `instance_id`: the dashboard
    /// shows what is in the table.
    func searchUsers(aud: String, term: Connection.UserSearchTerm, paging: Paging) throws(PostgresError) -> Page<UserRecord> {
        var condition = "aud = $1"
        var arguments: [SQLValue] = [.text(aud)]
        switch term {
        case .id(let id):
            condition += " AND id = $2::uuid"
            arguments.append(.text(id))
        case .text(let needle, let phone):
            condition += """
                 AND (strpos(lower(email), lower($2)) > 0 OR strpos(phone, $3) > 0 OR strpos(id::text, lower($2)) > 0
                 OR strpos(lower(raw_user_meta_data->>'full_name'), lower($2)) > 0
                 OR strpos(lower(raw_user_meta_data->>'name'), lower($2)) > 0)
                """
            arguments += [.text(needle), .text(phone)]
        }
        let rows = try query(
            """
            \(UserRecord.postgresSelect) WHERE \(condition) ORDER BY created_at DESC, ctid DESC \
            LIMIT $\(arguments.count + 1) OFFSET $\(arguments.count + 2)
            """,
            arguments + [.integer(paging.limit), .integer(paging.offset)]
        )
        let total = try paging.total(found: rows.count) { () throws(PostgresError) in
            try scalar("SELECT count(*) FROM auth.users WHERE \(condition)", arguments).int64Value ?? 0
        }
        return Page(items: try rows.map { row throws(PostgresError) in try UserRecord(postgresRow: row) }, total: total)
    }

    /// GoTrue's `FindAuditLogEntries`: `instance_id` the nil uuid, newest first, and with
    /// `columns` any of `payload->>'column' ILIKE '%value%'`. A dotted column
    /// (`traits.user_id`) is a path into the payload here (`#>>`), as the SQLite path's
    /// `json_extract` reads it; GoTrue's own filter columns have no dot.
    func auditLogEntries(columns: [String], value: String, paging: Paging) throws(PostgresError) -> Page<AuditLogRecord> {
        var condition = "instance_id = '\(A.instanceID)'"
        var arguments: [SQLValue] = []
        if !columns.isEmpty && !value.isEmpty {
            arguments.append(.text("%" + value + "%"))
            condition += " AND (" + columns.map { column in
                arguments.append(.postgresTextArray(column.split(separator: ".", omittingEmptySubsequences: false).map(String.init)))
                return "payload #>> $\(arguments.count)::text[] ILIKE $1"
            }.joined(separator: " OR ") + ")"
        }
        let total = try scalar("SELECT count(*) FROM auth.audit_log_entries WHERE \(condition)", arguments).int64Value ?? 0
        let rows = try query(
            """
            SELECT id, payload, created_at, ip_address FROM auth.audit_log_entries WHERE \(condition)
            ORDER BY created_at DESC, ctid DESC LIMIT $\(arguments.count + 1) OFFSET $\(arguments.count + 2)
            """,
            arguments + [.integer(paging.limit), .integer(paging.offset)]
        )
        return Page(items: rows.map(AuditLogRecord.init(row:)), total: Int(total))
    }

    /// The newest audit entry's time (in place of SQLite's rowid) and id: still a change
    /// detector, as an appended entry has a new id even when the clock stands still. GoTrue's
    /// table has no index on `created_at`, so this reads the whole table: cheap at the sizes a
    /// development database holds.
    func newestAuditLogEntry() throws(PostgresError) -> (rowid: Int64, id: String)? {
        guard let row = try queryFirst("SELECT id, created_at FROM auth.audit_log_entries ORDER BY created_at DESC NULLS LAST, ctid DESC LIMIT 1")
        else { return nil }
        return (row.int64("created_at") ?? 0, row.string("id") ?? "")
    }

    func setIdentityProviderID(id: String, providerID: String, identityData: String, at time: Int64) throws(PostgresError) {
        try execute("UPDATE auth.identities SET provider_id = $1, identity_data = $2, updated_at = $3 WHERE id = $4",
                    .text(providerID), .text(identityData), A.time(time), .text(id))
    }
}

extension AuditLogRecord {
    init(row: Row) {
        self.init(id: row.string("id") ?? "", payload: row.string("payload") ?? "{}",
                  createdAt: row.int64("created_at") ?? 0, ipAddress: row.string("ip_address") ?? "")
    }
}
