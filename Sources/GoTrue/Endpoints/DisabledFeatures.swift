import AuthHTTP

/// Route groups of the real server whose feature is off by default and not built here: SAML
/// SSO (sso.go, saml.go) and SCIM (scim/); the OAuth 2.1 server (`OAuthServer/`) and passkeys
/// (`Passkeys.swift`) use the gate's errors while off. They answer exactly as the real server does while the feature is disabled, with
/// its middleware in its order (authentication before the feature gate where the real routes
/// nest them so), never with the router's plain-text 404, so a client sees the real error.
/// The emulator reads no setting that enables them.
enum FeatureGate {
    /// The handler of a route whose guards always refuse (a feature that is not emulated).
    static func unreachable<Group>(_: Group, _: RequestContext) throws -> HTTPResponse { throw AuthError.unexpected }

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
            // The limiters are declared as api.go mounts them; the gate before them always refuses.
            Endpoint("POST", "/sso", operation: "sso", guards: [.requireSAMLEnabled, .limit(.sso)], FeatureGate.unreachable),
            Endpoint("GET", "/sso/saml/metadata", operation: "sso.saml.metadata", guards: [.requireSAMLEnabled],
                     FeatureGate.unreachable),
            Endpoint("POST", "/sso/saml/acs", operation: "sso.saml.acs", guards: [.requireSAMLEnabled, .limit(.samlAssertion)],
                     FeatureGate.unreachable),
        ]
    }
}

/// `/admin/sso/providers*` (ssoadmin.go). The real server routes them under `/admin` without
/// `requireSAMLEnabled`, so with SAML off they still list, load and validate providers. The
/// emulator stores none: the list is empty, every provider id is not found (`loadSSOProvider`
/// runs before the body is read), and a create is checked as `CreateSSOProviderParams.validate`
/// checks it; one that passes would need the SAML metadata parsed (or fetched) and is refused
/// with a message saying so (docs/wire-behaviour.md).
struct SSOAdminEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/admin/sso/providers", operation: "admin.sso.providers.list", guards: AdminEndpoints.admin) { _, _ in
                .json(["items": .array([])])
            },
            Endpoint("POST", "/admin/sso/providers", operation: "admin.sso.providers.create", guards: AdminEndpoints.admin) {
                g, context in try g.create(context)
            },
        ] + ["GET", "PUT", "DELETE"].map { method in
            Endpoint(method, "/admin/sso/providers/{idp_id}", operation: "admin.sso.providers." + method.lowercased(),
                     guards: AdminEndpoints.admin) { _, _ in
                throw AuthError(404, .ssoProviderNotFound, "SSO Identity Provider not found")
            }
        }
    }

    /// The name ID formats crewjam/saml names, in the order GoTrue's message lists them.
    static let nameIDFormats = [
        "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
        "urn:oasis:names:tc:SAML:2.0:nameid-format:transient", "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
    ]

    private func create(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "CreateSSOProviderParams").checking([
            "type": .string, "metadata_url": .string, "metadata_xml": .string, "name_id_format": .string,
            "resource_id": .string, "disabled": .bool,
        ])
        let type = try body.string("type") ?? ""
        let metadataURL = try body.string("metadata_url") ?? ""
        let metadataXML = try body.string("metadata_xml") ?? ""
        let nameIDFormat = try body.string("name_id_format") ?? ""
        // `validate(false)`, in its order.
        if type != "saml" { throw AuthError(400, .validationFailed, "Only 'saml' supported for SSO provider type") }
        if !metadataURL.isEmpty && !metadataXML.isEmpty {
            throw AuthError(400, .validationFailed, "Only one of metadata_xml or metadata_url needs to be set")
        }
        if metadataURL.isEmpty && metadataXML.isEmpty {
            throw AuthError(400, .validationFailed, "Either metadata_xml or metadata_url must be set")
        }
        if !metadataURL.isEmpty {
            guard let parsed = Web3Message.requestURI(metadataURL) else {
                throw AuthError(400, .validationFailed, "metadata_url is not a valid URL")
            }
            if parsed.scheme != "https" { throw AuthError(400, .validationFailed, "metadata_url is not a HTTPS URL") }
        }
        if !nameIDFormat.isEmpty && !Self.nameIDFormats.contains(nameIDFormat) {
            throw AuthError(400, .validationFailed,
                            "name_id_format must be unspecified or one of " + Self.nameIDFormats.joined(separator: ", "))
        }
        throw AuthError(400, .validationFailed,
                        "SAML identity providers are not emulated: auth-emulator does not read SAML metadata, so no provider was created")
    }
}

/// `/scim/v2/*` (`GOTRUE_EXPERIMENTAL_SCIM_ENABLED`, off by default).
struct SCIMEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        ["ServiceProviderConfig", "ResourceTypes", "Schemas"].map { name in
            Endpoint("GET", "/scim/v2/" + name, operation: "scim." + name, guards: [.requireScimServerEnabled],
                     FeatureGate.unreachable)
        }
    }
}
