import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats

/// The authorization-code flow (oauthserver/authorize.go, handlers.go): `/oauth/authorize` hands
/// the user to the app's consent page, the consent API records the decision, `/oauth/token`
/// exchanges the code (PKCE) or a refresh token, `/oauth/userinfo` answers per granted scope.
extension OAuthServerEndpoints {
    static let supportedScopes = ["openid", "profile", "email", "phone", "offline_access"]

    /// `ParseScopeString`: the string trimmed (`strings.TrimSpace`), split on spaces, each piece
    /// trimmed and the empty ones dropped; a tab inside a piece stays in it.
    static func scopes(_ text: String) -> [String] {
        GoStrings.trimSpace(text).split(separator: " ", omittingEmptySubsequences: false)
            .map { GoStrings.trimSpace(String($0)) }.filter { !$0.isEmpty }
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

    /// `validateResourceParam` (RFC 8707): what `url.Parse` accepts, absolute (a scheme), with
    /// no fragment and no query. An empty one after `#` or `?` is none (`https://api.example#`).
    static func resourceProblem(_ resource: String) -> String? {
        guard let url = GoParsedURL.parse(resource) else { return "resource must be a valid URI" }
        if url.scheme.isEmpty { return "resource must be an absolute URI" }
        if !url.fragment.isEmpty { return "resource must not include a fragment component" }
        let beforeFragment = resource.prefix { $0 != "#" }
        if let question = beforeFragment.firstIndex(of: "?"), beforeFragment.index(after: question) < beforeFragment.endIndex {
            return "resource must not include a query component"
        }
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
    ///
    /// The row is locked until the commit (`FindOAuthServerAuthorizationByIDForUpdate`), so two
    /// callers (two emulator processes on one Postgres) cannot both bind or approve it; one
    /// another transaction holds reads as not found, as there.
    private func pending(_ conn: Connection, _ id: String, notPending: String) throws -> OAuthAuthorizationRecord {
        guard var authorization = try RowLocks.skippingHeld({ try conn.oauthAuthorization(authorizationID: id, forUpdate: true) }) else {
            throw OAuthServerEndpoints.notFound
        }
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
        // `json.NewDecoder(r.Body).Decode(&body)`: the first value only, `null` fills nothing,
        // `Action` names `action`; a refused body or a non-string action is "invalid JSON body".
        let body: RequestBody
        do {
            body = try RequestBody(decoding: context.request, as: "ConsentRequest", prefix: "")
        } catch {
            throw AuthError(400, .badJson, "invalid JSON body")
        }
        let actionValue = body.value("action")
        guard actionValue.map({ $0.isNull || $0.stringValue != nil }) ?? true else {
            throw AuthError(400, .badJson, "invalid JSON body")
        }
        let action = actionValue?.stringValue ?? ""
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
            Self.profileClaims(of: user, metadata: metadata, into: &info)
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

    /// The `profile` scope's claims (OIDC Core §5.4) of the ID token and userinfo, in
    /// `GenerateIDToken`'s order (the ID token's keys are not sorted): the name, else the email
    /// address; the picture; `updated_at`; the username.
    static func profileClaims(of user: UserRecord, metadata: JSONObject, into claims: inout JSONObject) {
        if let name = metadata["name"]?.stringValue, !name.isEmpty {
            claims["name"] = .string(name)
        } else if let email = user.email, !email.isEmpty {
            claims["name"] = .string(email)
        }
        // The first of the two keys holding a non-empty string: an empty or non-string
        // `picture` falls back to `avatar_url`, likewise `preferred_username` to `username`.
        func firstText(_ keys: String...) -> String? {
            for key in keys { if let text = metadata[key]?.stringValue, !text.isEmpty { return text } }
            return nil
        }
        if let picture = firstText("picture", "avatar_url") { claims["picture"] = .string(picture) }
        claims["updated_at"] = .number(Timestamp(microseconds: user.updatedAt).unixSeconds)
        if let username = firstText("preferred_username", "username") { claims["preferred_username"] = .string(username) }
    }
}
