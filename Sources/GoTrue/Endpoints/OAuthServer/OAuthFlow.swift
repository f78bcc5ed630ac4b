import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore

/// The authorization-code flow (oauthserver/authorize.go, handlers.go): `/oauth/authorize` hands
/// the user to the app's consent page, the consent API records the decision, `/oauth/token`
/// exchanges the code (PKCE) or a refresh token, `/oauth/userinfo` answers per granted scope.
extension OAuthServerEndpoints {
    static let supportedScopes = ["openid", "profile", "email", "phone", "offline_access"]

    static func scopes(_ text: String) -> [String] {
        text.split(separator: " ").map { String($0).filter { $0 != "\t" } }.filter { !$0.isEmpty }
    }

    /// `buildErrorRedirectURL`: the redirect URI with `error`, `error_description` and `state`
    /// set in its query (keys sorted, as `url.Values.Encode`).
    static func errorRedirect(_ uri: String, _ error: String, _ description: String, state: String) -> String {
        var url = RedirectURL(uri)
        url.set("error", error)
        url.set("error_description", description)
        if !state.isEmpty { url.set("state", state) }
        url.rawQuery = GoURL.encode(url.query)
        return url.string
    }

    /// `buildSuccessRedirectURL`: `code` and `state` added to the redirect URI's query.
    static func successRedirect(_ authorization: OAuthAuthorizationRecord) -> String {
        var url = RedirectURL(authorization.redirectURI)
        if let code = authorization.code { url.set("code", code) }
        if let state = authorization.state, !state.isEmpty { url.set("state", state) }
        url.rawQuery = GoURL.encode(url.query)
        return url.string
    }

