import AuthHTTP

/// Route groups of the real server whose feature is off by default and not built here: SAML
/// SSO (sso.go, saml.go) and SCIM (scim/); the OAuth 2.1 server (`OAuthServer/`) and passkeys
/// (`Passkeys.swift`) use the gate's errors while off. They answer exactly as the real server does while the feature is disabled, with
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

/// `/scim/v2/*` (`GOTRUE_EXPERIMENTAL_SCIM_ENABLED`, off by default).
struct SCIMEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        ["ServiceProviderConfig", "ResourceTypes", "Schemas"].map { name in
            Endpoint("GET", "/scim/v2/" + name, operation: "scim." + name) { _, _ in throw FeatureGate.scimDisabled }
        }
    }
}
