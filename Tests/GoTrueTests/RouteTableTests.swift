import AuthHTTP
import AuthJSON
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// Every route of the real server's table (reference §2) reaches a handler: none answers with
/// the router's plain-text 404, and features that are off answer with the real "disabled" error.
@Suite struct RouteTableTests {
    /// Reference §2, with sample path parameters.
    static let realRoutes: [(String, String)] = [
        ("GET", "/health"), ("GET", "/.well-known/jwks.json"), ("GET", "/.well-known/openid-configuration"),
        ("GET", "/.well-known/oauth-authorization-server"), ("GET", "/callback"), ("POST", "/callback"),
        ("GET", "/settings"), ("GET", "/authorize"), ("POST", "/invite"), ("POST", "/signup"), ("POST", "/recover"),
        ("POST", "/resend"), ("POST", "/magiclink"), ("POST", "/otp"), ("POST", "/token"), ("GET", "/verify"),
        ("POST", "/verify"), ("POST", "/logout"), ("GET", "/reauthenticate"), ("GET", "/user"), ("PUT", "/user"),
        ("GET", "/user/identities/authorize"), ("DELETE", "/user/identities/00000000-0000-0000-0000-000000000001"),
        ("GET", "/user/oauth/grants"), ("DELETE", "/user/oauth/grants"),
        ("POST", "/factors"), ("POST", "/factors/f1/verify"), ("POST", "/factors/f1/challenge"), ("DELETE", "/factors/f1"),
        ("POST", "/passkeys/authentication/options"), ("POST", "/passkeys/authentication/verify"),
        ("POST", "/passkeys/registration/options"), ("POST", "/passkeys/registration/verify"), ("GET", "/passkeys"),
        ("PATCH", "/passkeys/p1"), ("DELETE", "/passkeys/p1"),
        ("POST", "/sso"), ("GET", "/sso/saml/metadata"), ("POST", "/sso/saml/acs"),
        ("GET", "/admin/audit"), ("GET", "/admin/users"), ("POST", "/admin/users"), ("GET", "/admin/users/u1"),
        ("PUT", "/admin/users/u1"), ("DELETE", "/admin/users/u1"), ("GET", "/admin/users/u1/factors"),
        ("PUT", "/admin/users/u1/factors/f1"), ("DELETE", "/admin/users/u1/factors/f1"), ("POST", "/admin/generate_link"),
        ("GET", "/admin/users/u1/passkeys"), ("DELETE", "/admin/users/u1/passkeys/p1"),
        ("POST", "/admin/oauth/clients"), ("GET", "/admin/oauth/clients"), ("GET", "/admin/oauth/clients/c1"),
        ("PUT", "/admin/oauth/clients/c1"), ("DELETE", "/admin/oauth/clients/c1"),
        ("POST", "/admin/oauth/clients/c1/regenerate_secret"),
        ("GET", "/admin/sso/providers"), ("POST", "/admin/sso/providers"), ("GET", "/admin/sso/providers/p1"),
        ("PUT", "/admin/sso/providers/p1"), ("DELETE", "/admin/sso/providers/p1"),
        ("GET", "/admin/custom-providers"), ("POST", "/admin/custom-providers"), ("GET", "/admin/custom-providers/custom:a"),
        ("PUT", "/admin/custom-providers/custom:a"), ("DELETE", "/admin/custom-providers/custom:a"),
        ("POST", "/oauth/clients/register"), ("POST", "/oauth/token"), ("GET", "/oauth/userinfo"), ("GET", "/oauth/authorize"),
        ("GET", "/oauth/authorizations/a1"), ("POST", "/oauth/authorizations/a1/consent"),
        ("GET", "/scim/v2/ServiceProviderConfig"), ("GET", "/scim/v2/ResourceTypes"), ("GET", "/scim/v2/Schemas"),
    ]

    @Test func noRealRouteGivesTheRouters404() throws {
        let api = try makeAPI()
        for (method, path) in Self.realRoutes {
            for target in [path, "/auth/v1" + path] {
                let response = api.call(method, target)
                #expect(response.text != "404 page not found\n", "\(method) \(target)")
                #expect(response.status != 405, "\(method) \(target)")
            }
        }
        // An unknown path is Go's: plain text, exactly.
        let unknown = api.call("GET", "/nope")
        #expect(unknown.status == 404)
        #expect(unknown.text == "404 page not found\n")
        #expect(unknown.headers["Content-Type"] == "text/plain; charset=utf-8")
    }

