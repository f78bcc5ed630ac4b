/// `auth.custom_oauth_providers` in Postgres mode, as GoTrue's `models.CustomOAuthProvider`
/// writes it: the record's JSON-array columns (`acceptable_client_ids`, `scopes`,
/// `custom_claims_allowlist`) as `text[]` (converted in SQL, so the store still parses no
/// JSON; they read back as compact JSON arrays), the maps and the cached discovery document as
/// jsonb. `discovery_cached_at` (no field in the record) is stamped with the write's time when
/// the cached document changes and cleared with it, as `SetCachedDiscovery` and
/// `ClearCachedDiscovery` do.
///
/// `custom_claims_allowlist` came with GoTrue v2.192.0 (migration 20260625000000), after the
/// release `supabase start` pins (v2.189.0): an adopted schema may lack it. Such a schema
/// reads as an empty allowlist and is written without the column; only a non-empty allowlist,
/// which that server could not hold either, fails, naming the column.
extension PostgresConnection {
    private typealias A = PostgresArguments

    private static func textArray(_ parameter: Int) -> String {
        "ARRAY(SELECT jsonb_array_elements_text($\(parameter)::jsonb))"
    }

    /// Whether the table has `custom_claims_allowlist`: one catalog lookup per store call (custom
    /// providers are read and written rarely: sign-in with one, the admin API).
    private func hasCustomClaimsAllowlist() throws(PostgresError) -> Bool {
        try scalar(
            """
            SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('auth.custom_oauth_providers')
            AND attname = 'custom_claims_allowlist' AND NOT attisdropped)
            """
        ).int64Value == 1
    }

    /// The allowlist's argument when the column is there; throws when it is not and the
    /// allowlist is not empty.
    private func allowlistArgument(_ p: CustomOAuthProviderRecord) throws(PostgresError) -> [SQLValue] {
        if try hasCustomClaimsAllowlist() { return [.text(p.customClaimsAllowlist)] }
        guard p.customClaimsAllowlist.allSatisfy({ " []\n\t".contains($0) }) else {
            throw PostgresError(sqlstate: "42703", step: "write auth.custom_oauth_providers",
                                message: "auth.custom_oauth_providers.custom_claims_allowlist does not exist (GoTrue v2.192.0, "
                                    + "migration 20260625000000): migrate the auth schema to keep a custom claims allowlist")
        }
        return []
    }

    func insertCustomOAuthProvider(_ p: CustomOAuthProviderRecord) throws(PostgresError) {
        let allowlist = try allowlistArgument(p)
        try execute(
            """
            INSERT INTO auth.custom_oauth_providers (id, provider_type, identifier, name, client_id, client_secret,
            acceptable_client_ids, scopes, pkce_enabled, attribute_mapping, authorization_params, enabled, email_optional, issuer,
            discovery_url, skip_nonce_check, cached_discovery, discovery_cached_at, authorization_url, token_url, userinfo_url,
            jwks_uri, created_at, updated_at\(allowlist.isEmpty ? "" : ", custom_claims_allowlist"))
            VALUES ($1, $2, $3, $4, $5, $6, \(Self.textArray(7)), \(Self.textArray(8)), $9, $10::jsonb, $11::jsonb, $12, $13, $14,
            $15, $16, $17::jsonb, CASE WHEN $17::jsonb IS NULL THEN NULL ELSE $23::timestamptz END, $18, $19, $20,
            $21, $22, $23::timestamptz\(allowlist.isEmpty ? "" : ", \(Self.textArray(24))"))
            """,
            [.text(p.id), .text(p.providerType), .text(p.identifier), .text(p.name), .text(p.clientID), .text(p.clientSecret),
             .text(p.acceptableClientIDs), .text(p.scopes), SQLValue(p.pkceEnabled), .text(p.attributeMapping),
             .text(p.authorizationParams), SQLValue(p.enabled), SQLValue(p.emailOptional), SQLValue(p.issuer),
             SQLValue(p.discoveryURL), SQLValue(p.skipNonceCheck), SQLValue(p.cachedDiscovery), SQLValue(p.authorizationURL),
             SQLValue(p.tokenURL), SQLValue(p.userinfoURL), SQLValue(p.jwksURI), A.time(p.createdAt), A.time(p.updatedAt)]
                + allowlist
        )
    }

    func updateCustomOAuthProvider(_ p: CustomOAuthProviderRecord) throws(PostgresError) {
        let allowlist = try allowlistArgument(p)
        try execute(
            """
            UPDATE auth.custom_oauth_providers SET name = $1, client_id = $2, client_secret = $3,
            acceptable_client_ids = \(Self.textArray(4)), scopes = \(Self.textArray(5)), pkce_enabled = $6,
            attribute_mapping = $7::jsonb, authorization_params = $8::jsonb, enabled = $9, email_optional = $10, issuer = $11,
            discovery_url = $12, skip_nonce_check = $13,
            discovery_cached_at = CASE WHEN $14::jsonb IS NULL THEN NULL
              WHEN cached_discovery IS NOT DISTINCT FROM $14::jsonb THEN discovery_cached_at ELSE $19::timestamptz END,
            cached_discovery = $14::jsonb, authorization_url = $15, token_url = $16, userinfo_url = $17, jwks_uri = $18,
            updated_at = $19::timestamptz\(allowlist.isEmpty ? "" : ", custom_claims_allowlist = \(Self.textArray(21))") WHERE id = $20
            """,
            [.text(p.name), .text(p.clientID), .text(p.clientSecret), .text(p.acceptableClientIDs), .text(p.scopes),
             SQLValue(p.pkceEnabled), .text(p.attributeMapping), .text(p.authorizationParams), SQLValue(p.enabled),
             SQLValue(p.emailOptional), SQLValue(p.issuer), SQLValue(p.discoveryURL), SQLValue(p.skipNonceCheck),
             SQLValue(p.cachedDiscovery), SQLValue(p.authorizationURL), SQLValue(p.tokenURL), SQLValue(p.userinfoURL),
             SQLValue(p.jwksURI), A.time(p.updatedAt), .text(p.id)] + allowlist
        )
    }

    /// Newest first (`created_at desc`); ties (a frozen virtual clock) by physical position.
    func customOAuthProviders(where condition: String, _ arguments: SQLValue...) throws(PostgresError) -> [CustomOAuthProviderRecord] {
        var columns = CustomOAuthProviderRecord.columns
        if try !hasCustomClaimsAllowlist() {
            columns = columns.replacing("custom_claims_allowlist", with: "'{}'::text[] AS custom_claims_allowlist")
        }
        return try query("SELECT \(columns) FROM auth.custom_oauth_providers WHERE \(condition) ORDER BY created_at DESC, ctid DESC", arguments)
            .map(CustomOAuthProviderRecord.init(row:))
    }
}
