import AuthCrypto
import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

/// The OAuth redirect flow (reference §5.16-5.19; external.go, external_oauth.go, identity.go):
/// `GET /authorize` sends the browser to the provider, which returns to `/callback`. Offline, the
/// provider is the emulator's fake one (`/emulator/v1/idp/{provider}/authorize`), whose codes
/// are redeemed in-process instead of over the network.
struct ExternalEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/authorize", operation: "authorize") { g, context in try g.authorize(context) },
            Endpoint("GET", "/callback", operation: "callback") { g, context in g.callback(context) },
            Endpoint("POST", "/callback", operation: "callback") { g, context in g.callback(context) },
        ]
    }

    private var project: Project { api.project }

    /// OAuth parameters the server controls; a client cannot pass them on to the provider
    /// (`reservedOAuthParams`), except `nonce`.
    static let reservedParameters: Set<String> = [
        "client_id", "client_secret", "redirect_uri", "response_type", "state", "code_challenge",
        "code_challenge_method", "code_verifier",
    ]

    // MARK: GET /authorize

    func authorize(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let url = try providerRedirectURL(context, linkingTarget: nil)
        return ExternalEndpoints.found(url)
    }

    /// `GetExternalProviderRedirectURL`: checks the provider, records the flow state (its id is
    /// the OAuth `state`) and builds the provider's authorization URL.
    func providerRedirectURL(_ context: RequestContext, linkingTarget: UserRecord?) throws(AuthError) -> String {
        let config = api.snapshot.configuration
        let query = context.request.query
        func value(_ name: String) -> String { query.first { $0.name == name }?.value ?? "" }
        let providerType = value("provider")
        let scopes = value("scopes")
        let codeChallenge = value("code_challenge")
        let codeChallengeMethod = value("code_challenge_method")

        let settings: OAuthProviderSettings
        var custom: CustomFlowProvider?
        switch resolve(providerType) {
        case .success(let found): (settings, custom) = found
        case .failure(let problem): throw AuthError(400, .validationFailed, "Unsupported provider: \(problem.message)")
        }
        let inviteToken = value("invite_token")
        if !inviteToken.isEmpty {
            let invited = try api.read { conn in try conn.user(confirmationToken: inviteToken) }
            if invited == nil { throw AuthError(404, .userNotFound, "User identified by token not found") }
        }
        let redirectTo = Mailer.referrer(context, config)
        try PKCE.validateParameters(method: codeChallengeMethod, challenge: codeChallenge)

        // Everything else the client sent goes on to the provider (`login_hint`, `prompt`,
        // `nonce`, ...), with WorkOS's `workos_provider` renamed.
        var forwarded: [QueryItem] = []
        for item in query {
            let lower = item.name.lowercased()
            if item.name == "scopes" || item.name == "provider" { continue }
            if lower != "nonce" && ExternalEndpoints.reservedParameters.contains(lower) { continue }
            if forwarded.contains(where: { $0.name == item.name }) { continue }  // `query.Get`: the first value
            forwarded.append(QueryItem(name: item.name == "workos_provider" ? "provider" : item.name, value: item.value))
        }

        guard var flow = FlowStates.make(project: project, userID: nil, providerType: providerType,
                                         authenticationMethod: FlowStates.oauth, codeChallengeMethod: codeChallengeMethod,
                                         codeChallenge: codeChallenge) else {
            throw AuthError(400, .validationFailed, "Invalid code_challenge_method")
        }
        flow.redirectTo = redirectTo
        flow.inviteToken = inviteToken.isEmpty ? nil : inviteToken
        flow.linkingTargetID = linkingTarget?.id
        flow.emailOptional = settings.emailOptional
        let stored = flow
        try api.write { conn in try conn.insertFlowState(stored) }

        // oauth2.Config.AuthCodeURL: client_id, redirect_uri, response_type, scope, state, then
        // the extra options; Apple answers with a form POST.
        var parameters: [QueryItem] = [
            QueryItem(name: "client_id", value: settings.clientIDs.first ?? ""),
            QueryItem(name: "redirect_uri", value: ExternalEndpoints.callbackURL(settings, config, custom: custom != nil)),
            QueryItem(name: "response_type", value: "code"),
        ]
        let scope = custom.map { $0.scopes(requested: scopes) } ?? ExternalEndpoints.scopes(providerType, requested: scopes)
        if !scope.isEmpty { parameters.append(QueryItem(name: "scope", value: scope)) }
        parameters.append(QueryItem(name: "state", value: flow.id))
        if providerType.lowercased() == "apple" { parameters.append(QueryItem(name: "response_mode", value: "form_post")) }
        // `RequiresPKCE`: GoTrue runs PKCE with a provider whose `pkce_enabled` is on (S256 of
        // `oauth2.GenerateVerifier`, 32 random bytes). The emulator redeems the fake issuer's
        // codes in-process, so the verifier is not kept; the provider still sees the challenge.
        if let custom, custom.record.pkceEnabled {
            let verifier = Base64URL.encode(api.project.environment.randomBytes(32))
            parameters.append(QueryItem(name: "code_challenge", value: Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))))
            parameters.append(QueryItem(name: "code_challenge_method", value: "S256"))
        }
        // `AuthCodeURL`'s options are `url.Values.Set` calls after the configuration's own
        // values, so each replaces a value of its name: the client's (its `scope` replaces the
        // provider's), then a custom provider's stored `authorization_params`.
        func set(_ item: QueryItem) {
            if let index = parameters.firstIndex(where: { $0.name == item.name }) {
                parameters[index].value = item.value
            } else {
                parameters.append(item)
            }
        }
        // `AppleProvider.AuthCodeURL` passes only its own `response_mode` to oauth2 and drops the
        // options it is given: nothing the client sent (not even `skip_http_redirect`) reaches
        // Apple's URL.
        if providerType.lowercased() != "apple" { forwarded.forEach(set) }
        (custom?.authorizationParams ?? []).forEach(set)
        if let custom {
            // The endpoint the provider's discovery document (OIDC) or its row (OAuth2) names.
            return custom.authorizationEndpoint + (custom.authorizationEndpoint.contains("?") ? "&" : "?") + GoURL.encode(parameters)
        }
        return api.identityProviders.authorizationURL(provider: providerType.lowercased(), query: parameters)
    }

    struct ProviderProblem: Error { var message: String }

    /// `API.Provider`: a built-in provider from the configuration, or a custom one from
    /// `custom_oauth_providers` (`loadCustomProvider`; GoTrue lowercases the name first).
    func resolve(_ name: String) -> Result<(OAuthProviderSettings, CustomFlowProvider?), ProviderProblem> {
        let lower = name.lowercased()
        guard lower.hasPrefix("custom:") else { return ExternalEndpoints.oauthSettings(name, api.snapshot.configuration).map { ($0, nil) } }
        if !api.snapshot.configuration.customOAuth.enabled { return .failure(ProviderProblem(message: "custom OAuth providers are disabled")) }
        let found: CustomOAuthProviderRecord?
        do {
            found = try api.project.database.read { conn in try conn.customOAuthProvider(identifier: lower) }
        } catch {
            return .failure(ProviderProblem(message: "error finding custom provider: \(error)"))
        }
        guard let record = found else { return .failure(ProviderProblem(message: "custom provider \(lower) not found")) }
        if !record.enabled { return .failure(ProviderProblem(message: "custom provider \(lower) is disabled")) }
        let provider = CustomFlowProvider(record: record, idp: api.identityProviders)
        var settings = OAuthProviderSettings()
        settings.enabled = true
        settings.clientIDs = [record.clientID]
        settings.secret = record.clientSecret
        settings.emailOptional = record.emailOptional
        if record.providerType == "oidc" {
            if record.issuer == nil { return .failure(ProviderProblem(message: "OIDC provider \(lower) missing issuer")) }
        } else if record.authorizationURL == nil || record.tokenURL == nil || record.userinfoURL == nil {
            return .failure(ProviderProblem(message: "OAuth2 provider \(lower) missing required endpoints"))
        }
        return .success((settings, provider))
    }

    /// `API.Provider` + `ValidateOAuth` for a built-in provider (custom ones: `resolve`): it must
    /// exist and be enabled with a client id, a secret and a redirect URI (the emulator defaults
    /// the redirect URI to its own callback, as the Supabase CLI does).
    static func oauthSettings(_ name: String, _ config: Configuration) -> Result<OAuthProviderSettings, ProviderProblem> {
        let lower = name.lowercased()
        guard ExternalProviders.oauthProviders.contains(lower) else {
            return .failure(ProviderProblem(message: "Provider \(lower) could not be found"))
        }
        let settings = config.external.providers[lower] ?? OAuthProviderSettings()
        if !settings.enabled { return .failure(ProviderProblem(message: "provider is not enabled")) }
        if settings.clientIDs.isEmpty { return .failure(ProviderProblem(message: "missing OAuth client ID")) }
        if settings.secret.isEmpty { return .failure(ProviderProblem(message: "missing OAuth secret")) }
        // `NewKeycloakProvider`: Keycloak has no default server.
        if lower == "keycloak" && settings.url.isEmpty {
            return .failure(ProviderProblem(message: "unable to find URL for the Keycloak provider"))
        }
        return .success(settings)
    }

    static func callbackURL(_ settings: OAuthProviderSettings, _ config: Configuration, custom: Bool = false) -> String {
        // `loadCustomProvider`: a custom provider's redirect_uri is built on
        // GOTRUE_CUSTOM_OAUTH_EXTERNAL_URL when set (its trailing slashes trimmed).
        if custom && !config.customOAuth.externalURL.isEmpty {
            var base = Substring(config.customOAuth.externalURL)
            while base.hasSuffix("/") { base = base.dropLast() }
            return base + "/callback"
        }
        if !settings.redirectURI.isEmpty { return settings.redirectURI }
        // The CLI's default redirect URI: `<auth URL>/callback`, where an external URL that
        // already ends in /auth/v1 (the CLI's meaning of `[auth] external_url`) is not extended.
        return config.authURL + "/callback"
    }

    /// The scopes GoTrue asks each provider for (`internal/api/provider/<name>.go`): its
    /// defaults, then the request's `scopes` split on commas, as most providers append
    /// `strings.Split(scopes, ",")` (no de-duplication; a space inside an element stays, and
    /// oauth2 joins the list with spaces). Apple, Bitbucket, Notion, WorkOS and Zoom take no
    /// requested scopes.
    static func scopes(_ provider: String, requested: String) -> String {
        let defaults: [String: [String]] = [
            "google": ["email", "profile"], "apple": ["email", "name"], "azure": ["openid"],
            "facebook": ["email"], "github": ["user:email"], "gitlab": ["read_user"], "kakao": ["account_email", "profile_image", "profile_nickname"],
            "keycloak": ["profile", "email"], "discord": ["email", "identify"], "linkedin_oidc": ["openid", "email", "profile"],
            "slack_oidc": ["profile", "email", "openid"], "twitch": ["user:read:email"], "spotify": ["user-read-email"],
            "zoom": [], "notion": [], "workos": [], "figma": ["current_user:read"], "fly": ["read"], "bitbucket": ["account", "email"],
            "snapchat": ["https://auth.snapchat.com/oauth2/api/user.external_id", "https://auth.snapchat.com/oauth2/api/user.display_name",
                         "https://auth.snapchat.com/oauth2/api/user.bitmoji.avatar"],
            "x": ["users.email", "tweet.read", "users.read", "offline.access"],
        ]
        let name = provider.lowercased()
        var list = defaults[name] ?? ["openid", "email", "profile"]
        if !requested.isEmpty && !["apple", "bitbucket", "notion", "workos", "zoom"].contains(name) {
            list += requested.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        return list.joined(separator: " ")
    }

    static func found(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 302, headers: ["Location": location])
    }

    // MARK: GET|POST /callback

    /// The callback's parameters, as `r.FormValue` reads them: a form POST's (Apple's
    /// form_post), then the query's.
    private func parameters(_ context: RequestContext) -> [QueryItem] {
        context.request.formItems
    }

    func callback(_ context: RequestContext) -> HTTPResponse {
        let config = api.snapshot.configuration
        let params = parameters(context)
        func value(_ name: String) -> String { params.first { $0.name == name }?.value ?? "" }

        // `loadFlowState`: a bad state goes back to the site URL with a 303 and the error in the
        // query only.
        let flow: FlowStateRecord
        switch loadFlow(state: value("state")) {
        case .success(let found): flow = found
        case .failure(let error):
            var site = RedirectURL(config.siteURL)
            for item in ExternalEndpoints.errorItems(error) { site.set(item.name, item.value) }
            site.rawQuery = GoURL.encode(site.query)
            site.fragment = ""
            return HTTPResponse(status: 303, headers: ["Location": site.string])
        }
        // `getExternalRedirectURL`.
        var redirectTo = config.external.redirectURL
        if redirectTo.isEmpty { redirectTo = flow.redirectTo ?? "" }
        if redirectTo.isEmpty { redirectTo = config.siteURL }
        do {
            return try finishCallback(context, flow: flow, redirectTo: redirectTo, value: value)
        } catch {
            // `redirectErrors`: 302 back with the error in the query (merged) and the fragment.
            var url = RedirectURL(redirectTo)
            let items = ExternalEndpoints.errorItems(error)
            for item in items { url.set(item.name, item.value) }
            url.rawQuery = GoURL.encode(url.query)
            // The fragment repeats only the non-empty ones (an error without a description).
            // `u.Fragment = hq.Encode()`, escaped again by `u.String()`, as in verify.go.
            url.fragment = GoURL.escapeFragment(GoURL.encode(items.filter { !$0.value.isEmpty } + [QueryItem(name: "sb", value: "")]))
            return ExternalEndpoints.found(url.string)
        }
    }

    /// `getErrorQueryString`: the OAuth error name, description and (for HTTP errors) code.
    static func errorItems(_ error: AuthError) -> [QueryItem] {
        if case .oauth(let name) = error.kind {
            return [QueryItem(name: "error", value: name), QueryItem(name: "error_description", value: error.message)]
        }
        var name = AuthError.oauthErrorNames[error.status] ?? "server_error"
        if [.signupDisabled, .userBanned, .providerEmailNeedsVerification].contains(error.code) { name = "access_denied" }
        return [QueryItem(name: "error", value: name), QueryItem(name: "error_description", value: error.message),
                QueryItem(name: "error_code", value: error.code?.rawValue ?? "")]
    }

    private func loadFlow(state: String) -> Result<FlowStateRecord, AuthError> {
        if state.isEmpty { return .failure(AuthError(400, .badOauthCallback, "OAuth state parameter missing")) }
        // gofrs `uuid.FromString`: the canonical form, 32 bare hex digits, `{...}` or `urn:uuid:...`.
        guard let id = AdminEndpoints.canonicalUUID(state) else {
            return .failure(AuthError(400, .badOauthState, "OAuth state parameter is invalid"))
        }
        let found: FlowStateRecord?
        do {
            found = try project.database.read { conn in try conn.flowState(id: id) }
        } catch {
            return .failure(api.storeFailure(error))
        }
        guard let flow = found, flow.authenticationMethod == FlowStates.oauth else {
            return .failure(AuthError(400, .badOauthState, "OAuth state not found or expired"))
        }
        if FlowStates.isExpired(flow, now: project.environment.now(),
                                lifetimeSeconds: api.snapshot.configuration.external.flowStateExpirySeconds) {
            return .failure(AuthError(400, .badOauthState, "OAuth state has expired"))
        }
        if flow.isPKCE && flow.userID != nil {
            return .failure(AuthError(400, .flowStateAlreadyUsed, "State has already been used"))
        }
        // `loadExternalState` loads a manual link's target here: one deleted since is a bad
        // state (the site URL, the error in the query), not a callback error.
        if let target = flow.linkingTargetID {
            do {
                if try project.database.read({ conn in try conn.user(id: target) }) == nil {
                    return .failure(AuthError(422, .userNotFound, "Linking target user not found"))
                }
            } catch {
                return .failure(api.storeFailure(error))
            }
        }
        return .success(flow)
    }

    private func finishCallback(_ context: RequestContext, flow: FlowStateRecord, redirectTo: String,
                                value: (String) -> String) throws(AuthError) -> HTTPResponse {
        let provider = flow.providerType.lowercased()
        // The provider is looked up by its lowercased name, but the account is made with the
        // name as the client wrote it (`getExternalProviderType`): identities, app_metadata
        // and messages say "GitHub" after `provider=GitHub`, as on the real server.
        let providerType = flow.providerType
        // `oAuthCallback`.
        let providerError = value("error")
        if !providerError.isEmpty { throw .oauth(providerError, value("error_description")) }
        let code = value("code")
        if code.isEmpty {
            throw AuthError(400, .badOauthCallback, "OAuth callback with missing authorization code missing")
        }
        let custom: CustomFlowProvider?
        let settings: OAuthProviderSettings
        switch resolve(provider) {
        case .success(let found): (settings, custom) = found
        case .failure(let problem): throw AuthError(400, .oauthProviderNotSupported, "Unsupported provider: \(problem.message)")
        }
        // Codes are redeemed in-process, so only a custom provider whose endpoints are a fake
        // issuer's can complete; any other token endpoint is out of reach, as a failed exchange.
        let redeemedProvider = custom.map { $0.fakeProvider ?? "" } ?? provider
        guard !redeemedProvider.isEmpty, let redeemed = api.identityProviders.redeem(code: code, provider: redeemedProvider) else {
            throw AuthError(500, .unexpectedFailure, "Unable to exchange external code: \(code.prefix(4))")
        }
        var data: ProviderUserData
        do {
            // `GetUserData`: the provider's own API for GitHub, Discord, Keycloak and the other
            // API-reading providers (`ProviderAPIs`), else the id_token's claims.
            let fromAPI = custom != nil ? nil : try ProviderAPIs.userData(
                provider: provider, url: settings.url, tokenExtras: redeemed.tokenExtras
            ) { url in api.identityProviders.providerAPI(provider: redeemedProvider, accessToken: redeemed.accessToken, url: url) }
            data = try fromAPI ?? ExternalProviders.userData(provider: provider, claims: redeemed.claims)
            if let custom { data = try custom.userData(data, claims: redeemed.claims) }
        } catch {
            // Twitter's OAuth 1.0a `FetchUserData` failure has its own wording.
            throw AuthError(500, .unexpectedFailure, provider == "twitter" ? "Error getting user email from external provider"
                                                                           : "Error getting user profile from external provider")
        }
        // Apple sends the user's name only on the first authorization, as a `user` form field.
        let appleUser = value("user")
        if provider == "apple", !appleUser.isEmpty {
            guard case .object(let object)? = try? JSON(parsing: Array(appleUser.utf8)) else {
                throw AuthError(500, .unexpectedFailure, "Error parsing apple user")
            }
            let name = object["name"]?.objectValue
            let first: String = name?["firstName"]?.stringValue ?? ""
            let last: String = name?["lastName"]?.stringValue ?? ""
            let full = GoStrings.trimSpace(first + " " + last)
            data.metadata.name = full
            data.metadata.fullName = full
        }
        if data.emails.isEmpty && !flow.emailOptional {
            throw AuthError(500, .unexpectedFailure, "Error getting user email from external provider")
        }
        data.promotePrimaryEmail()

        enum Result {
            case pkce(String, signedIn: JSON?)
            case implicit(Tokens.Issued, signedIn: JSON?)
            case failed(AuthError)
        }
        let accounts = ExternalAccounts(api: api, context: context)
        if flow.linkingTargetID == nil && (flow.inviteToken ?? "").isEmpty {
            try accounts.beforeUserCreated(data: data, provider: providerType)
        }
        let afterUserCreated = Hooks(api: api, request: context.request).enabled(.afterUserCreated)
        let result: Result = try api.write { [data] conn, round in
            let outcome: ExternalAccounts.Outcome
            if let targetID = flow.linkingTargetID {
                guard let target = try conn.user(id: targetID) else {
                    throw AuthError(422, .userNotFound, "Linking target user not found")
                }
                outcome = try accounts.link(conn, target: target, data: data, provider: providerType, round: &round)
            } else if let invite = flow.inviteToken, !invite.isEmpty {
                outcome = try acceptInvite(conn, context, data: data, invite: invite, provider: providerType, accounts: accounts)
            } else {
                outcome = try accounts.signIn(conn, data: data, provider: providerType, emailOptional: flow.emailOptional, round: &round)
            }
            guard case .user(var user, _, _) = outcome else {
                if case .failedAfterCommit(let error) = outcome { return .failed(error) }
                return .failed(AuthError.unexpected)
            }
            // external.go sets `createdUser` for every sign-in through
            // `createAccountFromExternalIdentity`, a returning user's too (not a link or an
            // invite): after the commit, after-user-created sees the user.
            func signedIn() throws -> JSON? {
                guard afterUserCreated, flow.linkingTargetID == nil, (flow.inviteToken ?? "").isEmpty else { return nil }
                return Models.user(user, identities: try conn.identities(userID: user.id), factors: try conn.factors(userID: user.id))
            }
            let now = project.environment.now().microseconds
            if flow.isPKCE {
                // `FindFlowStateByIDForUpdate`: the row is locked until the commit, so two
                // callbacks (two emulator processes on one Postgres) cannot both claim it; one
                // held by another transaction, or gone, is GoTrue's FlowStateNotFoundError.
                guard let current = try RowLocks.skippingHeld({ try conn.flowState(id: flow.id, forUpdate: true) }) else {
                    throw AuthError.oauth("server_error", "Flow State not found")
                }
                guard current.userID == nil else {
                    throw AuthError(400, .flowStateAlreadyUsed, "State has already been used")
                }
                try conn.claimFlowState(id: flow.id, userID: user.id, providerAccessToken: redeemed.accessToken,
                                        providerRefreshToken: redeemed.refreshToken, at: now)
                return .pkce(flow.authCode, signedIn: try signedIn())
            }
            // external.go wraps whatever fails here (a custom access token hook's refusal or
            // timeout included) as `NewOAuthError("server_error", terr.Error())`: the redirect
            // carries no error_code, and the description is `HTTPError.Error()`, "<status>: <message>".
            let issued: Tokens.Issued
            do {
                issued = try Tokens(api: api).issueSession(conn, user: &user, method: "oauth", request: context.request)
                try conn.deleteFlowState(id: flow.id)
            } catch {
                if WriteRounds.deferring { throw error }
                let failure = (error as? AuthError) ?? api.storeFailure(error)
                throw AuthError.oauth("server_error", "\(failure.status): \(failure.message)")
            }
            return .implicit(issued, signedIn: try signedIn())
        }
        switch result {
        case .pkce(_, let user?), .implicit(_, let user?):
            // A refusal is the callback's error redirect; what was committed stays.
            try Hooks(api: api, request: context.request).afterUserCreated(user)
        default:
            break
        }
        switch result {
        case .failed(let error):
            throw error
        case .pkce(let authCode, _):
            // `prepPKCERedirectURL`.
            var url = RedirectURL(redirectTo)
            url.set("code", authCode)
            url.rawQuery = GoURL.encode(url.query)
            return ExternalEndpoints.found(url.string)
        case .implicit(let issued, _):
            // `AccessTokenResponse.AsRedirectURL` with the provider's tokens.
            var items = [QueryItem(name: "provider_token", value: redeemed.accessToken)]
            if !redeemed.refreshToken.isEmpty {
                items.append(QueryItem(name: "provider_refresh_token", value: redeemed.refreshToken))
            }
            var response = ExternalEndpoints.found(redirectTo + "#" + issued.redirectFragment(leading: items))
            for (name, value) in issued.headers { response.headers[name] = value }
            return response
        }
    }

    /// `processInvite`: the invited user accepts through a provider whose email matches.
    private func acceptInvite(_ conn: Connection, _ context: RequestContext, data: ProviderUserData, invite: String,
                              provider: String, accounts: ExternalAccounts) throws -> ExternalAccounts.Outcome {
        guard var user = try conn.user(confirmationToken: invite) else {
            throw AuthError(404, .inviteNotFound, "Invite not found")
        }
        guard data.emails.contains(where: { $0.email == (user.email ?? "") }) else {
            throw AuthError(400, .validationFailed, "Invited email does not match emails from external provider")
        }
        let identityData = data.metadata.identityData
        let identity = try accounts.createIdentity(conn, user: user, provider: provider, data: identityData)
        user.appMetadata = Models.merge(["provider": .string(provider)], into: user.appMetadata)
        accounts.mergeUserMetadata(&user, identityData)
        try accounts.updateProviders(conn, &user)
        try api.audit(conn, context, actor: user, action: .inviteAccepted,
                      traits: ["provider": .string(provider)])
        try accounts.removeUnconfirmedIdentities(conn, &user, keeping: identity)
        try accounts.confirm(conn, &user)
        return .user(user, created: false, identities: try conn.identities(userID: user.id))
    }
}