    @Test func disabledFeaturesAnswerWithTheRealErrors() throws {
        let api = try makeAPI()
        let admin = api.project.configuration.apiKeys.serviceRole
        let user = try #require(api.signUp("gates@example.com")["access_token"]?.stringValue)
        func expect(_ response: HTTPResponse, _ status: Int, _ code: String, _ message: String,
                    sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(response.status == status, sourceLocation: sourceLocation)
            #expect(errorCode(response) == code, sourceLocation: sourceLocation)
            #expect(response.json["msg"]?.stringValue == message, sourceLocation: sourceLocation)
        }
        expect(api.call("POST", "/sso", ["domain": "example.com"]), 404, "saml_provider_disabled", "SAML 2.0 is disabled")
        expect(api.call("GET", "/passkeys", bearer: user), 404, "passkey_disabled", "Passkeys are disabled")
        // The gate comes before authentication on /passkeys, after it on /user/oauth/grants.
        expect(api.call("POST", "/passkeys/registration/options"), 404, "passkey_disabled", "Passkeys are disabled")
        expect(api.call("GET", "/user/oauth/grants"), 401, "no_authorization", "This endpoint requires a valid Bearer token")
        expect(api.call("GET", "/user/oauth/grants", bearer: user), 404, "feature_disabled", "OAuth server is disabled")
        expect(api.call("GET", "/admin/oauth/clients", bearer: user), 403, "not_admin", "User not allowed")
        expect(api.call("GET", "/admin/oauth/clients", bearer: admin), 404, "feature_disabled", "OAuth server is disabled")
        expect(api.call("POST", "/oauth/token", ["grant_type": "authorization_code"]), 404, "feature_disabled", "OAuth server is disabled")
        expect(api.call("GET", "/.well-known/oauth-authorization-server"), 404, "feature_disabled", "OAuth server is disabled")
        expect(api.call("GET", "/scim/v2/Schemas"), 404, "feature_disabled", "SCIM server is disabled")
        // The admin SSO routes have no SAML gate on the real server: with none stored, the list
        // is empty, a provider is not found, and a create is validated as ssoadmin.go does.
        expect(api.call("GET", "/admin/sso/providers", bearer: user), 403, "not_admin", "User not allowed")
        let providers = api.call("GET", "/admin/sso/providers", bearer: admin)
        #expect(providers.status == 200 && providers.text == #"{"items":[]}"#)
        for method in ["GET", "PUT", "DELETE"] {
            for id in ["p1", "resource_abc", "00000000-0000-0000-0000-000000000001"] {
                expect(api.call(method, "/admin/sso/providers/\(id)", ["type": 5], bearer: admin), 404, "sso_provider_not_found",
                       "SSO Identity Provider not found")
            }
        }
        for (body, message) in [
            (["type": "oidc"] as JSON, "Only 'saml' supported for SSO provider type"),
            (["type": "saml"], "Either metadata_xml or metadata_url must be set"),
            (["type": "saml", "metadata_url": "https://a.example/m", "metadata_xml": "<x/>"], "Only one of metadata_xml or metadata_url needs to be set"),
            (["type": "saml", "metadata_url": "not a url"], "metadata_url is not a valid URL"),
            (["type": "saml", "metadata_url": "http://a.example/m"], "metadata_url is not a HTTPS URL"),
            (["type": "saml", "metadata_xml": "<x/>", "name_id_format": "plain"],
             "name_id_format must be unspecified or one of urn:oasis:names:tc:SAML:2.0:nameid-format:persistent, urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress, urn:oasis:names:tc:SAML:2.0:nameid-format:transient, urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"),
        ] {
            expect(api.call("POST", "/admin/sso/providers", body, bearer: admin), 400, "validation_failed", message)
        }
        expect(api.call("POST", "/admin/sso/providers", ["type": 1], bearer: admin), 400, "bad_json",
               "Could not parse request body as JSON: json: cannot unmarshal number into Go struct field CreateSSOProviderParams.type of type string")
        expect(api.call("POST", "/token?grant_type=web3", ["chain": "solana"]), 422, "web3_provider_disabled", "Web3 provider is disabled")

        // A user's passkeys: none is ever stored, so the list is empty and a delete finds nothing.
        let userID = claims(of: user)["sub"]?.stringValue ?? ""
        let passkeys = api.call("GET", "/admin/users/\(userID)/passkeys", bearer: admin)
        #expect(passkeys.status == 200)
        #expect(passkeys.text == "[]")
        expect(api.call("DELETE", "/admin/users/\(userID)/passkeys/00000000-0000-0000-0000-000000000001", bearer: admin),
               404, "validation_failed", "Passkey not found")
        expect(api.call("GET", "/admin/users/00000000-0000-0000-0000-000000000009/passkeys", bearer: admin),
               404, "user_not_found", "User not found")
    }
}
