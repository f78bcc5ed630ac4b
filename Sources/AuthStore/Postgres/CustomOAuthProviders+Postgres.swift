/// `auth.custom_oauth_providers` in Postgres mode, as GoTrue's `models.CustomOAuthProvider`
/// writes it: the record's JSON-array columns (`acceptable_client_ids`, `scopes`,
/// `custom_claims_allowlist`) as `text[]` (converted in SQL, so the store still parses no
/// JSON; they read back as compact JSON arrays), the maps and the cached discovery document as
/// jsonb. `discovery_cached_at` (no field in the record) is stamped with the write's time when
/// the cached document changes and cleared with it, as `SetCachedDiscovery` and
/// `ClearCachedDiscovery` do.
extension PostgresConnection {
    private typealias A = PostgresArguments

    private static func textArray(_ parameter: Int) -> String {
        "ARRAY(SELECT jsonb_array_elements_text($\(parameter)::jsonb))"
    }

    func insertCustomOAuthProvider(_ p: CustomOAuthProviderRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.custom_oauth_providers (id, provider_type, identifier, name, client_id, client_secret,
            acceptable_client_ids, scopes, pkce_enabled, attribute_mapping, custom_claims_allowlist, authorization_params, enabled,
            email_optional, issuer, discovery_url, skip_nonce_check, cached_discovery, discovery_cached_at, authorization_url,
            token_url, userinfo_url, jwks_uri, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, \(Self.textArray(7)), \(Self.textArray(8)), $9, $10::jsonb, \(Self.textArray(11)),
            $12::jsonb, $13, $14, $15, $16, $17, $18::jsonb, CASE WHEN $18::jsonb IS NULL THEN NULL ELSE $24::timestamptz END,
            $19, $20, $21, $22, $23, $24::timestamptz)
            """,
            Self.customProviderValues(p)
        )
    }

    /// `values` in the SQLite order, with the timestamps bound as Postgres reads them.
    private static func customProviderValues(_ p: CustomOAuthProviderRecord) -> [SQLValue] {
        var values = p.values
        values[values.count - 2] = A.time(p.createdAt)
        values[values.count - 1] = A.time(p.updatedAt)
        return values
    }

    func updateCustomOAuthProvider(_ p: CustomOAuthProviderRecord) throws(PostgresError) {
        try execute(
            """
            UPDATE auth.custom_oauth_providers SET name = $1, client_id = $2, client_secret = $3,
            acceptable_client_ids = \(Self.textArray(4)), scopes = \(Self.textArray(5)), pkce_enabled = $6,
            attribute_mapping = $7::jsonb, custom_claims_allowlist = \(Self.textArray(8)), authorization_params = $9::jsonb,
            enabled = $10, email_optional = $11, issuer = $12, discovery_url = $13, skip_nonce_check = $14,
            discovery_cached_at = CASE WHEN $15::jsonb IS NULL THEN NULL
              WHEN cached_discovery IS NOT DISTINCT FROM $15::jsonb THEN discovery_cached_at ELSE $20::timestamptz END,
            cached_discovery = $15::jsonb, authorization_url = $16, token_url = $17, userinfo_url = $18, jwks_uri = $19,
            updated_at = $20::timestamptz WHERE id = $21
            """,
            [.text(p.name), .text(p.clientID), .text(p.clientSecret), .text(p.acceptableClientIDs), .text(p.scopes),
             SQLValue(p.pkceEnabled), .text(p.attributeMapping), .text(p.customClaimsAllowlist), .text(p.authorizationParams),
             SQLValue(p.enabled), SQLValue(p.emailOptional), SQLValue(p.issuer), SQLValue(p.discoveryURL),
             SQLValue(p.skipNonceCheck), SQLValue(p.cachedDiscovery), SQLValue(p.authorizationURL), SQLValue(p.tokenURL),
             SQLValue(p.userinfoURL), SQLValue(p.jwksURI), A.time(p.updatedAt), .text(p.id)]
        )
    }

    /// Newest first (`created_at desc`); ties (a frozen virtual clock) by physical position.
    func customOAuthProviders(where condition: String, _ arguments: SQLValue...) throws(PostgresError) -> [CustomOAuthProviderRecord] {
        try query(
            "SELECT \(CustomOAuthProviderRecord.columns) FROM auth.custom_oauth_providers WHERE \(condition) ORDER BY created_at DESC, ctid DESC",
            arguments
        ).map(CustomOAuthProviderRecord.init(row:))
    }
}
