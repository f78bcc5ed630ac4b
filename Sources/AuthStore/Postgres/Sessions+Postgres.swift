import GoFormats

/// `auth.identities`, `auth.sessions`, `auth.mfa_amr_claims`, `auth.refresh_tokens`,
/// `auth.one_time_tokens` and `auth.audit_log_entries` in
/// Postgres mode, as GoTrue writes them: enum labels (`aal_level`, `one_time_token_type`) as
/// text the server casts, `inet` never '', `timestamp without time zone` columns
/// (`sessions.refreshed_at`, `one_time_tokens.*_at`) in UTC, `instance_id` the nil uuid.
///
/// Rows GoTrue reads in no particular order are ordered by creation time, then by physical
/// position (`ctid`), which for rows never updated is insertion order, where SQLite's `rowid`
/// breaks ties (a frozen virtual clock gives many rows one time).
extension PostgresConnection {
    private typealias A = PostgresArguments

    // MARK: Identities

    static let identitySelect = "SELECT \(IdentityRecord.layout.list) FROM auth.identities"

    func insertIdentity(_ identity: IdentityRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.identities (id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            .text(identity.id), .text(identity.providerID), .text(identity.userID), .text(identity.identityData),
            .text(identity.provider), A.time(identity.lastSignInAt), A.time(identity.createdAt), A.time(identity.updatedAt)
        )
    }

    func updateIdentity(_ identity: IdentityRecord) throws(PostgresError) {
        try execute(
            "UPDATE auth.identities SET identity_data = $1, last_sign_in_at = $2, updated_at = $3 WHERE id = $4",
            .text(identity.identityData), A.time(identity.lastSignInAt), A.time(identity.updatedAt), .text(identity.id)
        )
    }

    func identities(where condition: String, _ arguments: SQLValue...) throws(PostgresError) -> [IdentityRecord] {
        try query("\(Self.identitySelect) WHERE \(condition) ORDER BY created_at, ctid", arguments).map(IdentityRecord.init(row:))
    }

    // MARK: Sessions

    static let sessionSelect = "SELECT \(SessionRecord.layout.list) FROM auth.sessions"

