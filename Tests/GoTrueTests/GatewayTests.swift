import AuthHTTP
import AuthJSON
import Testing
@testable import EmulatorTools
@testable import GoTrue

// The Supabase gateway in front of GoTrue (design §1; issue: gateway emulation) and GoTrue's CORS
// (reference §1.1).
@Suite struct GatewayTests {
    /// `--require-apikey`: the hosted platform's gateway.
    @Test func keyAsBearerAndOpaqueKeys() throws {
        let api = try makeAPI {
            $0.apiKeys.publishable = "sb_publishable_test"; $0.apiKeys.secret = "sb_secret_test"; $0.requireAPIKey = true
        }
        let anon = api.project.configuration.apiKeys.anon
        #expect(api.call("GET", "/auth/v1/settings", bearer: anon).status == 200)
        #expect(api.call("GET", "/auth/v1/settings", headers: ["apikey": "sb_publishable_test"]).status == 200)
        #expect(api.call("GET", "/auth/v1/settings", headers: ["apikey": "sb_secret_test"]).status == 200)
        // A user's access token is no API key.
        let session = api.call("POST", "/auth/v1/signup", ["email": "g@example.com", "password": "password1"], headers: ["apikey": anon]).json
        let userToken = session["access_token"]!.stringValue!
        let noKey = api.call("GET", "/auth/v1/user", bearer: userToken)
        #expect(noKey.status == 401)
        #expect(noKey.json == ["message": "No API key found in request"])
        #expect(api.call("GET", "/auth/v1/user", bearer: userToken, headers: ["apikey": anon]).status == 200)
    }

    @Test func openRoutesNeedNoKey() throws {
        let api = try makeAPI { $0.requireAPIKey = true }
        for path in ["/auth/v1/verify", "/auth/v1/callback", "/auth/v1/authorize"] {
            let response = api.call("GET", path)
            #expect(response.status != 401, "\(path)")
        }
    }

    /// By default, as `supabase start`'s Kong: no key check, and opaque keys reach GoTrue as JWTs.
    @Test func supabaseStartGatewayTranslatesKeys() throws {
        let api = try makeAPI { $0.apiKeys.publishable = "sb_publishable_test"; $0.apiKeys.secret = "sb_secret_test" }
        // No key at all: the request reaches GoTrue.
        #expect(api.call("GET", "/auth/v1/settings").status == 200)
        let session = api.call("POST", "/auth/v1/signup", ["email": "kong@example.com", "password": "password1"]).json
        let userToken = try #require(session["access_token"]?.stringValue)
        #expect(api.call("GET", "/auth/v1/user", bearer: userToken).status == 200)
        // The secret key, as apikey and as bearer (what supabase-js sends with opaque keys),
        // becomes the service_role JWT: admin routes accept it.
        let admin = api.call("GET", "/auth/v1/admin/users", bearer: "sb_secret_test", headers: ["apikey": "sb_secret_test"])
        #expect(admin.status == 200, "\(admin.text)")
        // The publishable key becomes the anon JWT, which is no user and no admin.
        let anon = api.call("GET", "/auth/v1/admin/users", bearer: "sb_publishable_test", headers: ["apikey": "sb_publishable_test"])
        #expect(anon.status == 403)
        #expect(errorCode(anon) == "not_admin")
        // A user's bearer passes through untouched whatever the apikey.
        #expect(api.call("GET", "/auth/v1/user", bearer: userToken, headers: ["apikey": "sb_publishable_test"]).status == 200)
        // An apikey without a bearer becomes the Authorization value itself, as Kong copies it.
        let legacy = api.call("GET", "/auth/v1/user", headers: ["apikey": userToken])
        #expect(legacy.status == 401)
        #expect(errorCode(legacy) == "no_authorization")
        // At the root (GoTrue itself) nothing is translated.
        #expect(api.call("GET", "/admin/users", bearer: "sb_secret_test").status == 403)
    }

