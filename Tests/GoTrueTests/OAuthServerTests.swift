import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: the real server's internal/api/oauthserver (handlers.go, service.go,
// authorize.go, client_auth.go) and the routes of api.go.

private func oauthAPI(clock: ManualClock = ManualClock(), keys: String? = "ec.json",
                      configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    let jwks = try keys.map(signingKeys) ?? []
    return try makeAPI(clock: clock) { config in
        config.oauthServer.enabled = true
        config.oauthServer.authorizationPath = "/oauth/consent"
        if !jwks.isEmpty {
            config.jwt.keys = jwks
            // The service_role key stays the HS256 one here (the CLI would re-sign it).
            config.jwt.validMethods = ["HS256", "ES256"]
        }
        configure(&config)
    }
}

/// RFC 7636 Appendix B.
private let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
private let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

private extension GoTrueAPI {
    var admin: HTTPHeaders { ["Authorization": "Bearer " + project.configuration.apiKeys.serviceRole] }

    func register(_ body: JSONObject) -> HTTPResponse { call("POST", "/admin/oauth/clients", .object(body), headers: admin) }

    /// Authorize → consent page → approve, as the signed-in user; returns the code.
    func approvedCode(client: String, user token: String, scope: String = "openid email", state: String = "xyz",
                      redirect: String = "http://localhost:4000/cb") throws -> String {
        let authorize = call("GET", "/oauth/authorize?client_id=\(client)&redirect_uri=\(redirect)&response_type=code&scope=\(scope.replacingOccurrences(of: " ", with: "+"))&state=\(state)&code_challenge=\(challenge)&code_challenge_method=S256&nonce=n-1")
        #expect(authorize.status == 302)
        let location = try #require(authorize.headers["Location"])
        #expect(location.hasPrefix("http://127.0.0.1:3000/oauth/consent?authorization_id="))
        let id = String(location.split(separator: "=").last ?? "")
        let details = call("GET", "/oauth/authorizations/\(id)", bearer: token)
        if let redirectURL = details.json["redirect_url"]?.stringValue {
            return String(RedirectURL(redirectURL).query.first { $0.name == "code" }?.value ?? "")
        }
        #expect(details.json["authorization_id"]?.stringValue == id)
        let consent = call("POST", "/oauth/authorizations/\(id)/consent", ["action": "approve"], bearer: token)
        let redirectURL = try #require(consent.json["redirect_url"]?.stringValue)
        #expect(redirectURL.hasPrefix(redirect + "?code="))
        #expect(redirectURL.hasSuffix("&state=\(state)"))
        return String(RedirectURL(redirectURL).query.first { $0.name == "code" }?.value ?? "")
    }

    func form(_ target: String, _ fields: [(String, String)], headers: HTTPHeaders = [:]) -> HTTPResponse {
        var all = headers
        all["Content-Type"] = "application/x-www-form-urlencoded"
        let body = fields.map { $0.0 + "=" + GoURL.queryEscape($0.1) }.joined(separator: "&")
        return call("POST", target, headers: all, raw: body)
    }
}

@Suite struct OAuthServerClientTests {
    @Test func offByDefault() throws {
        let api = try makeAPI()
        let response = api.call("POST", "/admin/oauth/clients", ["redirect_uris": ["https://app.example/cb"]],
                                headers: ["Authorization": "Bearer " + api.project.configuration.apiKeys.serviceRole])
        #expect(response.status == 404)
        #expect(errorCode(response) == "feature_disabled")
    }

    /// service.go measures client_name, client_uri and logo_uri with `len()`: in bytes.
    @Test func metadataLimitsCountBytes() throws {
        let api = try oauthAPI()
        let long = api.register(["redirect_uris": ["https://app.example/cb"], "client_name": .string(String(repeating: "é", count: 513))])
        #expect(long.status == 400)
        #expect(long.json["msg"] == "400: client_name cannot exceed 1024 characters")
        #expect(api.register(["redirect_uris": ["https://app.example/cb"], "client_name": .string(String(repeating: "é", count: 512))]).status == 201)
    }