    func insertSession(_ s: SessionRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.sessions (id, user_id, created_at, updated_at, factor_id, aal, not_after, refreshed_at, user_agent, ip, tag,
            oauth_client_id, scopes, refresh_token_hmac_key, refresh_token_counter)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
            """,
            .text(s.id), .text(s.userID), A.time(s.createdAt), A.time(s.updatedAt), SQLValue(s.factorID), .text(s.aal),
            A.time(s.notAfter), A.time(s.refreshedAt), SQLValue(s.userAgent), A.inet(s.ip), SQLValue(s.tag),
            SQLValue(s.oauthClientID), SQLValue(s.scopes), SQLValue(s.refreshTokenHMACKey), SQLValue(s.refreshTokenCounter)
        )
    }

    func updateSession(_ s: SessionRecord) throws(PostgresError) {
        try execute(
            """
            UPDATE auth.sessions SET updated_at = $1, factor_id = $2, aal = $3, not_after = $4, refreshed_at = $5, user_agent = $6,
            ip = $7, tag = $8 WHERE id = $9
            """,
            A.time(s.updatedAt), SQLValue(s.factorID), .text(s.aal), A.time(s.notAfter), A.time(s.refreshedAt),
            SQLValue(s.userAgent), A.inet(s.ip), SQLValue(s.tag), .text(s.id)
        )
    }

    func updateSessionRefresh(id: String, counter: Int64?, refreshedAt: Int64?, updatedAt: Int64, userAgent: String?, ip: String?)
        throws(PostgresError)
    {
        if let counter {
            try execute(
                "UPDATE auth.sessions SET refresh_token_counter = $1, updated_at = $2, refreshed_at = $3, user_agent = $4, ip = $5 WHERE id = $6",
                .integer(counter), A.time(updatedAt), A.time(refreshedAt), SQLValue(userAgent), A.inet(ip), .text(id))
        } else {
            try execute(
                "UPDATE auth.sessions SET updated_at = $1, refreshed_at = $2, user_agent = $3, ip = $4 WHERE id = $5",
                A.time(updatedAt), A.time(refreshedAt), SQLValue(userAgent), A.inet(ip), .text(id))
        }
    }

    func sessions(where condition: String, _ argument: SQLValue) throws(PostgresError) -> [SessionRecord] {
        try query("\(Self.sessionSelect) WHERE \(condition) ORDER BY created_at, ctid", argument).map(SessionRecord.init(row:))
    }

    func deleteSessions(userID: String, except keep: String?) throws(PostgresError) {
        try execute("DELETE FROM auth.sessions WHERE user_id = $1 AND ($2::uuid IS NULL OR id <> $2::uuid)",
                    .text(userID), SQLValue(keep.flatMap { UUIDText.isValid($0) ? $0 : nil }))
    }

    func addAMRClaim(id: String, sessionID: String, method: String, at time: Int64) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.mfa_amr_claims (id, session_id, authentication_method, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
            ON CONFLICT (session_id, authentication_method) DO UPDATE SET updated_at = excluded.updated_at
            """,
            .text(id), .text(sessionID), .text(method), A.time(time)
        )
    }

    func amrClaims(sessionID: String) throws(PostgresError) -> [AMRClaimRecord] {
        try query(
            """
            SELECT authentication_method, updated_at FROM auth.mfa_amr_claims WHERE session_id = $1
            ORDER BY updated_at DESC NULLS LAST, created_at DESC, ctid DESC
            """, .text(sessionID)
        ).map { AMRClaimRecord(method: $0.string("authentication_method") ?? "", updatedAt: $0.int64("updated_at") ?? 0) }
    }

    // MARK: Refresh tokens

    static let refreshTokenSelect = "SELECT \(RefreshTokenRecord.layout.list) FROM auth.refresh_tokens"

    func insertRefreshToken(token: String, userID: String, sessionID: String, parent: String?, at time: Int64) throws(PostgresError) -> Int64 {
        try scalar(
            """
            INSERT INTO auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
            VALUES ('\(A.instanceID)', $1, $2, false, $3, $3, $4, $5) RETURNING id
            """,
            .text(token), .text(userID), A.time(time), SQLValue(parent), .text(sessionID)
        ).int64Value ?? 0
    }

    func refreshTokens(where condition: String, _ argument: SQLValue) throws(PostgresError) -> RefreshTokenRecord? {
        try queryFirst("\(Self.refreshTokenSelect) WHERE \(condition)", argument).map(RefreshTokenRecord.init(row:))
    }

    func refreshTokenFamily(sessionID: String) throws(PostgresError) -> RefreshTokenFamily {
        let row = try queryFirst(
            "SELECT count(*) AS n, count(*) FILTER (WHERE revoked) AS revoked, max(created_at) AS newest FROM auth.refresh_tokens WHERE session_id = $1",
            .text(sessionID))
        return RefreshTokenFamily(count: row?.int("n") ?? 0, revoked: row?.int("revoked") ?? 0, lastIssuedAt: row?.int64("newest"))
    }

    // MARK: One-time tokens, audit log

    func replaceOneTimeToken(id: String, userID: String, type: String, tokenHash: String, relatesTo: String, at time: Int64)
        throws(PostgresError)
    {
        try execute("DELETE FROM auth.one_time_tokens WHERE user_id = $1 AND token_type = $2", .text(userID), .text(type))
        try execute(
            """
            INSERT INTO auth.one_time_tokens (id, user_id, token_type, token_hash, relates_to, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $6)
            """,
            .text(id), .text(userID), .text(type), .text(tokenHash), .text(relatesTo.lowercased()), A.time(time)
        )
    }

    func insertAuditLogEntry(id: String, payload: String, ipAddress: String, at time: Int64) throws(PostgresError) {
        try execute(
            "INSERT INTO auth.audit_log_entries (instance_id, id, payload, created_at, ip_address) VALUES ('\(A.instanceID)', $1, $2, $3, $4)",
            .text(id), .text(payload), A.time(time), .text(ipAddress)
        )
    }
}
