import GoFormats

/// A row of `custom_oauth_providers` (GoTrue's `models.CustomOAuthProvider`). The list and map
/// columns hold JSON text; GoTrue encodes and decodes it, as the store knows no JSON.
public struct CustomOAuthProviderRecord: Sendable, Equatable {
    public var id: String
    /// `oauth2` or `oidc`.
    public var providerType: String
    /// `custom:<name>`, also the provider name of the identities it creates.
    public var identifier: String
    public var name: String
    public var clientID: String
    public var clientSecret: String
    public var acceptableClientIDs: String = "[]"
    public var scopes: String = "[]"
    public var pkceEnabled = true
    public var attributeMapping: String = "{}"
    public var customClaimsAllowlist: String = "[]"
    public var authorizationParams: String = "{}"
    public var enabled = true
    public var emailOptional = false
    public var issuer: String?
    public var discoveryURL: String?
    public var skipNonceCheck = false
    public var cachedDiscovery: String?
    public var authorizationURL: String?
    public var tokenURL: String?
    public var userinfoURL: String?
    public var jwksURI: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(id: String, providerType: String, identifier: String, name: String, clientID: String, clientSecret: String,
                at time: Int64) {
        self.id = id
        self.providerType = providerType
        self.identifier = identifier
        self.name = name
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.createdAt = time
        self.updatedAt = time
    }

    init(row: Row) {
        id = row.string("id") ?? ""
        providerType = row.string("provider_type") ?? ""
        identifier = row.string("identifier") ?? ""
        name = row.string("name") ?? ""
        clientID = row.string("client_id") ?? ""
        clientSecret = row.string("client_secret") ?? ""
        acceptableClientIDs = row.string("acceptable_client_ids") ?? "[]"
        scopes = row.string("scopes") ?? "[]"
        pkceEnabled = row.bool("pkce_enabled") ?? true
        attributeMapping = row.string("attribute_mapping") ?? "{}"
        customClaimsAllowlist = row.string("custom_claims_allowlist") ?? "[]"
        authorizationParams = row.string("authorization_params") ?? "{}"
        enabled = row.bool("enabled") ?? true
        emailOptional = row.bool("email_optional") ?? false
        issuer = row.string("issuer")
        discoveryURL = row.string("discovery_url")
        skipNonceCheck = row.bool("skip_nonce_check") ?? false
        cachedDiscovery = row.string("cached_discovery")
        authorizationURL = row.string("authorization_url")
        tokenURL = row.string("token_url")
        userinfoURL = row.string("userinfo_url")
        jwksURI = row.string("jwks_uri")
        createdAt = row.int64("created_at") ?? 0
        updatedAt = row.int64("updated_at") ?? 0
    }

    static let columns = """
        id, provider_type, identifier, name, client_id, client_secret, acceptable_client_ids, scopes, pkce_enabled,
        attribute_mapping, custom_claims_allowlist, authorization_params, enabled, email_optional, issuer, discovery_url,
        skip_nonce_check, cached_discovery, authorization_url, token_url, userinfo_url, jwks_uri, created_at, updated_at
        """

    var values: [SQLValue] {
        [.text(id), .text(providerType), .text(identifier), .text(name), .text(clientID), .text(clientSecret),
         .text(acceptableClientIDs), .text(scopes), .integer(pkceEnabled ? 1 : 0), .text(attributeMapping),
         .text(customClaimsAllowlist), .text(authorizationParams), .integer(enabled ? 1 : 0), .integer(emailOptional ? 1 : 0),
         SQLValue(issuer), SQLValue(discoveryURL), .integer(skipNonceCheck ? 1 : 0), SQLValue(cachedDiscovery),
         SQLValue(authorizationURL), SQLValue(tokenURL), SQLValue(userinfoURL), SQLValue(jwksURI), .integer(createdAt),
         .integer(updatedAt)]
    }
}

