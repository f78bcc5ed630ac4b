import AuthHTTP
import AuthJSON
import AuthJWT

/// `GET /.well-known/jwks.json` and `GET /.well-known/openid-configuration` (jwks.go; reference
/// §5.3, §5.4). Clients that verify access tokens locally (supabase-js `getClaims()`,
/// supabase-py `get_claims()`) fetch the first; OIDC libraries discover it through the second.
struct WellKnownEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/.well-known/jwks.json", operation: "jwks") { g, _ in g.jwks() },
            Endpoint("GET", "/.well-known/openid-configuration", operation: "openid_configuration") { g, _ in g.openIDConfiguration() },
        ]
    }

    /// `WellKnownJwks`: every configured key's public JWK; symmetric keys are never listed, so an
    /// HS256-only project answers `{"keys":[]}`.
    func jwks() -> HTTPResponse {
        var headers = HTTPHeaders()
        headers["Cache-Control"] = "public, max-age=600"
        return .json(["keys": .array(api.snapshot.configuration.jwt.publicJWKs.map(JSON.object))], headers: headers)
    }

    /// The fixed list `WellKnownOpenID` advertises, whatever the signing key: an EdDSA key is
    /// used but not listed, as on the real server.
    static let signingAlgorithms = ["RS256", "HS256", "ES256"]

    /// `WellKnownOpenID`, members in the response struct's order.
    func openIDConfiguration() -> HTTPResponse {
        let issuer = api.snapshot.configuration.jwt.issuer
        var base = Substring(issuer)
        while base.hasSuffix("/") { base = base.dropLast() }
        func strings(_ values: [String]) -> JSON { .array(values.map(JSON.string)) }
        var body = JSONObject()
        body["issuer"] = .string(issuer)
        body["authorization_endpoint"] = .string(base + "/oauth/authorize")
        body["token_endpoint"] = .string(base + "/oauth/token")
        body["jwks_uri"] = .string(base + "/.well-known/jwks.json")
        body["userinfo_endpoint"] = .string(base + "/oauth/userinfo")
        if api.snapshot.configuration.oauthServer.enabled && api.snapshot.configuration.oauthServer.allowDynamicRegistration {
            body["registration_endpoint"] = .string(base + "/oauth/clients/register")
        }
        body["scopes_supported"] = strings(["openid", "profile", "email", "phone", "offline_access"])
        body["response_types_supported"] = strings(["code"])
        body["response_modes_supported"] = strings(["query"])
        body["grant_types_supported"] = strings(["authorization_code", "refresh_token"])
        body["subject_types_supported"] = strings(["public"])
        body["id_token_signing_alg_values_supported"] = strings(Self.signingAlgorithms)
        body["token_endpoint_auth_methods_supported"] = strings(["client_secret_basic", "client_secret_post", "none"])
        body["claims_supported"] = strings([
            "sub", "aud", "iss", "exp", "iat", "auth_time", "nonce", "email", "email_verified", "phone_number",
            "phone_number_verified", "name", "picture", "preferred_username", "updated_at",
        ])
        body["code_challenge_methods_supported"] = strings(["S256", "plain"])
        var headers = HTTPHeaders()
        headers["Cache-Control"] = "public, max-age=600"
        return .json(.object(body), headers: headers)
    }
}
