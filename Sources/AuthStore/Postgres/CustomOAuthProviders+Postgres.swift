/// `auth.custom_oauth_providers` in Postgres mode, as GoTrue's `models.CustomOAuthProvider`
/// writes it: the record's JSON-array columns (`acceptable_client_ids`, `scopes`,
/// `custom_claims_allowlist`) as `text[]` (converted in SQL, so the store still parses no
/// JSON; they read back as compact JSON arrays), the maps and the cached discovery document as
/// jsonb. `discovery_cached_at` (no field in the record) is stamped with the write's time when
/// the cached document changes and cleared with it, as `SetCachedDiscovery` and
/// `ClearCachedDiscovery` do.
///
/// GoTrue's table takes `https://` URLs only (CHECK constraints, as its API validates them).
/// The emulator's own fake issuers are served over http on loopback: such a URL is written to
/// `auth` in its https form and kept as it is in `auth_emulator.custom_oauth_provider_urls`,
/// which reads prefer.
///
/// `custom_claims_allowlist` came with GoTrue v2.192.0 (migration 20260625000000), after the
/// release `supabase start` pins (v2.189.0): an adopted schema may lack it. Such a schema
/// reads as an empty allowlist and is written without the column; only a non-empty allowlist,
/// which that server could not hold either, fails, naming the column.
extension CustomOAuthProviderRecord {
    /// The URL columns, in the order of `urls`.
    static let urlColumns = ["issuer", "discovery_url", "authorization_url", "token_url", "userinfo_url", "jwks_uri"]

    var urls: [String?] { [issuer, discoveryURL, authorizationURL, tokenURL, userinfoURL, jwksURI] }