    @Test func gotruePreflight() throws {
        let api = try makeAPI()
        let ok = api.respond(to: request("OPTIONS", "/token", headers: [
            "Origin": "http://localhost:3000", "Access-Control-Request-Method": "post",
            "Access-Control-Request-Headers": "authorization, content-type, x-client-info",
        ]))
        #expect(ok.status == 204)
        #expect(ok.headers["Access-Control-Allow-Origin"] == "*")
        #expect(ok.headers["Access-Control-Allow-Methods"] == "POST")
        #expect(ok.headers["Access-Control-Allow-Headers"] == "authorization, content-type, x-client-info")
        #expect(ok.headers["Access-Control-Allow-Credentials"] == "true")
        // GoTrue's own list lacks apikey: refused (no allow headers), as rs/cors.
        let refused = api.respond(to: request("OPTIONS", "/token", headers: [
            "Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "apikey",
        ]))
        #expect(refused.status == 204)
        #expect(refused.headers["Access-Control-Allow-Origin"] == nil)
        // The gateway allows what the browser asks for, without a key.
        let gateway = api.respond(to: request("OPTIONS", "/auth/v1/token", headers: [
            "Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "apikey, x-client-info",
        ]))
        #expect(gateway.status == 200)
        #expect(gateway.headers["Access-Control-Allow-Headers"] == "apikey, x-client-info")
        #expect(gateway.headers["Access-Control-Allow-Origin"] == "*")
    }

    @Test func actualCrossOriginResponse() throws {
        let api = try makeAPI()
        let response = api.call("GET", "/settings", headers: ["Origin": "http://localhost:3000"])
        #expect(response.headers["Access-Control-Allow-Origin"] == "*")
        #expect(response.headers["Access-Control-Expose-Headers"] == "X-Total-Count, Link, X-Supabase-Api-Version")
        #expect(response.headers["Vary"] == "Origin")
        // Behind the gateway too: Kong's CORS plugin sets the origin and keeps GoTrue's headers,
        // so a browser reads the echoed API version (and the error codes that depend on it),
        // X-Total-Count and Link.
        let gateway = api.call("POST", "/auth/v1/token?grant_type=password", ["email": "nobody@example.com", "password": "wrong-password"],
                               headers: ["Origin": "http://localhost:5173", "X-Supabase-Api-Version": "2024-01-01"])
        #expect(gateway.status == 400)
        #expect(gateway.headers["X-Supabase-Api-Version"] == "2024-01-01")
        #expect(gateway.headers["Access-Control-Allow-Origin"] == "*")
        #expect(gateway.headers["Access-Control-Expose-Headers"] == "X-Total-Count, Link, X-Supabase-Api-Version")
        #expect(gateway.headers["Access-Control-Allow-Credentials"] == "true")
        #expect(gateway.headers["Vary"] == "Origin")
    }

    @Test func tokenOperationNamesFollowGrantType() throws {
        struct Capture: Middleware {
            func respond(to context: RequestContext, next: (RequestContext) -> HTTPResponse) -> HTTPResponse {
                HTTPResponse(status: 299, headers: ["X-Op": context.operation ?? "-"])
            }
        }
        let base = try makeAPI()
        let api = GoTrueAPI(emulating: base.project, middleware: [Capture()])
        #expect(api.call("POST", "/token?grant_type=refresh_token", [:]).headers["X-Op"] == "token.refresh_token")
        #expect(api.call("PUT", "/user", [:]).headers["X-Op"] == "user.update")
    }
}

@Suite struct EmulatorPrefixTests {
    @Test func controlRoutesNeedTheServiceRoleKey() throws {
        let base = try makeAPI()
        let route = Route("GET", "/emulator/v1/ping", operation: "emulator.ping") { _ in .json(["ok": true]) }
        let api = GoTrueAPI(emulating: base.project, extensions: [route])
        let keys = api.project.configuration.apiKeys
        let missing = api.call("GET", "/emulator/v1/ping")
        #expect(missing.status == 401)
        #expect(errorCode(missing) == "no_authorization")
        #expect(errorCode(api.call("GET", "/emulator/v1/ping", headers: ["apikey": keys.anon])) == "not_admin")
        #expect(api.call("GET", "/emulator/v1/ping", headers: ["apikey": keys.serviceRole]).status == 200)
        #expect(api.call("GET", "/emulator/v1/ping", bearer: keys.serviceRole).status == 200)
        #expect(api.call("GET", "/emulator/v1/ping", headers: ["apikey": keys.secret!]).status == 200)
        // Unknown control routes still need the key first, then 404.
        #expect(api.call("GET", "/emulator/v1/nope", bearer: keys.serviceRole).status == 404)
    }

    @Test func liveConfigurationChangesAtRuntime() throws {
        let api = try makeAPI()
        #expect(api.call("GET", "/settings").json["disable_signup"] == false)
        api.project.settings.update { $0.disableSignup = true }
        #expect(api.call("GET", "/settings").json["disable_signup"] == true)
        #expect(errorCode(api.call("POST", "/signup", ["email": "x@example.com", "password": "password1"])) == "signup_disabled")
    }
}
