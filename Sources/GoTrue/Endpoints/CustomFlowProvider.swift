import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

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
