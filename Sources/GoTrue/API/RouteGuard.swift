import AuthHTTP
import AuthStore

/// A check the real server mounts in front of a route in `internal/api/api.go`
/// (`r.With(api.limitHandler(...))`, `r.Use(api.requireAuthentication)`, ...), declared in the
/// route table with the route so the table reads as api.go does. Guards run in the declared
/// order, api.go's middleware order, before the handler; the first that throws answers. A guard
/// may leave what it admitted in the request's context (the caller, the factor), as Go's
/// middleware does with `context.WithValue`, so the handler reads it instead of checking again.
///
/// A check that depends on the body stays in its handler, as api.go keeps it in the handler
/// (`/signup`'s limiters, `/token`'s per-grant limiter).
package struct RouteGuard: Sendable, CustomStringConvertible {
    /// The middleware's name in api.go: `limitHandler(Recover)`, `requireAuthentication`, ...
    package let name: String
    /// The limiter a `limitHandler` guard takes from; nil for every other guard.
    package let bucket: RateLimitBucket?
    /// Nil for a guard its handler makes itself (`requireAuthenticationByHandler`).
    let check: (@Sendable (Core, inout RequestContext) throws(AuthError) -> Void)?

    init(_ name: String, bucket: RateLimitBucket? = nil,
         _ check: (@Sendable (Core, inout RequestContext) throws(AuthError) -> Void)?) {
        self.name = name
        self.bucket = bucket
        self.check = check
    }

    package var description: String { name }

    /// The guards as one closure, built once with the route: nil when there are none.
    static func composed(_ guards: [RouteGuard]) -> (@Sendable (Core, inout RequestContext) throws(AuthError) -> Void)? {
        let checks = guards.compactMap(\.check)
        guard var composed = checks.first else { return nil }
        for check in checks.dropFirst() {
            let previous = composed
            composed = { core, context throws(AuthError) in
                try previous(core, &context)
                try check(core, &context)
            }
        }
        return composed
    }
}

extension RouteGuard {
    /// `limitHandler(limiter)`: 429 `over_request_rate_limit` once the client has used up the
    /// bucket (`Core.rateLimit`).
    static func limit(_ bucket: RateLimitBucket) -> RouteGuard {
        RouteGuard("limitHandler(\(bucket.name))", bucket: bucket) { core, context throws(AuthError) in
            try core.rateLimit(bucket, context)
        }
    }

    /// `requireAuthentication`: the caller (`Core.authenticate`) goes into the context.
    static let requireAuthentication = RouteGuard("requireAuthentication") { core, context throws(AuthError) in
        context.caller = try core.authenticate(context)
    }

    /// `requireAuthentication` for handlers that answer with the whole user: the identities and
    /// factors are read in the same transaction as the user.
    static let requireAuthenticationWithIdentities = RouteGuard("requireAuthentication") { core, context throws(AuthError) in
        context.caller = try core.authenticate(context, loadingIdentities: true)
    }

    /// `requireAuthentication` on `GET /user`, the route apps call most, made by its handler
    /// (`Core.caller`) with the same answers: no caller is boxed into the context, which cost
    /// that request about 5,000 instructions (3 %, bench/cost/instructions.py). Only for a route
    /// with no other guard, where no order can change.
    static let requireAuthenticationByHandler = RouteGuard("requireAuthentication", nil)

    /// `requireNotAnonymous`, after `requireAuthentication`: an anonymous user's token is refused.
    static let requireNotAnonymous = RouteGuard("requireNotAnonymous") { _, context throws(AuthError) in
        if context.caller?.claims["is_anonymous"]?.boolValue == true {
            throw AuthError(403, .noAuthorization, "Anonymous user not allowed to perform these actions")
        }
    }

    /// `requireAdminCredentials`: the admin caller (`Core.requireAdmin`) goes into the context.
    static let requireAdminCredentials = RouteGuard("requireAdminCredentials") { core, context throws(AuthError) in
        context.admin = try core.requireAdmin(context)
    }

    /// `loadFactor` of `/factors/{factor_id}`, after `requireAuthenticationWithIdentities`: the
    /// path's factor must parse as a UUID and be one of the caller's.
    static let loadFactor = RouteGuard("loadFactor") { _, context throws(AuthError) in
        context.factor = try MFAEndpoints.loadFactor(context, of: context.caller)
    }

    /// `requireEmailProvider`.
    static let requireEmailProvider = enabled("requireEmailProvider", \.external.emailEnabled,
                                              AuthError(400, .emailProviderDisabled, "Email logins are disabled"))

    /// `requireManualLinkingEnabled`.
    static let requireManualLinkingEnabled = enabled("requireManualLinkingEnabled", \.security.manualLinkingEnabled,
                                                     AuthError(404, .manualLinkingDisabled, "Manual linking is disabled"))

    /// `requireOAuthServerEnabled`.
    static let requireOAuthServerEnabled = enabled("requireOAuthServerEnabled", \.oauthServer.enabled,
                                                   FeatureGate.oauthServerDisabled)

    /// `requireCustomOAuthEnabled`.
    static let requireCustomOAuthEnabled = enabled("requireCustomOAuthEnabled", \.customOAuth.enabled,
                                                   CustomOAuthProviderEndpoints.disabled)

