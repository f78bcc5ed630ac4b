import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

extension CustomOAuthProviderEndpoints {
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
