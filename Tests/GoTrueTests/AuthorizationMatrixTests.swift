import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// Every admin route and every `/emulator/v1` control route, with every credential that must not
/// open it: all refused, with the real status and error code, at the root and through the
/// gateway prefix, and nothing served.
@Suite struct AuthorizationMatrixTests {
    static let secret = "super-secret-jwt-token-with-at-least-32-characters-long"

    /// Credentials that must never open a protected route, each as the `Authorization` and/or
    /// `apikey` headers a client would send.
    static func credentials(_ api: GoTrueAPI, userToken: String) -> [(name: String, headers: HTTPHeaders)] {
        let keys = api.project.configuration.apiKeys
        let now = api.project.environment.now().unixSeconds
        func token(_ claims: JSONObject, secret: String = AuthorizationMatrixTests.secret, kid: String? = nil) -> String {
            JWT.sign(claims: claims, key: JWTKey(kid: kid, secret: secret))
        }
        let service: JSONObject = ["iss": "supabase-demo", "role": "service_role", "exp": .number(now + 3600)]
        let wrongSecret = token(service, secret: String(repeating: "x", count: 40))
        let expired = token(["iss": "supabase-demo", "role": "service_role", "exp": .number(now - 10)])
        // alg none: the service claims with no signature at all.
        let none = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "."
            + Base64URL.encode(JSON.object(service).serializedBytes()) + "."
        // A valid anon key whose payload was changed to claim service_role (signature now wrong).
        let anonParts = keys.anon.split(separator: ".")
        let tampered = anonParts[0] + "." + Base64URL.encode(JSON.object(service).serializedBytes()) + "." + anonParts[2]
        // An ES256 token under a kid the project does not have: unrecognized, never the HS256
        // fallback (which applies only to HS256 tokens, as parseJWTClaims).
        let unknownKid = JWT.sign(claims: service, key: JWTKey(kid: "no-such-key", p256: P256PrivateKey.generate(random: SystemRandom())))
        var list: [(String, HTTPHeaders)] = [
            ("no key", [:]),
            ("anon key", ["apikey": keys.anon, "Authorization": "Bearer " + keys.anon]),
            ("user JWT", ["apikey": keys.anon, "Authorization": "Bearer " + userToken]),
            ("wrong-secret JWT", ["apikey": wrongSecret, "Authorization": "Bearer " + wrongSecret]),
            ("alg none", ["apikey": none, "Authorization": "Bearer " + none]),
            ("expired service key", ["apikey": expired, "Authorization": "Bearer " + expired]),
            ("tampered payload", ["apikey": String(tampered), "Authorization": "Bearer " + tampered]),
            ("unknown kid", ["apikey": unknownKid, "Authorization": "Bearer " + unknownKid]),
        ]
        if let publishable = keys.publishable {
            list.append(("publishable key", ["apikey": publishable, "Authorization": "Bearer " + publishable]))
        }
        return list
    }

    /// The protected routes of the table, with sample path parameters.
    static func protectedRoutes() -> [(method: String, path: String)] {
        var out: [(String, String)] = []
        for group in GoTrueAPI.groups + SideDoors.groups {
            for route in group.routes(try! testProject(clock: ManualClock())) {
                let path = "/" + route.segments.map { segment -> String in
                    switch segment {
                    case .literal(let text): return text
                    case .parameter: return "00000000-0000-0000-0000-000000000001"
                    }
                }.joined(separator: "/")
                // The fake identity providers' own pages are public by design (a browser or a
                // client reaches them as it would reach Google), except the id_token minting.
                let fakeProviderPage = path.hasPrefix(GoTrueAPI.emulatorPrefix + "/idp/") && !path.hasSuffix("/id_token")
                if (path.hasPrefix("/admin/") || path.hasPrefix(GoTrueAPI.emulatorPrefix + "/")) && !fakeProviderPage {
                    out.append((route.method, path))
                }
            }
        }
        return out
    }

    @Test func everyProtectedRouteRefusesEveryWrongCredential() throws {
        let api = try makeAPI()
        let user = try #require(api.signUp("matrix@example.com")["access_token"]?.stringValue)
        let routes = Self.protectedRoutes()
        #expect(routes.count >= 30, "\(routes.count) protected routes")
        var checked = 0
        for (method, path) in routes {
            for (name, headers) in Self.credentials(api, userToken: user) {
                for target in [path, "/auth/v1" + path] {
                    let response = api.call(method, target, .object([:]), headers: headers)
                    let code = errorCode(response) ?? ""
                    let where_ = "\(method) \(target) with \(name): \(response.status) \(code)"
                    #expect([401, 403].contains(response.status), "\(where_)")
                    #expect(["no_authorization", "not_admin", "bad_jwt"].contains(code), "\(where_)")
                    if name == "no key" { #expect(response.status == 401, "\(where_)") }
                    if ["wrong-secret JWT", "alg none", "expired service key", "tampered payload", "unknown kid"].contains(name) {
                        // A forged or stale token is never mistaken for a valid one of a lesser role.
                        #expect(code != "not_admin" || path.hasPrefix(GoTrueAPI.emulatorPrefix), "\(where_)")
                    }
                    checked += 1
                }
            }
        }
        #expect(checked > 500)
    }

    @Test func theServiceRoleKeyOpensThem() throws {
        let api = try makeAPI()
        let key = api.project.configuration.apiKeys.serviceRole
        let opened = api.call("GET", "/admin/users", headers: ["Authorization": "Bearer " + key])
        #expect(opened.status == 200)
        #expect(api.call("GET", "/emulator/v1/outbox", headers: ["apikey": key]).status == 200)
    }
}
