import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore

extension OAuthServerEndpoints {
    // MARK: POST /oauth/token

    /// The fields of `OAuthTokenParams`, each a Go `string`.
    private static let tokenFields = ["grant_type", "code", "refresh_token", "redirect_uri", "client_id", "client_secret", "code_verifier",
                                      "resource"]

    /// `fields` of a JSON body as `json.Unmarshal` fills a struct of `string` fields with them:
    /// keys matched exactly, else case-insensitively; nil when the body is no JSON object (or
    /// `null`) or one of those fields holds anything but a string or `null`.
    private static func jsonStrings(_ body: [UInt8], _ fields: [String]) -> [String: String]? {
        guard let parsed = try? JSON(parsing: body) else { return nil }
        if parsed == .null { return [:] }
        guard let object = parsed.objectValue else { return nil }
        var values: [String: String] = [:]
        for field in fields {
            guard let value = object[field] ?? object.first(where: { $0.key.lowercased() == field })?.value else { continue }
            switch value {
            case .string(let text): values[field] = text
            case .null: break
            default: return nil
            }
        }
        return values
    }

    /// `r.FormValue` for each name: a form body's first value, else the query's first.
    private static func formValues(_ request: HTTPRequest) -> [String: String] {
        var values: [String: String] = [:]
        for item in request.formItems where values[item.name] == nil { values[item.name] = item.value }
        return values
    }

    private static func isJSON(_ request: HTTPRequest) -> Bool {
        (request.headers["Content-Type"] ?? "").contains("application/json")
    }

    /// `OAuthToken`'s parameters: the JSON body decoded into `OAuthTokenParams`, else the form.
    private func tokenParameters(_ request: HTTPRequest) throws(AuthError) -> [String: String] {
        guard Self.isJSON(request) else {
            // The form branch copies seven fields by name; `resource` is not one of them, so a
            // form's `resource` is never checked (only a JSON body's is).
            if request.formParseFails { throw AuthError.oauth("invalid_request", "Failed to parse form data") }
            var values = Self.formValues(request)
            values["resource"] = nil
            return values
        }
        guard let values = Self.jsonStrings(request.body, Self.tokenFields) else {
            throw AuthError.oauth("invalid_request", "Invalid JSON body")
        }
        return values
    }

    /// `requireOAuthClientAuth` (`ExtractClientCredentials`, which runs before the handler reads
    /// its parameters): HTTP Basic (`client_secret_basic`), else the body's `client_id` and
    /// `client_secret` (`client_secret_post`, or `none` without a secret). A Basic header with
    /// an empty id names no client: the request goes on unauthenticated (the handler then wants
    /// one). The method must be the client's registered one and the secret must match.
    private func authenticateClient(_ context: RequestContext) throws(AuthError) -> OAuthClientRecord? {
        let request = context.request
        var clientID = ""
        var secret = ""
        var method = ""
        if let header = request.headers["Authorization"], header.hasPrefix("Basic ") {
            guard let decoded = try? Base64.decode(String(header.dropFirst(6))) else {
                throw AuthError(400, .invalidCredentials, "Invalid client credentials: invalid basic auth encoding")
            }
            let text = String(decoding: decoded, as: UTF8.self)
            guard let colon = text.firstIndex(of: ":") else {
                throw AuthError(400, .invalidCredentials, "Invalid client credentials: invalid basic auth format")
            }
            clientID = String(text[..<colon])
            secret = String(text[text.index(after: colon)...])
            method = "client_secret_basic"
            if clientID.isEmpty { return nil }
        } else {
            let values: [String: String]
            if Self.isJSON(request) {
                guard let decoded = Self.jsonStrings(request.body, ["client_id", "client_secret"]) else {
                    throw AuthError(400, .invalidCredentials, "Invalid client credentials: failed to parse JSON body")
                }
                values = decoded
            } else {
                // `r.ParseForm()`: a query or form body `url.ParseQuery` refuses fails here.
                if request.formParseFails { throw AuthError(400, .invalidCredentials, "Invalid client credentials: failed to parse form") }
                values = Self.formValues(request)
            }
            clientID = values["client_id"] ?? ""
            secret = values["client_secret"] ?? ""
            if clientID.isEmpty { throw AuthError(400, .invalidCredentials, "Invalid client credentials: client_id is required") }
            method = secret.isEmpty ? "none" : "client_secret_post"
        }
        guard let id = AdminEndpoints.canonicalUUID(clientID) else { throw AuthError(400, .invalidCredentials, "Invalid client_id format") }
        guard let client = try api.read({ conn in try conn.oauthClient(id: id) }) else {
            throw AuthError(400, .invalidCredentials, "Invalid client credentials")
        }
        if method != client.tokenEndpointAuthMethod {
            throw AuthError(400, .invalidCredentials,
                            "invalid authentication method: client is registered for '\(client.tokenEndpointAuthMethod)' but '\(method)' was used")
        }
        if client.clientType == OAuthClients.publicType {
            if !secret.isEmpty { throw AuthError(400, .invalidCredentials, "public clients must not provide client_secret") }
        } else if secret.isEmpty {
            throw AuthError(400, .invalidCredentials, "confidential clients must provide client_secret")
        } else if !OAuthClients.secretMatches(secret, hash: client.secretHash) {
            throw AuthError(400, .invalidCredentials, "invalid client credentials")
        }
        return client
    }

