import GoFormats

/// A row of `sessions` (GoTrue's `auth.sessions`).
public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var createdAt: Int64
    public var updatedAt: Int64
    public var factorID: String?
    public var aal: String = "aal1"
    public var notAfter: Int64?
    public var refreshedAt: Int64?
    public var userAgent: String?
    public var ip: String?
    public var tag: String?
    /// The OAuth server client the session was issued to (`oauth_client_id`), and its scopes.
    public var oauthClientID: String?
    public var scopes: String?
    /// The second refresh-token format's per-session state (`refresh_token_hmac_key`, base64url
    /// text, and `refresh_token_counter`); both nil for a session of 12-character tokens.
    public var refreshTokenHMACKey: String?
    public var refreshTokenCounter: Int64?

    public init(id: String, userID: String, at time: Int64) {
        self.id = id
        self.userID = userID
        self.createdAt = time
        self.updatedAt = time
    }

    static let layout = RowLayout("""
        id, user_id, created_at, updated_at, factor_id, aal, not_after, refreshed_at, user_agent, ip, tag, oauth_client_id, scopes,
        refresh_token_hmac_key, refresh_token_counter
        """)

    init(row: Row) {
        var r = RowReader(row, Self.layout)
        id = r.string("id") ?? ""
        userID = r.string("user_id") ?? ""
        createdAt = r.int64("created_at") ?? 0
        updatedAt = r.int64("updated_at") ?? 0
        factorID = r.string("factor_id")
        aal = r.string("aal") ?? "aal1"
        notAfter = r.int64("not_after")
        refreshedAt = r.int64("refreshed_at")
        userAgent = r.string("user_agent")
        ip = r.string("ip")
        tag = r.string("tag")
        oauthClientID = r.string("oauth_client_id")
        scopes = r.string("scopes")
        refreshTokenHMACKey = r.string("refresh_token_hmac_key")
        refreshTokenCounter = r.int64("refresh_token_counter")
        assert(r.isComplete, "SessionRecord: a column of the layout was not read")
    }

    static let select = "SELECT \(layout.list) FROM sessions"
    static let byID = "\(select) WHERE id = ?"
    static let byUser = "\(select) WHERE user_id = ? ORDER BY created_at"
}

