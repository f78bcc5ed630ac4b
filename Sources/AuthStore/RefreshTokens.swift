import GoFormats

/// A row of `refresh_tokens` (GoTrue's legacy refresh-token format: rotation with parents).
public struct RefreshTokenRecord: Sendable, Equatable {
    public var id: Int64
    public var token: String
    public var userID: String
    public var revoked: Bool
    public var createdAt: Int64
    public var updatedAt: Int64
    /// The token string this one was rotated from.
    public var parent: String?
    public var sessionID: String?

    static let layout = RowLayout("id, token, user_id, revoked, created_at, updated_at, parent, session_id")

    init(row: Row) {
        var r = RowReader(row, Self.layout)
        id = r.int64("id") ?? 0
        token = r.string("token") ?? ""
        userID = r.string("user_id") ?? ""
        revoked = r.bool("revoked") ?? false
        createdAt = r.int64("created_at") ?? 0
        updatedAt = r.int64("updated_at") ?? 0
        parent = r.string("parent")
        sessionID = r.string("session_id")
        assert(r.isComplete, "RefreshTokenRecord: a column of the layout was not read")
    }

    static let select = "SELECT \(layout.list) FROM refresh_tokens"
    // Built once: every refresh runs these, and the statement cache is keyed by the SQL text.
    static let byToken = "\(select) WHERE token = ?"
    static let activeBySession = "\(select) WHERE session_id = ? AND revoked = 0 ORDER BY id DESC LIMIT 1"
}

/// Counts over one session's legacy refresh tokens (`refreshTokenFamily(sessionID:)`).
public struct RefreshTokenFamily: Sendable, Equatable {
    public var count: Int
    public var revoked: Int
    public var lastIssuedAt: Int64?
}

extension Connection {
    @discardableResult
    public func insertRefreshToken(token: String, userID: String, sessionID: String, parent: String?, at time: Int64)
        throws(StoreError) -> Int64
    {
        if let postgres {
            return try postgres.store {
                try $0.insertRefreshToken(token: token, userID: userID, sessionID: sessionID, parent: parent, at: time)
            }
        }
        try execute(
            "INSERT INTO refresh_tokens (token, user_id, revoked, created_at, updated_at, parent, session_id) VALUES (?, ?, 0, ?, ?, ?, ?)",
            .text(token), .text(userID), .integer(time), .integer(time), SQLValue(parent), .text(sessionID)
        )
        return lastInsertRowID
    }

    /// `forUpdate`: the row is locked until the write's transaction ends, and one another
    /// transaction holds throws `StoreError.isRowLocked` (Postgres mode; `RowLocks.swift`).
    public func refreshToken(_ token: String, forUpdate: Bool = false) throws(StoreError) -> RefreshTokenRecord? {
        if let postgres {
            if forUpdate {
                return try postgres.firstForUpdate("\(PostgresConnection.refreshTokenSelect) WHERE token = $1 LIMIT 1",
                                                   table: "auth.refresh_tokens", .text(token)).map(RefreshTokenRecord.init(row:))
            }
            return try postgres.store { try $0.refreshTokens(where: "token = $1", .text(token)) }
        }
        return try queryFirst(RefreshTokenRecord.byToken, .text(token)).map(RefreshTokenRecord.init(row:))
    }

    /// The newest non-revoked token of a session (GoTrue's `FindCurrentlyActiveRefreshToken`).
    public func activeRefreshToken(sessionID: String) throws(StoreError) -> RefreshTokenRecord? {
        if let postgres {
            return try postgres.store(ifUUID: sessionID, else: nil) {
                try $0.refreshTokens(where: "session_id = $1 AND revoked = false ORDER BY id DESC LIMIT 1", .text(sessionID))
            }
        }
        return try queryFirst(RefreshTokenRecord.activeBySession, .text(sessionID)).map(RefreshTokenRecord.init(row:))
    }

    /// `FindTokenBySessionID`: the session's oldest unrevoked token (MFA verify swaps it).
    public func oldestActiveRefreshToken(sessionID: String) throws(StoreError) -> RefreshTokenRecord? {
        if let postgres {
            return try postgres.store(ifUUID: sessionID, else: nil) {
                try $0.refreshTokens(where: "session_id = $1 AND revoked = false ORDER BY created_at, id LIMIT 1", .text(sessionID))
            }
        }
        return try queryFirst("\(RefreshTokenRecord.select) WHERE session_id = ? AND revoked = 0 ORDER BY created_at, id LIMIT 1",
                              .text(sessionID)).map(RefreshTokenRecord.init(row:))
    }

    public func revokeRefreshToken(id: Int64, at time: Int64) throws(StoreError) {
        try execute("UPDATE refresh_tokens SET revoked = 1, updated_at = ? WHERE id = ?", [.integer(time), .integer(id)],
                    postgres: "UPDATE auth.refresh_tokens SET revoked = true, updated_at = $1 WHERE id = $2",
                    [PostgresArguments.time(time), .integer(id)])
    }

    /// Revokes every live token of the session (GoTrue's `RevokeTokenFamily`).
    public func revokeRefreshTokens(sessionID: String, at time: Int64) throws(StoreError) {
        try execute("UPDATE refresh_tokens SET revoked = 1, updated_at = ? WHERE session_id = ? AND revoked = 0",
                    [.integer(time), .text(sessionID)],
                    postgres: "UPDATE auth.refresh_tokens SET revoked = true, updated_at = $1 WHERE session_id = $2 AND revoked = false",
                    [PostgresArguments.time(time), .text(sessionID)], ifUUID: sessionID)
    }

    /// A session's refresh-token family in the legacy format: how many tokens rotation has
    /// issued, how many are revoked, and when the newest was issued (the last rotation). One
    /// step along `refresh_tokens_session_id_revoked_idx`.
    public func refreshTokenFamily(sessionID: String) throws(StoreError) -> RefreshTokenFamily {
        if let postgres {
            return try postgres.store(ifUUID: sessionID, else: RefreshTokenFamily(count: 0, revoked: 0, lastIssuedAt: nil)) {
                try $0.refreshTokenFamily(sessionID: sessionID)
            }
        }
        let row = try queryFirst(
            "SELECT count(*) AS n, coalesce(sum(revoked), 0) AS revoked, max(created_at) AS newest FROM refresh_tokens WHERE session_id = ?",
            .text(sessionID)
        )
        return RefreshTokenFamily(count: row?.int("n") ?? 0, revoked: row?.int("revoked") ?? 0,
                                  lastIssuedAt: row?.int64("newest"))
    }

    public func deleteRefreshToken(id: Int64) throws(StoreError) {
        try execute("DELETE FROM refresh_tokens WHERE id = ?", [.integer(id)], postgres: "DELETE FROM auth.refresh_tokens WHERE id = $1")
    }
}
