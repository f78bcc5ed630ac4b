extension AuditLogRecord {
    public init(id: String, payload: String, ipAddress: String, at time: Int64) {
        self.init(id: id, payload: payload, createdAt: time, ipAddress: ipAddress)
    }
}

extension Connection {
    /// Appends to `audit_log_entries` (payload is GoTrue's JSON audit payload).
    public func insertAuditLogEntry(id: String, payload: String, ipAddress: String, at time: Int64) throws(StoreError) {
        if let postgres {
            return try postgres.store { try $0.insertAuditLogEntry(id: id, payload: payload, ipAddress: ipAddress, at: time) }
        }
        try execute(Self.auditLogInserts[0], .text(id), .text(payload), .integer(time), .text(ipAddress))
    }

    /// Appends entries in order, as that many `insertAuditLogEntry` calls would. In SQLite they
    /// are one statement (a refresh writes two entries, and a statement's run costs about as much
    /// as the row); Postgres mode inserts them one by one, as GoTrue does, so a statement-level
    /// trigger on `auth.audit_log_entries` fires once per entry there too.
    public func insertAuditLogEntries(_ entries: [AuditLogRecord]) throws(StoreError) {
        guard entries.count > 1, postgres == nil else {
            for entry in entries {
                try insertAuditLogEntry(id: entry.id, payload: entry.payload, ipAddress: entry.ipAddress, at: entry.createdAt)
            }
            return
        }
        var arguments: [SQLValue] = []
        arguments.reserveCapacity(4 * entries.count)
        for entry in entries {
            arguments += [.text(entry.id), .text(entry.payload), .integer(entry.createdAt), .text(entry.ipAddress)]
        }
        let sql = entries.count <= Self.auditLogInserts.count ? Self.auditLogInserts[entries.count - 1]
            : Self.auditLogInsert(rows: entries.count)
        try execute(sql, arguments)
    }

    /// The INSERTs of one to four entries, built once (statements are cached by their text).
    private static let auditLogInserts = (1...4).map(auditLogInsert(rows:))

    private static func auditLogInsert(rows: Int) -> String {
        let row = "(?, '00000000-0000-0000-0000-000000000000', ?, ?, ?)"
        return "INSERT INTO audit_log_entries (id, instance_id, payload, created_at, ip_address) VALUES "
            + Array(repeating: row, count: rows).joined(separator: ", ")
    }
}
