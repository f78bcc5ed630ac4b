import AuthHTTP
import AuthJSON
import Testing
@testable import GoTrue

/// The route table declares each route's guards as `internal/api/api.go` mounts them
/// (`r.With(...)`, `r.Use(...)`), in api.go's order.
@Suite struct RouteGuardTests {
    /// api.go's guards per route, by the middleware's name, in the order they run. Routes not
    /// listed have none (`/health`, `/settings`, `/authorize`, `/callback`, `/signup` and `/token`,
    /// whose limiters api.go applies in the handler). `verifyCaptcha` is not emulated.
    static let apiGo: [String: [String]] = {
        let admin = ["requireAdminCredentials"]
        let auth = ["requireAuthentication"]
        let factors = auth + ["requireNotAnonymous", "loadFactor"]
        let passkeys = ["requirePasskeyEnabled"]
        let oauth = ["requireOAuthServerEnabled"]
        var table: [String: [String]] = [
            "GET /.well-known/oauth-authorization-server": oauth,
            "POST /invite": admin,
            "POST /recover": ["limitHandler(Recover)", "requireEmailProvider"],
            "POST /resend": ["limitHandler(Resend)"],
            "POST /magiclink": ["limitHandler(MagicLink)"],
            "POST /otp": ["limitHandler(Otp)"],
            "GET /verify": ["limitHandler(Verify)"],
            "POST /verify": ["limitHandler(Verify)"],
            "POST /logout": auth,
            "GET /reauthenticate": auth,
            "GET /user": auth,
            "PUT /user": auth + ["limitHandler(User)"],
            "GET /user/identities/authorize": auth + ["requireManualLinkingEnabled"],
            "DELETE /user/identities/{identity_id}": auth + ["requireManualLinkingEnabled"],
            "GET /user/oauth/grants": auth + oauth,
            "DELETE /user/oauth/grants": auth + oauth,
            "POST /factors": auth + ["requireNotAnonymous"],
            "POST /factors/{factor_id}/verify": factors + ["limitHandler(FactorVerify)"],
            "POST /factors/{factor_id}/challenge": factors + ["limitHandler(FactorChallenge)"],
            "DELETE /factors/{factor_id}": factors,
            "POST /passkeys/authentication/options": passkeys + ["limitHandler(PasskeyAuthentication)"],
            "POST /passkeys/authentication/verify": passkeys,
            "POST /passkeys/registration/options": passkeys + auth + ["requireNotAnonymous"],
            "POST /passkeys/registration/verify": passkeys + auth + ["requireNotAnonymous"],
            "GET /passkeys": passkeys + auth,
            "PATCH /passkeys/{passkey_id}": passkeys + auth,
            "DELETE /passkeys/{passkey_id}": passkeys + auth,
            "POST /sso": ["requireSAMLEnabled", "limitHandler(SSO)"],
            "GET /sso/saml/metadata": ["requireSAMLEnabled"],
            "POST /sso/saml/acs": ["requireSAMLEnabled", "limitHandler(SAMLAssertion)"],
            "POST /oauth/clients/register": oauth + ["limitHandler(OAuthClientRegister)"],
            "POST /oauth/token": oauth,
            "GET /oauth/userinfo": oauth + auth,
            "GET /oauth/authorize": oauth,
            "GET /oauth/authorizations/{authorization_id}": oauth + auth,
            "POST /oauth/authorizations/{authorization_id}/consent": oauth + auth,
        ]
        for name in ["ServiceProviderConfig", "ResourceTypes", "Schemas"] {
            table["GET /scim/v2/" + name] = ["requireScimServerEnabled"]
        }
        for route in [
            "GET /admin/audit", "GET /admin/users", "POST /admin/users", "GET /admin/users/{user_id}",
            "PUT /admin/users/{user_id}", "DELETE /admin/users/{user_id}", "GET /admin/users/{user_id}/factors",
            "PUT /admin/users/{user_id}/factors/{factor_id}", "DELETE /admin/users/{user_id}/factors/{factor_id}",
            "GET /admin/users/{user_id}/passkeys", "DELETE /admin/users/{user_id}/passkeys/{passkey_id}",
            "POST /admin/generate_link", "GET /admin/sso/providers", "POST /admin/sso/providers",
            "GET /admin/sso/providers/{idp_id}", "PUT /admin/sso/providers/{idp_id}", "DELETE /admin/sso/providers/{idp_id}",
        ] { table[route] = admin }
        for route in [
            "POST /admin/oauth/clients", "GET /admin/oauth/clients", "GET /admin/oauth/clients/{client_id}",
            "PUT /admin/oauth/clients/{client_id}", "DELETE /admin/oauth/clients/{client_id}",
            "POST /admin/oauth/clients/{client_id}/regenerate_secret",
        ] { table[route] = admin + oauth }
        for route in [
            "GET /admin/custom-providers", "POST /admin/custom-providers", "GET /admin/custom-providers/{identifier}",
            "PUT /admin/custom-providers/{identifier}", "DELETE /admin/custom-providers/{identifier}",
        ] { table[route] = admin + ["requireCustomOAuthEnabled"] }
        return table
    }()

    static var declarations: [RouteDeclaration] { GoTrueAPI.groups.flatMap { $0.declarations } }