    func token(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let authenticated = try authenticateClient(context)
        let values = try tokenParameters(context.request)
        let grantType = values["grant_type"] ?? ""
        if grantType.isEmpty { throw AuthError.oauth("invalid_request", "grant_type is required") }
        guard let client = authenticated else { throw AuthError.oauth("invalid_client", "Client authentication required") }
        guard client.grantTypes.contains(grantType) else {
            throw AuthError.oauth("unsupported_grant_type", "Client is not allowed to use grant type: " + grantType)
        }
        switch grantType {
        case "authorization_code": return try exchangeCode(context, client, values)
        case "refresh_token":
            let presented = values["refresh_token"] ?? ""
            if presented.isEmpty { throw AuthError.oauth("invalid_request", "refresh_token is required for refresh_token grant") }
            let (issued, _) = try TokenEndpoints(api: api).refreshGrant(context, presented: presented, clientID: client.id)
            return OAuthServerEndpoints.tokenResponse(issued, idToken: nil, now: project.environment.now())
        default:
            throw AuthError.oauth("unsupported_grant_type", "Unsupported grant type: " + grantType)
        }
    }

    /// The token response: a Go map, so its keys come out sorted.
    static func tokenResponse(_ issued: Tokens.Issued, idToken: String?, now: Timestamp) -> HTTPResponse {
        var o = JSONObject()
        o["access_token"] = .string(issued.accessToken)
        o["expires_in"] = .number(issued.expiresAt - issued.issuedAt)
        if let idToken { o["id_token"] = .string(idToken) }
        o["refresh_token"] = .string(issued.refreshToken)
        o["token_type"] = "bearer"
        return .json(.object(o))
    }

