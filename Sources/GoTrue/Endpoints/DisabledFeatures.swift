import AuthHTTP

/// Route groups of the real server whose feature is off by default and not built here: SAML
/// SSO (sso.go, saml.go), the OAuth 2.1 server (oauthserver/) and SCIM (scim/); passkeys
/// (`Passkeys.swift`) use the gate's error while off. They answer exactly as the real server does while the feature is disabled, with
/// its middleware in its order (authentication before the feature gate where the real routes
/// nest them so), never with the router's plain-text 404, so a client sees the real error.
/// The emulator reads no setting that enables them.
enum FeatureGate {
    static let samlDisabled = AuthError(404, .samlProviderDisabled, "SAML 2.0 is disabled")
    static let oauthServerDisabled = AuthError(404, .featureDisabled, "OAuth server is disabled")
    static let passkeysDisabled = AuthError(404, .passkeyDisabled, "Passkeys are disabled")
    static let scimDisabled = AuthError(404, .featureDisabled, "SCIM server is disabled")
}

/// `/sso`, `/sso/saml/metadata`, `/sso/saml/acs`: `requireSAMLEnabled` comes first.
struct SSOEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("POST", "/sso", operation: "sso") { _, _ in throw FeatureGate.samlDisabled },
            Endpoint("GET", "/sso/saml/metadata", operation: "sso.saml.metadata") { _, _ in throw FeatureGate.samlDisabled },
            Endpoint("POST", "/sso/saml/acs", operation: "sso.saml.acs") { _, _ in throw FeatureGate.samlDisabled },
        ]
    }
}

/// The OAuth 2.1 server's routes: `/oauth/*` and the discovery document are gated first; the
/// user's grants after `requireAuthentication`, the admin client routes after
/// `requireAdminCredentials`.
struct OAuthServerEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        func open(_ method: String, _ path: String, _ operation: String) -> Endpoint<Self> {
            Endpoint(method, path, operation: operation) { _, _ in throw FeatureGate.oauthServerDisabled }
        }
        func user(_ method: String, _ path: String, _ operation: String) -> Endpoint<Self> {
            Endpoint(method, path, operation: operation) { g, context in
                _ = try g.api.authenticate(context)
                throw FeatureGate.oauthServerDisabled
            }
        }
        func admin(_ method: String, _ path: String, _ operation: String) -> Endpoint<Self> {
            Endpoint(method, path, operation: operation) { g, context in
                _ = try g.api.requireAdmin(context)
                throw FeatureGate.oauthServerDisabled
            }
        }
        return [
            open("GET", "/.well-known/oauth-authorization-server", "oauth_authorization_server"),
            user("GET", "/user/oauth/grants", "user.oauth.grants.list"),
            user("DELETE", "/user/oauth/grants", "user.oauth.grants.revoke"),
            admin("POST", "/admin/oauth/clients", "admin.oauth.clients.create"),
            admin("GET", "/admin/oauth/clients", "admin.oauth.clients.list"),
            admin("GET", "/admin/oauth/clients/{client_id}", "admin.oauth.clients.get"),
            admin("PUT", "/admin/oauth/clients/{client_id}", "admin.oauth.clients.update"),
            admin("DELETE", "/admin/oauth/clients/{client_id}", "admin.oauth.clients.delete"),
            admin("POST", "/admin/oauth/clients/{client_id}/regenerate_secret", "admin.oauth.clients.regenerate_secret"),
            open("POST", "/oauth/clients/register", "oauth.clients.register"),
            open("POST", "/oauth/token", "oauth.token"),
            open("GET", "/oauth/userinfo", "oauth.userinfo"),
            open("GET", "/oauth/authorize", "oauth.authorize"),
            open("GET", "/oauth/authorizations/{authorization_id}", "oauth.authorizations.get"),
            open("POST", "/oauth/authorizations/{authorization_id}/consent", "oauth.authorizations.consent"),
        ]
    }
}

/// `/scim/v2/*` (`GOTRUE_EXPERIMENTAL_SCIM_ENABLED`, off by default).
struct SCIMEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        ["ServiceProviderConfig", "ResourceTypes", "Schemas"].map { name in
            Endpoint("GET", "/scim/v2/" + name, operation: "scim." + name) { _, _ in throw FeatureGate.scimDisabled }
        }
    }
}

/// `/admin/custom-providers` (`GOTRUE_CUSTOM_OAUTH_ENABLED`, off by default): the admin check,
/// then `requireCustomOAuthEnabled`.
struct CustomProviderEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        func gated(_ method: String, _ path: String, _ operation: String) -> Endpoint<Self> {
            Endpoint(method, path, operation: operation) { g, context in
                _ = try g.api.requireAdmin(context)
                throw AuthError(404, .featureDisabled, "Custom OAuth providers are disabled")
            }
        }
        return [
            gated("GET", "/admin/custom-providers", "admin.custom_providers.list"),
            gated("POST", "/admin/custom-providers", "admin.custom_providers.create"),
            gated("GET", "/admin/custom-providers/{identifier}", "admin.custom_providers.get"),
            gated("PUT", "/admin/custom-providers/{identifier}", "admin.custom_providers.update"),
            gated("DELETE", "/admin/custom-providers/{identifier}", "admin.custom_providers.delete"),
        ]
    }
}