    @Test func adminCrudAndSecrets() throws {
        let api = try oauthAPI()
        let created = api.register(["redirect_uris": ["https://app.example/cb"], "client_name": "Acme"])
        #expect(created.status == 201)
        #expect(created.json["client_type"] == "confidential")
        #expect(created.json["token_endpoint_auth_method"] == "client_secret_basic")
        #expect(created.json["grant_types"] == ["authorization_code", "refresh_token"])
        #expect(created.json["response_types"] == ["code"])
        #expect(created.json["registration_type"] == "manual")
        let id = try #require(created.json["client_id"]?.stringValue)
        let secret = try #require(created.json["client_secret"]?.stringValue)
        #expect(secret.count == 43)
        // Stored as a hash only.
        let stored = try api.project.database.read { try $0.oauthClient(id: id) }
        #expect(stored?.secretHash == OAuthClients.hashSecret(secret))

        let got = api.call("GET", "/admin/oauth/clients/\(id)", headers: api.admin)
        #expect(got.json["client_secret"] == nil)
        #expect(got.json["client_name"] == "Acme")
        let listed = api.call("GET", "/admin/oauth/clients", headers: api.admin)
        #expect(listed.json["clients"]?.arrayValue?.count == 1)

        let updated = api.call("PUT", "/admin/oauth/clients/\(id)", ["client_name": "Acme 2", "token_endpoint_auth_method": "none"],
                               headers: api.admin)
        #expect(updated.status == 400)
        #expect(updated.json["msg"]?.stringValue
            == "token_endpoint_auth_method 'none' is not valid for client_type 'confidential'; valid methods: [client_secret_basic client_secret_post]")
        #expect(api.call("PUT", "/admin/oauth/clients/\(id)", ["client_name": "Acme 2"], headers: api.admin).json["client_name"] == "Acme 2")
        #expect(api.call("PUT", "/admin/oauth/clients/\(id)", .object([:]), headers: api.admin).json["msg"] == "No fields provided for update")

        let regenerated = api.call("POST", "/admin/oauth/clients/\(id)/regenerate_secret", headers: api.admin)
        let newSecret = try #require(regenerated.json["client_secret"]?.stringValue)
        #expect(newSecret != secret)

        #expect(api.call("DELETE", "/admin/oauth/clients/\(id)", headers: api.admin).status == 204)
        let gone = api.call("GET", "/admin/oauth/clients/\(id)", headers: api.admin)
        #expect(gone.status == 404)
        #expect(errorCode(gone) == "oauth_client_not_found")
        #expect(api.call("GET", "/admin/oauth/clients", headers: api.admin).text == "{}")
        #expect(api.call("GET", "/admin/oauth/clients/nope", headers: api.admin).json["msg"] == "invalid client_id format")
    }

    @Test func registrationValidation() throws {
        let api = try oauthAPI()
        func message(_ body: JSONObject) -> String? { api.register(body).json["msg"]?.stringValue }
        #expect(message([:]) == "400: redirect_uris is required")
        #expect(message(["redirect_uris": ["http://app.example/cb"]])
            == "400: invalid redirect_uri 'http://app.example/cb': HTTP scheme only allowed for localhost")
        #expect(message(["redirect_uris": ["javascript://x/y"]])
            == "400: invalid redirect_uri 'javascript://x/y': scheme 'javascript' is not allowed for security reasons")
        #expect(message(["redirect_uris": ["https://a.example/cb#frag"]])
            == "400: invalid redirect_uri 'https://a.example/cb#frag': fragment not allowed in redirect URI")
        #expect(message(["redirect_uris": ["https://a.example/cb"], "grant_types": ["password"]])
            == "400: grant_types must only contain 'authorization_code' and/or 'refresh_token'")
        #expect(message(["redirect_uris": ["https://a.example/cb"], "client_type": "public", "token_endpoint_auth_method": "client_secret_post"])
            == "400: client_type 'public' is inconsistent with token_endpoint_auth_method 'client_secret_post' (expected client_type 'confidential')")
        #expect(api.call("POST", "/admin/oauth/clients", headers: api.admin, raw: "[").json["msg"] == "Invalid JSON body")

        // Dynamic registration only when allowed.
        let refused = api.call("POST", "/oauth/clients/register", ["redirect_uris": ["https://a.example/cb"]])
        #expect(refused.status == 403)
        #expect(errorCode(refused) == "oauth_dynamic_client_registration_disabled")
        let open = try oauthAPI { $0.oauthServer.allowDynamicRegistration = true }
        let dynamic = open.call("POST", "/oauth/clients/register", ["redirect_uris": ["http://localhost:4000/cb"],
                                                                      "token_endpoint_auth_method": "none"])
        #expect(dynamic.status == 201)
        #expect(dynamic.json["client_type"] == "public")
        #expect(dynamic.json["registration_type"] == "dynamic")
        #expect(dynamic.json["client_secret"] == nil)
        #expect(open.call("GET", "/.well-known/oauth-authorization-server").json["registration_endpoint"]?.stringValue?
            .hasSuffix("/oauth/clients/register") == true)
    }
}

