/// The fake identity providers' signing key (`auth_emulator.idp_signing_keys`) and the accounts
/// they remember (read from `auth.identities`) in Postgres mode.
extension PostgresConnection {
    /// Serialises `insertIdPSigningKeyIfNone` between processes sharing the database
    /// (`pg_advisory_xact_lock`, released at commit). The number is arbitrary.
    static let idpSigningKeyLock: Int64 = 7_361_402_119

    func idpSigningKey() throws(PostgresError) -> IdPSigningKeyRecord? {
        try queryFirst("SELECT kid, private_jwk, created_at FROM auth_emulator.idp_signing_keys ORDER BY created_at, ctid LIMIT 1")
            .map(IdPSigningKeyRecord.init(row:))
    }

    /// The first process to take the lock stores its key; one waiting behind it finds that key
    /// once the lock is released (read committed: the next statement sees the commit).
    func insertIdPSigningKeyIfNone(_ record: IdPSigningKeyRecord) throws(PostgresError) -> IdPSigningKeyRecord {
        try execute("SELECT pg_advisory_xact_lock($1)", .integer(Self.idpSigningKeyLock))
        if let existing = try idpSigningKey() { return existing }
        try execute("INSERT INTO auth_emulator.idp_signing_keys (kid, private_jwk, created_at) VALUES ($1, $2, $3)",
                    .text(record.kid), .text(record.privateJWK), PostgresArguments.time(record.createdAt))
        return record
    }

    private static let idpAccountSelect = """
        SELECT provider_id, identity_data->>'email' AS email,
               coalesce(identity_data->>'name', identity_data->>'full_name') AS name
        FROM auth.identities
        """

    func idpAccounts(provider: String, limit: Int) throws(PostgresError) -> [IdPAccountRecord] {
        try query(
            "\(Self.idpAccountSelect) WHERE provider = $1 ORDER BY coalesce(last_sign_in_at, created_at) DESC, ctid DESC LIMIT $2",
            .text(provider), .integer(Int64(limit))
        ).map(IdPAccountRecord.init(row:))
    }

    /// Through the generated `identities.email` column (`lower(identity_data->>'email')`).
    func idpAccount(provider: String, email: String) throws(PostgresError) -> IdPAccountRecord? {
        try queryFirst(
            "\(Self.idpAccountSelect) WHERE email = lower($1) AND provider = $2 ORDER BY coalesce(last_sign_in_at, created_at) DESC, ctid DESC LIMIT 1",
            .text(email), .text(provider)
        ).map(IdPAccountRecord.init(row:))
    }
}
