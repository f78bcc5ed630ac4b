/// `auth.webauthn_credentials` and `auth.webauthn_challenges` in Postgres mode, as GoTrue's
/// `models.WebAuthnCredential` and `models.WebAuthnChallenge` write them: credential ids and
/// public keys as `bytea` (SQLite keeps hex text so exports carry them), `aaguid` a uuid,
/// `transports` and `session_data` jsonb. The software authenticator's private keys have no
/// GoTrue counterpart: they live in `auth_emulator.authenticator_keys`. Also the WebAuthn
/// columns of `auth.mfa_factors` and `auth.mfa_challenges` (jsonb).
///
/// Rows are read back as the SQLite path returns them: bytea as hex (`encode`), and the
/// transports array compact (`array_to_json`; jsonb's own text puts a space after each comma).
extension WebAuthnCredentialRecord {
    static let postgresSelect = """
        SELECT id, user_id, encode(credential_id, 'hex') AS credential_id, encode(public_key, 'hex') AS public_key,
        attestation_type, aaguid, sign_count,
        CASE jsonb_typeof(transports) WHEN 'array' THEN array_to_json(ARRAY(SELECT jsonb_array_elements(transports)))::text
        ELSE transports::text END AS transports,
        backup_eligible, backed_up, friendly_name, created_at, updated_at, last_used_at FROM auth.webauthn_credentials
        """
}

extension PostgresConnection {
    private typealias A = PostgresArguments

    // MARK: webauthn_credentials

    /// Oldest first; ties (a frozen virtual clock) by physical position.
    func webAuthnCredentials(where condition: String, _ arguments: SQLValue...) throws(PostgresError) -> [WebAuthnCredentialRecord] {
        try query("\(WebAuthnCredentialRecord.postgresSelect) WHERE \(condition) ORDER BY created_at, ctid", arguments)
            .map(WebAuthnCredentialRecord.init(row:))
    }

    func insertWebAuthnCredential(_ c: WebAuthnCredentialRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.webauthn_credentials (id, user_id, credential_id, public_key, attestation_type, aaguid, sign_count,
            transports, backup_eligible, backed_up, friendly_name, created_at, updated_at, last_used_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14)
            """,
            .text(c.id), .text(c.userID), .blob(c.credentialID), .blob(c.publicKey), .text(c.attestationType),
            SQLValue(c.aaguid), .integer(c.signCount), .text(c.transports), SQLValue(c.backupEligible),
            SQLValue(c.backedUp), .text(c.friendlyName), A.time(c.createdAt), A.time(c.updatedAt), A.time(c.lastUsedAt)
        )
    }

    func markWebAuthnCredentialUsed(id: String, signCount: Int64, at time: Int64) throws(PostgresError) {
        try execute("UPDATE auth.webauthn_credentials SET sign_count = $1, last_used_at = $2, updated_at = $2 WHERE id = $3",
                    .integer(signCount), A.time(time), .text(id))
    }

    // MARK: webauthn_challenges

    static let webAuthnChallengeColumns = "id, user_id, challenge_type, session_data, created_at, expires_at"

    func insertWebAuthnChallenge(_ c: WebAuthnChallengeRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.webauthn_challenges (id, user_id, challenge_type, session_data, created_at, expires_at)
            VALUES ($1, $2, $3, $4::jsonb, $5, $6)
            """,
            .text(c.id), SQLValue(c.userID), .text(c.challengeType), .text(c.sessionData), A.time(c.createdAt), A.time(c.expiresAt))
    }

    /// `ConsumeWebAuthnChallengeByID`: bound to `userID`, or to no user when nil.
    func consumeWebAuthnChallenge(id: String, type: String, userID: String?) throws(PostgresError) -> WebAuthnChallengeRecord? {
        try queryFirst(
            """
            DELETE FROM auth.webauthn_challenges WHERE id = $1 AND challenge_type = $2
            AND user_id IS NOT DISTINCT FROM $3::uuid RETURNING \(Self.webAuthnChallengeColumns)
            """,
            .text(id), .text(type), SQLValue(userID)
        ).map(WebAuthnChallengeRecord.init(row:))
    }

    // MARK: auth_emulator.authenticator_keys

    func insertSoftwareAuthenticatorKey(_ k: SoftwareAuthenticatorKeyRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth_emulator.authenticator_keys (credential_id, user_id, rp_id, user_handle, private_key, sign_count,
            discoverable, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """,
            .text(HexText.string(k.credentialID)), .text(k.userID), .text(k.rpID), .text(HexText.string(k.userHandle)),
            .text(HexText.string(k.privateKey)), .integer(k.signCount), SQLValue(k.discoverable), A.time(k.createdAt))
    }

    /// Oldest first; ties by physical position (the authenticator needs exactly one match, so
    /// the order of equal times does not decide anything).
    func softwareAuthenticatorKeys(userID: String?, rpID: String) throws(PostgresError) -> [SoftwareAuthenticatorKeyRecord] {
        try query(
            """
            SELECT credential_id, user_id, rp_id, user_handle, private_key, sign_count, discoverable, created_at
            FROM auth_emulator.authenticator_keys WHERE ($1::uuid IS NULL OR user_id = $1::uuid) AND rp_id = $2
            ORDER BY created_at, ctid
            """,
            SQLValue(userID), .text(rpID)
        ).map(SoftwareAuthenticatorKeyRecord.init(row:))
    }

    // MARK: WebAuthn MFA factors

    func saveFactorWebAuthnCredential(factorID: String, credential: String, aaguid: String?, at time: Int64) throws(PostgresError) {
        try execute("UPDATE auth.mfa_factors SET web_authn_credential = $1::jsonb, web_authn_aaguid = $2, updated_at = $3 WHERE id = $4",
                    .text(credential), SQLValue(aaguid), A.time(time), .text(factorID))
    }

    func verifiedWebAuthnFactorCredentials(userID: String) throws(PostgresError) -> [(factorID: String, credential: String)] {
        try query(
            """
            SELECT id, web_authn_credential::text AS web_authn_credential FROM auth.mfa_factors
            WHERE user_id = $1 AND factor_type = 'webauthn' AND status = 'verified' AND web_authn_credential IS NOT NULL
            ORDER BY created_at, ctid
            """, .text(userID)
        ).map { ($0.string("id") ?? "", $0.string("web_authn_credential") ?? "{}") }
    }
}