@Suite struct OAuthServerFlowTests {
    @Test func authorizationCodeWithPKCEThenRefreshUserinfoAndRevoke() throws {
        let api = try oauthAPI()
        let client = api.register(["redirect_uris": ["http://localhost:4000/cb"], "token_endpoint_auth_method": "none"])
        let clientID = try #require(client.json["client_id"]?.stringValue)
        let session = api.signUp("oauth-user@example.com")
        let token = try #require(session["access_token"]?.stringValue)

        let code = try api.approvedCode(client: clientID, user: token)
        // A wrong verifier, then the right one; the code is single use.
        let wrong = api.form("/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("client_id", clientID),
                                              ("code_verifier", String(repeating: "a", count: 43))])
        #expect(wrong.status == 400)
        #expect(wrong.json["error"] == "invalid_grant")
        #expect(wrong.json["error_description"] == "PKCE verification failed: code challenge does not match previously saved code verifier")
        let exchanged = api.form("/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("client_id", clientID),
                                                  ("code_verifier", verifier), ("redirect_uri", "http://localhost:4000/cb")])
        #expect(exchanged.status == 200, "\(exchanged.text)")
        #expect(exchanged.json["token_type"] == "bearer")
        #expect(exchanged.json["expires_in"] == 3600)
        let access = try #require(exchanged.json["access_token"]?.stringValue)
        #expect(claims(of: access)["client_id"]?.stringValue == clientID)
        #expect(claims(of: access)["scope"] == "openid email")
        #expect(claims(of: access)["amr"]?[0]?["method"] == "oauth_provider/authorization_code")
        let idToken = try #require(exchanged.json["id_token"]?.stringValue)
        let id = claims(of: idToken)
        #expect(id["aud"]?.stringValue == clientID)
        #expect(id["nonce"] == "n-1")
        #expect(id["email"] == "oauth-user@example.com")
        #expect(id["email_verified"] == true)
        // Verified with the project's public key, as a relying party does through the JWKS.
        #expect((try? JWT.verify(idToken, keys: api.project.configuration.jwt.verificationKeys,
                                 now: api.project.environment.now().unixSeconds)) != nil)
        let reused = api.form("/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("client_id", clientID),
                                               ("code_verifier", verifier)])
        #expect(reused.json["error_description"] == "Invalid authorization code")

        let info = api.call("GET", "/oauth/userinfo", bearer: access)
        #expect(info.json["sub"] == session["user"]?["id"])
        #expect(info.json["email"] == "oauth-user@example.com")
        #expect(info.json["name"] == nil)  // no profile scope

        let refreshToken = try #require(exchanged.json["refresh_token"]?.stringValue)
        // The OAuth session refreshes only through its client.
        let plain = api.refresh(refreshToken)
        #expect(plain.status == 400)
        #expect(plain.json["error"] == "invalid_client")
        #expect(plain.json["error_description"] == "Client authentication required for OAuth session")
        let refreshed = api.form("/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID)])
        #expect(refreshed.status == 200, "\(refreshed.text)")
        #expect(claims(of: refreshed.json["access_token"]?.stringValue ?? "")["client_id"]?.stringValue == clientID)
        #expect(refreshed.json["id_token"] == nil)

        // The user's grants: listed, then revoked, which ends the client's sessions.
        let grants = api.call("GET", "/user/oauth/grants", bearer: token)
        #expect(grants.json[0]?["client"]?["id"]?.stringValue == clientID)
        #expect(grants.json[0]?["scopes"] == ["openid", "email"])
        #expect(api.call("DELETE", "/user/oauth/grants?client_id=\(clientID)", bearer: token).status == 204)
        let after = api.form("/oauth/token", [("grant_type", "refresh_token"),
                                              ("refresh_token", refreshed.json["refresh_token"]?.stringValue ?? ""),
                                              ("client_id", clientID)])
        #expect(after.status == 400)
        #expect(api.call("DELETE", "/user/oauth/grants?client_id=\(clientID)", bearer: token).json["msg"]
            == "No active grant found for this client")
    }

    @Test func confidentialClientsAuthenticateAndConsentIsRemembered() throws {
        let api = try oauthAPI()
        let client = api.register(["redirect_uris": ["https://app.example/cb"]])
        let clientID = try #require(client.json["client_id"]?.stringValue)
        let secret = try #require(client.json["client_secret"]?.stringValue)
        let token = try #require(api.signUp("conf@example.com")["access_token"]?.stringValue)
        let code = try api.approvedCode(client: clientID, user: token, scope: "email", redirect: "https://app.example/cb")

        let basic = "Basic " + Base64.encode(Array("\(clientID):\(secret)".utf8))
        // client_secret_post is not this client's method.
        let post = api.form("/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("client_id", clientID),
                                             ("client_secret", secret), ("code_verifier", verifier)])
        #expect(post.status == 400)
        #expect(post.json["msg"] == "invalid authentication method: client is registered for 'client_secret_basic' but 'client_secret_post' was used")
        let badSecret = api.form("/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("code_verifier", verifier)],
                                 headers: ["Authorization": "Basic " + Base64.encode(Array("\(clientID):nope".utf8))])
        #expect(badSecret.json["msg"] == "invalid client credentials")
        let ok = api.form("/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("code_verifier", verifier)],
                          headers: ["Authorization": basic])
        #expect(ok.status == 200)
        // No openid scope: no id_token.
        #expect(ok.json["id_token"] == nil)

        // The same scopes again: the consent page is skipped (the details answer carries the redirect).
        let second = try api.approvedCode(client: clientID, user: token, scope: "email", redirect: "https://app.example/cb")
        #expect(!second.isEmpty && second != code)
    }

    /// `requireOAuthClientAuth` reads the client's credentials before the handler reads its
    /// parameters, with json.Unmarshal's and FormValue's rules.
    @Test func clientCredentialsAreReadFirstAsGoReadsThem() throws {
        let api = try oauthAPI()
        let client = api.register(["redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "client_secret_post"])
        let clientID = try #require(client.json["client_id"]?.stringValue)
        let json: HTTPHeaders = ["Content-Type": "application/json"]
        let broken = api.call("POST", "/oauth/token", headers: json, raw: "{bad")
        #expect(broken.text == #"{"code":400,"error_code":"invalid_credentials","msg":"Invalid client credentials: failed to parse JSON body"}"#)
        let numeric = api.call("POST", "/oauth/token", headers: json, raw: #"{"client_id":123,"grant_type":"refresh_token"}"#)
        #expect(numeric.json["msg"] == "Invalid client credentials: failed to parse JSON body")
        // A wrongly typed grant_type is the handler's own decoding error.
        let secret = try #require(client.json["client_secret"]?.stringValue)
        let grant = api.call("POST", "/oauth/token", headers: json, raw: #"{"CLIENT_ID":"\#(clientID)","client_secret":"\#(secret)","grant_type":5}"#)
        #expect(grant.text == #"{"error":"invalid_request","error_description":"Invalid JSON body"}"#)
        // Basic with an empty id names no client: the handler asks for one.
        let anonymous = api.form("/oauth/token", [("grant_type", "refresh_token")], headers: ["Authorization": "Basic " + Base64.encode(Array(":secret".utf8))])
        #expect(anonymous.text == #"{"error":"invalid_client","error_description":"Client authentication required"}"#)
        // FormValue: the first value of a repeated field.
        let repeated = api.form("/oauth/token", [("client_id", clientID), ("client_id", "junk"), ("client_secret", "wrong"), ("grant_type", "refresh_token")])
        #expect(repeated.json["msg"] == "invalid client credentials")
    }

    @Test func authorizeErrorsAndDenial() throws {
        let clock = ManualClock()
        let api = try oauthAPI(clock: clock)
        let clientID = api.register(["redirect_uris": ["http://localhost:4000/cb"], "token_endpoint_auth_method": "none"])
            .json["client_id"]?.stringValue ?? ""
        let unknown = api.call("GET", "/oauth/authorize?client_id=00000000-0000-0000-0000-000000000001&redirect_uri=http://localhost:4000/cb")
        #expect(unknown.status == 400)
        #expect(errorCode(unknown) == "oauth_client_not_found")
        #expect(api.call("GET", "/oauth/authorize?client_id=\(clientID)&redirect_uri=http://localhost:4000/other").json["msg"] == "invalid redirect_uri")
        // Without PKCE the client gets the error on its redirect URI.
        let noPKCE = api.call("GET", "/oauth/authorize?client_id=\(clientID)&redirect_uri=http://localhost:4000/cb&state=s1")
        #expect(noPKCE.status == 302)
        #expect(noPKCE.headers["Location"]
            == "http://localhost:4000/cb?error=invalid_request&error_description=PKCE+flow+requires+both+code_challenge+and+code_challenge_method&state=s1")
        let badScope = api.call("GET", "/oauth/authorize?client_id=\(clientID)&redirect_uri=http://localhost:4000/cb&scope=admin&code_challenge=\(challenge)&code_challenge_method=S256")
        #expect(badScope.headers["Location"]?.contains("error_description=unsupported+scope%3A+admin") == true)

        let token = api.signUp("deny@example.com")["access_token"]?.stringValue ?? ""
        let location = api.call("GET", "/oauth/authorize?client_id=\(clientID)&redirect_uri=http://localhost:4000/cb&state=s2&code_challenge=\(challenge)&code_challenge_method=S256")
            .headers["Location"] ?? ""
        let id = String(location.split(separator: "=").last ?? "")
        _ = api.call("GET", "/oauth/authorizations/\(id)", bearer: token)
        let denied = api.call("POST", "/oauth/authorizations/\(id)/consent", ["action": "deny"], bearer: token)
        #expect(denied.json["redirect_url"]
            == "http://localhost:4000/cb?error=access_denied&error_description=User+denied+the+request&state=s2")
        #expect(api.call("POST", "/oauth/authorizations/\(id)/consent", ["action": "approve"], bearer: token).json["msg"]
            == "authorization request is no longer pending")
        #expect(api.call("POST", "/oauth/authorizations/\(id)/consent", ["action": "maybe"], bearer: token).json["msg"]
            == "action must be 'approve' or 'deny'")

        // An authorization request expires (10 minutes).
        let late = api.call("GET", "/oauth/authorize?client_id=\(clientID)&redirect_uri=http://localhost:4000/cb&code_challenge=\(challenge)&code_challenge_method=S256")
            .headers["Location"] ?? ""
        clock.advance(seconds: 601)
        let expired = api.call("GET", "/oauth/authorizations/\(String(late.split(separator: "=").last ?? ""))", bearer: token)
        #expect(expired.status == 404)
        #expect(errorCode(expired) == "oauth_authorization_not_found")
    }

    @Test func hs256ProjectsCannotSignIDTokens() throws {
        let api = try oauthAPI(keys: nil)
        let clientID = api.register(["redirect_uris": ["http://localhost:4000/cb"], "token_endpoint_auth_method": "none"])
            .json["client_id"]?.stringValue ?? ""
        let token = api.signUp("hs@example.com")["access_token"]?.stringValue ?? ""
        let code = try api.approvedCode(client: clientID, user: token)
        let exchanged = api.form("/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("client_id", clientID),
                                                  ("code_verifier", verifier)])
        // GenerateIDToken refuses HS256 (the real server's answer with only a JWT secret).
        #expect(exchanged.status == 500)
        #expect(exchanged.json["msg"] == "Error generating ID token")
    }
}

