import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore

/// The OAuth 2.1 / OpenID Connect server (internal/api/oauthserver; api.go's routes): Supabase
/// Auth as the identity provider of third-party apps. Each route keeps the real middleware order:
/// authentication or the admin check where the real router nests the group under it, then
/// `requireOAuthServerEnabled` (404 `feature_disabled` "OAuth server is disabled" while off).
struct OAuthServerEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/.well-known/oauth-authorization-server", operation: "oauth_authorization_server",
                     guards: [.requireOAuthServerEnabled]) { g, _ in WellKnownEndpoints(api: g.api).openIDConfiguration() },
            // Nested in the `/user` group: `requireAuthentication` comes before the feature gate.
            Endpoint("GET", "/user/oauth/grants", operation: "user.oauth.grants.list", guards: grants) { g, context in
                try g.listGrants(context)
            },
            Endpoint("DELETE", "/user/oauth/grants", operation: "user.oauth.grants.revoke", guards: grants) { g, context in
                try g.revokeGrant(context)
            },
            Endpoint("POST", "/admin/oauth/clients", operation: "admin.oauth.clients.create", guards: admin) { g, context in
                try g.adminRegister(context)
            },
            Endpoint("GET", "/admin/oauth/clients", operation: "admin.oauth.clients.list",
                     guards: admin) { g, context in try g.adminList(context) },
            Endpoint("GET", "/admin/oauth/clients/{client_id}", operation: "admin.oauth.clients.get",
                     guards: admin) { g, context in
                .json(OAuthClients.json(try g.adminClient(context)))
            },
            Endpoint("PUT", "/admin/oauth/clients/{client_id}", operation: "admin.oauth.clients.update",
                     guards: admin) { g, context in
                try g.adminUpdate(context)
            },
            Endpoint("DELETE", "/admin/oauth/clients/{client_id}", operation: "admin.oauth.clients.delete",
                     guards: admin) { g, context in
                try g.adminDelete(context)
            },
            Endpoint("POST", "/admin/oauth/clients/{client_id}/regenerate_secret", operation: "admin.oauth.clients.regenerate_secret",
                     guards: admin) { g, context in
                try g.adminRegenerateSecret(context)
            },
            Endpoint("POST", "/oauth/clients/register", operation: "oauth.clients.register",
                     guards: [.requireOAuthServerEnabled, .limit(.oauthClientRegister)]) { g, context in
                try g.dynamicRegister(context)
            },
            // `requireOAuthClientAuth` reads the client's credentials from the form body, which
            // the handler parses once for the grant too: it stays in the handler.
            Endpoint("POST", "/oauth/token", operation: "oauth.token", guards: [.requireOAuthServerEnabled]) { g, context in
                try g.token(context)
            },
            Endpoint("GET", "/oauth/userinfo", operation: "oauth.userinfo",
                     guards: signedIn) { g, context in try g.userInfo(context) },
            Endpoint("GET", "/oauth/authorize", operation: "oauth.authorize",
                     guards: [.requireOAuthServerEnabled]) { g, context in
                try g.authorize(context)
            },
            Endpoint("GET", "/oauth/authorizations/{authorization_id}", operation: "oauth.authorizations.get",
                     guards: signedIn) { g, context in
                try g.authorization(context)
            },
            Endpoint("POST", "/oauth/authorizations/{authorization_id}/consent", operation: "oauth.authorizations.consent",
                     guards: signedIn) { g, context in
                try g.consent(context)
            },
        ]
    }

    var project: Project { api.project }
    var config: Configuration { api.snapshot.configuration }

    /// `/user/oauth/grants`: the `/user` group's `requireAuthentication`, then its own
    /// `requireOAuthServerEnabled`.
    static let grants: [RouteGuard] = [.requireAuthentication, .requireOAuthServerEnabled]
    /// `/admin/oauth/clients*`: the `/admin` group's guard, then `requireOAuthServerEnabled`.
    static let admin: [RouteGuard] = AdminEndpoints.admin + [.requireOAuthServerEnabled]
    /// The `/oauth` routes of a signed-in user: the group's gate, then `requireAuthentication`.
    static let signedIn: [RouteGuard] = [.requireOAuthServerEnabled, .requireAuthentication]

    /// A registration handler's errors: the real handler wraps the service's error into a new
    /// 400 whose message is the wrapped error's text, `"<status>: <message>"` for an HTTPError.
    private func registrationError(_ error: AuthError) -> AuthError {
        AuthError(400, .validationFailed, "\(error.status): \(error.message)")
    }

    // MARK: admin clients

    func adminRegister(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        try register(context, registrationType: "manual")
    }

    /// The request's client registered (`manual` by an admin, `dynamic` by RFC 7591 registration):
    /// 201 with the client, its secret shown this once.
    private func register(_ context: RequestContext, registrationType: String) throws(AuthError) -> HTTPResponse {
        let params = try OAuthClients.params(context.request)
        let (client, secret): (OAuthClientRecord, String?)
        do {
            (client, secret) = try OAuthClients.register(params, registrationType: registrationType, api: api)
        } catch {
            throw registrationError(error)
        }
        return .json(status: 201, OAuthClients.json(client, secret: secret))
    }

    func adminList(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let clients = try api.read { conn in try conn.oauthClients() }
        // `clients` is omitempty: an empty registry answers `{}`.
        return .json(clients.isEmpty ? .object([:]) : ["clients": .array(clients.map { OAuthClients.json($0) })])
    }

    /// `LoadOAuthServerClient`.
    func adminClient(_ context: RequestContext) throws(AuthError) -> OAuthClientRecord {
        let raw = context.pathParameters["client_id"] ?? ""
        if raw.isEmpty { throw AuthError(400, .validationFailed, "client_id is required") }
        guard let id = AdminEndpoints.canonicalUUID(raw) else { throw AuthError(400, .validationFailed, "invalid client_id format") }
        guard let client = try api.read({ conn in try conn.oauthClient(id: id) }) else {
            throw AuthError(404, .oauthClientNotFound, "OAuth client not found")
        }
        return client
    }

    func adminUpdate(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        var client = try adminClient(context)
        let params = try OAuthClients.params(context.request, update: true)
        if params.redirectURIs == nil && params.grantTypes == nil && params.clientName == nil && params.clientURI == nil
            && params.logoURI == nil && params.tokenEndpointAuthMethod == nil {
            throw AuthError(400, .validationFailed, "No fields provided for update")
        }
        if let uris = params.redirectURIs { try OAuthClients.validateRedirectURIs(uris, required: false) }
        if let grants = params.grantTypes { try OAuthClients.validateGrantTypes(grants) }
        try OAuthClients.validateMetadata(params)
        if let method = params.tokenEndpointAuthMethod, !OAuthClients.authMethods.contains(method) {
            throw AuthError(400, .validationFailed, "invalid token_endpoint_auth_method: must be one of [\(OAuthClients.authMethods.joined(separator: " "))]")
        }
        if let uris = params.redirectURIs { client.redirectURIs = uris }
        if let grants = params.grantTypes { client.grantTypes = grants }
        if let name = params.clientName { client.name = name }
        if let uri = params.clientURI { client.uri = uri }
        if let logo = params.logoURI { client.logoURI = logo }
        if let method = params.tokenEndpointAuthMethod {
            let valid = client.clientType == OAuthClients.publicType ? ["none"] : ["client_secret_basic", "client_secret_post"]
            guard valid.contains(method) else {
                throw AuthError(400, .validationFailed,
                                "token_endpoint_auth_method '\(method)' is not valid for client_type '\(client.clientType)'; valid methods: [\(valid.joined(separator: " "))]")
            }
            client.tokenEndpointAuthMethod = method
        }
        client.updatedAt = project.environment.now().microseconds
        let updated = client
        try api.write { conn in try conn.updateOAuthClient(updated) }
        return .json(OAuthClients.json(updated))
    }

    /// A soft delete: the client is no longer found, its rows stay.
    func adminDelete(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        var client = try adminClient(context)
        client.deletedAt = project.environment.now().microseconds
        let deleted = client
        try api.write { conn in try conn.updateOAuthClient(deleted) }
        return HTTPResponse(status: 204, headers: [:], body: [])
    }

    func adminRegenerateSecret(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        var client = try adminClient(context)
        guard client.clientType == OAuthClients.confidentialType else {
            throw AuthError(400, .validationFailed, "Cannot regenerate secret for public client")
        }
        let secret = OAuthClients.newSecret(project.environment)
        client.secretHash = OAuthClients.hashSecret(secret)
        client.updatedAt = project.environment.now().microseconds
        let updated = client
        try api.write { conn in try conn.updateOAuthClient(updated) }
        return .json(OAuthClients.json(updated, secret: secret))
    }

    /// `POST /oauth/clients/register` (RFC 7591), when `GOTRUE_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION`.
    func dynamicRegister(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        guard config.oauthServer.allowDynamicRegistration else {
            throw AuthError(403, .oauthDynamicClientRegistrationDisabled, "Dynamic client registration is not enabled")
        }
        return try register(context, registrationType: "dynamic")
    }

    // MARK: grants

    /// `UserListOAuthGrants`: the user's active consents with their clients.
    func listGrants(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        let grants: [JSON] = try api.read { conn in
            var out: [JSON] = []
            for consent in try conn.activeOAuthConsents(userID: caller.user.id) {
                guard let client = try conn.oauthClient(id: consent.clientID) else { continue }
                out.append([
                    "client": OAuthServerEndpoints.clientDetails(client),
                    "scopes": .array(consent.scopes.map(JSON.string)),
                    "granted_at": .string(Timestamp(microseconds: consent.grantedAt).rfc3339),
                ])
            }
            return out
        }
        return .json(.array(grants))
    }

    /// `UserRevokeOAuthGrant`: the consent is revoked and the client's sessions of the user end.
    func revokeGrant(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        let raw = context.request.queryValue("client_id") ?? ""
        if raw.isEmpty { throw AuthError(400, .validationFailed, "client_id query parameter is required") }
        guard let clientID = AdminEndpoints.canonicalUUID(raw) else { throw AuthError(400, .validationFailed, "invalid client_id format") }
        try api.write { conn in
            guard let consent = try conn.activeOAuthConsent(userID: caller.user.id, clientID: clientID) else {
                throw AuthError(404, .oauthConsentNotFound, "No active grant found for this client")
            }
            try conn.revokeOAuthConsent(id: consent.id, at: project.environment.now().microseconds)
            try conn.deleteOAuthSessions(userID: caller.user.id, clientID: clientID)
            try api.audit(conn, context, actor: caller.user, action: .tokenRevoked,
                          traits: ["oauth_client_id": .string(clientID), "action": "revoke_oauth_grant"])
        }
        return HTTPResponse(status: 204, headers: [:], body: [])
    }

    static func clientDetails(_ client: OAuthClientRecord) -> JSON {
        var o: JSONObject = ["id": .string(client.id)]
        if let name = client.name, !name.isEmpty { o["name"] = .string(name) }
        if let uri = client.uri, !uri.isEmpty { o["uri"] = .string(uri) }
        if let logo = client.logoURI, !logo.isEmpty { o["logo_uri"] = .string(logo) }
        return .object(o)
    }
}
