import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

/// `/admin/custom-providers` (custom_oauth_admin.go; api.go mounts it under the admin routes,
/// behind `requireCustomOAuthEnabled`): custom OAuth2 and OIDC providers managed at run time.
/// The guards keep the real order: the admin check, the feature check (404 `feature_disabled`
/// "Custom OAuth providers are disabled"); the handlers then validate in custom_oauth_admin.go's
/// order.
///
/// Offline differences, both documented in docs/social-sign-in.md:
/// - `ValidateOAuthURL` resolves host names to refuse private addresses; the emulator checks
///   literal addresses only (as Go and as a browser read the URL, which must agree), and lets
///   URLs of its own fake issuers (`/emulator/v1/idp/...`, plain http on loopback) through,
///   since they are the only issuers it can reach.
/// - An OIDC provider's discovery document is read in-process when it belongs to a fake issuer;
///   any other discovery URL fails as an unreachable one would.
struct CustomOAuthProviderEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/admin/custom-providers", operation: "admin.custom_providers.list",
                     guards: admin) { g, context in try g.list(context) },
            Endpoint("POST", "/admin/custom-providers", operation: "admin.custom_providers.create", guards: admin) { g, context in
                try g.create(context)
            },
            Endpoint("GET", "/admin/custom-providers/{identifier}", operation: "admin.custom_providers.get",
                     guards: admin) { g, context in
                try g.get(context)
            },
            Endpoint("PUT", "/admin/custom-providers/{identifier}", operation: "admin.custom_providers.update",
                     guards: admin) { g, context in
                try g.update(context)
            },
            Endpoint("DELETE", "/admin/custom-providers/{identifier}", operation: "admin.custom_providers.delete",
                     guards: admin) { g, context in
                try g.delete(context)
            },
        ]
    }

    var config: Configuration { api.snapshot.configuration }

    static let disabled = AuthError(404, .featureDisabled, "Custom OAuth providers are disabled")

    /// The `/admin` group's guard, then `requireCustomOAuthEnabled`.
    static let admin: [RouteGuard] = AdminEndpoints.admin + [.requireCustomOAuthEnabled]

    static func invalid(_ message: String) -> AuthError { AuthError(400, .validationFailed, message) }

    static let notFound = AuthError(404, .customProviderNotFound, "Custom OAuth provider not found")

    /// The `{identifier}` of the path, which must carry the `custom:` prefix.
    /// chi routes on the escaped path when the request escaped more than needed (`URL.RawPath`),
    /// so `custom%3Aacme` arrives as it was sent and fails the prefix check; the last segment of
    /// the request target is that value in every case.
    /// chi mounts the routes at `/{identifier}/`, so one trailing slash names the same provider.
    private func pathIdentifier(_ context: RequestContext) throws(AuthError) -> String {
        var target = context.request.target.prefix { $0 != "?" }
        if target.hasSuffix("/") && target.count > 1 { target = target.dropLast() }
        let raw = target.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init)
        let identifier = (target.hasPrefix("/") ? raw : nil) ?? context.pathParameters["identifier"] ?? ""
        if identifier.isEmpty { throw Self.invalid("identifier is required") }
        if !identifier.hasPrefix("custom:") {
            throw Self.invalid("identifier must start with 'custom:' prefix, e.g. 'custom:\(identifier)'")
        }
        return identifier
    }

    // MARK: Routes

    func list(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let type = context.request.query.first { $0.name == "type" }?.value ?? ""
        if !type.isEmpty && type != "oauth2" && type != "oidc" {
            throw Self.invalid("type must be either 'oauth2' or 'oidc'")
        }
        let providers = try api.read { conn in try conn.customOAuthProviders(type: type.isEmpty ? nil : type) }
        return .json(["providers": .array(providers.map(CustomOAuthProviderEndpoints.json))])
    }

    func get(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let identifier = try pathIdentifier(context)
        guard let provider = try api.read({ conn in try conn.customOAuthProvider(identifier: identifier) }) else {
            throw Self.notFound
        }
        return .json(Self.json(provider))
    }

    func create(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let params = try Params(context.request)
        let type = params.providerType ?? ""
        if type != "oauth2" && type != "oidc" { throw Self.invalid("provider_type must be either 'oauth2' or 'oidc'") }
        try Self.validateRequired(params, type: type)
        try Self.validateAuthorizationParams(params.authorizationParams)
        try Self.validateAttributeMapping(params.attributeMapping)
        try Self.validateCustomClaimsAllowlist(params.customClaimsAllowlist)
        let maximum = config.customOAuth.maxProviders
        if maximum > 0, try api.read({ conn in try conn.countCustomOAuthProviders() }) >= maximum {
            throw AuthError(400, .overCustomProviderQuota, "Maximum number of custom OAuth/OIDC providers reached")
        }
        // `validateProviderURLs`: the issuer and discovery URL, or the three endpoints and the JWKS.
        let urls: [String?] = type == "oidc"
            ? [params.issuer, params.discoveryURL]
            : [params.authorizationURL, params.tokenURL, params.userinfoURL, params.jwksURI]
        for case let url? in urls where !url.isEmpty { try validateURL(url) }
        let identifier = params.identifier ?? ""
        if try api.read({ conn in try conn.customOAuthProvider(identifier: identifier) }) != nil {
            throw AuthError(400, .conflict, "A custom OAuth provider with this identifier already exists")
        }

        // `buildProviderFromParams`.
        let now = api.project.environment.now().microseconds
        var record = CustomOAuthProviderRecord(id: api.project.environment.uuid(), providerType: type, identifier: identifier,
                                               name: params.name ?? "", clientID: params.clientID ?? "",
                                               clientSecret: params.clientSecret ?? "", at: now)
        record.acceptableClientIDs = Self.text(params.acceptableClientIDs)
        var scopes = params.scopes
        if type == "oidc" && !(scopes ?? []).contains("openid") { scopes = ["openid"] + (scopes ?? []) }
        record.scopes = Self.text(scopes)
        record.pkceEnabled = params.pkceEnabled ?? true
        record.attributeMapping = JSON.object(params.attributeMapping ?? JSONObject()).serialized(sortedKeys: true)
        record.customClaimsAllowlist = Self.text(params.customClaimsAllowlist)
        record.authorizationParams = JSON.object(params.authorizationParams ?? JSONObject()).serialized(sortedKeys: true)
        record.enabled = params.enabled ?? true
        record.emailOptional = params.emailOptional ?? false
        if type == "oidc" {
            record.issuer = params.issuer
            record.discoveryURL = params.discoveryURL
            record.skipNonceCheck = params.skipNonceCheck ?? false
            record.cachedDiscovery = try discover(record)
        } else {
            record.authorizationURL = params.authorizationURL
            record.tokenURL = params.tokenURL
            record.userinfoURL = params.userinfoURL
            record.jwksURI = params.jwksURI
        }
        // The answer is the model as built, where an absent list is still nil (`null`); the row
        // holds an empty list, as Postgres's `text[] not null default '{}'` does.
        var stored = record
        for path in [\CustomOAuthProviderRecord.acceptableClientIDs, \.scopes, \.customClaimsAllowlist] where stored[keyPath: path] == "null" {
            stored[keyPath: path] = "[]"
        }
        let row = stored
        try api.write { conn in try conn.insertCustomOAuthProvider(row) }
        return .json(status: 201, Self.json(record))
    }

    func update(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let identifier = try pathIdentifier(context)
        let params = try Params(context.request)
        if let map = params.authorizationParams { try Self.validateAuthorizationParams(map) }
        if let map = params.attributeMapping { try Self.validateAttributeMapping(map) }
        if let list = params.customClaimsAllowlist { try Self.validateCustomClaimsAllowlist(list) }
        // Read outside the write, so the discovery read below holds no transaction open.
        guard var record = try api.read({ conn in try conn.customOAuthProvider(identifier: identifier) }) else {
            throw Self.notFound
        }

        // `updateProviderFromParams`: empty strings and absent fields leave a value as it is.
        if let name = params.name, !name.isEmpty { record.name = name }
        if let id = params.clientID, !id.isEmpty { record.clientID = id }
        if let ids = params.acceptableClientIDs { record.acceptableClientIDs = Self.text(ids) }
        if var scopes = params.scopes {
            if record.providerType == "oidc" && !scopes.contains("openid") { scopes.insert("openid", at: 0) }
            record.scopes = Self.text(scopes)
        }
        if let pkce = params.pkceEnabled { record.pkceEnabled = pkce }
        if let map = params.attributeMapping { record.attributeMapping = JSON.object(map).serialized(sortedKeys: true) }
        if let list = params.customClaimsAllowlist { record.customClaimsAllowlist = Self.text(list) }
        if let map = params.authorizationParams { record.authorizationParams = JSON.object(map).serialized(sortedKeys: true) }
        if let enabled = params.enabled { record.enabled = enabled }
        if let optional = params.emailOptional { record.emailOptional = optional }
        // A URL sent non-empty is checked, then replaces the stored one.
        func setURL(_ url: String?, _ field: WritableKeyPath<CustomOAuthProviderRecord, String?>) throws(AuthError) {
            guard let url, !url.isEmpty else { return }
            try validateURL(url)
            record[keyPath: field] = url
        }
        if record.providerType == "oidc" {
            try setURL(params.issuer, \.issuer)
            try setURL(params.discoveryURL, \.discoveryURL)
            if let skip = params.skipNonceCheck { record.skipNonceCheck = skip }
        } else {
            try setURL(params.authorizationURL, \.authorizationURL)
            try setURL(params.tokenURL, \.tokenURL)
            try setURL(params.userinfoURL, \.userinfoURL)
            try setURL(params.jwksURI, \.jwksURI)
        }
        // Discovery is read again only when the issuer or the discovery URL was sent.
        if record.providerType == "oidc" && (!(params.issuer ?? "").isEmpty || params.discoveryURL != nil) {
            record.cachedDiscovery = try discover(record)
        }
        if let secret = params.clientSecret, !secret.isEmpty { record.clientSecret = secret }
        record.updatedAt = api.project.environment.now().microseconds
        let row = record
        try api.write { conn in try conn.updateCustomOAuthProvider(row) }
        return .json(Self.json(record))
    }

    func delete(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let identifier = try pathIdentifier(context)
        let found: Bool = try api.write { conn in
            guard let provider = try conn.customOAuthProvider(identifier: identifier) else { return false }
            try conn.deleteCustomOAuthProvider(id: provider.id)
            return true
        }
        if !found { throw Self.notFound }
        return HTTPResponse(status: 204)
    }

    // MARK: Parameters

    /// `AdminCustomOAuthProviderParams`, decoded as `json.Unmarshal` would.
    struct Params {
        var providerType, identifier, name, clientID, clientSecret: String?
        var acceptableClientIDs, scopes, customClaimsAllowlist: [String]?
        var pkceEnabled, enabled, emailOptional, skipNonceCheck: Bool?
        var attributeMapping, authorizationParams: JSONObject?
        var issuer, discoveryURL, authorizationURL, tokenURL, userinfoURL, jwksURI: String?

        init(_ request: HTTPRequest) throws(AuthError) {
            let body = try RequestBody(request, as: "AdminCustomOAuthProviderParams")
            func strings(_ key: String) throws(AuthError) -> [String]? {
                guard let value = body.value(key) else { return nil }
                func mismatch(_ v: JSON, _ goType: String) -> AuthError {
                    AuthError(400, .badJson, body.prefix + "json: cannot unmarshal \(v.goKind) into Go struct field "
                              + "AdminCustomOAuthProviderParams.\(key) of type \(goType)")
                }
                switch value {
                case .null: return nil
                case .array(let items):
                    var out: [String] = []
                    for item in items {
                        guard let text = item.stringValue else { throw mismatch(item, "string") }
                        out.append(text)
                    }
                    return out
                default: throw mismatch(value, "[]string")
                }
            }
            providerType = try body.string("provider_type")
            identifier = try body.string("identifier")
            name = try body.string("name")
            clientID = try body.string("client_id")
            clientSecret = try body.string("client_secret")
            acceptableClientIDs = try strings("acceptable_client_ids")
            scopes = try strings("scopes")
            pkceEnabled = try body.bool("pkce_enabled")
            attributeMapping = try body.map("attribute_mapping")
            customClaimsAllowlist = try strings("custom_claims_allowlist")
            authorizationParams = try body.map("authorization_params")
            enabled = try body.bool("enabled")
            emailOptional = try body.bool("email_optional")
            issuer = try body.string("issuer")
            discoveryURL = try body.string("discovery_url")
            skipNonceCheck = try body.bool("skip_nonce_check")
            authorizationURL = try body.string("authorization_url")
            tokenURL = try body.string("token_url")
            userinfoURL = try body.string("userinfo_url")
            jwksURI = try body.string("jwks_uri")
        }
    }
}