@Suite struct OAuthAutoApproveTests {
    @Test func aConfiguredUserApprovesWithoutAConsentPage() throws {
        let api = try oauthAPI { $0.oauthServer.autoApproveEmail = "headless@example.com" }
        let clientID = api.register(["redirect_uris": ["http://localhost:4000/cb"], "token_endpoint_auth_method": "none"])
            .json["client_id"]?.stringValue ?? ""
        let authorize = "/oauth/authorize?client_id=\(clientID)&redirect_uri=http://localhost:4000/cb&scope=email&state=s9&code_challenge=\(challenge)&code_challenge_method=S256"
        // No such user yet: the client hears why.
        #expect(api.call("GET", authorize).headers["Location"]?.contains("error=server_error") == true)
        _ = api.signUp("headless@example.com")
        let location = try #require(api.call("GET", authorize).headers["Location"])
        #expect(location.hasPrefix("http://localhost:4000/cb?code="))
        #expect(location.hasSuffix("&state=s9"))
        let code = String(RedirectURL(location).query.first { $0.name == "code" }?.value ?? "")
        let exchanged = api.form("/oauth/token", [("grant_type", "authorization_code"), ("code", code), ("client_id", clientID),
                                                  ("code_verifier", verifier)])
        #expect(exchanged.status == 200)
        #expect(claims(of: exchanged.json["access_token"]?.stringValue ?? "")["email"] == "headless@example.com")
    }
}