    @Test func everyRouteDeclaresApiGosGuardsInItsOrder() {
        let declared = Self.declarations
        for route in declared {
            let key = route.method + " " + route.pattern
            #expect(route.guards.map(\.name) == Self.apiGo[key] ?? [], "\(key)")
        }
        let keys = Set(declared.map { $0.method + " " + $0.pattern })
        for key in Self.apiGo.keys { #expect(keys.contains(key), "\(key) is not in the route table") }
        // Each limiter guard names the bucket its name says.
        for route in declared {
            for guardian in route.guards where guardian.name.hasPrefix("limitHandler(") {
                #expect(guardian.name == "limitHandler(\(guardian.bucket?.name ?? "?"))")
            }
        }
    }

    /// Each route whose limiter is its first guard (or that follows only authentication) answers
    /// 429 `over_request_rate_limit` once its declared bucket is used up, and only then.
    @Test func limitedRoutesAnswer429FromTheirDeclaredBucket() throws {
        let api = try makeAPI { $0.rateLimits.preset = .tiny }
        let access = try #require(api.signUp("guarded@example.com")["access_token"]?.stringValue)
        let routes = Self.declarations.filter { route in
            guard let first = route.guards.first(where: { $0.bucket != nil }) else { return false }
            // Routes behind a feature that is off, or behind a factor, never reach their limiter here.
            return !route.pattern.contains("{") && route.guards.allSatisfy { guardian in
                guardian.bucket != nil || guardian.name == "requireAuthentication" || guardian.name == "requireEmailProvider"
            } && first.bucket != nil
        }
        let tested = Set(routes.map { $0.method + " " + $0.pattern })
        #expect(tested == ["POST /recover", "POST /resend", "POST /magiclink", "POST /otp", "GET /verify", "POST /verify", "PUT /user"])
        var exhausted: Set<String> = []
        for route in routes {
            let bucket = try #require(route.guards.compactMap(\.bucket).first)
            func call() -> HTTPResponse {
                route.method == "GET" ? api.call("GET", route.pattern + "?type=signup&token=x", bearer: access)
                    : api.call(route.method, route.pattern, ["data": [:]], bearer: access)
            }
            if !exhausted.contains(bucket.name) {
                for attempt in 0..<RateLimitSettings.tinyEvents {
                    #expect(call().status != 429, "\(route.method) \(route.pattern) attempt \(attempt)")
                }
                exhausted.insert(bucket.name)
            }
            let limited = call()
            #expect(limited.status == 429, "\(route.method) \(route.pattern)")
            #expect(errorCode(limited) == "over_request_rate_limit", "\(route.method) \(route.pattern)")
        }
        // GET and POST /verify share the `Verify` bucket: the second route was limited at once.
        #expect(exhausted.count == routes.count - 1)
    }
}

/// chi runs a mounted group's middleware before matching the rest of the path
/// (`r.Route(prefix, ...)` + `r.Use(...)` in api.go), so a request under a group's prefix that no
/// route answers meets the group's guards before its plain 404 or 405.
@Suite struct MountedGroupTests {
    @Test func unmatchedRequestsUnderAGroupMeetItsGuardsFirst() throws {
        let api = try makeAPI { $0.customOAuth.enabled = false }
        let access = try #require(api.signUp("mounted@example.com")["access_token"]?.stringValue)
        let oauthOff = #"{"code":404,"error_code":"feature_disabled","msg":"OAuth server is disabled"}"#
        // Feature gates answer for any path and method under the group.
        for (method, path) in [("GET", "/oauth/token"), ("PATCH", "/oauth/authorize"), ("GET", "/oauth/nope"), ("GET", "/oauth")] {
            let r = api.call(method, path)
            #expect(r.status == 404 && r.text == oauthOff, "\(method) \(path): \(r.text)")
        }
        #expect(api.admin("PATCH", "/admin/oauth/clients").text == oauthOff)
        #expect(api.admin("GET", "/admin/custom-providers/custom:a/b").json["msg"] == "Custom OAuth providers are disabled")
        #expect(api.call("GET", "/user/oauth/grants/x", bearer: access).text == oauthOff)
        #expect(errorCode(api.call("GET", "/passkeys/a/b", bearer: access)) == "passkey_disabled")
        // The outer group's guard comes first: no admin token, no feature gate.
        #expect(errorCode(api.call("PATCH", "/admin/oauth/clients")) == "no_authorization")
        #expect(errorCode(api.call("GET", "/admin/nope")) == "no_authorization")
        #expect(errorCode(api.call("PATCH", "/user")) == "no_authorization")
        #expect(errorCode(api.call("GET", "/factors/x/y")) == "no_authorization")
        // Past the guards, chi's own answers.
        let admitted = api.admin("GET", "/admin/nope")
        #expect(admitted.status == 404 && admitted.text == "404 page not found\n")
        let wrongMethod = api.call("PATCH", "/user", bearer: access)
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers.values(for: "Allow") == ["GET", "PUT"])
        // Outside every group nothing changes.
        #expect(api.call("GET", "/nope").text == "404 page not found\n")
        #expect(api.call("GET", "/users").text == "404 page not found\n")
        #expect(api.call("PATCH", "/settings").status == 405)
    }

    /// chi routes a group's path with a trailing slash to the group's `"/"` route
    /// (`r.Route("/user", ...)` with `r.Get("/", ...)`); a plain route has no such twin.
    @Test func aGroupsRootAnswersWithATrailingSlash() throws {
        let api = try makeAPI()
        let session = api.signUp("slash@example.com")
        let access = try #require(session["access_token"]?.stringValue)
        let id = try #require(session["user"]?["id"]?.stringValue)
        #expect(api.call("GET", "/user/", bearer: access).json["id"] == .string(id))
        #expect(api.admin("GET", "/admin/users/").json["users"]?.arrayValue?.count == 1)
        #expect(api.admin("GET", "/admin/users/\(id)/").json["email"] == "slash@example.com")
        #expect(api.call("PATCH", "/user/", bearer: access).status == 405)
        for plain in ["/settings/", "/health/", "/admin/users//"] {
            #expect(api.admin("GET", plain).text == "404 page not found\n", "\(plain)")
        }
    }
}