    static func found(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 302, headers: ["Location": location], body: [])
    }

    // MARK: GET /oauth/authorize

    func authorize(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        func value(_ name: String) -> String { context.request.queryValue(name) ?? "" }
        let clientIDText = value("client_id")
        let redirectURI = value("redirect_uri")
        var responseType = value("response_type")
        var scope = value("scope")
        let state = value("state")
        let resource = value("resource")
        let challenge = value("code_challenge")
        let challengeMethod = value("code_challenge_method")
        let nonce = value("nonce")
        if clientIDText.isEmpty { throw AuthError(400, .validationFailed, "client_id is required") }
        if redirectURI.isEmpty { throw AuthError(400, .validationFailed, "redirect_uri is required") }
        guard let clientID = AdminEndpoints.canonicalUUID(clientIDText) else {
            throw AuthError(400, .oauthClientNotFound, "invalid client_id format")
        }
        guard let client = try api.read({ conn in try conn.oauthClient(id: clientID) }) else {
            throw AuthError(400, .oauthClientNotFound, "invalid client_id")
        }
        // Exact match against the registered URIs (OAuth 2.1 §2.3.1).
        guard client.redirectURIs.contains(redirectURI) else { throw AuthError(400, .validationFailed, "invalid redirect_uri") }

        // `validateRemainingAuthorizeParams`: from here on errors go back to the client.
        if responseType.isEmpty { responseType = "code" }
        if scope.isEmpty { scope = config.oauthServer.defaultScope }
        var problem: String?
        if responseType != "code" {
            problem = "only response_type=code is supported"
        } else if scope.isEmpty {
            problem = "scope parameter is required"
        } else if OAuthServerEndpoints.scopes(scope).isEmpty {
            problem = "scope parameter cannot be empty"
        } else if let unsupported = OAuthServerEndpoints.scopes(scope).first(where: { !OAuthServerEndpoints.supportedScopes.contains($0) }) {
            problem = "unsupported scope: \(unsupported)"
        } else if !resource.isEmpty, let issue = OAuthServerEndpoints.resourceProblem(resource) {
            problem = issue
        } else if challenge.isEmpty || challengeMethod.isEmpty {
            problem = "PKCE flow requires both code_challenge and code_challenge_method"
        } else if !["s256", "plain"].contains(challengeMethod.lowercased()) {
            problem = "code_challenge_method must be 'S256' or 'plain'"
        } else if challenge.count < 43 || challenge.count > 128 {
            problem = "code_challenge must be between 43 and 128 characters"
        }
        if let problem {
            return OAuthServerEndpoints.found(OAuthServerEndpoints.errorRedirect(redirectURI, "invalid_request", problem, state: state))
        }

        let environment = project.environment
        let now = environment.now().microseconds
        // `crypto.SecureAlphanumeric(32)`: lowercase base32 of random bytes, cut to 32 characters.
        let authorizationID = String(Base32.encode(environment.randomBytes(20), padding: false).lowercased().prefix(32))
        var authorization = OAuthAuthorizationRecord(
            id: environment.uuid(), authorizationID: authorizationID, clientID: client.id, redirectURI: redirectURI,
            scope: scope, at: now, expiresAt: now + Int64(config.oauthServer.authorizationTTLSeconds * 1_000_000))
        authorization.state = state.isEmpty ? nil : state
        authorization.resource = resource.isEmpty ? nil : resource
        authorization.codeChallenge = challenge
        authorization.codeChallengeMethod = challengeMethod
        authorization.nonce = nonce.isEmpty ? nil : nonce
        let record = authorization
        do {
            try api.write { conn in try conn.insertOAuthAuthorization(record) }
        } catch {
            return OAuthServerEndpoints.found(OAuthServerEndpoints.errorRedirect(redirectURI, "server_error", "error creating authorization",
                                                                                 state: state))
        }
        // Emulator-only auto-approval: the configured user consents at once (as the consent API
        // would record it) and the client gets its code without a consent page.
        if let email = config.oauthServer.autoApproveEmail {
            let approved: OAuthAuthorizationRecord? = try api.write { [scope] conn in
                guard let user = try conn.user(email: email, aud: config.jwt.audience) else { return nil }
                var authorization = record
                authorization.userID = user.id
                try approve(conn, &authorization)
                try conn.upsertOAuthConsent(OAuthConsentRecord(
                    id: environment.uuid(), userID: user.id, clientID: client.id,
                    scopes: OAuthServerEndpoints.scopes(scope), at: environment.now().microseconds))
                return authorization
            }
            guard let approved else {
                return OAuthServerEndpoints.found(OAuthServerEndpoints.errorRedirect(
                    redirectURI, "server_error", "auto-approve user \(email) not found", state: state))
            }
            return OAuthServerEndpoints.found(OAuthServerEndpoints.successRedirect(approved))
        }
        let path = config.oauthServer.authorizationPath
        if path.isEmpty {
            return OAuthServerEndpoints.found(OAuthServerEndpoints.errorRedirect(
                redirectURI, "server_error", "oauth authorization path not configured", state: state))
        }
        // `buildAuthorizationURL`: SITE_URL without trailing slashes, then the path.
        var base = Substring(config.siteURL)
        while base.hasSuffix("/") { base = base.dropLast() }
        let consentPage = String(base) + (path.hasPrefix("/") ? path : "/" + path)
        return OAuthServerEndpoints.found(consentPage + "?authorization_id=" + authorizationID)
    }

    /// `validateResourceParam` (RFC 8707): an absolute URI without fragment or query.
    static func resourceProblem(_ resource: String) -> String? {
        guard let colon = resource.firstIndex(of: ":"), colon != resource.startIndex,
              resource[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else {
            return "resource must be an absolute URI"
        }
        if resource.contains("#") { return "resource must not include a fragment component" }
        if resource.contains("?") { return "resource must not include a query component" }
        return nil
    }

    // MARK: consent API

    /// `validateRequestOrigin`: a browser's `Origin` must be an allowed redirect URL.
    private func checkOrigin(_ context: RequestContext) throws(AuthError) {
        guard let origin = context.request.headers["Origin"], !origin.isEmpty else { return }
        if !RedirectPolicy(configuration: config).isValid(origin) {
            throw AuthError(400, .validationFailed, "unauthorized request origin")
        }
    }

    private static let notFound = AuthError(404, .oauthAuthorizationNotFound, "authorization not found")

    /// Loads a pending, unexpired authorization for the caller; an expired one is marked so
    /// (committed) before the 404, as the real transaction does.
    private func pending(_ conn: Connection, _ id: String, notPending: String) throws -> OAuthAuthorizationRecord {
        guard var authorization = try conn.oauthAuthorization(authorizationID: id) else { throw OAuthServerEndpoints.notFound }
        if project.environment.now().microseconds > authorization.expiresAt {
            if authorization.status == "pending" {
                authorization.status = "expired"
                try conn.updateOAuthAuthorization(authorization)
            }
            throw ExpiredAuthorization()
        }
        if authorization.status != "pending" { throw AuthError(400, .validationFailed, notPending) }
        return authorization
    }

    private struct ExpiredAuthorization: Error {}

    /// Approving issues the code (a UUID) and records the time.
    private func approve(_ conn: Connection, _ authorization: inout OAuthAuthorizationRecord) throws {
        authorization.status = "approved"
        authorization.approvedAt = project.environment.now().microseconds
        if authorization.code == nil { authorization.code = project.environment.uuid() }
        try conn.updateOAuthAuthorization(authorization)
    }

    /// Runs `body` in a write transaction where an expired authorization commits its new status
    /// and then answers 404.
    private func withAuthorization<T>(_ body: @Sendable (Connection) throws -> T) throws(AuthError) -> T {
        let outcome: T? = try api.write { conn in
            do {
                return try body(conn)
            } catch is ExpiredAuthorization {
                return nil
            }
        }
        guard let outcome else { throw OAuthServerEndpoints.notFound }
        return outcome
    }

    /// `GET /oauth/authorizations/{id}`: the details the consent page shows; the first load binds
    /// the request to the signed-in user, and a remembered consent covering the scopes approves
    /// it at once (`redirect_url`).
    func authorization(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        try checkOrigin(context)
        let id = context.pathParameters["authorization_id"] ?? ""
        if id.isEmpty { throw AuthError(400, .validationFailed, "authorization_id is required") }
        let (authorization, autoApproved): (OAuthAuthorizationRecord, Bool) = try withAuthorization { conn in
            var authorization = try pending(conn, id, notPending: "authorization request cannot be processed")
            var auto = false
            if authorization.userID == nil {
                authorization.userID = caller.user.id
                try conn.updateOAuthAuthorization(authorization)
                if let consent = try conn.activeOAuthConsent(userID: caller.user.id, clientID: authorization.clientID) {
                    let granted = Set(consent.scopes)
                    auto = OAuthServerEndpoints.scopes(authorization.scope).allSatisfy(granted.contains)
                }
            } else if authorization.userID != caller.user.id {
                throw OAuthServerEndpoints.notFound
            }
            if auto { try approve(conn, &authorization) }
            return (authorization, auto)
        }
        if autoApproved { return .json(["redirect_url": .string(OAuthServerEndpoints.successRedirect(authorization))]) }
        guard let client = try api.read({ conn in try conn.oauthClient(id: authorization.clientID) }) else {
            throw OAuthServerEndpoints.notFound
        }
        var user: JSONObject = ["id": .string(caller.user.id)]
        if let email = caller.user.email, !email.isEmpty { user["email"] = .string(email) }
        var body: JSONObject = ["authorization_id": .string(authorization.authorizationID)]
        if !authorization.redirectURI.isEmpty { body["redirect_uri"] = .string(authorization.redirectURI) }
        body["client"] = OAuthServerEndpoints.clientDetails(client)
        body["user"] = .object(user)
        if !authorization.scope.isEmpty { body["scope"] = .string(authorization.scope) }
        return .json(.object(body))
    }

    /// `POST /oauth/authorizations/{id}/consent`: `approve` (the code, and the consent
    /// remembered) or `deny` (`error=access_denied`), as a `redirect_url` for the consent page.
    func consent(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        try checkOrigin(context)
        guard let parsed = try? JSON(parsing: context.request.body), let object = parsed.objectValue,
              object["action"].map({ $0.isNull || $0.stringValue != nil }) ?? true else {
            throw AuthError(400, .badJson, "invalid JSON body")
        }
        let action = object["action"]?.stringValue ?? ""
        guard action == "approve" || action == "deny" else {
            throw AuthError(400, .validationFailed, "action must be 'approve' or 'deny'")
        }
        let id = context.pathParameters["authorization_id"] ?? ""
        if id.isEmpty { throw AuthError(400, .validationFailed, "authorization_id is required") }
        let redirect: String = try withAuthorization { conn in
            var authorization = try pending(conn, id, notPending: "authorization request is no longer pending")
            guard authorization.userID == caller.user.id else { throw OAuthServerEndpoints.notFound }
            if action == "approve" {
                try approve(conn, &authorization)
                try conn.upsertOAuthConsent(OAuthConsentRecord(
                    id: project.environment.uuid(), userID: caller.user.id, clientID: authorization.clientID,
                    scopes: OAuthServerEndpoints.scopes(authorization.scope), at: project.environment.now().microseconds))
                return OAuthServerEndpoints.successRedirect(authorization)
            }
            authorization.status = "denied"
            try conn.updateOAuthAuthorization(authorization)
            return OAuthServerEndpoints.errorRedirect(authorization.redirectURI, "access_denied", "User denied the request",
                                                      state: authorization.state ?? "")
        }
        return .json(["redirect_url": .string(redirect)])
    }

    // MARK: POST /oauth/token

    /// The token endpoint's parameters: JSON when the content type says so, else the form.
    private func tokenParameters(_ request: HTTPRequest) throws(AuthError) -> [String: String] {
        let contentType = (request.headers["Content-Type"] ?? "").lowercased()
        var values: [String: String] = [:]
        if contentType.contains("application/json") {
            guard let parsed = try? JSON(parsing: request.body), let object = parsed.objectValue else {
                throw AuthError.oauth("invalid_request", "Invalid JSON body")
            }
            for (key, value) in object { if let text = value.stringValue { values[key] = text } }
        } else {
            // `r.FormValue`: the body's form fields, then the query's.
            for item in request.query where values[item.name] == nil { values[item.name] = item.value }
            for item in RedirectURL.parseQuery(String(decoding: request.body, as: UTF8.self)) { values[item.name] = item.value }
        }
        return values
    }

    /// `requireOAuthClientAuth`: HTTP Basic (`client_secret_basic`), else the body's
    /// `client_id`/`client_secret` (`client_secret_post`, or `none` without a secret); the
    /// method must be the client's registered one and the secret must match.
    private func authenticateClient(_ context: RequestContext, _ values: [String: String]) throws(AuthError) -> OAuthClientRecord {
        var clientID = ""
        var secret = ""
        var method = ""
        if let header = context.request.headers["Authorization"], header.hasPrefix("Basic ") {
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
        } else {
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
        let values = try tokenParameters(context.request)
        let client = try authenticateClient(context, values)
        let grantType = values["grant_type"] ?? ""
        if grantType.isEmpty { throw AuthError.oauth("invalid_request", "grant_type is required") }
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
            // The code is single use: a concurrent exchange finds it gone.
            guard try conn.oauthAuthorization(code: code) != nil, var user = try conn.user(id: userID) else {
                throw AuthError.oauth("invalid_grant", "Invalid authorization code")
            }
            try api.audit(conn, context, actor: user, action: "login", logType: "account",
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
        if scopes.contains("profile") {
            if let name = metadata["name"]?.stringValue, !name.isEmpty {
                claims["name"] = .string(name)
            } else if let email = user.email, !email.isEmpty {
                claims["name"] = .string(email)
            }
            if let picture = metadata["picture"]?.stringValue ?? metadata["avatar_url"]?.stringValue, !picture.isEmpty {
                claims["picture"] = .string(picture)
            }
            claims["updated_at"] = .number(Timestamp(microseconds: user.updatedAt).unixSeconds)
            if let username = metadata["preferred_username"]?.stringValue ?? metadata["username"]?.stringValue, !username.isEmpty {
                claims["preferred_username"] = .string(username)
            }
        }
        claims["client_id"] = .string(clientID)
        return JWTSigner.sign(claims: claims, key: key)
    }

    // MARK: GET /oauth/userinfo

    /// `OAuthUserInfo`: `sub`, plus what the session's scopes allow.
    func userInfo(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        let user = caller.user
        var info: JSONObject = ["sub": .string(user.id)]
        guard let session = caller.session else { return .json(.object(info)) }
        let scopes = OAuthServerEndpoints.scopes(session.scopes ?? "")
        let metadata = Models.object(user.userMetadata)
        if scopes.contains("email") {
            if let email = user.email, !email.isEmpty { info["email"] = .string(email) }
            if user.emailConfirmedAt != nil { info["email_verified"] = true }
        }
        if scopes.contains("profile") {
            if let name = metadata["name"]?.stringValue, !name.isEmpty {
                info["name"] = .string(name)
            } else if let email = user.email, !email.isEmpty {
                info["name"] = .string(email)
            }
            if let picture = metadata["picture"]?.stringValue ?? metadata["avatar_url"]?.stringValue, !picture.isEmpty {
                info["picture"] = .string(picture)
            }
            if let username = metadata["preferred_username"]?.stringValue ?? metadata["username"]?.stringValue, !username.isEmpty {
                info["preferred_username"] = .string(username)
            }
            info["updated_at"] = .number(Timestamp(microseconds: user.updatedAt).unixSeconds)
            info["user_metadata"] = .object(metadata)
        }
        // userinfo says `phone`/`phone_verified` where the ID token says `phone_number`.
        if scopes.contains("phone") {
            if let phone = user.phone, !phone.isEmpty { info["phone"] = .string(phone) }
            if user.phoneConfirmedAt != nil { info["phone_verified"] = true }
        }
        // A Go map: keys sorted.
        return .json(.object(info.sortedRecursively()))
    }
}
