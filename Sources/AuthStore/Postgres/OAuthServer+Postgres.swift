/// `auth.oauth_clients`, `auth.oauth_authorizations` and `auth.oauth_consents` in Postgres
/// mode, as GoTrue's OAuth server models write them:
///
/// - a client's `redirect_uris` and `grant_types` are joined with "," (`SetRedirectURIs`,
///   `SetGrantTypes`; SQLite keeps them space-separated), `client_secret_hash` is '' for a
///   public client (a non-pointer Go string), `registration_type` and `client_type` are enum
///   labels;
/// - an authorization's `status` is its enum label, `response_type` is left to its default
///   `code` (the only one), and `code_challenge_method` is lowercased, as
///   `NewOAuthServerAuthorization` normalises it for the enum (`S256` is stored `s256`);
/// - a consent's scopes are space-separated, as in SQLite.
///
/// The oauth_client_states table belongs to GoTrue's OAuth *client* flow (custom providers'
/// PKCE verifiers); the emulator keeps no such state, so nothing writes it.
extension OAuthClientRecord {
    init(postgresRow row: Row) {
        self.init(row: row)
        redirectURIs = (row.string("redirect_uris") ?? "").split(separator: ",").map(String.init)
        grantTypes = (row.string("grant_types") ?? "").split(separator: ",").map(String.init)
        if secretHash == "" { secretHash = nil }
    }

    static let postgresSelect = """
        SELECT id, client_secret_hash, registration_type, client_type, token_endpoint_auth_method, redirect_uris, grant_types,
        client_name, client_uri, logo_uri, created_at, updated_at, deleted_at FROM auth.oauth_clients
        """
}

extension OAuthAuthorizationRecord {
    static let postgresSelect = """
        SELECT id, authorization_id, client_id, user_id, redirect_uri, scope, state, resource, code_challenge,
        code_challenge_method, nonce, status, authorization_code, created_at, expires_at, approved_at FROM auth.oauth_authorizations
        """
}

extension PostgresConnection {
    private typealias A = PostgresArguments

    // MARK: clients

    func insertOAuthClient(_ c: OAuthClientRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.oauth_clients (id, client_secret_hash, registration_type, client_type, token_endpoint_auth_method,
            redirect_uris, grant_types, client_name, client_uri, logo_uri, created_at, updated_at, deleted_at)
            VALUES ($1, $2, $3::auth.oauth_registration_type, $4::auth.oauth_client_type, $5, $6, $7, $8, $9, $10, $11, $12, $13)
            """,
            .text(c.id), A.goString(c.secretHash), .text(c.registrationType), .text(c.clientType), .text(c.tokenEndpointAuthMethod),
            .text(c.redirectURIs.joined(separator: ",")), .text(c.grantTypes.joined(separator: ",")), SQLValue(c.name),
            SQLValue(c.uri), SQLValue(c.logoURI), A.time(c.createdAt), A.time(c.updatedAt), A.time(c.deletedAt)
        )
    }

    func updateOAuthClient(_ c: OAuthClientRecord) throws(PostgresError) {
        try execute(
            """
            UPDATE auth.oauth_clients SET client_secret_hash = $1, token_endpoint_auth_method = $2, redirect_uris = $3, grant_types = $4,
            client_name = $5, client_uri = $6, logo_uri = $7, updated_at = $8, deleted_at = $9 WHERE id = $10
            """,
            A.goString(c.secretHash), .text(c.tokenEndpointAuthMethod), .text(c.redirectURIs.joined(separator: ",")),
            .text(c.grantTypes.joined(separator: ",")), SQLValue(c.name), SQLValue(c.uri), SQLValue(c.logoURI),
            A.time(c.updatedAt), A.time(c.deletedAt), .text(c.id)
        )
    }

    /// Newest first; ties (a frozen virtual clock) by physical position.
    func oauthClients(where condition: String, _ arguments: SQLValue...) throws(PostgresError) -> [OAuthClientRecord] {
        try query("\(OAuthClientRecord.postgresSelect) WHERE \(condition) ORDER BY created_at DESC, ctid DESC", arguments)
            .map(OAuthClientRecord.init(postgresRow:))
    }

    // MARK: authorizations

    func insertOAuthAuthorization(_ a: OAuthAuthorizationRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.oauth_authorizations (id, authorization_id, client_id, user_id, redirect_uri, scope, state, resource,
            code_challenge, code_challenge_method, nonce, status, authorization_code, created_at, expires_at, approved_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, lower($10)::auth.code_challenge_method, $11,
            $12::auth.oauth_authorization_status, $13, $14, $15, $16)
            """,
            .text(a.id), .text(a.authorizationID), .text(a.clientID), SQLValue(a.userID), .text(a.redirectURI), .text(a.scope),
            SQLValue(a.state), SQLValue(a.resource), SQLValue(a.codeChallenge), SQLValue(a.codeChallengeMethod),
            SQLValue(a.nonce), .text(a.status), SQLValue(a.code), A.time(a.createdAt), A.time(a.expiresAt), A.time(a.approvedAt)
        )
    }

    func updateOAuthAuthorization(_ a: OAuthAuthorizationRecord) throws(PostgresError) {
        try execute(
            """
            UPDATE auth.oauth_authorizations SET user_id = $1, status = $2::auth.oauth_authorization_status, authorization_code = $3,
            approved_at = $4 WHERE id = $5
            """,
            SQLValue(a.userID), .text(a.status), SQLValue(a.code), A.time(a.approvedAt), .text(a.id)
        )
    }

    func oauthAuthorization(where condition: String, _ argument: SQLValue) throws(PostgresError) -> OAuthAuthorizationRecord? {
        try queryFirst("\(OAuthAuthorizationRecord.postgresSelect) WHERE \(condition)", argument).map(OAuthAuthorizationRecord.init(row:))
    }

    func oauthAuthorizationForUpdate(_ condition: String, _ argument: SQLValue) throws(StoreError) -> OAuthAuthorizationRecord? {
        try firstForUpdate("\(OAuthAuthorizationRecord.postgresSelect) WHERE \(condition) LIMIT 1", table: "auth.oauth_authorizations", argument)
            .map(OAuthAuthorizationRecord.init(row:))
    }

    // MARK: consents

    static let consentSelect = "SELECT id, user_id, client_id, scopes, granted_at, revoked_at FROM auth.oauth_consents"

    func upsertOAuthConsent(_ c: OAuthConsentRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.oauth_consents (id, user_id, client_id, scopes, granted_at, revoked_at) VALUES ($1, $2, $3, $4, $5, NULL)
            ON CONFLICT (user_id, client_id) DO UPDATE SET scopes = excluded.scopes, granted_at = excluded.granted_at,
            revoked_at = NULL
            """,
            .text(c.id), .text(c.userID), .text(c.clientID), .text(c.scopes.joined(separator: " ")), A.time(c.grantedAt)
        )
    }

    /// Active (unrevoked) consents, newest first; ties by physical position.
    func activeOAuthConsents(where condition: String, _ arguments: SQLValue...) throws(PostgresError) -> [OAuthConsentRecord] {
        try query("\(Self.consentSelect) WHERE \(condition) AND revoked_at IS NULL ORDER BY granted_at DESC, ctid DESC", arguments)
            .map(OAuthConsentRecord.init(row:))
    }
}