/// Edges of oauthserver/handlers.go the token and userinfo endpoints share with Go's parsing.
@Suite struct OAuthServerParsingTests {
    /// Authorize with a `resource`, consent, and return the code.
    private func code(_ api: GoTrueAPI, client: String, token: String, scope: String = "openid+email") throws -> String {
        let authorize = api.call("GET", "/oauth/authorize?client_id=\(client)&redirect_uri=http://localhost:4000/cb&response_type=code&scope=\(scope)&state=s&code_challenge=\(challenge)&code_challenge_method=S256&resource=https://api.example.com")
        let location = try #require(authorize.headers["Location"])
        let id = String(location.split(separator: "=").last ?? "")
        // Reading it binds the user; a consent given before approves at once.
        let details = api.call("GET", "/oauth/authorizations/\(id)", bearer: token)
        if let remembered = details.json["redirect_url"]?.stringValue {
            return String(RedirectURL(remembered).query.first { $0.name == "code" }?.value ?? "")
        }
        let consent = api.call("POST", "/oauth/authorizations/\(id)/consent", ["action": "approve"], bearer: token)
        let redirectURL = try #require(consent.json["redirect_url"]?.stringValue, "\(location) \(consent.text)")
        return String(RedirectURL(redirectURL).query.first { $0.name == "code" }?.value ?? "")
    }

