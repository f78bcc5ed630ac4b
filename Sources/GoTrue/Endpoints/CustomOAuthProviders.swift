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
    private func pathIdentifier(_ context: RequestContext) throws(AuthError) -> String {
        let target = context.request.target.prefix { $0 != "?" }
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
                guard let value = body.object[key] else { return nil }
                func mismatch(_ v: JSON, _ goType: String) -> AuthError {
                    AuthError(400, .badJson, body.prefix + "json: cannot unmarshal \(RequestBody.kind(v)) into Go struct field "
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

    // MARK: Validation (custom_oauth_admin.go)

    /// `validateProviderParams`.
    static func validateRequired(_ p: Params, type: String) throws(AuthError) {
        let identifier = p.identifier ?? ""
        if identifier.isEmpty { throw invalid("identifier is required") }
        if !identifier.hasPrefix("custom:") {
            throw invalid("identifier must start with 'custom:' prefix, e.g. 'custom:\(identifier)'")
        }
        if (p.name ?? "").isEmpty { throw invalid("name is required") }
        if (p.clientID ?? "").isEmpty { throw invalid("client_id is required") }
        if (p.clientSecret ?? "").isEmpty { throw invalid("client_secret is required") }
        if type == "oidc" {
            if (p.issuer ?? "").isEmpty { throw invalid("issuer is required for OIDC providers") }
        } else {
            if (p.authorizationURL ?? "").isEmpty { throw invalid("authorization_url is required for OAuth2 providers") }
            if (p.tokenURL ?? "").isEmpty { throw invalid("token_url is required for OAuth2 providers") }
            if (p.userinfoURL ?? "").isEmpty { throw invalid("userinfo_url is required for OAuth2 providers") }
        }
    }

    /// `reservedOAuthParams`: what the server itself sends to the provider. Unlike a request's
    /// passthrough parameters, a stored `nonce` is refused too (it would pin one value forever).
    static let reservedAuthorizationParams: Set<String> = [
        "client_id", "client_secret", "redirect_uri", "response_type", "state", "code_challenge",
        "code_challenge_method", "code_verifier", "nonce",
    ]

    /// `validateAuthorizationParams`. Go walks the map in random order; the emulator walks the
    /// body's order, so the first offending key is the one reported.
    static func validateAuthorizationParams(_ params: JSONObject?) throws(AuthError) {
        guard let params else { return }
        for key in params.keys {
            if reservedAuthorizationParams.contains(key) { throw invalid("Cannot override reserved OAuth parameter: \(key)") }
            if params[key]?.stringValue == nil { throw invalid("Authorization parameter \(GoStrconv.quote(key)) must be a string") }
        }
    }

    /// `validateAttributeMapping`'s blocked targets: fields no provider may set.
    static let blockedMappingTargets: Set<String> = [
        "id", "aud", "role", "app_metadata", "created_at", "updated_at", "confirmed_at", "email_confirmed_at",
        "phone_confirmed_at", "email_verified", "phone_verified", "banned_until", "is_super_admin",
    ]

    static func validateAttributeMapping(_ mapping: JSONObject?) throws(AuthError) {
        guard let mapping else { return }
        for key in mapping.keys where blockedMappingTargets.contains(key) {
            throw invalid("Cannot map to protected system field: \(key)")
        }
    }

    /// `validateCustomClaimsAllowlist`: `strings.TrimSpace` (Unicode white space) must leave text.
    static func validateCustomClaimsAllowlist(_ list: [String]?) throws(AuthError) {
        for key in list ?? [] where GoStrings.trimSpace(key).isEmpty {
            throw invalid("custom_claims_allowlist entries must be non-empty strings")
        }
    }

    /// `utilities.ValidateOAuthURL`, offline: https, a host, not localhost, and no literal
    /// address that is loopback, private, link-local, multicast or unspecified. The real check
    /// also resolves names; the emulator cannot, and accepts a name as it is. URLs of its own
    /// fake issuers are allowed over http on loopback: they are served by this process.
    func validateURL(_ url: String) throws(AuthError) {
        let base = api.identityProviders.issuerBase
        if url.hasPrefix(base) && url.count > base.count { return }
        try CustomOAuthProviderEndpoints.validateExternalURL(url)
    }

    /// The checks of `ValidateOAuthURL` in its order, on the URL as Go's `url.Parse` reads it
    /// (`GoParsedURL`), so a text Go rejects is "Invalid URL format" as there
    /// (`https://127.0.0.1:9\@evil.example/`: `\` is no userinfo byte). Then, stricter than
    /// GoTrue, which reads the URL only with Go: a browser follows `authorization_url` and reads
    /// it by the WHATWG URL Standard (`BrowserURL`), so that reading must name the same host
    /// and port (`RedirectTarget`), and the address it names is judged too: `https://0x7f.1/`
    /// or `https://2130706433/` is a name to Go but 127.0.0.1 to a browser, and GoTrue, which
    /// resolves names, would find it loopback as well.
    static func validateExternalURL(_ url: String) throws(AuthError) {
        guard let go = GoParsedURL.parse(url) else { throw invalid("Invalid URL format") }
        guard go.scheme == "https" else { throw invalid("URL must use HTTPS") }
        let hostname = go.hostname
        if hostname.isEmpty { throw invalid("URL must have a valid hostname") }
        if RedirectPolicy.isLocalhost(hostname) { throw invalid("URL cannot point to localhost or loopback addresses") }
        // `net.LookupIP` answers an address literal (zone and all) with itself.
        let literal = hostname.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? hostname
        if let address = goAddress(literal), let problem = addressProblem(address) {
            throw invalid("URL cannot resolve to \(problem) addresses")
        }
        guard let browser = BrowserURL.parse(url), browser.scheme == "https" else { throw invalid("Invalid URL format") }
        switch browser.host {
        case .ipv4(let v):
            if let problem = addressProblem(ipv4Mapped(v)) { throw invalid("URL cannot resolve to \(problem) addresses") }
        case .ipv6(let pieces):
            if let problem = addressProblem(pieces) { throw invalid("URL cannot resolve to \(problem) addresses") }
        case .domain(let name):
            // `localhost.` is a name to `isLocalhost`; every resolver answers it with loopback.
            var trimmed = Substring(name)
            if trimmed.hasSuffix(".") { trimmed = trimmed.dropLast() }
            if RedirectPolicy.isLocalhost(String(trimmed)) { throw invalid("URL cannot resolve to loopback addresses") }
        case .none, .empty, .opaque:
            throw invalid("Invalid URL format")
        }
        guard RedirectTarget(url) != nil else { throw invalid("Invalid URL format") }
    }

    /// `net.ParseIP` / `netip.ParseAddr` of a host: IPv4 as IPv4-mapped IPv6 pieces, as Go
    /// stores it; nil for a name.
    static func goAddress(_ host: String) -> [UInt16]? {
        let bytes = Array(host.utf8)[...]
        if let v4 = IPAddress.parseGoIPv4(bytes) { return ipv4Mapped(v4) }
        guard bytes.contains(UInt8(ascii: ":")) else { return nil }
        return IPAddress.parseIPv6(bytes)
    }

    static func ipv4Mapped(_ v: UInt32) -> [UInt16] {
        [0, 0, 0, 0, 0, 0xFFFF, UInt16(v >> 16), UInt16(v & 0xFFFF)]
    }

    /// The class of an address `validateIP` refuses, in its order of checks, with Go's `net.IP`
    /// methods: an IPv4-mapped address (`::ffff:127.0.0.1`) is judged as the IPv4 address it
    /// holds (`To4`); `IsLinkLocalMulticast` (224.0.0.0/24, ff02::/16) counts as link-local
    /// before multicast; 169.254.169.254 is already link-local.
    static func addressProblem(_ pieces: [UInt16]) -> String? {
        guard pieces.count == 8 else { return nil }
        if pieces[0..<5].allSatisfy({ $0 == 0 }) && pieces[5] == 0xFFFF {
            let (a, b, c) = (UInt8(pieces[6] >> 8), UInt8(pieces[6] & 0xFF), UInt8(pieces[7] >> 8))
            if a == 127 { return "loopback" }
            if a == 10 || (a == 172 && (16...31).contains(b)) || (a == 192 && b == 168) { return "private network" }
            if (a == 169 && b == 254) || (a == 224 && b == 0 && c == 0) { return "link-local" }
            if a >= 224 && a <= 239 { return "multicast" }
            if pieces[6] == 0 && pieces[7] == 0 { return "unspecified" }
            return nil
        }
        let first = pieces[0]
        if pieces == [0, 0, 0, 0, 0, 0, 0, 1] { return "loopback" }
        if first & 0xFE00 == 0xFC00 { return "private network" }
        if first & 0xFFC0 == 0xFE80 || first == 0xFF02 { return "link-local" }
        if first & 0xFF00 == 0xFF00 { return "multicast" }
        if pieces.allSatisfy({ $0 == 0 }) { return "unspecified" }
        return nil
    }

    // MARK: Discovery

    /// `fetchAndValidateDiscovery`: the discovery document (from `discovery_url`, else
    /// `<issuer>/.well-known/openid-configuration`), whose `issuer` must be the provider's and
    /// which must name the endpoints GoTrue needs. Returns it as the stored JSON text.
    func discover(_ record: CustomOAuthProviderRecord) throws(AuthError) -> String {
        let issuer = record.issuer ?? ""
        var url = record.discoveryURL ?? ""
        if url.isEmpty {
            var trimmed = Substring(issuer)
            while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            url = trimmed + "/.well-known/openid-configuration"
        }
        func failed(_ reason: String) -> AuthError {
            Self.invalid("OIDC discovery from \(GoStrconv.quote(url)) failed: \(reason)")
        }
        let document: JSONObject
        switch fetchDiscovery(url) {
        case .failure(let reason): throw failed(reason.message)
        case .success(let found): document = found
        }
        let found = document["issuer"]?.stringValue ?? ""
        if found != issuer { throw failed("oidc: issuer mismatch, expected \(GoStrconv.quote(issuer)) got \(GoStrconv.quote(found))") }
        let missing = ["issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"].filter {
            (document[$0]?.stringValue ?? "").isEmpty
        }
        if !missing.isEmpty {
            throw Self.invalid("OIDC discovery document is missing required fields: \(missing.joined(separator: ", "))")
        }
        // `models.OIDCDiscovery`: the fields kept, in its order, omitempty where it omits.
        var kept = JSONObject()
        for key in ["issuer", "authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri",
                    "scopes_supported", "response_types_supported", "grant_types_supported", "subject_types_supported"] {
            let value = document[key] ?? .null
            let empty = value.isNull || value.stringValue == "" || value.arrayValue?.isEmpty == true
            if ["issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"].contains(key) || !empty {
                kept[key] = value.isNull ? "" : value
            }
        }
        return JSON.object(kept).serialized()
    }

    struct DiscoveryProblem: Error { var message: String }

    /// The emulator opens no connections for this: a fake issuer's document is built here, as
    /// its discovery route would answer; anything else fails as an unreachable URL.
    func fetchDiscovery(_ url: String) -> Result<JSONObject, DiscoveryProblem> {
        let idp = api.identityProviders
        let suffix = "/.well-known/openid-configuration"
        if url.hasPrefix(idp.issuerBase) {
            let rest = url.dropFirst(idp.issuerBase.count)
            if rest.hasSuffix(suffix), case let name = String(rest.dropLast(suffix.count)), idp.serves(name),
               let document = idp.discoveryDocument(provider: name) {
                return .success(document)
            }
            return .failure(DiscoveryProblem(message: "oidc: discovery request to \(url) returned 404 Not Found"))
        }
        return .failure(DiscoveryProblem(message: "oidc: discovery request to \(url) failed: the emulator makes no outbound "
            + "requests; use an issuer of its fake identity provider, \(idp.issuer(for: "custom:<name>"))"))
    }

    // MARK: JSON

    /// A list column as stored: JSON text, `null` for a nil list.
    static func text(_ list: [String]?) -> String {
        guard let list else { return "null" }
        return JSON.array(list.map(JSON.string)).serialized()
    }

    static func parsed(_ text: String?) -> JSON {
        guard let text, let value = try? JSON(parsing: text) else { return .null }
        return value
    }

    /// `models.CustomOAuthProvider` as Go serialises it: fields in struct order, the secret
    /// never (`json:"-"`), the type-specific ones only when set.
    static func json(_ p: CustomOAuthProviderRecord) -> JSON {
        var o = JSONObject()
        o["id"] = .string(p.id)
        o["provider_type"] = .string(p.providerType)
        o["identifier"] = .string(p.identifier)
        o["name"] = .string(p.name)
        o["client_id"] = .string(p.clientID)
        o["acceptable_client_ids"] = parsed(p.acceptableClientIDs)
        o["scopes"] = parsed(p.scopes)
        o["pkce_enabled"] = .bool(p.pkceEnabled)
        o["attribute_mapping"] = parsed(p.attributeMapping)
        o["custom_claims_allowlist"] = parsed(p.customClaimsAllowlist)
        o["authorization_params"] = parsed(p.authorizationParams)
        o["enabled"] = .bool(p.enabled)
        o["email_optional"] = .bool(p.emailOptional)
        if let issuer = p.issuer { o["issuer"] = .string(issuer) }
        if let url = p.discoveryURL { o["discovery_url"] = .string(url) }
        o["skip_nonce_check"] = .bool(p.skipNonceCheck)
        if let discovery = p.cachedDiscovery { o["discovery_document"] = parsed(discovery) }
        if let url = p.authorizationURL { o["authorization_url"] = .string(url) }
        if let url = p.tokenURL { o["token_url"] = .string(url) }
        if let url = p.userinfoURL { o["userinfo_url"] = .string(url) }
        if let url = p.jwksURI { o["jwks_uri"] = .string(url) }
        o["created_at"] = .string(Timestamp(microseconds: p.createdAt).rfc3339)
        o["updated_at"] = .string(Timestamp(microseconds: p.updatedAt).rfc3339)
        return .object(o)
    }
}

/// A custom provider as the redirect flow uses it (`provider.CustomOIDCProvider` and
/// `provider.CustomOAuthProvider`).
struct CustomFlowProvider {
    let record: CustomOAuthProviderRecord
    /// Where `/authorize` sends the browser: the discovery document's `authorization_endpoint`
    /// (OIDC) or the row's `authorization_url` (OAuth2).
    let authorizationEndpoint: String
    /// The fake issuer serving that endpoint, whose codes `/callback` can redeem in-process.
    let fakeProvider: String?
    let authorizationParams: [QueryItem]

    init(record: CustomOAuthProviderRecord, idp: any IdentityProviderSeam) {
        self.record = record
        var endpoint = record.authorizationURL ?? ""
        if record.providerType == "oidc" {
            let discovery = CustomOAuthProviderEndpoints.parsed(record.cachedDiscovery)
            endpoint = discovery["authorization_endpoint"]?.stringValue ?? ((record.issuer ?? "") + "/authorize")
        }
        authorizationEndpoint = endpoint
        let base = idp.issuerBase
        if endpoint.hasPrefix(base) && endpoint.hasSuffix("/authorize") {
            let name = String(endpoint.dropFirst(base.count).dropLast("/authorize".count))
            fakeProvider = idp.serves(name) ? name : nil
        } else {
            fakeProvider = nil
        }
        let params = CustomOAuthProviderEndpoints.parsed(record.authorizationParams).objectValue ?? JSONObject()
        authorizationParams = params.keys.compactMap { key in params[key]?.stringValue.map { QueryItem(name: key, value: $0) } }
    }

    var clientIDs: [String] {
        [record.clientID] + (CustomOAuthProviderEndpoints.parsed(record.acceptableClientIDs).arrayValue?.compactMap(\.stringValue) ?? [])
    }

    /// The request's scopes replace the stored ones; OIDC always asks for `openid` first.
    func scopes(requested: String) -> String {
        var list = requested.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
        if list.isEmpty { list = CustomOAuthProviderEndpoints.parsed(record.scopes).arrayValue?.compactMap(\.stringValue) ?? [] }
        if record.providerType == "oidc" && !list.contains("openid") { list.insert("openid", at: 0) }
        return list.joined(separator: " ")
    }

    struct AudienceMismatch: Error {}

    /// `GetUserData` after the generic claims parse: the audience check (OIDC), the allowlisted
    /// raw claims copied into `custom_claims`, then `attribute_mapping` applied to the claims.
    /// An OIDC provider's emails come from the id_token before mapping; an OAuth2 provider's
    /// from the mapped userinfo claims.
    func userData(_ parsed: ProviderUserData, claims: JSONObject) throws -> ProviderUserData {
        var data = parsed
        if record.providerType == "oidc" {
            let audience = (try? ClaimReader(claims).audience()) ?? []
            guard audience.contains(where: clientIDs.contains) else { throw AudienceMismatch() }
        }
        let allowlist = CustomOAuthProviderEndpoints.parsed(record.customClaimsAllowlist).arrayValue?.compactMap(\.stringValue) ?? []
        for key in allowlist {
            guard let value = claims[key] else { continue }
            var captured = data.metadata.customClaims ?? JSONObject()
            captured[key] = value
            data.metadata.customClaims = captured
        }
        let mapping = CustomOAuthProviderEndpoints.parsed(record.attributeMapping).objectValue ?? JSONObject()
        if !mapping.keys.isEmpty {
            // `applyAttributeMapping`: through the claims' JSON form; a string names a source
            // claim, anything else is a literal; a result that no longer decodes is dropped.
            var map = data.metadata.identityData
            for target in mapping.keys {
                guard let source = mapping[target] else { continue }
                if let name = source.stringValue {
                    if let value = map[name] { map[target] = value }
                } else {
                    map[target] = source
                }
            }
            if let mapped = try? ExternalProviders.userData(provider: record.identifier, claims: map) {
                data.metadata = mapped.metadata
                if record.providerType == "oauth2" { data.emails = mapped.emails }
            }
        }
        return data
    }
}
