import GoFormats

/// A row of `oauth_clients`. List fields are stored space-separated.
public struct OAuthClientRecord: Sendable, Equatable {
    public var id: String
    public var secretHash: String?
    public var registrationType: String
    public var clientType: String
    public var tokenEndpointAuthMethod: String
    public var redirectURIs: [String]
    public var grantTypes: [String]
    public var name: String?
    public var uri: String?
    public var logoURI: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    public var deletedAt: Int64?

    public init(id: String, registrationType: String, clientType: String, tokenEndpointAuthMethod: String,
                redirectURIs: [String], grantTypes: [String], at time: Int64) {
        self.id = id
        self.registrationType = registrationType
        self.clientType = clientType
        self.tokenEndpointAuthMethod = tokenEndpointAuthMethod
        self.redirectURIs = redirectURIs
        self.grantTypes = grantTypes
        self.createdAt = time
        self.updatedAt = time
    }

    init(row: Row) {
        id = row.string("id") ?? ""
        secretHash = row.string("client_secret_hash")
        registrationType = row.string("registration_type") ?? ""
        clientType = row.string("client_type") ?? ""
        tokenEndpointAuthMethod = row.string("token_endpoint_auth_method") ?? ""
        redirectURIs = (row.string("redirect_uris") ?? "").split(separator: " ").map(String.init)
        grantTypes = (row.string("grant_types") ?? "").split(separator: " ").map(String.init)
        name = row.string("client_name")
        uri = row.string("client_uri")
        logoURI = row.string("logo_uri")
        createdAt = row.int64("created_at") ?? 0
        updatedAt = row.int64("updated_at") ?? 0
        deletedAt = row.int64("deleted_at")
    }

    static let select = """
        SELECT id, client_secret_hash, registration_type, client_type, token_endpoint_auth_method, redirect_uris, grant_types,
        client_name, client_uri, logo_uri, created_at, updated_at, deleted_at FROM oauth_clients
        """
}

/// A row of `oauth_authorizations`: one authorization request, from `/oauth/authorize` to its
/// code's exchange.
public struct OAuthAuthorizationRecord: Sendable, Equatable {
    public var id: String
    public var authorizationID: String
    public var clientID: String
    public var userID: String?
    public var redirectURI: String
    public var scope: String
    public var state: String?
    public var resource: String?
    public var codeChallenge: String?
    public var codeChallengeMethod: String?
    public var nonce: String?
    /// `pending`, `approved`, `denied` or `expired`.
    public var status: String
    public var code: String?
    public var createdAt: Int64
    public var expiresAt: Int64
    public var approvedAt: Int64?

    public init(id: String, authorizationID: String, clientID: String, redirectURI: String, scope: String,
                at time: Int64, expiresAt: Int64) {
        self.id = id
        self.authorizationID = authorizationID
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.status = "pending"
        self.createdAt = time
        self.expiresAt = expiresAt
    }

    init(row: Row) {
        id = row.string("id") ?? ""
        authorizationID = row.string("authorization_id") ?? ""
        clientID = row.string("client_id") ?? ""
        userID = row.string("user_id")
        redirectURI = row.string("redirect_uri") ?? ""
        scope = row.string("scope") ?? ""
        state = row.string("state")
        resource = row.string("resource")
        codeChallenge = row.string("code_challenge")
        codeChallengeMethod = row.string("code_challenge_method")
        nonce = row.string("nonce")
        status = row.string("status") ?? ""
        code = row.string("authorization_code")
        createdAt = row.int64("created_at") ?? 0
        expiresAt = row.int64("expires_at") ?? 0
        approvedAt = row.int64("approved_at")
    }

    static let select = """
        SELECT id, authorization_id, client_id, user_id, redirect_uri, scope, state, resource, code_challenge,
        code_challenge_method, nonce, status, authorization_code, created_at, expires_at, approved_at FROM oauth_authorizations
        """
}

/// A row of `oauth_consents`: the scopes a user granted a client.
public struct OAuthConsentRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var clientID: String
    public var scopes: [String]
    public var grantedAt: Int64
    public var revokedAt: Int64?

    public init(id: String, userID: String, clientID: String, scopes: [String], at time: Int64) {
        self.id = id
        self.userID = userID
        self.clientID = clientID
        self.scopes = scopes
        self.grantedAt = time
    }

    init(row: Row) {
        id = row.string("id") ?? ""
        userID = row.string("user_id") ?? ""
        clientID = row.string("client_id") ?? ""
        scopes = (row.string("scopes") ?? "").split(separator: " ").map(String.init)
        grantedAt = row.int64("granted_at") ?? 0
        revokedAt = row.int64("revoked_at")
    }

    static let select = "SELECT id, user_id, client_id, scopes, granted_at, revoked_at FROM oauth_consents"
}

