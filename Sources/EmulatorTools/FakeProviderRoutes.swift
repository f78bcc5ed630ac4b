import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import GoFormats
import GoTrue

/// The routes of the fake identity providers, one set per provider under
/// `/emulator/v1/idp/{provider}`:
/// - public, like a real provider's (no key): `GET .well-known/openid-configuration`,
///   `GET jwks`, `GET authorize` (the consent page), `POST authorize` (the page's answer),
///   `POST token` (RFC 6749 §4.1.3), `GET|POST userinfo`;
/// - service_role only: `POST id_token`, which mints an id_token for native sign-in tests.
struct ControlIdPEndpoints: EndpointGroup {
    let api: Core

    static let prefix = GoTrueAPI.emulatorPrefix + "/idp"

    static var endpoints: [Endpoint<Self>] {
        let base = ControlIdPEndpoints.prefix + "/{provider}"
        return [
            Endpoint("GET", base + "/.well-known/openid-configuration", operation: "emulator.idp.discovery") { g, context in
                try g.discovery(context)
            },
            Endpoint("GET", base + "/jwks", operation: "emulator.idp.jwks") { g, context in try g.jwks(context) },
            Endpoint("GET", base + "/authorize", operation: "emulator.idp.authorize") { g, context in try g.authorize(context) },
            Endpoint("POST", base + "/authorize", operation: "emulator.idp.consent") { g, context in try g.consent(context) },
            Endpoint("POST", base + "/token", operation: "emulator.idp.token") { g, context in try g.token(context) },
            Endpoint("GET", base + "/userinfo", operation: "emulator.idp.userinfo") { g, context in try g.userinfo(context) },
            Endpoint("POST", base + "/userinfo", operation: "emulator.idp.userinfo") { g, context in try g.userinfo(context) },
            Endpoint("POST", base + "/id_token", operation: "emulator.idp.id_token") { g, context in try g.mint(context) },
        ]
    }

    /// The last path segments of the routes a browser or a third-party OIDC library reaches
    /// without the service_role key, as it would reach a real provider.
    static let publicEndpoints: Set<String> = ["jwks", "authorize", "token", "userinfo"]

