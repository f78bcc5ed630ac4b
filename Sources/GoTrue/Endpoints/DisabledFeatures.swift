import AuthHTTP

/// Route groups of the real server whose feature is off by default and not built here: SAML
/// SSO (sso.go, saml.go), passkeys (passkey*.go) and SCIM (scim/); and the OAuth 2.1 server's
/// "disabled" answer, which its own routes give while it is off. They answer exactly as the real server does while the feature is disabled, with
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

/// `/passkeys/*`: `requirePasskeyEnabled` is the group's first middleware.
struct PasskeyEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        func gated(_ method: String, _ path: String, _ operation: String) -> Endpoint<Self> {
            Endpoint(method, path, operation: operation) { _, _ in throw FeatureGate.passkeysDisabled }
        }
        return [
            gated("POST", "/passkeys/authentication/options", "passkeys.authentication.options"),
            gated("POST", "/passkeys/authentication/verify", "passkeys.authentication.verify"),
            gated("POST", "/passkeys/registration/options", "passkeys.registration.options"),
            gated("POST", "/passkeys/registration/verify", "passkeys.registration.verify"),
            gated("GET", "/passkeys", "passkeys.list"),
            gated("PATCH", "/passkeys/{passkey_id}", "passkeys.update"),
            gated("DELETE", "/passkeys/{passkey_id}", "passkeys.delete"),
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

/// `/admin/users/{user_id}/passkeys` (passkey_admin.go): not gated by the passkey setting. The
/// emulator stores no passkeys, so a user's list is empty and deleting one finds nothing, as on
/// a real server whose users never registered one.
struct AdminPasskeyEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/admin/users/{user_id}/passkeys", operation: "admin.users.passkeys.list") { g, context in
                _ = try g.api.requireAdmin(context)
                _ = try AdminEndpoints(api: g.api).loadUser(context)
                return .json(.array([]))
            },
            Endpoint("DELETE", "/admin/users/{user_id}/passkeys/{passkey_id}", operation: "admin.users.passkeys.delete") { g, context in
                _ = try g.api.requireAdmin(context)
                _ = try AdminEndpoints(api: g.api).loadUser(context)
                throw AuthError(404, .validationFailed, "Passkey not found")
            },
        ]
    }
}