    /// `requirePasskeyEnabled`.
    static let requirePasskeyEnabled = enabled("requirePasskeyEnabled", \.passkey.enabled, FeatureGate.passkeysDisabled)

    /// `requireSAMLEnabled`: SAML is not emulated, so the feature is always off.
    static let requireSAMLEnabled = RouteGuard("requireSAMLEnabled") { _, _ throws(AuthError) in throw FeatureGate.samlDisabled }

    /// `requireScimServerEnabled`: SCIM is not emulated, so the feature is always off.
    static let requireScimServerEnabled = RouteGuard("requireScimServerEnabled") { _, _ throws(AuthError) in
        throw FeatureGate.scimDisabled
    }

    /// A feature gate: `refusal` unless the request's configuration turns the feature on.
    private static func enabled(_ name: String, _ setting: KeyPath<Configuration, Bool> & Sendable,
                                _ refusal: AuthError) -> RouteGuard {
        RouteGuard(name) { core, _ throws(AuthError) in
            if !core.snapshot.configuration[keyPath: setting] { throw refusal }
        }
    }
}

extension RouteGuard {
    /// The guards api.go mounts on a whole group (`r.Route(prefix, ...)` with `r.Use(...)`, or
    /// `r.With(...).Route(...)`), outer groups first. chi runs a mounted router's middleware
    /// before it matches the rest of the path, so a request under the prefix that no route
    /// answers (another path, another method) meets them before its 404 or 405: `GET /oauth/token`
    /// with the OAuth server off is 404 `feature_disabled`, `PATCH /user` without a token 401.
    /// Groups whose prefix has a path parameter (`/factors/{factor_id}`, `/admin/users/{user_id}`)
    /// are not listed: such a request gets the plain 404 or 405.
    static let mountedGroups: [(prefix: String, guards: [RouteGuard])] = [
        ("/verify", [.limit(.verify)]),
        ("/reauthenticate", [.requireAuthentication]),
        ("/user", [.requireAuthentication]),
        ("/user/identities", [.requireManualLinkingEnabled]),
        ("/user/oauth/grants", [.requireOAuthServerEnabled]),
        ("/factors", [.requireAuthentication, .requireNotAnonymous]),
        ("/passkeys", [.requirePasskeyEnabled]),
        ("/passkeys/registration", [.requireAuthentication, .requireNotAnonymous]),
        ("/sso", [.requireSAMLEnabled]),
        ("/admin", [.requireAdminCredentials]),
        ("/admin/oauth", [.requireOAuthServerEnabled]),
        ("/admin/custom-providers", [.requireCustomOAuthEnabled]),
        ("/oauth", [.requireOAuthServerEnabled]),
        ("/scim/v2", [.requireScimServerEnabled]),
    ]

    /// The mounted groups' guards a request for `path` passes through, outer groups first (a
    /// group's prefix is the path itself or one of its leading segments, as chi's `Mount`).
    static func mounted(on path: String) -> [RouteGuard] {
        mountedGroups.filter { path == $0.prefix || path.hasPrefix($0.prefix + "/") }
            .sorted { $0.prefix.utf8.count < $1.prefix.utf8.count }
            .flatMap(\.guards)
    }
}

extension GoTrueAPI {
    /// The routes api.go declares as a group's `"/"` (`r.Route("/user", ...)` with
    /// `r.Get("/", ...)`): chi routes the group's path with a trailing slash to them too.
    static let groupRoots: [[Substring]] = [
        "/callback", "/signup", "/verify", "/reauthenticate", "/user", "/user/oauth/grants", "/factors", "/factors/{factor_id}",
        "/passkeys", "/passkeys/{passkey_id}", "/sso", "/admin/audit", "/admin/users", "/admin/users/{user_id}",
        "/admin/users/{user_id}/factors", "/admin/users/{user_id}/factors/{factor_id}", "/admin/users/{user_id}/passkeys",
        "/admin/users/{user_id}/passkeys/{passkey_id}", "/admin/sso/providers", "/admin/sso/providers/{idp_id}",
        "/admin/oauth/clients", "/admin/oauth/clients/{client_id}", "/admin/custom-providers", "/admin/custom-providers/{identifier}",
    ].map { $0.split(separator: "/", omittingEmptySubsequences: false) }

    /// Whether `path` (without its trailing slash) is one of `groupRoots`, a `{name}` segment
    /// standing for any non-empty one.
    static func isGroupRoot(_ path: Substring) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        return groupRoots.contains { root in
            root.count == segments.count && zip(root, segments).allSatisfy { pattern, segment in
                pattern.hasPrefix("{") ? !segment.isEmpty : pattern == segment
            }
        }
    }
}

extension Core {
    /// The caller `requireAuthentication` admitted; a handler reached without the guard (an
    /// internal call) authenticates here.
    func caller(_ context: RequestContext, loadingIdentities: Bool = false) throws(AuthError) -> Authenticated {
        if let caller = context.caller { return caller }
        return try authenticate(context, loadingIdentities: loadingIdentities)
    }

    /// The admin `requireAdminCredentials` admitted, or the check made here.
    func adminCaller(_ context: RequestContext) throws(AuthError) -> AdminCaller {
        if let admin = context.admin { return admin }
        return try requireAdmin(context)
    }
}
