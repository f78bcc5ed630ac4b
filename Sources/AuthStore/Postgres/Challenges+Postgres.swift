/// `auth.mfa_challenges` in Postgres mode, as GoTrue's `models.Challenge` writes it:
/// `ip_address` an `inet` (the request's address, always set), `otp_code` '' for none (a
/// non-pointer Go string), `web_authn_session_data` jsonb.
extension ChallengeRecord {
    /// A row of `auth.mfa_challenges`: '' in `otp_code` reads back as nil.
    init(postgresRow row: Row) {
        self.init(row: row)
        if otpCode == "" { otpCode = nil }
    }

    static let postgresSelect = "SELECT id, factor_id, created_at, verified_at, ip_address, otp_code FROM auth.mfa_challenges"
}

extension PostgresConnection {
    func insertChallenge(_ c: ChallengeRecord) throws(PostgresError) {
        try execute(
            "INSERT INTO auth.mfa_challenges (id, factor_id, created_at, verified_at, ip_address, otp_code) VALUES ($1, $2, $3, $4, $5, $6)",
            .text(c.id), .text(c.factorID), PostgresArguments.time(c.createdAt), PostgresArguments.time(c.verifiedAt),
            .text(c.ipAddress), PostgresArguments.goString(c.otpCode)
        )
    }

    /// The first match; `order` breaks ties of a frozen clock by physical position, as
    /// `Sessions+Postgres.swift` does for GoTrue's unordered reads.
    func challenge(where condition: String, order: String = "", _ arguments: SQLValue...) throws(PostgresError) -> ChallengeRecord? {
        try queryFirst("\(ChallengeRecord.postgresSelect) WHERE \(condition) \(order) LIMIT 1", arguments)
            .map(ChallengeRecord.init(postgresRow:))
    }
}