    /// Whether `path` (gateway prefix removed) is one of the public provider routes. Everything
    /// else under `/emulator/v1`, including the mint route, keeps requiring the service_role key.
    static func isPublic(path: String) -> Bool {
        guard path.hasPrefix(FakeIdentityProvider.pathPrefix) else { return false }
        let rest = path.dropFirst(FakeIdentityProvider.pathPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard let provider = rest.first, !provider.isEmpty, provider != ".", provider != ".." else { return false }
        switch rest.count {
        case 2: return publicEndpoints.contains(String(rest[1]))
        case 3: return rest[1] == ".well-known" && rest[2] == "openid-configuration"
        default: return false
        }
    }

    private var project: Project { api.project }
    private var idp: FakeIdentityProvider { FakeIdentityProvider(api: api) }

    private func provider(_ context: RequestContext) throws(AuthError) -> String {
        let name = context.pathParameters["provider"] ?? ""
        try FakeIdentityProvider.checkProvider(name)
        return name
    }

    private func internalFailure(_ error: any Error) -> AuthError {
        if let auth = error as? AuthError { return auth }
        logError("identity provider: \(error)")
        return AuthError.unexpected
    }

    // MARK: Discovery and keys

    /// OpenID Connect Discovery 1.0 §3 metadata.
    func discovery(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let name = try provider(context)
        return .json(ControlIdPEndpoints.discoveryDocument(issuer: idp.issuer(for: name), provider: name))
    }

    /// The discovery document of the fake issuer of `provider`; also read in-process when a
    /// custom OIDC provider names a fake issuer (`/admin/custom-providers`).
    static func discoveryDocument(issuer: String, provider name: String) -> JSON {
        let claims: [JSON] = name == "apple"
            ? ["aud", "email", "email_verified", "exp", "iat", "is_private_email", "iss", "nonce", "nonce_supported", "sub", "auth_time"]
            : ["aud", "email", "email_verified", "exp", "iat", "iss", "name", "nonce", "picture", "sub", "at_hash"]
        let document: JSON = [
            "issuer": .string(issuer),
            "authorization_endpoint": .string(issuer + "/authorize"),
            "token_endpoint": .string(issuer + "/token"),
            "userinfo_endpoint": .string(issuer + "/userinfo"),
            "jwks_uri": .string(issuer + "/jwks"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "form_post"],
            "grant_types_supported": ["authorization_code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": name == "apple" ? ["openid", "email", "name"] : ["openid", "email", "profile"],
            "claims_supported": .array(claims),
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
            "code_challenge_methods_supported": ["S256", "plain"],
        ]
        return document
    }

    /// RFC 7517 §5: the one key every fake provider signs with.
    func jwks(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        _ = try provider(context)
        do {
            return .json(try idp.jwks())
        } catch {
            throw internalFailure(error)
        }
    }

    // MARK: Authorization (the consent page)

    func authorize(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let name = try provider(context)
        let request = AuthorizationRequest(context.request.query)
        if let problem = request.problem() { return ConsentPage.error(problem, provider: name) }
        guard keyAccepted(context, form: []) else { return ConsentPage.keyPrompt(provider: name, request: request) }
        let hint = GoStrings.trimSpace(request.loginHint)
        if api.snapshot.configuration.identityProviders.autoApprove, ControlIdPEndpoints.looksLikeEmail(hint) {
            // Headless tests: the browser never stops at the page.
            let account = try resolveAccount(provider: name, email: hint, name: "", emailVerified: true)
            return try deliver(provider: name, request: request, account: account)
        }
        return ConsentPage.page(provider: name, request: request, accounts: try idp.previousAccounts(provider: name))
    }

    /// The consent form's answer: `action=approve` (the default) with `email`, `name`,
    /// `email_verified`, or `action=deny`.
    func consent(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let name = try provider(context)
        let form = ControlIdPEndpoints.form(context.request)
        let request = AuthorizationRequest(form)
        if let problem = request.problem() { return ConsentPage.error(problem, provider: name) }
        func value(_ key: String) -> String? { form.last { $0.name == key }?.value }
        guard keyAccepted(context, form: form) else {
            let problem = value("key") == nil ? nil : "That is not this project's service_role or sb_secret_ key."
            return ConsentPage.keyPrompt(provider: name, request: request, problem: problem)
        }
        let key = value("key")
        if value("action") == "unlock" {
            return ConsentPage.page(provider: name, request: request, accounts: try idp.previousAccounts(provider: name), key: key)
        }
        if value("action") == "deny" {
            // RFC 6749 §4.1.2.1: the user refused; the client learns it at its redirect URI.
            var items = [QueryItem(name: "error", value: "access_denied"),
                         QueryItem(name: "error_description", value: "The user denied the authorization request.")]
            if !request.state.isEmpty { items.append(QueryItem(name: "state", value: request.state)) }
            return ControlIdPEndpoints.redirect(request.redirectURI, items, formPost: request.usesFormPost(provider: name))
        }
        let email = GoStrings.trimSpace(value("email") ?? "")
        guard ControlIdPEndpoints.looksLikeEmail(email) else {
            let accounts = try idp.previousAccounts(provider: name)
            return ConsentPage.page(provider: name, request: request, accounts: accounts, email: email,
                                    name: value("name") ?? "", problem: "Enter an email address for the test account.", key: key)
        }
        // An unchecked checkbox sends nothing, so the form carries a hidden "false" before it:
        // the last value wins. A client posting neither gets a verified email.
        let verified = value("email_verified").map { ["true", "on", "1", "yes"].contains($0.lowercased()) } ?? true
        let account = try resolveAccount(provider: name, email: email, name: value("name") ?? "", emailVerified: verified)
        return try deliver(provider: name, request: request, account: account)
    }

    /// Beyond loopback (`Exposure`), anyone on the network could use this page to sign in as
    /// any user, so it asks for the project's service_role or `sb_secret_` key, as the dashboard
    /// does: the dashboard's login cookie, the key as bearer or `apikey`, or typed into the page
    /// (then carried in its forms).
    private func keyAccepted(_ context: RequestContext, form: [QueryItem]) -> Bool {
        guard project.dashboard.consentRequiresKey else { return true }
        let dashboard = DashboardEndpoints(api: api)
        if dashboard.authorized(context) { return true }
        guard let typed = form.last(where: { $0.name == "key" })?.value, !typed.isEmpty else { return false }
        return dashboard.adminKeys.contains { constantTimeEquals(Array(typed.utf8), Array($0.utf8)) }
    }

    static func looksLikeEmail(_ text: String) -> Bool {
        guard let at = text.firstIndex(of: "@") else { return false }
        return at != text.startIndex && text.index(after: at) != text.endIndex && text.count <= 255
            && !text.contains(where: { $0 == " " || $0 == "<" || $0 == ">" })
    }

    /// The account approved for `email`: a known one keeps its subject and address spelling (and
    /// its name unless a new one is typed), a new one gets the provider-style subject derived
    /// from the email.
    private func resolveAccount(provider: String, email: String, name: String, emailVerified: Bool) throws(AuthError) -> IdentityProviderStore.Account {
        let known = try idp.knownAccount(provider: provider, email: email)
        let typed = GoStrings.trimSpace(name)
        return IdentityProviderStore.Account(
            subject: known?.subject ?? idp.subject(provider: provider, email: email),
            email: known?.email ?? email, emailVerified: emailVerified,
            name: typed.isEmpty ? known?.name : typed, picture: known?.picture)
    }

    private func deliver(provider: String, request: AuthorizationRequest, account: IdentityProviderStore.Account) throws(AuthError) -> HTTPResponse {
        let (code, appleUser) = try idp.approve(provider: provider, request: request, account: account)
        var items = [QueryItem(name: "code", value: code)]
        if !request.state.isEmpty { items.append(QueryItem(name: "state", value: request.state)) }
        let formPost = request.usesFormPost(provider: provider)
        if formPost, let appleUser { items.append(QueryItem(name: "user", value: appleUser)) }
        return ControlIdPEndpoints.redirect(request.redirectURI, items, formPost: formPost)
    }

    /// The authorization response (RFC 6749 §4.1.2): a 302 with the parameters added to the
    /// redirect URI's query (its own query kept), or, for `form_post` (OAuth 2.0 Form Post
    /// Response Mode §2), a page whose form POSTs them there.
    static func redirect(_ uri: String, _ items: [QueryItem], formPost: Bool) -> HTTPResponse {
        if formPost { return ConsentPage.formPost(action: uri, fields: items) }
        var url = RedirectURL(uri)
        let added = items.map { GoURL.queryEscape($0.name) + "=" + GoURL.queryEscape($0.value) }.joined(separator: "&")
        url.rawQuery = url.rawQuery.isEmpty ? added : url.rawQuery + "&" + added
        var headers = HTTPHeaders()
        headers["Location"] = url.string
        headers["Cache-Control"] = "no-store"
        return HTTPResponse(status: 302, headers: headers)
    }

    /// An `application/x-www-form-urlencoded` body (also read when the type is missing).
    static func form(_ request: HTTPRequest) -> [QueryItem] {
        RedirectURL.parseQuery(String(decoding: request.body, as: UTF8.self))
    }

    // MARK: Token endpoint (RFC 6749 §4.1.3, §5)

    func token(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let name = try provider(context)
        let form = ControlIdPEndpoints.form(context.request)
        func value(_ key: String) -> String { form.first { $0.name == key }?.value ?? "" }
        let grantType = value("grant_type")
        guard !grantType.isEmpty else { return ControlIdPEndpoints.oauthError("invalid_request", "grant_type is required") }
        guard grantType == "authorization_code" else {
            return ControlIdPEndpoints.oauthError("unsupported_grant_type", "only authorization_code is supported")
        }
        let code = value("code")
        guard !code.isEmpty else { return ControlIdPEndpoints.oauthError("invalid_request", "code is required") }
        // RFC 6749 §2.3.1: the client id comes in the body or as HTTP Basic credentials.
        // Client secrets are not checked: this provider has no registered clients.
        var clientID = value("client_id")
        if clientID.isEmpty, let basic = ControlIdPEndpoints.basicClientID(context.request) { clientID = basic }
        let now = project.environment.now().microseconds
        guard let pending = project.identityProviderStore.take(code: code, provider: name, now: now) else {
            return ControlIdPEndpoints.oauthError("invalid_grant", "The authorization code is invalid, expired or already used.")
        }
        if !clientID.isEmpty, clientID != pending.clientID {
            return ControlIdPEndpoints.oauthError("invalid_grant", "The authorization code was issued to another client.")
        }
        // §4.1.3: redirect_uri is required when the authorization request had one, and must match.
        if value("redirect_uri") != pending.redirectURI {
            return ControlIdPEndpoints.oauthError("invalid_grant", "redirect_uri does not match the authorization request.")
        }
        if let challenge = pending.codeChallenge {
            // RFC 7636 §4.6.
            let verifier = value("code_verifier")
            let computed = pending.codeChallengeMethod == "S256"
                ? Base64URL.encode(SHA256.hash(data: Array(verifier.utf8))) : verifier
            guard !verifier.isEmpty, constantTimeEquals(Array(computed.utf8), Array(challenge.utf8)) else {
                return ControlIdPEndpoints.oauthError("invalid_grant", "PKCE verification failed.")
            }
        }
        let issued = idp.issue(pending)
        let idToken: String
        do {
            idToken = try idp.sign(issued.claims)
        } catch {
            throw internalFailure(error)
        }
        var body: JSONObject = [
            "access_token": .string(issued.accessToken),
            "token_type": "Bearer",
            "expires_in": .number(IdentityProviderStore.accessTokenLifetimeSeconds),
            "refresh_token": .string(issued.refreshToken),
            "id_token": .string(idToken),
        ]
        if !pending.scope.isEmpty { body["scope"] = .string(pending.scope) }
        return .json(.object(body), headers: ControlIdPEndpoints.noStore)
    }

    /// RFC 6749 §5.1: token responses must not be cached.
    static let noStore: HTTPHeaders = ["Cache-Control": "no-store", "Pragma": "no-cache"]

    /// RFC 6749 §5.2.
    static func oauthError(_ error: String, _ description: String, status: Int = 400) -> HTTPResponse {
        .json(status: status, ["error": .string(error), "error_description": .string(description)], headers: noStore)
    }

    static func basicClientID(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["Authorization"], header.count > 6, header.prefix(6).lowercased() == "basic ",
              let decoded = try? Base64.decode(GoStrings.trimSpace(header.dropFirst(6))) else { return nil }
        let text = String(decoding: decoded, as: UTF8.self)
        let id = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return RedirectURL.parseQuery("id=" + id).first?.value
    }

    // MARK: Userinfo (OpenID Connect Core 1.0 §5.3)

    func userinfo(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let name = try provider(context)
        var token = ""
        if let bearer = context.request.bearerToken {
            token = bearer
        } else if context.request.method == "POST" {
            // RFC 6750 §2.2: a form-encoded body parameter.
            token = ControlIdPEndpoints.form(context.request).first { $0.name == "access_token" }?.value ?? ""
        }
        let now = project.environment.now().microseconds
        guard !token.isEmpty, let grant = project.identityProviderStore.grant(accessToken: token, provider: name, now: now) else {
            // RFC 6750 §3.1.
            var headers = ControlIdPEndpoints.noStore
            headers["WWW-Authenticate"] = token.isEmpty ? "Bearer" : "Bearer error=\"invalid_token\""
            return .json(status: 401, ["error": "invalid_token",
                                       "error_description": "The access token is missing, invalid or expired."], headers: headers)
        }
        var info: JSONObject = ["sub": .string(grant.account.subject)]
        if let email = grant.account.email {
            info["email"] = .string(email)
            info["email_verified"] = .bool(grant.account.emailVerified)
        }
        if let fullName = grant.account.name, !fullName.isEmpty { info["name"] = .string(fullName) }
        if let picture = grant.account.picture { info["picture"] = .string(picture) }
        return .json(.object(info), headers: ControlIdPEndpoints.noStore)
    }

    // MARK: Minting (service_role)

    static let mintKeys: Set<String> = ["sub", "email", "email_verified", "name", "picture", "nonce", "aud", "expires_in", "claims"]

    /// `POST /emulator/v1/idp/{provider}/id_token`: an id_token as the provider would issue to
    /// a native app (Sign in with Apple, Google Sign-In), for `grant_type=id_token` tests.
    func mint(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let name = try provider(context)
        let fields = try ControlFields(context.request, allowed: ControlIdPEndpoints.mintKeys, emptyAllowed: true)
        let email = try fields.nonEmptyString("email")
        let verified = try fields.bool("email_verified") ?? true
        let expiresIn = try fields.expiresIn(default: IdentityProviderStore.accessTokenLifetimeSeconds)
        let extra = try fields.object("claims") ?? JSONObject()
        let audience: JSON
        if let value = fields["aud"] {
            switch value {
            case .string(let text) where !text.isEmpty: audience = value
            case .array(let items) where !items.isEmpty && items.allSatisfy({ !($0.stringValue ?? "").isEmpty }): audience = value
            default: throw ControlRequest.invalid("\"aud\" must be a non-empty string or array of strings")
            }
        } else {
            let config = api.snapshot.configuration
            var ids = config.external.providers[name]?.clientIDs.filter { !$0.isEmpty } ?? []
            if name == "apple", ids.isEmpty, !config.external.iosBundleID.isEmpty { ids = [config.external.iosBundleID] }
            if name.hasPrefix("custom:"), ids.isEmpty,
               let custom = try api.read({ conn in try conn.customOAuthProvider(identifier: name) }), !custom.clientID.isEmpty {
                ids = [custom.clientID]  // a provider of /admin/custom-providers
            }
            guard let first = ids.first else {
                throw ControlRequest.invalid("no client id is configured for provider \(GoStrconv.quote(name)); pass \"aud\"")
            }
            audience = .string(first)
        }
        let subject = try fields.nonEmptyString("sub") ?? idp.subject(provider: name, email: email)
        let account = IdentityProviderStore.Account(subject: subject, email: email, emailVerified: verified,
                                                    name: try fields.string("name"), picture: try fields.string("picture"))
        let nonce = try fields.string("nonce").map(FakeIdentityProvider.hashedNonce)
        let claims = idp.idTokenClaims(provider: name, account: account, audience: audience, nonce: nonce,
                                       issuedAt: project.environment.now().unixSeconds, expiresIn: expiresIn, extra: extra)
        do {
            return .json(["id_token": .string(try idp.sign(claims))])
        } catch {
            throw internalFailure(error)
        }
    }
}
