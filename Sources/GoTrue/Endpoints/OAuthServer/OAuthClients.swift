import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore

/// The OAuth 2.1 server's client registry (oauthserver/handlers.go, service.go, client_auth.go):
/// admin CRUD under `/admin/oauth/clients` and RFC 7591 dynamic registration. Secrets are shown
/// once and stored as BASE64URL(SHA-256(secret)).
enum OAuthClients {
    static let publicType = "public"
    static let confidentialType = "confidential"
    static let authMethods = ["none", "client_secret_basic", "client_secret_post"]

    /// `OAuthServerClientRegisterParams` / `OAuthServerClientUpdateParams`, as decoded from the body.
    struct Params {
        var redirectURIs: [String]?
        var clientType: String?
        var tokenEndpointAuthMethod: String?
        var grantTypes: [String]?
        var clientName: String?
        var clientURI: String?
        var logoURI: String?
    }

    /// `json.NewDecoder(r.Body).Decode(&params)`: the first JSON value only (what follows is
    /// never read), `null` leaving every field unset, members matched to fields as Go matches
    /// them (exactly, else case-insensitively); anything the decoder refuses, a field of another
    /// type among them, is the handler's "Invalid JSON body". The update's struct has no
    /// `client_type`, so an update ignores one of any type.
    static func params(_ request: HTTPRequest, update: Bool = false) throws(AuthError) -> Params {
        let invalid = AuthError(400, .badJson, "Invalid JSON body")
        let body: RequestBody
        do {
            body = try RequestBody(decoding: request, as: update ? "OAuthServerClientUpdateParams" : "OAuthServerClientRegisterParams",
                                   prefix: "")
        } catch {
            throw invalid
        }
        func string(_ key: String) throws(AuthError) -> String? {
            guard let value = body.value(key), !value.isNull else { return nil }
            guard let text = value.stringValue else { throw invalid }
            return text
        }
        func strings(_ key: String) throws(AuthError) -> [String]? {
            guard let value = body.value(key), !value.isNull else { return nil }
            guard let items = value.arrayValue else { throw invalid }
            var out: [String] = []
            for item in items {
                guard let text = item.stringValue else { throw invalid }
                out.append(text)
            }
            return out
        }
        return Params(redirectURIs: try strings("redirect_uris"), clientType: update ? nil : try string("client_type"),
                      tokenEndpointAuthMethod: try string("token_endpoint_auth_method"), grantTypes: try strings("grant_types"),
                      clientName: try string("client_name"), clientURI: try string("client_uri"), logoURI: try string("logo_uri"))
    }

    // MARK: validation (service.go)

    static func validateRedirectURIs(_ uris: [String]?, required: Bool) throws(AuthError) {
        let list = uris ?? []
        if required && list.isEmpty { throw AuthError(400, .validationFailed, "redirect_uris is required") }
        if list.isEmpty { throw AuthError(400, .validationFailed, "redirect_uris cannot be empty") }
        if list.count > 10 { throw AuthError(400, .validationFailed, "redirect_uris cannot exceed 10 items") }
        for uri in list {
            if let problem = redirectURIProblem(uri) {
                throw AuthError(400, .validationFailed, "invalid redirect_uri '\(uri)': \(problem)")
            }
        }
    }

    /// `validateRedirectURI`: `url.Parse` must accept it, with a scheme and a host, no dangerous
    /// scheme, `http` only for `localhost`, `127.0.0.1` or `::1`, and no fragment. The emulator
    /// also refuses a URI Go accepts but a browser would send elsewhere (`RedirectTarget`):
    /// `/authorize` compares redirect URIs with these registered strings exactly, so this is
    /// the one place their hosts are judged.
    static func redirectURIProblem(_ uri: String) -> String? {
        if uri.isEmpty { return "redirect URI cannot be empty" }
        guard let url = GoParsedURL.parse(uri) else { return "invalid URL format" }
        if url.scheme.isEmpty || url.host.isEmpty { return "must have scheme and host" }
        if RedirectTarget.scriptSchemes.contains(url.scheme) {
            return "scheme '\(url.scheme)' is not allowed for security reasons"
        }
        if url.scheme == "http" && !["localhost", "127.0.0.1", "::1"].contains(url.hostname) {
            return "HTTP scheme only allowed for localhost"
        }
        if !url.fragment.isEmpty { return "fragment not allowed in redirect URI" }
        if RedirectTarget(uri) == nil { return "invalid URL format" }
        return nil
    }

    static func validateGrantTypes(_ types: [String]) throws(AuthError) {
        if types.isEmpty { throw AuthError(400, .validationFailed, "grant_types cannot be empty") }
        for type in types where type != "authorization_code" && type != "refresh_token" {
            throw AuthError(400, .validationFailed, "grant_types must only contain 'authorization_code' and/or 'refresh_token'")
        }
    }

    /// `url.ParseRequestURI` for client and logo URIs: an absolute URI or an absolute path.
    /// `url.ParseRequestURI`: `url.Parse` with the whole text as the URL (a `#` starts no
    /// fragment, so it is read as an escaped one would be) and, without a scheme, only an
    /// absolute path.
    static func isRequestURI(_ text: String) -> Bool {
        let whole = String(text.flatMap { $0 == "#" ? Array("%23") : [$0] })
        guard let url = GoParsedURL.parse(whole) else { return false }
        return !url.scheme.isEmpty || text.hasPrefix("/")
    }

