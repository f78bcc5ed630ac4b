import AuthHTTP
import AuthJSON
import AuthStore

/// `GET /user/identities/authorize` and `DELETE /user/identities/{identity_id}` (identity.go;
/// reference §5.19): manual linking of another provider's identity, and unlinking one.
struct IdentityEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/user/identities/authorize", operation: "user.identities.authorize",
                     guards: [.requireAuthentication, .requireManualLinkingEnabled]) { g, context in try g.linkIdentity(context) },
            Endpoint("DELETE", "/user/identities/{identity_id}", operation: "user.identities.delete",
                     guards: [.requireAuthenticationWithIdentities, .requireManualLinkingEnabled]) { g, context in
                try g.unlinkIdentity(context)
            },
        ]
    }

    /// `GET /user/identities/authorize` (`LinkIdentity`).
    func linkIdentity(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        let url = try ExternalEndpoints(api: api).providerRedirectURL(context, linkingTarget: caller.user)
        if context.request.queryValue("skip_http_redirect") == "true" {
            return .json(["url": .string(url)])
        }
        return ExternalEndpoints.found(url)
    }

    /// `DELETE /user/identities/{identity_id}` (`DeleteIdentity`).
    func unlinkIdentity(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context, loadingIdentities: true)
        let raw = context.pathParameters["identity_id"] ?? ""
        // `uuid.FromString`, as for the admin routes' ids: bare hex, braces and `urn:uuid:` too.
        guard let identityID = AdminEndpoints.canonicalUUID(raw) else {
            throw AuthError(404, .validationFailed, "identity_id must be an UUID")
        }
        let aud = api.requestAudience(context, claims: caller.claims)
        let tokenAudience = (try? ClaimReader(caller.claims).audience()) ?? []
        if tokenAudience.first != aud {
            throw AuthError(403, .unexpectedAudience, "Token audience doesn't match request audience")
        }
        let identities = caller.identities ?? []
        if identities.count <= 1 {
            throw AuthError(422, .singleIdentityNotDeletable, "User must have at least 1 identity after unlinking")
        }
        guard let doomed = identities.first(where: { $0.id == identityID }) else {
            throw AuthError(422, .identityNotFound, "Identity doesn't exist")
        }
        let accounts = ExternalAccounts(api: api, context: context)
        // The notice goes to the address the user had before unlinking: removing an identity may
        // promote another identity's email onto the user (identity.go).
        let recipient = caller.user.email ?? ""
        try api.write { conn, round in
            guard var user = try conn.user(id: caller.user.id) else { throw AuthError(404, .userNotFound, "User not found") }
            try api.audit(conn, context, actor: user, action: .identityUnlinked,
                          traits: accounts.identityTraits(doomed), ipAddress: api.clientIP(context))
            try conn.deleteIdentity(id: doomed.id)
            if doomed.provider == "phone" {
                user.phoneConfirmedAt = nil
                user.phone = nil
                try conn.updateUser(user)
            } else if case .conflict = try accounts.adoptIdentityEmail(conn, &user) {
                throw AuthError(422, .emailConflictIdentityNotDeletable, "Unable to unlink identity due to email conflict")
            }
            try accounts.updateProviders(conn, &user)
            Mailer(api: api, context: context).notify(conn, .identityUnlinked, user: user, to: recipient,
                                                      values: ["Email": recipient, "Provider": doomed.provider], round: &round)
        }
        return .json(.object([:]))
    }
}
