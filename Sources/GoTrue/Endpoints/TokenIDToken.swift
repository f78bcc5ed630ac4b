import AuthCrypto
import AuthFormats
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats

/// `POST /token?grant_type=id_token` (reference §11, `IdTokenGrant` in token_oidc.go).
///
/// GoTrue fetches each issuer's discovery document and JWKS to check signatures. Offline, the
/// emulator accepts three kinds of token:
/// 1. tokens its own fake issuers signed (`/emulator/v1/idp/{provider}/id_token`, or the fake
///    authorization page): fully verified, signature included;
/// 2. tokens from the real providers: structure, issuer, expiry, audience, subject and nonce are
///    checked, the signature cannot be, so they are accepted with a logged warning (refused in
///    strict mode);
/// 3. a plain JSON object of claims in place of the token (refused in strict mode).
extension TokenEndpoints {
    /// What `getProvider` resolves for a request.
    struct IdTokenProvider {
        var type: String
        /// The issuers a token may name (`iss`), for kinds 2 and 3; the fake issuer is added.
        var issuers: [String]
        var clientIDs: [String]
        var skipNonceCheck: Bool
        var emailOptional: Bool
    }

    static let badIDToken = AuthError.oauth("invalid request", "Bad ID token")

    func idToken(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "IdTokenGrantParams")
        let token = try body.string("id_token") ?? ""
        let accessToken = try body.string("access_token") ?? ""
        let nonce = try body.string("nonce") ?? ""
        let providerName = try body.string("provider") ?? ""
        let clientID = try body.string("client_id") ?? ""
        let issuer = try body.string("issuer") ?? ""
        let linkIdentity = try body.bool("link_identity") ?? false

        if token.isEmpty { throw .oauth("invalid request", "id_token required") }
        if providerName.isEmpty && (clientID.isEmpty || issuer.isEmpty) {
            throw .oauth("invalid request", "provider or client_id and issuer required")
        }
        var target: UserRecord?
        if linkIdentity {
            if (context.request.headers["Authorization"] ?? "").isEmpty {
                throw .oauth("invalid request", "Linking requires a valid user access token in Authorization")
            }
            target = try api.authenticate(context).user
        }

        let provider = try resolveProvider(name: providerName, issuer: issuer, clientID: clientID, token: token)
        let claims = try verifiedClaims(token, provider: provider, accessToken: accessToken)
        var data: ProviderUserData
        do {
            data = try ExternalProviders.userData(provider: provider.type, claims: claims)
        } catch {
            throw TokenEndpoints.badIDToken
        }
        data.promotePrimaryEmail()

        if (claims["sub"]?.stringValue ?? "").isEmpty {
            throw .oauth("invalid request", "Missing sub claim in id_token")
        }
        let audience = (try? ClaimReader(claims).audience()) ?? []
        let acceptable = provider.clientIDs.contains { !$0.isEmpty && audience.contains($0) }
        if !acceptable {
            // Go's `%v` of a string slice.
            throw .oauth("invalid request", "Unacceptable audience in id_token: [\(audience.joined(separator: " "))]")
        }
        if !provider.skipNonceCheck {
            let tokenNonce = claims["nonce"]?.stringValue ?? ""
            if tokenNonce.isEmpty != nonce.isEmpty {
                throw .oauth("invalid request", "Passed nonce and nonce in id_token should either both exist or not.")
            }
            // Apps pass the raw nonce; the provider put its lowercase hex SHA-256 in the token.
            if !nonce.isEmpty && Hex.encode(SHA256.hash(data: Array(nonce.utf8))) != tokenNonce {
                throw .oauth("invalid nonce", "Nonces mismatch")
            }
        }