    static func validateMetadata(_ p: Params) throws(AuthError) {
        // service.go compares `len()`: bytes, not characters.
        if (p.clientName ?? "").utf8.count > 1024 { throw AuthError(400, .validationFailed, "client_name cannot exceed 1024 characters") }
        for (name, value) in [("client_uri", p.clientURI ?? ""), ("logo_uri", p.logoURI ?? "")] where !value.isEmpty {
            if value.utf8.count > 2048 { throw AuthError(400, .validationFailed, "\(name) cannot exceed 2048 characters") }
            if !isRequestURI(value) { throw AuthError(400, .validationFailed, "\(name) must be a valid URL") }
        }
    }

    /// `InferClientTypeFromAuthMethod`.
    static func clientType(forAuthMethod method: String) -> String { method == "none" ? publicType : confidentialType }

    /// `OAuthServerClientRegisterParams.validate` in its order.
    static func validateRegistration(_ p: Params) throws(AuthError) {
        try validateRedirectURIs(p.redirectURIs, required: true)
        if let grants = p.grantTypes, !grants.isEmpty { try validateGrantTypes(grants) }
        try validateMetadata(p)
        let type = p.clientType ?? ""
        if !type.isEmpty && type != publicType && type != confidentialType {
            throw AuthError(400, .validationFailed, "client_type must be 'public' or 'confidential'")
        }
        let method = p.tokenEndpointAuthMethod ?? ""
        if !method.isEmpty && !authMethods.contains(method) {
            throw AuthError(400, .validationFailed, "token_endpoint_auth_method must be one of: [\(authMethods.joined(separator: " "))]")
        }
        if !type.isEmpty && !method.isEmpty && clientType(forAuthMethod: method) != type {
            throw AuthError(400, .validationFailed,
                            "client_type '\(type)' is inconsistent with token_endpoint_auth_method '\(method)' (expected client_type '\(clientType(forAuthMethod: method))')")
        }
    }

    /// A new client secret: 32 random bytes, base64url without padding.
    static func newSecret(_ environment: Environment) -> String { Base64URL.encode(environment.randomBytes(32)) }

    static func hashSecret(_ secret: String) -> String { Base64URL.encode(SHA256.hash(data: Array(secret.utf8))) }

    /// `ValidateClientSecret`: SHA-256 of the presented secret against the stored hash, in
    /// constant time.
    static func secretMatches(_ secret: String, hash: String?) -> Bool {
        guard let hash, let stored = try? Base64URL.decode(hash) else { return false }
        return constantTimeEquals(SHA256.hash(data: Array(secret.utf8)), stored)
    }

    /// `registerOAuthServerClient`: defaults (both grant types; confidential with
    /// `client_secret_basic` unless told otherwise), then the row; the plain secret is returned
    /// once for a confidential client.
    static func register(_ p: Params, registrationType: String, api: Core) throws(AuthError) -> (OAuthClientRecord, String?) {
        try validateRegistration(p)
        let method = p.tokenEndpointAuthMethod ?? ""
        var type = p.clientType ?? ""
        if type.isEmpty { type = method.isEmpty ? confidentialType : clientType(forAuthMethod: method) }
        let authMethod = method.isEmpty ? (type == publicType ? "none" : "client_secret_basic") : method
        let grants = (p.grantTypes ?? []).isEmpty ? ["authorization_code", "refresh_token"] : p.grantTypes!
        let environment = api.project.environment
        var client = OAuthClientRecord(id: environment.uuid(), registrationType: registrationType, clientType: type,
                                       tokenEndpointAuthMethod: authMethod, redirectURIs: p.redirectURIs ?? [],
                                       grantTypes: grants, at: environment.now().microseconds)
        client.name = p.clientName.flatMap { $0.isEmpty ? nil : $0 }
        client.uri = p.clientURI.flatMap { $0.isEmpty ? nil : $0 }
        client.logoURI = p.logoURI.flatMap { $0.isEmpty ? nil : $0 }
        var secret: String?
        if type == confidentialType {
            secret = newSecret(environment)
            client.secretHash = hashSecret(secret!)
        }
        try api.write { [client] conn in try conn.insertOAuthClient(client) }
        return (client, secret)
    }

    /// `oauthServerClientToResponse`, fields in the struct's order (omitempty where Go omits).
    static func json(_ c: OAuthClientRecord, secret: String? = nil) -> JSON {
        var o = JSONObject()
        o["client_id"] = .string(c.id)
        if let secret { o["client_secret"] = .string(secret) }
        o["client_type"] = .string(c.clientType)
        if !c.redirectURIs.isEmpty { o["redirect_uris"] = .array(c.redirectURIs.map(JSON.string)) }
        o["token_endpoint_auth_method"] = .string(c.tokenEndpointAuthMethod)
        if !c.grantTypes.isEmpty { o["grant_types"] = .array(c.grantTypes.map(JSON.string)) }
        o["response_types"] = ["code"]
        if let name = c.name, !name.isEmpty { o["client_name"] = .string(name) }
        if let uri = c.uri, !uri.isEmpty { o["client_uri"] = .string(uri) }
        if let logo = c.logoURI, !logo.isEmpty { o["logo_uri"] = .string(logo) }
        o["registration_type"] = .string(c.registrationType)
        o["created_at"] = .string(Timestamp(microseconds: c.createdAt).rfc3339)
        o["updated_at"] = .string(Timestamp(microseconds: c.updatedAt).rfc3339)
        return .object(o)
    }
}
