import GoFormats

/// The emulator's own state in Postgres mode, in schema `auth_emulator` (never in `auth`):
/// captured messages and the project's signing keys.
extension PostgresConnection {
    func insertOutboxMessage(_ m: OutboxRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth_emulator.outbox (id, channel, recipient, type, subject, body_html, body_text, otp, token_hash,
                                              action_link, redirect_to, user_id, sent_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
            """,
            .text(m.id), .text(m.channel), .text(m.recipient), .text(m.type), .text(m.subject), .text(m.bodyHTML),
            .text(m.bodyText), .text(m.otp), .text(m.tokenHash), .text(m.actionLink), .text(m.redirectTo),
            SQLValue(m.userID.flatMap { UUIDText.isValid($0) ? $0 : nil }), PostgresArguments.time(m.sentAt)
        )
    }

    func outboxMessages(recipient: String?, type: String?, limit: Int?) throws(PostgresError) -> [OutboxRecord] {
        try query(
            """
            SELECT * FROM auth_emulator.outbox WHERE ($1::text IS NULL OR recipient = lower($1::text))
            AND ($2::text IS NULL OR type = $2::text) ORDER BY seq DESC LIMIT $3::bigint
            """,
            SQLValue(recipient), SQLValue(type), SQLValue(limit)
        ).map(OutboxRecord.init(row:))
    }

    func clearOutbox() throws(PostgresError) -> Int {
        try execute("DELETE FROM auth_emulator.outbox")
        return changes
    }

    func projectSigningKey(algorithm: String) throws(PostgresError) -> String? {
        try queryFirst("SELECT private_jwk FROM auth_emulator.project_signing_keys WHERE algorithm = $1", .text(algorithm))?
            .string("private_jwk")
    }

    /// The first process to commit its key wins; a racing one finds the row and adopts it.
    func insertProjectSigningKeyIfNone(algorithm: String, privateJWK: String, at time: Int64) throws(PostgresError) -> String {
        try execute(
            """
            INSERT INTO auth_emulator.project_signing_keys (algorithm, private_jwk, created_at) VALUES ($1, $2, $3)
            ON CONFLICT (algorithm) DO NOTHING
            """,
            .text(algorithm), .text(privateJWK), PostgresArguments.time(time))
        return try projectSigningKey(algorithm: algorithm) ?? privateJWK
    }
}