    /// `OAuthToken` reads `resource` from a JSON body only: the form branch copies seven named
    /// fields and `resource` is not among them.
    @Test func resourceIsCheckedForJSONBodiesOnly() throws {
        let api = try oauthAPI()
        let client = try #require(api.register(["redirect_uris": ["http://localhost:4000/cb"], "token_endpoint_auth_method": "none"])
            .json["client_id"]?.stringValue)
        let token = try #require(api.signUp("resource@example.com")["access_token"]?.stringValue)
        let viaForm = api.form("/oauth/token", [("grant_type", "authorization_code"), ("code", try code(api, client: client, token: token)),
                                                ("client_id", client), ("code_verifier", verifier), ("resource", "https://other.example.com")])
        #expect(viaForm.status == 200, "\(viaForm.text)")
        let json: JSON = ["grant_type": "authorization_code", "code": .string(try code(api, client: client, token: token)),
                          "client_id": .string(client), "code_verifier": .string(verifier), "resource": "https://other.example.com"]
        let jsonType: HTTPHeaders = ["Content-Type": "application/json"]
        let viaJSON = api.call("POST", "/oauth/token", json, headers: jsonType)
        #expect(viaJSON.status == 400, "\(viaJSON.text)")
        #expect(viaJSON.json["error"] == "invalid_grant")
        #expect(viaJSON.json["error_description"] == "Authorization code resource does not match the resource parameter")
        let typed: JSON = ["grant_type": "authorization_code", "code": "x", "client_id": .string(client), "resource": 5]
        #expect(api.call("POST", "/oauth/token", typed, headers: jsonType).json["error_description"] == "Invalid JSON body")
    }

    /// `ParseForm` failing in `ExtractClientCredentials`.
    @Test func aMalformedFormFailsTheClientCredentials() throws {
        let api = try oauthAPI()
        let client = try #require(api.register(["redirect_uris": ["http://localhost:4000/cb"], "token_endpoint_auth_method": "none"])
            .json["client_id"]?.stringValue)
        let refused = api.call("POST", "/oauth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                               raw: "grant_type=authorization_code&client_id=\(client)&x=%zz")
        #expect(refused.status == 400)
        #expect(refused.json["msg"] == "Invalid client credentials: failed to parse form")
    }

    /// The profile claims fall back from an empty or non-string `picture` to `avatar_url`, and
    /// from `preferred_username` to `username`.
    @Test func profileClaimsFallBackPastEmptyValues() throws {
        let api = try oauthAPI()
        let client = try #require(api.register(["redirect_uris": ["http://localhost:4000/cb"], "token_endpoint_auth_method": "none"])
            .json["client_id"]?.stringValue)
        let token = try #require(api.signUp("profile@example.com", data: ["picture": "", "avatar_url": "https://img.example/a.png",
                                                                            "preferred_username": 5, "username": "bob"])["access_token"]?.stringValue)
        let exchanged = api.form("/oauth/token", [("grant_type", "authorization_code"),
                                                  ("code", try code(api, client: client, token: token, scope: "openid+profile")),
                                                  ("client_id", client), ("code_verifier", verifier)])
        let access = try #require(exchanged.json["access_token"]?.stringValue)
        let info = api.call("GET", "/oauth/userinfo", bearer: access)
        #expect(info.json["picture"] == "https://img.example/a.png")
        #expect(info.json["preferred_username"] == "bob")
        let id = claims(of: exchanged.json["id_token"]?.stringValue ?? "")
        #expect(id["picture"] == "https://img.example/a.png")
        #expect(id["preferred_username"] == "bob")
    }

    /// The client and consent bodies are read with `json.NewDecoder(r.Body).Decode`: `null`
    /// fills nothing, what follows the first value is never read, and members match fields
    /// case-insensitively; the update's struct has no `client_type`.
    @Test func bodiesDecodeAsGoDecodesThem() throws {
        let api = try oauthAPI()
        var json = api.admin
        json["Content-Type"] = "application/json"
        let nothing = api.call("POST", "/admin/oauth/clients", headers: json, raw: "null")
        #expect(nothing.json["msg"] == "400: redirect_uris is required")
        #expect(api.call("POST", "/admin/oauth/clients", headers: json,
                         raw: #"{"redirect_uris":["http://localhost:4000/cb"]} trailing"#).status == 201)
        let folded = api.call("POST", "/admin/oauth/clients", headers: json, raw: #"{"Redirect_URIs":["http://localhost:4000/cb"]}"#)
        #expect(folded.status == 201)
        let client = try #require(folded.json["client_id"]?.stringValue)
        #expect(api.call("PUT", "/admin/oauth/clients/\(client)", headers: json, raw: "null").json["msg"] == "No fields provided for update")
        let renamed = api.call("PUT", "/admin/oauth/clients/\(client)", headers: json, raw: #"{"client_type":5,"client_name":"x"}"#)
        #expect(renamed.status == 200, "\(renamed.text)")
        #expect(renamed.json["client_name"] == "x")

        let token = try #require(api.signUp("consent@example.com")["access_token"]?.stringValue)
        func pending() throws -> String {
            let authorize = api.call("GET", "/oauth/authorize?client_id=\(client)&redirect_uri=http://localhost:4000/cb&response_type=code&scope=email&code_challenge=\(challenge)&code_challenge_method=S256")
            let id = String(try #require(authorize.headers["Location"]).split(separator: "=").last ?? "")
            _ = api.call("GET", "/oauth/authorizations/\(id)", bearer: token)
            return id
        }
        let consentHeaders: HTTPHeaders = ["Authorization": "Bearer " + token, "Content-Type": "application/json"]
        let empty = api.call("POST", "/oauth/authorizations/\(try pending())/consent", headers: consentHeaders, raw: "null")
        #expect(empty.json["msg"] == "action must be 'approve' or 'deny'")
        let denied = api.call("POST", "/oauth/authorizations/\(try pending())/consent", headers: consentHeaders, raw: #"{"Action":"deny"} xx"#)
        #expect(denied.status == 200, "\(denied.text)")
        #expect(denied.json["redirect_url"]?.stringValue?.contains("error=access_denied") == true)
    }

    /// `validateResourceParam` reads the resource with `url.Parse`.
    @Test func resourcesAreJudgedByURLParse() {
        #expect(OAuthServerEndpoints.resourceProblem("https://api.example.com") == nil)
        #expect(OAuthServerEndpoints.resourceProblem("https://api.example.com#") == nil)
        #expect(OAuthServerEndpoints.resourceProblem("https://api.example.com?") == nil)
        #expect(OAuthServerEndpoints.resourceProblem("urn:example:api") == nil)
        #expect(OAuthServerEndpoints.resourceProblem("1abc:foo") == "resource must be a valid URI")
        #expect(OAuthServerEndpoints.resourceProblem("https://exa mple.com") == "resource must be a valid URI")
        #expect(OAuthServerEndpoints.resourceProblem("/api") == "resource must be an absolute URI")
        #expect(OAuthServerEndpoints.resourceProblem("https://api.example.com#x") == "resource must not include a fragment component")
        #expect(OAuthServerEndpoints.resourceProblem("https://api.example.com?a=1") == "resource must not include a query component")
    }

    /// `client_uri` and `logo_uri` are read with `url.ParseRequestURI`.
    @Test func clientURIsAreJudgedByParseRequestURI() {
        for good in ["https://example.com/logo.png", "/relative", "mailto:team@example.com", "http://example.com/#frag",
                     "https://example.com/a?b=c"] {
            #expect(OAuthClients.isRequestURI(good), "\(good)")
        }
        for bad in ["relative", "http://exa mple.com", "https://example.com:port/", "1http://example.com", "http://example.com/%zz"] {
            #expect(!OAuthClients.isRequestURI(bad), "\(bad)")
        }
    }

    /// `ParseScopeString`: trimmed whole and by piece; a tab inside a piece stays.
    @Test func scopesParseAsGoParsesThem() {
        #expect(OAuthServerEndpoints.scopes("email\n") == ["email"])
        #expect(OAuthServerEndpoints.scopes(" openid  email ") == ["openid", "email"])
        #expect(OAuthServerEndpoints.scopes("email\tprofile") == ["email\tprofile"])
        #expect(OAuthServerEndpoints.scopes("") == [])
    }
}
