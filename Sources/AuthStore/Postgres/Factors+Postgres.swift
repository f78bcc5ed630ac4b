/// `auth.mfa_factors` in Postgres mode, as GoTrue's `models.Factor` writes it: `factor_type`
/// and `status` as the enum labels, `friendly_name` and `secret` '' for none (non-pointer Go
/// strings), `phone` NULL for none (`storage.NullString` writes '' as NULL).
extension FactorRecord {
    /// A row of `auth.mfa_factors`: '' in the Go-string columns reads back as nil.
    init(postgresRow row: Row) {
        self.init(row: row)
        if friendlyName == "" { friendlyName = nil }
        if secret == "" { secret = nil }
    }

    static let postgresSelect = "SELECT \(layout.list) FROM auth.mfa_factors"
}

extension PostgresConnection {
    private typealias A = PostgresArguments

    func insertFactor(_ f: FactorRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret, phone,
            last_challenged_at, web_authn_aaguid)
            VALUES ($1, $2, $3, $4::auth.factor_type, $5::auth.factor_status, $6, $7, $8, NULLIF($9, ''), $10, $11)
            """,
            .text(f.id), .text(f.userID), A.goString(f.friendlyName), .text(f.factorType), .text(f.status),
            A.time(f.createdAt), A.time(f.updatedAt), A.goString(f.secret), SQLValue(f.phone),
            A.time(f.lastChallengedAt), SQLValue(f.webAuthnAAGUID)
        )
    }

    func updateFactor(_ f: FactorRecord) throws(PostgresError) {
        try execute(
            """
            UPDATE auth.mfa_factors SET friendly_name = $1, status = $2::auth.factor_status, updated_at = $3, secret = $4,
            phone = NULLIF($5, ''), last_challenged_at = $6, web_authn_aaguid = $7 WHERE id = $8
            """,
            A.goString(f.friendlyName), .text(f.status), A.time(f.updatedAt), A.goString(f.secret), SQLValue(f.phone),
            A.time(f.lastChallengedAt), SQLValue(f.webAuthnAAGUID), .text(f.id)
        )
    }

    /// Oldest first; ties (a frozen virtual clock) by physical position, insertion order for
    /// rows never updated (SQLite breaks them by rowid).
    func factors(where condition: String, _ arguments: SQLValue...) throws(PostgresError) -> [FactorRecord] {
        try query("\(FactorRecord.postgresSelect) WHERE \(condition) ORDER BY created_at, ctid", arguments)
            .map(FactorRecord.init(postgresRow:))
    }

    /// `last_challenged_at` is UNIQUE across all factors in GoTrue's schema. GoTrue stamps it
    /// with the wall clock, where two challenges never share a microsecond; under the
    /// emulator's virtual clock (frozen, or shared by many factors) they do, so the time moves
    /// on to the first free microsecond, as a real clock would have. That is the time itself
    /// or one just after a taken one at or after it (an index range scan: normally no rows, as
    /// time moves forward).
    func markFactorChallenged(id: String, at time: Int64) throws(PostgresError) {
        try execute(
            """
            UPDATE auth.mfa_factors SET last_challenged_at = (
              SELECT min(candidate) FROM (
                SELECT $1::timestamptz AS candidate
                UNION ALL
                SELECT last_challenged_at + interval '1 microsecond' FROM auth.mfa_factors
                WHERE last_challenged_at >= $1::timestamptz AND id <> $2
              ) AS candidates
              WHERE NOT EXISTS (SELECT 1 FROM auth.mfa_factors other WHERE other.last_challenged_at = candidate AND other.id <> $2)
            ), updated_at = $1::timestamptz WHERE id = $2
            """,
            A.time(time), .text(id)
        )
    }

    func deleteExpiredFactors(createdBefore cutoff: Int64) throws(PostgresError) {
        try execute(
            """
            DELETE FROM auth.mfa_factors WHERE status <> 'verified' AND created_at < $1
            AND NOT EXISTS (SELECT 1 FROM auth.mfa_challenges WHERE mfa_challenges.factor_id = mfa_factors.id)
            """,
            A.time(cutoff)
        )
    }

    /// The type compares as text: a label the enum lacks matches nothing (a cast would fail).
    func deleteUnverifiedFactors(userID: String, factorType: String) throws(PostgresError) {
        try execute("DELETE FROM auth.mfa_factors WHERE user_id = $1 AND status = 'unverified' AND factor_type::text = $2",
                    .text(userID), .text(factorType))
    }

    func downgradeSessions(of factor: FactorRecord) throws(PostgresError) {
        try execute(
            """
            DELETE FROM auth.mfa_amr_claims WHERE authentication_method = $1
            AND session_id IN (SELECT id FROM auth.sessions WHERE factor_id = $2)
            """,
            .text(factor.amrMethod), .text(factor.id)
        )
        try execute("UPDATE auth.sessions SET aal = 'aal1', factor_id = NULL WHERE user_id = $1 AND factor_id = $2",
                    .text(factor.userID), .text(factor.id))
    }
}