    /// `handleAuthorizationCodeGrant`.
    private func exchangeCode(_ context: RequestContext, _ client: OAuthClientRecord, _ values: [String: String]) throws(AuthError) -> HTTPResponse {
        let code = values["code"] ?? ""
        if code.isEmpty { throw AuthError.oauth("invalid_request", "code is required for authorization_code grant") }
        guard let authorization = try api.read({ conn in try conn.oauthAuthorization(code: code) }) else {
            throw AuthError.oauth("invalid_grant", "Invalid authorization code")
        }
        if project.environment.now().microseconds > authorization.expiresAt {
            throw AuthError.oauth("invalid_grant", "Authorization code has expired")
        }
        if authorization.clientID != client.id {
            throw AuthError.oauth("invalid_grant", "Authorization code was not issued for this client")
        }
        let resource = values["resource"] ?? ""
        if !resource.isEmpty && resource != (authorization.resource ?? "") {
            throw AuthError.oauth("invalid_grant", "Authorization code resource does not match the resource parameter")
        }
        let redirect = values["redirect_uri"] ?? ""
        if !redirect.isEmpty && redirect != authorization.redirectURI { throw AuthError.oauth("invalid_grant", "Invalid redirect_uri") }
        if let challenge = authorization.codeChallenge, !challenge.isEmpty {
            let verifier = values["code_verifier"] ?? ""
            if verifier.isEmpty {
                throw AuthError.oauth("invalid_grant", "PKCE verification failed: code_verifier is required when PKCE challenge is present")
            }
            if let problem = FlowStates.verify(challenge: challenge, method: authorization.codeChallengeMethod ?? "", verifier: verifier) {
                throw AuthError.oauth("invalid_grant", "PKCE verification failed: " + problem)
            }
        }
        guard let userID = authorization.userID else { throw AuthError.oauth("invalid_grant", "Authorization code has no associated user") }
        guard let found = try api.read({ conn in try conn.user(id: userID) }) else {
            throw AuthError.oauth("invalid_grant", "User not found for authorization code")
        }
        if api.isBanned(found) { throw AuthError.oauth("access_denied", "User is banned") }

        let issued: Tokens.Issued = try api.write { conn in
            // The code is single use: a concurrent exchange finds it gone. Its row is locked
            // until the commit (`FindOAuthServerAuthorizationByIDForUpdate`); one another
            // emulator process holds reads as gone.
            guard try RowLocks.skippingHeld({ try conn.oauthAuthorization(code: code, forUpdate: true) }) != nil,
                  var user = try conn.user(id: userID) else {
                throw AuthError.oauth("invalid_grant", "Invalid authorization code")
            }
            try api.audit(conn, context, actor: user, action: .login,
                          traits: ["provider_type": "oauth_provider_authorization_code", "client_id": .string(client.id)])
            let issued = try Tokens(api: api).issueSession(conn, user: &user, method: "oauth_provider/authorization_code",
                                                           request: context.request, oauthClientID: client.id,
                                                           scopes: authorization.scope)
            try conn.deleteOAuthAuthorization(id: authorization.id)
            return issued
        }
        var idToken: String?
        let granted = OAuthServerEndpoints.scopes(authorization.scope)
        if granted.contains("openid") {
            let user = try api.read { conn in try conn.user(id: userID) } ?? found
            guard let token = idTokenFor(user, clientID: client.id, nonce: authorization.nonce ?? "", scopes: granted) else {
                // GenerateIDToken refuses HS256; the session above is already issued, as there.
                logError("oauth: HS256 is not supported for ID token signing")
                throw AuthError(500, .unexpectedFailure, "Error generating ID token")
            }
            idToken = token
        }
        return OAuthServerEndpoints.tokenResponse(issued, idToken: idToken, now: project.environment.now())
    }

    /// `GenerateIDToken`: signed with the access tokens' key, never HS256; the claims the
    /// granted scopes allow (OIDC Core §5.4), valid one hour.
    func idTokenFor(_ user: UserRecord, clientID: String, nonce: String, scopes: [String]) -> String? {
        let key = config.jwt.signingKey
        if key.algorithm == .hs256 { return nil }
        let now = project.environment.now().unixSeconds
        let metadata = Models.object(user.userMetadata)
        var claims = JSONObject()
        if !config.jwt.issuer.isEmpty { claims["iss"] = .string(config.jwt.issuer) }
        claims["sub"] = .string(user.id)
        claims["aud"] = .string(clientID)
        claims["exp"] = .number(now + 3600)
        claims["iat"] = .number(now)
        if !nonce.isEmpty { claims["nonce"] = .string(nonce) }
        claims["auth_time"] = .number(user.lastSignInAt.map { Timestamp(microseconds: $0).unixSeconds } ?? now)
        if scopes.contains("email"), let email = user.email, !email.isEmpty { claims["email"] = .string(email) }
        claims["email_verified"] = .bool(scopes.contains("email") && user.emailConfirmedAt != nil)
        if scopes.contains("phone"), let phone = user.phone, !phone.isEmpty { claims["phone_number"] = .string(phone) }
        claims["phone_number_verified"] = .bool(scopes.contains("phone") && user.phoneConfirmedAt != nil)
        if scopes.contains("profile") { Self.profileClaims(of: user, metadata: metadata, into: &claims) }
        claims["client_id"] = .string(clientID)
        return JWTSigner.sign(claims: claims, key: key)
    }
}