extension Connection {
    public func insertSession(_ s: SessionRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertSession(s) } }
        try execute(
            """
            INSERT INTO sessions (id, user_id, created_at, updated_at, factor_id, aal, not_after, refreshed_at, user_agent, ip, tag,
            oauth_client_id, scopes, refresh_token_hmac_key, refresh_token_counter) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(s.id), .text(s.userID), .integer(s.createdAt), .integer(s.updatedAt), SQLValue(s.factorID), .text(s.aal),
            SQLValue(s.notAfter), SQLValue(s.refreshedAt), SQLValue(s.userAgent), SQLValue(s.ip), SQLValue(s.tag),
            SQLValue(s.oauthClientID), SQLValue(s.scopes), SQLValue(s.refreshTokenHMACKey), SQLValue(s.refreshTokenCounter)
        )
    }

    /// Sets a session's second-format refresh-token state (`UpdateRefreshTokenCounterAndHmacKey`,
    /// `UpdateOnlyRefreshToken`): the key when a session moves to the format, the counter on
    /// every token issued after that.
    public func updateSessionRefreshTokenState(id: String, hmacKey: String, counter: Int64) throws(StoreError) {
        try execute("UPDATE sessions SET refresh_token_hmac_key = ?, refresh_token_counter = ? WHERE id = ?",
                    [.text(hmacKey), .integer(counter), .text(id)],
                    postgres: "UPDATE auth.sessions SET refresh_token_hmac_key = $1, refresh_token_counter = $2 WHERE id = $3")
    }

    /// A refresh of a second-format session: its counter and GoTrue's `UpdateOnlyRefreshInfo`
    /// columns in one statement (the row's page is written once either way).
    public func updateSessionRefresh(id: String, counter: Int64, refreshedAt: Int64, userAgent: String?, ip: String?)
        throws(StoreError)
    {
        try updateSessionRefresh(id: id, counter: counter, refreshedAt: refreshedAt, updatedAt: refreshedAt, userAgent: userAgent, ip: ip)
    }

    public func updateSession(_ s: SessionRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.updateSession(s) } }
        try execute(
            """
            UPDATE sessions SET updated_at = ?, factor_id = ?, aal = ?, not_after = ?, refreshed_at = ?, user_agent = ?,
            ip = ?, tag = ? WHERE id = ?
            """,
            .integer(s.updatedAt), SQLValue(s.factorID), .text(s.aal), SQLValue(s.notAfter), SQLValue(s.refreshedAt),
            SQLValue(s.userAgent), SQLValue(s.ip), SQLValue(s.tag), .text(s.id)
        )
    }

    /// What a refresh changes in its session (GoTrue's `Session.UpdateOnlyRefreshInfo`:
    /// `refreshed_at`, `user_agent`, `ip`, with `updated_at`), and a second-format session's
    /// `counter` when given. Only these columns are set:
    /// SQLite rewrites the entry of every index whose column an UPDATE assigns, even to the same
    /// value, so `updateSession` would also rewrite the `not_after` index entry: one more page
    /// written per refresh.
    public func updateSessionRefresh(id: String, counter: Int64? = nil, refreshedAt: Int64?, updatedAt: Int64, userAgent: String?,
                                     ip: String?) throws(StoreError)
    {
        if let postgres {
            return try postgres.store {
                try $0.updateSessionRefresh(id: id, counter: counter, refreshedAt: refreshedAt, updatedAt: updatedAt, userAgent: userAgent, ip: ip)
            }
        }
        if let counter {
            try execute(
                "UPDATE sessions SET refresh_token_counter = ?, updated_at = ?, refreshed_at = ?, user_agent = ?, ip = ? WHERE id = ?",
                .integer(counter), .integer(updatedAt), SQLValue(refreshedAt), SQLValue(userAgent), SQLValue(ip), .text(id))
        } else {
            try execute("UPDATE sessions SET updated_at = ?, refreshed_at = ?, user_agent = ?, ip = ? WHERE id = ?",
                        .integer(updatedAt), SQLValue(refreshedAt), SQLValue(userAgent), SQLValue(ip), .text(id))
        }
    }

    /// `forUpdate`: GoTrue's `FindSessionByID(tx, id, true)`, the row locked until the write's
    /// transaction ends; one another transaction holds throws `StoreError.isRowLocked`
    /// (Postgres mode; `RowLocks.swift`).
    public func session(id: String, forUpdate: Bool = false) throws(StoreError) -> SessionRecord? {
        if let postgres {
            guard UUIDText.isValid(id) else { return nil }
            if forUpdate {
                return try postgres.firstForUpdate("\(PostgresConnection.sessionSelect) WHERE id = $1 LIMIT 1",
                                                   table: "auth.sessions", .text(id)).map(SessionRecord.init(row:))
            }
            return try postgres.store { try $0.sessions(where: "id = $1", .text(id)).first }
        }
        return try queryFirst(SessionRecord.byID, .text(id)).map(SessionRecord.init(row:))
    }

    /// `forUpdate`: GoTrue's `FindAllSessionsForUser(tx, userID, true)`, which first locks the
    /// user's row, so one-session-per-user decisions of two writes never interleave; a user row
    /// another transaction holds throws `StoreError.isRowLocked` (Postgres mode).
    public func sessions(userID: String, forUpdate: Bool = false) throws(StoreError) -> [SessionRecord] {
        if let postgres {
            guard UUIDText.isValid(userID) else { return [] }
            if forUpdate {
                _ = try postgres.firstForUpdate("SELECT id FROM auth.users WHERE id = $1 LIMIT 1", table: "auth.users", .text(userID))
            }
            return try postgres.store { try $0.sessions(where: "user_id = $1", .text(userID)) }
        }
        return try query(SessionRecord.byUser, .text(userID)).map(SessionRecord.init(row:))
    }

    /// Deletes one session; its refresh tokens and AMR claims go with it (ON DELETE CASCADE).
    public func deleteSession(id: String) throws(StoreError) {
        try execute("DELETE FROM sessions WHERE id = ?", [.text(id)],
                    postgres: "DELETE FROM auth.sessions WHERE id = $1", ifUUID: id)
    }

    /// Deletes every session of a user, except `keep` when given.
    public func deleteSessions(userID: String, except keep: String? = nil) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: userID, else: ()) { try $0.deleteSessions(userID: userID, except: keep) }
        }
        try execute("DELETE FROM sessions WHERE user_id = ? AND id <> ?", .text(userID), .text(keep ?? ""))
    }
}

/// A row of `mfa_amr_claims`: how a session was authenticated (JWT `amr`).
public struct AMRClaimRecord: Sendable, Equatable {
    public var method: String
    public var updatedAt: Int64
}

extension Connection {
    /// `InvalidateSessionsWithAALLessThan(user, "aal2")`: the user's sessions below aal2 end.
    public func deleteSessionsBelowAAL2(userID: String) throws(StoreError) {
        try execute("DELETE FROM sessions WHERE user_id = ? AND aal < 'aal2'", [.text(userID)],
                    postgres: "DELETE FROM auth.sessions WHERE user_id = $1 AND aal < 'aal2'", ifUUID: userID)
    }

    /// GoTrue's `AddClaimToSession`: one row per (session, method), refreshed when repeated.
    public func addAMRClaim(id: String, sessionID: String, method: String, at time: Int64) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.addAMRClaim(id: id, sessionID: sessionID, method: method, at: time) } }
        try execute(
            """
            INSERT INTO mfa_amr_claims (id, session_id, authentication_method, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (session_id, authentication_method) DO UPDATE SET updated_at = excluded.updated_at
            """,
            .text(id), .text(sessionID), .text(method), .integer(time), .integer(time)
        )
    }

    /// Newest first: `ORDER BY updated_at DESC, rowid DESC`, with a NULL time last as SQLite puts
    /// it. A session has one claim or a few, so they are ordered here: no index gives that order,
    /// and SQLite would set up a sorter on every token grant for it.
    public func amrClaims(sessionID: String) throws(StoreError) -> [AMRClaimRecord] {
        if let postgres {
            return try postgres.store(ifUUID: sessionID, else: []) { try $0.amrClaims(sessionID: sessionID) }
        }
        let rows = try query(
            "SELECT authentication_method, updated_at, rowid FROM mfa_amr_claims WHERE session_id = ?", .text(sessionID)
        ).map { (method: $0.string("authentication_method") ?? "", updatedAt: $0.int64("updated_at"), rowid: $0.int64("rowid") ?? 0) }
        return rows.sorted { a, b in
            switch (a.updatedAt, b.updatedAt) {
            case let (x?, y?) where x != y: return x > y
            case (.some, .none): return true
            case (.none, .some): return false
            default: return a.rowid > b.rowid
            }
        }.map { AMRClaimRecord(method: $0.method, updatedAt: $0.updatedAt ?? 0) }
    }
}