        enum Result {
            case issued(Tokens.Issued, JSON, created: Bool)
            case failed(AuthError)
        }
        let accounts = ExternalAccounts(api: api, context: context)
        if target == nil { try accounts.beforeUserCreated(data: data, provider: provider.type) }
        let result: Result = try api.write { [target, data] conn, round in
            let outcome: ExternalAccounts.Outcome
            if let target {
                outcome = try accounts.link(conn, target: target, data: data, provider: provider.type, round: &round)
            } else {
                outcome = try accounts.signIn(conn, data: data, provider: provider.type, emailOptional: provider.emailOptional,
                                              round: &round)
            }
            switch outcome {
            case .failedAfterCommit(let error):
                return .failed(error)
            case .user(var user, let created, let shown):
                let issued = try Tokens(api: api).issueSession(conn, user: &user, method: "oauth", request: context.request)
                // The answer's user is GoTrue's in memory, identities as loaded (`Outcome.user`).
                return .issued(issued, Models.user(user, identities: shown, factors: try conn.factors(userID: user.id)),
                               created: created && target == nil)
            }
        }
        switch result {
        case .failed(let error):
            throw error
        case .issued(let issued, let user, let created):
            // token_oidc.go: after the commit, for an account the grant created; a refusal is
            // the answer (the session stays).
            if created { try Hooks(api: api, request: context.request).afterUserCreated(user) }
            return .json(.object(issued.response(user: user)), headers: issued.headers)
        }
    }

    /// `IdTokenGrantParams.getProvider`, in the real order of checks. The emulator's fake
    /// issuers select their provider the way the real issuers do.
    private func resolveProvider(name: String, issuer: String, clientID: String, token: String) throws(AuthError) -> IdTokenProvider {
        let config = api.snapshot.configuration
        let fake = api.identityProviders
        let issuerProvider = issuer.isEmpty ? nil : fake.provider(forIssuer: issuer)
        func selects(_ p: String, _ realIssuer: (String) -> Bool) -> Bool {
            name == p || (!issuer.isEmpty && (realIssuer(issuer) || issuerProvider == p))
        }
        func settings(_ p: String) -> OAuthProviderSettings { config.external.providers[p] ?? OAuthProviderSettings() }
        func make(_ p: String, _ issuers: [String], clientIDs: [String]? = nil) -> IdTokenProvider {
            let s = settings(p)
            return IdTokenProvider(type: p, issuers: issuers + [fake.issuer(for: p)], clientIDs: clientIDs ?? s.clientIDs,
                                   skipNonceCheck: s.skipNonceCheck, emailOptional: s.emailOptional)
        }
        func disabled(_ issuer: String) -> AuthError {
            AuthError(400, .providerDisabled, "Provider (issuer \(GoStrconv.quote(issuer))) is not enabled")
        }
        /// Apple and Azure (several issuers each): the issuer the unverified token names must be
        /// one of the provider's (or the fake issuer's), and agree with a requested `issuer`.
        func detectedIssuer(_ p: String, named display: String, _ isRealIssuer: (String) -> Bool) throws(AuthError) -> String {
            guard let detected = TokenEndpoints.unverifiedIssuer(token, plainDefault: fake.issuer(for: p)) else {
                throw AuthError(400, .validationFailed, "Unable to detect issuer in ID token for \(display) provider")
            }
            guard isRealIssuer(detected) || fake.provider(forIssuer: detected) == p else {
                throw AuthError(400, .validationFailed, "Detected ID token issuer is not an \(display) ID token issuer")
            }
            if !issuer.isEmpty && issuer != detected {
                throw AuthError(400, .validationFailed, "Provided issuer does not match ID token issuer")
            }
            return detected
        }

        let resolved: IdTokenProvider
        let displayedIssuer: String
        if selects("apple", ExternalProviders.isAppleIssuer) {
            let detected = try detectedIssuer("apple", named: "Apple", ExternalProviders.isAppleIssuer)
            var ids = settings("apple").clientIDs
            if !config.external.iosBundleID.isEmpty { ids.append(config.external.iosBundleID) }
            resolved = make("apple", [detected], clientIDs: ids)
            displayedIssuer = detected
        } else if selects("google", { $0 == ExternalProviders.googleIssuer }) {
            resolved = make("google", ExternalProviders.realIssuers("google", configuration: config))
            displayedIssuer = ExternalProviders.googleIssuer
        } else if selects("azure", ExternalProviders.isAzureRequestIssuer) {
            let detected = try detectedIssuer("azure", named: "Azure", ExternalProviders.isAzureIssuer)
            resolved = make("azure", [detected])
            displayedIssuer = detected
        } else if selects("facebook", { $0 == ExternalProviders.facebookIssuer }) {
            // Limited Login tokens carry no usable nonce: GoTrue always skips the check.
            var p = make("facebook", [ExternalProviders.facebookIssuer])
            p.skipNonceCheck = true
            resolved = p
            displayedIssuer = ExternalProviders.facebookIssuer
        } else if name == "keycloak"
                    || (!issuer.isEmpty && config.external.isEnabled("keycloak") && !settings("keycloak").url.isEmpty
                        && issuer == settings("keycloak").url) || issuerProvider == "keycloak" {
            resolved = make("keycloak", ExternalProviders.realIssuers("keycloak", configuration: config))
            displayedIssuer = settings("keycloak").url
        } else if selects("kakao", { $0 == ExternalProviders.kakaoIssuer }) {
            resolved = make("kakao", [ExternalProviders.kakaoIssuer])
            displayedIssuer = ExternalProviders.kakaoIssuer
        } else if selects("vercel_marketplace", { $0 == ExternalProviders.vercelMarketplaceIssuer }) {
            resolved = make("vercel_marketplace", [ExternalProviders.vercelMarketplaceIssuer])
            displayedIssuer = ExternalProviders.vercelMarketplaceIssuer
        } else if selects("snapchat", { $0 == ExternalProviders.snapchatIssuer }) {
            resolved = make("snapchat", [ExternalProviders.snapchatIssuer])
            displayedIssuer = ExternalProviders.snapchatIssuer
        } else if name.hasPrefix("custom:") {
            // A provider of `/admin/custom-providers`: an enabled OIDC one, whose own client id
            // and `acceptable_client_ids` are the audiences accepted. Its issuer is the only one
            // a token may name; with the emulator's fake issuer, tokens are fully verified.
            if !config.customOAuth.enabled { throw AuthError(400, .validationFailed, "Custom OAuth providers are disabled") }
            guard let custom = try api.read({ conn in try conn.customOAuthProvider(identifier: name) }) else {
                throw AuthError(400, .validationFailed, "Custom provider \(GoStrconv.quote(name)) not found")
            }
            if !custom.enabled { throw AuthError(400, .providerDisabled, "Custom provider \(GoStrconv.quote(name)) is disabled") }
            if custom.providerType != "oidc" {
                throw AuthError(400, .validationFailed, "Provider \(GoStrconv.quote(name)) is not an OIDC provider")
            }
            guard let customIssuer = custom.issuer else {
                throw AuthError(400, .validationFailed, "OIDC provider \(GoStrconv.quote(name)) missing issuer")
            }
            let extra = (try? JSON(parsing: custom.acceptableClientIDs))?.arrayValue?.compactMap(\.stringValue) ?? []
            return IdTokenProvider(type: name, issuers: [customIssuer], clientIDs: [custom.clientID] + extra,
                                   skipNonceCheck: custom.skipNonceCheck, emailOptional: custom.emailOptional)
        } else {
            // The deprecated form: an allowed issuer plus the request's client id. The provider
            // type is the issuer itself.
            guard !issuer.isEmpty, config.external.allowedIDTokenIssuers.contains(issuer) else {
                throw AuthError(400, .validationFailed, "Custom OIDC provider \(GoStrconv.quote(name)) not allowed")
            }
            return IdTokenProvider(type: issuer, issuers: [issuer], clientIDs: [clientID], skipNonceCheck: false,
                                   emailOptional: false)
        }
        guard config.external.isEnabled(resolved.type) else { throw disabled(displayedIssuer) }
        return resolved
    }

    /// `provider.ParseIDToken` for the three kinds of token. Every failure is "Bad ID token".
    private func verifiedClaims(_ token: String, provider: IdTokenProvider, accessToken: String) throws(AuthError) -> JSONObject {
        let strict = api.snapshot.configuration.identityProviders.strictIDTokens
        let now = api.project.environment.now().unixSeconds
        let fake = api.identityProviders
        let claims: JSONObject
        let trimmed = token.drop(while: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" })
        if trimmed.hasPrefix("{") {
            // Kind 3: plain claims. `iss` may be left out; `exp`, when given, still counts.
            guard !strict, case .object(let object)? = try? JSON(parsing: Array(token.utf8)) else {
                throw TokenEndpoints.badIDToken
            }
            if let iss = object["iss"], iss != .null {
                guard let text = iss.stringValue, provider.issuers.contains(text) else { throw TokenEndpoints.badIDToken }
            }
            if let exp = object["exp"], exp != .null {
                guard let seconds = exp.doubleValue, Double(now) <= seconds else { throw TokenEndpoints.badIDToken }
            }
            claims = object
        } else if fake.isEmulatorToken(token) {
            // Kind 1: signed by the emulator's issuer; signature and times are checked there.
            guard let verified = try? fake.verify(token) else { throw TokenEndpoints.badIDToken }
            guard let iss = verified["iss"]?.stringValue, provider.issuers.contains(iss) else {
                throw TokenEndpoints.badIDToken
            }
            claims = verified
        } else {
            // Kind 2: a real provider's token. go-oidc would check the signature against the
            // issuer's JWKS, which needs the network; everything else is checked as it does.
            guard !strict, let decoded = try? JWT.decodeUnverified(token) else { throw TokenEndpoints.badIDToken }
            guard let iss = decoded.claims["iss"]?.stringValue, provider.issuers.contains(iss) else {
                throw TokenEndpoints.badIDToken
            }
            // go-oidc: `exp` is required and must be in the future; `nbf` gets a minute of leeway.
            guard let exp = decoded.claims["exp"]?.doubleValue, Double(now) <= exp else { throw TokenEndpoints.badIDToken }
            if let nbf = decoded.claims["nbf"]?.doubleValue, Double(now + 60) < nbf { throw TokenEndpoints.badIDToken }
            logError("id_token from \(iss) accepted without a signature check (not possible offline); "
                     + "start with --strict-id-tokens to refuse such tokens")
            claims = decoded.claims
        }
        // `IDToken.VerifyAccessToken` (OIDC Core §3.1.3.6): at_hash is the base64url of the left
        // half of SHA-256(access_token) for RS256/HS256 tokens.
        if !accessToken.isEmpty, let atHash = claims["at_hash"]?.stringValue, !atHash.isEmpty {
            let digest = SHA256.hash(data: Array(accessToken.utf8))
            guard Base64URL.encode(Array(digest.prefix(16))) == atHash else { throw TokenEndpoints.badIDToken }
        }
        return claims
    }

    /// `DetectAppleIDTokenIssuer` / `DetectAzureIDTokenIssuer`: the `iss` of the token read
    /// without verification. A plain-claims token without `iss` stands for the fake issuer.
    static func unverifiedIssuer(_ token: String, plainDefault: String) -> String? {
        if token.drop(while: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).hasPrefix("{") {
            guard case .object(let object)? = try? JSON(parsing: Array(token.utf8)) else { return nil }
            guard let iss = object["iss"], iss != .null else { return plainDefault }
            return iss.stringValue
        }
        // Three dot-separated parts, the middle one's JSON read into a struct with a string
        // `iss`: missing or null reads as "" (then "not an Apple ID token issuer"), another type
        // fails ("Unable to detect issuer"). The header is not looked at.
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = try? Base64URL.decode(parts[1]), let value = try? JSON(parsing: payload) else {
            return nil
        }
        switch value {
        case .null:
            return ""
        case .object(let claims):
            guard let iss = claims["iss"], iss != .null else { return "" }
            return iss.stringValue
        default:
            return nil
        }
    }
}
