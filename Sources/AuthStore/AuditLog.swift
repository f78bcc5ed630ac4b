extension Connection {
    /// Appends to `audit_log_entries` (payload is GoTrue's JSON audit payload).
    public func insertAuditLogEntry(id: String, payload: String, ipAddress: String, at time: Int64) throws(StoreError) {
        if let postgres {
            return try postgres.store { try $0.insertAuditLogEntry(id: id, payload: payload, ipAddress: ipAddress, at: time) }
        }
        try execute(
            "INSERT INTO audit_log_entries (id, instance_id, payload, created_at, ip_address) VALUES (?, '00000000-0000-0000-0000-000000000000', ?, ?, ?)",
            .text(id), .text(payload), .integer(time), .text(ipAddress)
        )
    }
}
