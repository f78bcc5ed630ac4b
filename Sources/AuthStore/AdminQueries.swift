import GoFormats

/// Reads and bulk changes behind the admin API (GoTrue's `FindUsersInAudience`,
/// `FindAuditLogEntries`, soft deletion): paging, counting and filtering.

/// One page of a listing plus the number of rows matching the filter on all pages.
public struct Page<Element: Sendable>: Sendable {
    public var items: [Element]
    public var total: Int
}

/// A row of `audit_log_entries`.
public struct AuditLogRecord: Sendable, Equatable {
    public var id: String
    /// GoTrue's JSON payload, as stored.
    public var payload: String
    public var createdAt: Int64
    public var ipAddress: String
}

/// Paging as pop's `Paginate(page, perPage)` applies it: pages below 1 read as 1, sizes below 1
/// as 20.
public struct Paging: Sendable, Equatable {
    public var page: Int
    public var perPage: Int

    public init(page: Int, perPage: Int) {
        self.page = page
        self.perPage = perPage
    }

    var limit: Int64 { Int64(perPage < 1 ? 20 : perPage) }

    /// The number of rows matching on all pages, given the `found` rows of this page: a first
    /// page with room to spare is its own count, so only a full or later page runs `count`.
    func total<E: Error>(found: Int, count: () throws(E) -> Int64) throws(E) -> Int {
        Int(offset == 0 && Int64(found) < limit ? Int64(found) : try count())
    }
    var offset: Int64 {
        let page = Int64(max(page, 1))
        let (product, overflow) = (page - 1).multipliedReportingOverflow(by: limit)
        return overflow ? Int64.max : product
    }
}

extension Connection {
    /// `FindUsersInAudience`: users of one audience, newest first unless `ascending`, optionally
    /// filtered by `email LIKE %filter%` (case-sensitive, as in Postgres) or
    /// `user_metadata.full_name ILIKE %filter%`.
    public func users(aud: String, filter: String, ascending: Bool, paging: Paging) throws(StoreError) -> Page<UserRecord> {
        if let postgres {
            return try postgres.store { try $0.users(aud: aud, filter: filter, ascending: ascending, paging: paging) }
        }
        var condition = "aud = ?"
        var arguments: [SQLValue] = [.text(aud)]
        if !filter.isEmpty {
            condition += """
                 AND (email GLOB ? OR lower(CAST(json_extract(raw_user_meta_data, '$.full_name') AS TEXT)) LIKE lower(?) ESCAPE '\\')
                """
            arguments.append(.text("*" + Connection.globPattern(fromLike: filter) + "*"))
            arguments.append(.text("%" + filter + "%"))
        }
        let total = try scalar("SELECT count(*) FROM users WHERE \(condition)", arguments).int64Value ?? 0
        let direction = ascending ? "ASC" : "DESC"
        let rows = try query(
            "SELECT \(UserRecord.layout.list) FROM users WHERE \(condition) ORDER BY created_at \(direction), rowid \(direction) LIMIT ? OFFSET ?",
            arguments + [.integer(paging.limit), .integer(paging.offset)]
        )
        return Page(items: rows.map(UserRecord.init(row:)), total: Int(total))
    }

    /// The dashboard's search box, which unlike `FindUsersInAudience` (the admin API keeps its
    /// filter as GoTrue has it) ignores the case of ASCII letters (as SQLite's `lower` does) and
    /// looks at every field a person types into it: email, phone (a leading `+` dropped, as
    /// phones are stored without it), `user_metadata`'s `full_name` and `name`, and the id.
    /// `text` is matched literally (`instr`, no wildcards).
    ///
    /// Cost: a whole UUID is a primary-key lookup. Anything else walks `users_created_at_idx`
    /// newest first until the page is full; the metadata's JSON is parsed only for rows whose
    /// raw text contains the needle at all. A first page with room to spare is its own count, so
    /// a search that finds a few users reads the table once, not twice.
    public func searchUsers(aud: String, text: String, paging: Paging) throws(StoreError) -> Page<UserRecord> {
        let term = UserSearchTerm(text)
        if let postgres { return try postgres.store { try $0.searchUsers(aud: aud, term: term, paging: paging) } }
        var condition = "aud = ?"
        var arguments: [SQLValue] = [.text(aud)]
        switch term {
        case .id(let id):
            condition += " AND id = ?"
            arguments.append(.text(id))
        case .text(let needle, let phone):
            // The stored JSON escapes `<`, `>`, `&` (as Go does), quotes and backslashes: a
            // needle with any of them cannot be pre-checked against the raw text.
            let raw = needle.unicodeScalars.contains { "<>&\"\\".unicodeScalars.contains($0) || $0.value < 0x20 }
                ? "1" : "instr(lower(raw_user_meta_data), ?) > 0"
            condition += """
                 AND (instr(lower(email), ?) > 0 OR instr(phone, ?) > 0 OR instr(id, ?) > 0
                 OR (\(raw) AND (instr(lower(CAST(json_extract(raw_user_meta_data, '$.full_name') AS TEXT)), ?) > 0
                 OR instr(lower(CAST(json_extract(raw_user_meta_data, '$.name') AS TEXT)), ?) > 0)))
                """
            arguments += [.text(needle), .text(phone), .text(needle)]
            if raw != "1" { arguments.append(.text(needle)) }
            arguments += [.text(needle), .text(needle)]
        }
        let rows = try query(
            "SELECT \(UserRecord.layout.list) FROM users WHERE \(condition) ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?",
            arguments + [.integer(paging.limit), .integer(paging.offset)]
        )
        let total = try paging.total(found: rows.count) { () throws(StoreError) in
            try scalar("SELECT count(*) FROM users WHERE \(condition)", arguments).int64Value ?? 0
        }
        return Page(items: rows.map(UserRecord.init(row:)), total: total)
    }