    /// `columns` for a read of `auth.custom_oauth_providers p` joined with the emulator's URLs
    /// `u`; without the allowlist column, an empty one.
    static func postgresColumns(allowlist: Bool) -> String {
        columns.split(separator: ",").map { name in
            let column = String(name.filter { !$0.isWhitespace })
            if urlColumns.contains(column) { return "COALESCE(u.\(column), p.\(column)) AS \(column)" }
            if column == "custom_claims_allowlist" && !allowlist { return "'{}'::text[] AS custom_claims_allowlist" }
            return "p.\(column)"
        }.joined(separator: ", ")
    }
}

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

    /// The URLs as `auth` holds them: an http one in its https form.
    private static func authURLs(_ p: CustomOAuthProviderRecord) -> [SQLValue] {
        p.urls.map { url in
            guard let url, url.hasPrefix("http://") else { return SQLValue(url) }
            return .text("https://" + url.dropFirst("http://".count))
        }
    }

    /// Keeps the provider's http URLs beside its row (or drops the row when it has none).
    private func saveProviderURLs(_ p: CustomOAuthProviderRecord) throws(PostgresError) {
        let kept = p.urls.map { url in SQLValue(url.flatMap { $0.hasPrefix("http://") ? $0 : nil }) }
        guard kept.contains(where: { $0 != .null }) else {
            try execute("DELETE FROM auth_emulator.custom_oauth_provider_urls WHERE provider_id = $1", .text(p.id))
            return
        }
        let columns = CustomOAuthProviderRecord.urlColumns
        try execute(
            """
            INSERT INTO auth_emulator.custom_oauth_provider_urls (provider_id, \(columns.joined(separator: ", ")))
            VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (provider_id) DO UPDATE SET
            \(columns.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            """,
            [.text(p.id)] + kept
        )
    }

    func insertCustomOAuthProvider(_ p: CustomOAuthProviderRecord) throws(PostgresError) {
        let allowlist = try allowlistArgument(p)
        try execute(
            """
            INSERT INTO auth.custom_oauth_providers (id, provider_type, identifier, name, client_id, client_secret,
            acceptable_client_ids, scopes, pkce_enabled, attribute_mapping, authorization_params, enabled, email_optional,
            skip_nonce_check, cached_discovery, discovery_cached_at, issuer, discovery_url, authorization_url, token_url,
            userinfo_url, jwks_uri, created_at, updated_at\(allowlist.isEmpty ? "" : ", custom_claims_allowlist"))
            VALUES ($1, $2, $3, $4, $5, $6, \(Self.textArray(7)), \(Self.textArray(8)), $9, $10::jsonb, $11::jsonb, $12, $13,
            $14, $15::jsonb, CASE WHEN $15::jsonb IS NULL THEN NULL ELSE $23::timestamptz END, $16, $17, $18, $19,
            $20, $21, $22, $23::timestamptz\(allowlist.isEmpty ? "" : ", \(Self.textArray(24))"))
            """,
            [.text(p.id), .text(p.providerType), .text(p.identifier), .text(p.name), .text(p.clientID), .text(p.clientSecret),
             .text(p.acceptableClientIDs), .text(p.scopes), SQLValue(p.pkceEnabled), .text(p.attributeMapping),
             .text(p.authorizationParams), SQLValue(p.enabled), SQLValue(p.emailOptional), SQLValue(p.skipNonceCheck),
             SQLValue(p.cachedDiscovery)] + Self.authURLs(p) + [A.time(p.createdAt), A.time(p.updatedAt)] + allowlist
        )
        try saveProviderURLs(p)
    }

    func updateCustomOAuthProvider(_ p: CustomOAuthProviderRecord) throws(PostgresError) {
        let allowlist = try allowlistArgument(p)
        try execute(
            """
            UPDATE auth.custom_oauth_providers SET name = $1, client_id = $2, client_secret = $3,
            acceptable_client_ids = \(Self.textArray(4)), scopes = \(Self.textArray(5)), pkce_enabled = $6,
            attribute_mapping = $7::jsonb, authorization_params = $8::jsonb, enabled = $9, email_optional = $10,
            skip_nonce_check = $11,
            discovery_cached_at = CASE WHEN $12::jsonb IS NULL THEN NULL
              WHEN cached_discovery IS NOT DISTINCT FROM $12::jsonb THEN discovery_cached_at ELSE $19::timestamptz END,
            cached_discovery = $12::jsonb, issuer = $13, discovery_url = $14, authorization_url = $15, token_url = $16,
            userinfo_url = $17, jwks_uri = $18,
            updated_at = $19::timestamptz\(allowlist.isEmpty ? "" : ", custom_claims_allowlist = \(Self.textArray(21))") WHERE id = $20
            """,
            [.text(p.name), .text(p.clientID), .text(p.clientSecret), .text(p.acceptableClientIDs), .text(p.scopes),
             SQLValue(p.pkceEnabled), .text(p.attributeMapping), .text(p.authorizationParams), SQLValue(p.enabled),
             SQLValue(p.emailOptional), SQLValue(p.skipNonceCheck), SQLValue(p.cachedDiscovery)]
                + Self.authURLs(p) + [A.time(p.updatedAt), .text(p.id)] + allowlist
        )
        guard changes > 0 else { return }
        try saveProviderURLs(p)
    }

    /// Newest first (`created_at desc`), or oldest first; ties (a frozen virtual clock) by
    /// physical position.
    func customOAuthProviders(where condition: String, _ arguments: SQLValue..., oldestFirst: Bool = false) throws(PostgresError)
        -> [CustomOAuthProviderRecord]
    {
        let columns = CustomOAuthProviderRecord.postgresColumns(allowlist: try hasCustomClaimsAllowlist())
        let order = oldestFirst ? "p.created_at, p.ctid" : "p.created_at DESC, p.ctid DESC"
        return try query(
            """
            SELECT \(columns) FROM auth.custom_oauth_providers p
            LEFT JOIN auth_emulator.custom_oauth_provider_urls u ON u.provider_id = p.id
            WHERE \(condition) ORDER BY \(order)
            """,
            arguments
        ).map(CustomOAuthProviderRecord.init(row:))
    }

    /// The provider and the http URLs kept for it (the foreign key's cascade is missing where
    /// the emulator's table predates GoTrue's).
    func deleteCustomOAuthProvider(id: String) throws(PostgresError) {
        try execute("DELETE FROM auth_emulator.custom_oauth_provider_urls WHERE provider_id = $1", .text(id))
        try execute("DELETE FROM auth.custom_oauth_providers WHERE id = $1", .text(id))
    }
}