extension Connection {
    public func insertCustomOAuthProvider(_ p: CustomOAuthProviderRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertCustomOAuthProvider(p) } }
        let placeholders = Array(repeating: "?", count: p.values.count).joined(separator: ", ")
        try execute("INSERT INTO custom_oauth_providers (\(CustomOAuthProviderRecord.columns)) VALUES (\(placeholders))",
                    p.values)
    }

    /// Replaces every column but `id`, `identifier`, `provider_type` and `created_at`, which an
    /// update never changes (`UpdateCustomOAuthProvider`).
    public func updateCustomOAuthProvider(_ p: CustomOAuthProviderRecord) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: p.id, else: ()) { try $0.updateCustomOAuthProvider(p) }
        }
        try execute(
            """
            UPDATE custom_oauth_providers SET name = ?, client_id = ?, client_secret = ?, acceptable_client_ids = ?, scopes = ?,
            pkce_enabled = ?, attribute_mapping = ?, custom_claims_allowlist = ?, authorization_params = ?, enabled = ?,
            email_optional = ?, issuer = ?, discovery_url = ?, skip_nonce_check = ?, cached_discovery = ?, authorization_url = ?,
            token_url = ?, userinfo_url = ?, jwks_uri = ?, updated_at = ? WHERE id = ?
            """,
            [.text(p.name), .text(p.clientID), .text(p.clientSecret), .text(p.acceptableClientIDs), .text(p.scopes),
             .integer(p.pkceEnabled ? 1 : 0), .text(p.attributeMapping), .text(p.customClaimsAllowlist),
             .text(p.authorizationParams), .integer(p.enabled ? 1 : 0), .integer(p.emailOptional ? 1 : 0), SQLValue(p.issuer),
             SQLValue(p.discoveryURL), .integer(p.skipNonceCheck ? 1 : 0), SQLValue(p.cachedDiscovery),
             SQLValue(p.authorizationURL), SQLValue(p.tokenURL), SQLValue(p.userinfoURL), SQLValue(p.jwksURI),
             .integer(p.updatedAt), .text(p.id)]
        )
    }

    public func customOAuthProvider(identifier: String) throws(StoreError) -> CustomOAuthProviderRecord? {
        if let postgres { return try postgres.store { try $0.customOAuthProviders(where: "p.identifier = $1", .text(identifier)).first } }
        return try queryFirst("SELECT \(CustomOAuthProviderRecord.columns) FROM custom_oauth_providers WHERE identifier = ?",
                              .text(identifier)).map(CustomOAuthProviderRecord.init(row:))
    }

    /// `FindAllCustomOAuthProviders`: newest first (`created_at desc`).
    /// `FindAllCustomOAuthProvidersByType` orders by `provider_type desc` only, which ties every
    /// row of the one type: Postgres then reads them through `custom_oauth_providers_provider_type_idx`
    /// in insertion order, oldest first, as they are listed here.
    public func customOAuthProviders(type: String? = nil) throws(StoreError) -> [CustomOAuthProviderRecord] {
        if let postgres {
            guard let type else { return try postgres.store { try $0.customOAuthProviders(where: "true") } }
            return try postgres.store { try $0.customOAuthProviders(where: "p.provider_type = $1", .text(type), oldestFirst: true) }
        }
        let select = "SELECT \(CustomOAuthProviderRecord.columns) FROM custom_oauth_providers"
        if let type {
            return try query(select + " WHERE provider_type = ? ORDER BY created_at, rowid", .text(type)).map(CustomOAuthProviderRecord.init(row:))
        }
        return try query(select + " ORDER BY created_at DESC, rowid DESC").map(CustomOAuthProviderRecord.init(row:))
    }

    public func countCustomOAuthProviders() throws(StoreError) -> Int {
        if let postgres {
            return try postgres.store { Int(try $0.scalar("SELECT count(*) FROM auth.custom_oauth_providers").int64Value ?? 0) }
        }
        return Int(try scalar("SELECT count(*) FROM custom_oauth_providers").int64Value ?? 0)
    }

    public func deleteCustomOAuthProvider(id: String) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: id, else: ()) { try $0.deleteCustomOAuthProvider(id: id) }
        }
        try execute("DELETE FROM custom_oauth_providers WHERE id = ?", .text(id))
    }
}