    /// What the dashboard's search box looks for, the same on both backends.
    enum UserSearchTerm {
        /// A whole uuid: one user, by primary key.
        case id(String)
        /// Anything else, matched in every field; `phone` is the needle without a leading `+`
        /// (phones are stored without it), or the needle itself when that leaves nothing.
        case text(String, phone: String)

        /// `text` with ASCII letters lowercased (as SQLite's `lower` folds them).
        init(_ text: String) {
            let needle = String(decoding: text.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
            if UUIDText.isValid(needle, lowercaseOnly: true) {
                self = .id(needle)
            } else {
                let phone = needle.hasPrefix("+") ? String(needle.dropFirst()) : needle
                self = .text(needle, phone: phone.isEmpty ? needle : phone)
            }
        }
    }

    /// A Postgres LIKE pattern (wildcards `%` and `_`, escape `\`) as the equivalent GLOB
    /// pattern, which unlike SQLite's LIKE is case-sensitive as Postgres' LIKE is.
    static func globPattern(fromLike like: String) -> String {
        var out = ""
        var escaped = false
        for c in like {
            if escaped {
                out += globLiteral(c)
                escaped = false
                continue
            }
            switch c {
            case "\\": escaped = true
            case "%": out += "*"
            case "_": out += "?"
            default: out += globLiteral(c)
            }
        }
        if escaped { out += globLiteral("\\") }
        return out
    }

    private static func globLiteral(_ c: Character) -> String {
        switch c {
        case "*", "?", "[": return "[\(c)]"
        default: return String(c)
        }
    }

    /// `FindAuditLogEntries`: newest first; with `columns`, entries whose payload has any of those
    /// string fields matching `%value%` case-insensitively (ILIKE).
    public func auditLogEntries(columns: [String], value: String, paging: Paging) throws(StoreError) -> Page<AuditLogRecord> {
        if let postgres { return try postgres.store { try $0.auditLogEntries(columns: columns, value: value, paging: paging) } }
        var condition = "1"
        var arguments: [SQLValue] = []
        if !columns.isEmpty && !value.isEmpty {
            condition = "(" + columns.map { _ in
                "lower(CAST(json_extract(payload, '$.' || ?) AS TEXT)) LIKE lower(?) ESCAPE '\\'"
            }.joined(separator: " OR ") + ")"
            for column in columns {
                arguments.append(.text(column))
                arguments.append(.text("%" + value + "%"))
            }
        }
        let total = try scalar("SELECT count(*) FROM audit_log_entries WHERE \(condition)", arguments).int64Value ?? 0
        let rows = try query(
            """
            SELECT id, payload, created_at, ip_address FROM audit_log_entries WHERE \(condition)
            ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?
            """,
            arguments + [.integer(paging.limit), .integer(paging.offset)]
        )
        return Page(items: rows.map(AuditLogRecord.init(row:)), total: Int(total))
    }

    /// The newest audit entry's rowid and id (nil when there is none): a change detector that
    /// costs one step down the table's B-tree, where counting or ordering by time would read
    /// every entry. Rowids only grow while entries are appended; `deleteAllData` restarts them.
    /// In Postgres mode `rowid` is the entry's `created_at` (see `PostgresConnection.newestAuditLogEntry`).
    public func newestAuditLogEntry() throws(StoreError) -> (rowid: Int64, id: String)? {
        if let postgres { return try postgres.store { try $0.newestAuditLogEntry() } }
        guard let row = try queryFirst("SELECT rowid, id FROM audit_log_entries ORDER BY rowid DESC LIMIT 1") else { return nil }
        return (row.int64("rowid") ?? 0, row.string("id") ?? "")
    }

    /// Rewrites an identity's provider subject (soft deletion obfuscates it so the provider
    /// account can sign up again).
    public func setIdentityProviderID(id: String, providerID: String, identityData: String, at time: Int64) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: id, else: ()) {
                try $0.setIdentityProviderID(id: id, providerID: providerID, identityData: identityData, at: time)
            }
        }
        try execute("UPDATE identities SET provider_id = ?, identity_data = ?, updated_at = ? WHERE id = ?",
                    .text(providerID), .text(identityData), .integer(time), .text(id))
    }
}