extension Connection {
    // MARK: clients

    public func insertOAuthClient(_ c: OAuthClientRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertOAuthClient(c) } }
        try execute(
            """
            INSERT INTO oauth_clients (id, client_secret_hash, registration_type, client_type, token_endpoint_auth_method,
            redirect_uris, grant_types, client_name, client_uri, logo_uri, created_at, updated_at, deleted_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(c.id), SQLValue(c.secretHash), .text(c.registrationType), .text(c.clientType), .text(c.tokenEndpointAuthMethod),
            .text(c.redirectURIs.joined(separator: " ")), .text(c.grantTypes.joined(separator: " ")), SQLValue(c.name),
            SQLValue(c.uri), SQLValue(c.logoURI), .integer(c.createdAt), .integer(c.updatedAt), SQLValue(c.deletedAt)
        )
    }

    public func updateOAuthClient(_ c: OAuthClientRecord) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: c.id, else: ()) { try $0.updateOAuthClient(c) }
        }
        try execute(
            """
            UPDATE oauth_clients SET client_secret_hash = ?, token_endpoint_auth_method = ?, redirect_uris = ?, grant_types = ?,
            client_name = ?, client_uri = ?, logo_uri = ?, updated_at = ?, deleted_at = ? WHERE id = ?
            """,
            SQLValue(c.secretHash), .text(c.tokenEndpointAuthMethod), .text(c.redirectURIs.joined(separator: " ")),
            .text(c.grantTypes.joined(separator: " ")), SQLValue(c.name), SQLValue(c.uri), SQLValue(c.logoURI),
            .integer(c.updatedAt), SQLValue(c.deletedAt), .text(c.id)
        )
    }

    /// `FindOAuthServerClientByID`: deleted (soft-deleted) clients are not found.
    public func oauthClient(id: String) throws(StoreError) -> OAuthClientRecord? {
        if let postgres {
            return try postgres.store(ifUUID: id, else: nil) { try $0.oauthClients(where: "id = $1 AND deleted_at IS NULL", .text(id)).first }
        }
        return try queryFirst("\(OAuthClientRecord.select) WHERE id = ? AND deleted_at IS NULL", .text(id))
            .map(OAuthClientRecord.init(row:))
    }

    /// Newest first, deleted ones left out.
    public func oauthClients() throws(StoreError) -> [OAuthClientRecord] {
        if let postgres { return try postgres.store { try $0.oauthClients(where: "deleted_at IS NULL") } }
        return try query("\(OAuthClientRecord.select) WHERE deleted_at IS NULL ORDER BY created_at DESC, rowid DESC")
            .map(OAuthClientRecord.init(row:))
    }

    // MARK: authorizations

    public func insertOAuthAuthorization(_ a: OAuthAuthorizationRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertOAuthAuthorization(a) } }
        try execute(
            """
            INSERT INTO oauth_authorizations (id, authorization_id, client_id, user_id, redirect_uri, scope, state, resource,
            code_challenge, code_challenge_method, nonce, status, authorization_code, created_at, expires_at, approved_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(a.id), .text(a.authorizationID), .text(a.clientID), SQLValue(a.userID), .text(a.redirectURI), .text(a.scope),
            SQLValue(a.state), SQLValue(a.resource), SQLValue(a.codeChallenge), SQLValue(a.codeChallengeMethod),
            SQLValue(a.nonce), .text(a.status), SQLValue(a.code), .integer(a.createdAt), .integer(a.expiresAt),
            SQLValue(a.approvedAt)
        )
    }

    public func updateOAuthAuthorization(_ a: OAuthAuthorizationRecord) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: a.id, else: ()) { try $0.updateOAuthAuthorization(a) }
        }
        try execute(
            "UPDATE oauth_authorizations SET user_id = ?, status = ?, authorization_code = ?, approved_at = ? WHERE id = ?",
            SQLValue(a.userID), .text(a.status), SQLValue(a.code), SQLValue(a.approvedAt), .text(a.id)
        )
    }

    /// `forUpdate`: GoTrue's `FindOAuthServerAuthorizationByIDForUpdate`, the row locked until
    /// the write's transaction ends; one another transaction holds throws
    /// `StoreError.isRowLocked` (Postgres mode; `RowLocks.swift`).
    public func oauthAuthorization(authorizationID: String, forUpdate: Bool = false) throws(StoreError) -> OAuthAuthorizationRecord? {
        if let postgres {
            if forUpdate { return try postgres.oauthAuthorizationForUpdate("authorization_id = $1", .text(authorizationID)) }
            return try postgres.store { try $0.oauthAuthorization(where: "authorization_id = $1", .text(authorizationID)) }
        }
        return try queryFirst("\(OAuthAuthorizationRecord.select) WHERE authorization_id = ?", .text(authorizationID))
            .map(OAuthAuthorizationRecord.init(row:))
    }

    /// `forUpdate`: locked as `oauthAuthorization(authorizationID:forUpdate:)` locks it.
    public func oauthAuthorization(code: String, forUpdate: Bool = false) throws(StoreError) -> OAuthAuthorizationRecord? {
        if let postgres {
            if forUpdate { return try postgres.oauthAuthorizationForUpdate("authorization_code = $1", .text(code)) }
            return try postgres.store { try $0.oauthAuthorization(where: "authorization_code = $1", .text(code)) }
        }
        return try queryFirst("\(OAuthAuthorizationRecord.select) WHERE authorization_code = ?", .text(code))
            .map(OAuthAuthorizationRecord.init(row:))
    }

    public func deleteOAuthAuthorization(id: String) throws(StoreError) {
        try execute("DELETE FROM oauth_authorizations WHERE id = ?", [.text(id)],
                    postgres: "DELETE FROM auth.oauth_authorizations WHERE id = $1", ifUUID: id)
    }

    // MARK: consents

    /// `UpsertOAuthServerConsent`: one consent per user and client; granting again replaces its
    /// scopes and clears a revocation.
    public func upsertOAuthConsent(_ c: OAuthConsentRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.upsertOAuthConsent(c) } }
        try execute(
            """
            INSERT INTO oauth_consents (id, user_id, client_id, scopes, granted_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)
            ON CONFLICT (user_id, client_id) DO UPDATE SET scopes = excluded.scopes, granted_at = excluded.granted_at,
            revoked_at = NULL
            """,
            .text(c.id), .text(c.userID), .text(c.clientID), .text(c.scopes.joined(separator: " ")), .integer(c.grantedAt)
        )
    }

    public func activeOAuthConsent(userID: String, clientID: String) throws(StoreError) -> OAuthConsentRecord? {
        if let postgres {
            return try postgres.store(ifUUID: userID, clientID, else: nil) {
                try $0.activeOAuthConsents(where: "user_id = $1 AND client_id = $2", .text(userID), .text(clientID)).first
            }
        }
        return try queryFirst("\(OAuthConsentRecord.select) WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL",
                              .text(userID), .text(clientID)).map(OAuthConsentRecord.init(row:))
    }

    public func activeOAuthConsents(userID: String) throws(StoreError) -> [OAuthConsentRecord] {
        if let postgres {
            return try postgres.store(ifUUID: userID, else: []) { try $0.activeOAuthConsents(where: "user_id = $1", .text(userID)) }
        }
        return try query("\(OAuthConsentRecord.select) WHERE user_id = ? AND revoked_at IS NULL ORDER BY granted_at DESC, rowid DESC",
                         .text(userID)).map(OAuthConsentRecord.init(row:))
    }

    public func revokeOAuthConsent(id: String, at time: Int64) throws(StoreError) {
        try execute("UPDATE oauth_consents SET revoked_at = ? WHERE id = ?", [.integer(time), .text(id)],
                    postgres: "UPDATE auth.oauth_consents SET revoked_at = $1 WHERE id = $2", [PostgresArguments.time(time), .text(id)],
                    ifUUID: id)
    }

    /// `RevokeOAuthSessions`: the user's sessions issued to the client end.
    public func deleteOAuthSessions(userID: String, clientID: String) throws(StoreError) {
        try execute("DELETE FROM sessions WHERE user_id = ? AND oauth_client_id = ?", [.text(userID), .text(clientID)],
                    postgres: "DELETE FROM auth.sessions WHERE user_id = $1 AND oauth_client_id = $2", ifUUID: userID, clientID)
    }
}
