import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import Foundation
import GoFormats
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// One database whose RSA key is generated once (2048-bit generation is the slow part of a
/// debug build); every test builds its own project (own clock, configuration and in-memory
/// provider state) over it, and uses its own providers or emails.
private enum SharedIdP {
    static let database: Database = {
        let database = try! TestStore.database()
        let project = Project(configuration: Configuration(), database: database)
        _ = try! FakeIdentityProvider(api: Core(project: project)).jwks()
        return database
    }()
}

private func idpAPI(clock: ManualClock = ManualClock(), database: Database? = nil,
                    configure: (inout Configuration) -> Void = { _ in }) -> GoTrueAPI {
    var configuration = Configuration()
    configuration.passwordHashIterations = PasswordHasher.insecureTestIterations
    var google = OAuthProviderSettings()
    google.clientIDs = ["google-client-1", "google-client-2"]
    configuration.external.providers["google"] = google
    configuration.external.iosBundleID = "com.example.app"
    configure(&configuration)
    return GoTrueAPI(emulating: Project(configuration: configuration, database: database ?? SharedIdP.database,
                                      environment: Environment(clock: clock)))
}

private func form(_ pairs: [(String, String)]) -> String {
    pairs.map { GoURL.queryEscape($0.0) + "=" + GoURL.queryEscape($0.1) }.joined(separator: "&")
}

extension GoTrueAPI {
    fileprivate var idp: FakeIdentityProvider { FakeIdentityProvider(api: Core(project: project)) }

    fileprivate func idpMint(_ provider: String, _ body: JSONObject) -> HTTPResponse {
        call("POST", "/emulator/v1/idp/\(provider)/id_token", .object(body),
             headers: ["apikey": project.configuration.apiKeys.serviceRole])
    }

    fileprivate func idpPost(_ target: String, _ pairs: [(String, String)], headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        return respond(to: request("POST", target, headers: headers, body: form(pairs)))
    }

    /// Approves the consent form for `email` and returns the response.
    fileprivate func idpApprove(_ provider: String, email: String, name: String = "", state: String = "st-1",
                                redirect: String = "http://127.0.0.1:9999/callback", extra: [(String, String)] = []) -> HTTPResponse {
        idpPost("/emulator/v1/idp/\(provider)/authorize", [
            ("client_id", "client-\(provider)"), ("redirect_uri", redirect), ("response_type", "code"),
            ("scope", "openid email profile"), ("state", state), ("email", email), ("name", name),
            ("action", "approve"),
        ] + extra)
    }
}

/// The query items of a Location header.
private func queryItems(_ location: String) -> [String: String] {
    var items: [String: String] = [:]
    for item in URLComponents(string: location)?.queryItems ?? [] { items[item.name] = item.value ?? "" }
    return items
}

/// The value attribute of the hidden input named `name` in a page.
private func hiddenValue(_ html: String, _ name: String) -> String? {
    guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
    let rest = html[range.upperBound...]
    guard let end = rest.firstIndex(of: "\"") else { return nil }
    return String(rest[..<end]).replacingOccurrences(of: "&#34;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
        .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
        .replacingOccurrences(of: "&amp;", with: "&")
}

@Suite struct IdentityProviderTests {
    // MARK: Discovery, keys, minting

    @Test func discoveryAndJWKSArePublic() throws {
        let api = idpAPI()
        let discovery = api.call("GET", "/emulator/v1/idp/google/.well-known/openid-configuration")
        #expect(discovery.status == 200)
        let issuer = "http://127.0.0.1:9999/emulator/v1/idp/google"
        #expect(discovery.json["issuer"]?.stringValue == issuer)
        #expect(discovery.json["authorization_endpoint"]?.stringValue == issuer + "/authorize")
        #expect(discovery.json["token_endpoint"]?.stringValue == issuer + "/token")
        #expect(discovery.json["userinfo_endpoint"]?.stringValue == issuer + "/userinfo")
        #expect(discovery.json["jwks_uri"]?.stringValue == issuer + "/jwks")
        #expect(discovery.json["response_types_supported"] == ["code"])
        #expect(discovery.json["response_modes_supported"] == ["query", "form_post"])
        #expect(discovery.json["subject_types_supported"] == ["public"])
        #expect(discovery.json["id_token_signing_alg_values_supported"] == ["RS256"])
        #expect(discovery.json["scopes_supported"]?.arrayValue?.contains("openid") == true)
        #expect(discovery.json["claims_supported"]?.arrayValue?.contains("email") == true)
        #expect(discovery.json["token_endpoint_auth_methods_supported"]?.arrayValue?.isEmpty == false)

        let jwks = api.call("GET", "/emulator/v1/idp/apple/jwks")
        #expect(jwks.status == 200)
        let keys = try #require(jwks.json["keys"]?.arrayValue)
        #expect(keys.count == 1)
        let key = try #require(keys.first?.objectValue)
        #expect(key["kty"] == "RSA")
        #expect(key["alg"] == "RS256")
        #expect(key["use"] == "sig")
        #expect(key["e"] == "AQAB")
        #expect(key["d"] == nil && key["p"] == nil)
        let kid = try #require(key["kid"]?.stringValue)
        #expect(kid.hasPrefix("emulator-") && kid.count == "emulator-".count + 16)
        // RFC 7638 §3: the kid is derived from the key's thumbprint.
        let publicKey = try RSAPublicKey(jwk: key)
        #expect(kid == "emulator-" + Hex.encode(try Base64URL.decode(publicKey.thumbprint).prefix(8)))
        #expect(publicKey.bitCount == 2048)
        // Every provider publishes the same key; custom OIDC providers exist too.
        #expect(api.call("GET", "/emulator/v1/idp/custom:acme/jwks").json == jwks.json)
        // Through the gateway the routes need no apikey either (a browser follows them).
        #expect(api.call("GET", "/auth/v1/emulator/v1/idp/google/jwks").status == 200)

        let unknown = api.call("GET", "/emulator/v1/idp/myspace/jwks")
        #expect(unknown.status == 404)
        #expect(errorCode(unknown) == "validation_failed")
        #expect(unknown.json["msg"]?.stringValue == "Unknown identity provider \"myspace\"")
    }

    @Test func mintedTokensVerify() throws {
        let clock = ManualClock()
        let api = idpAPI(clock: clock)
        let response = api.idpMint("google", ["email": "Ada@Example.com", "name": "Ada Lovelace", "picture": "https://p/a.png"])
        #expect(response.status == 200)
        let token = try #require(response.json["id_token"]?.stringValue)
        let header = try #require(try JSON(parsing: Base64URL.decode(String(token.split(separator: ".")[0]))).objectValue)
        #expect(header["alg"] == "RS256")
        #expect(header["typ"] == "JWT")

        let verified = try api.idp.verify(token)
        #expect(Array(verified.keys.prefix(5)) == ["iss", "aud", "exp", "iat", "sub"])
        #expect(verified["iss"]?.stringValue == "http://127.0.0.1:9999/emulator/v1/idp/google")
        #expect(verified["aud"] == "google-client-1")
        #expect(verified["azp"] == "google-client-1")
        #expect(verified["iat"]?.int64Value == 1_767_225_600)
        #expect(verified["exp"]?.int64Value == Int64(1_767_225_600 + 3600))
        #expect(verified["email"] == "Ada@Example.com")
        #expect(verified["email_verified"] == true)
        #expect(verified["name"] == "Ada Lovelace")
        #expect(verified["given_name"] == "Ada")
        #expect(verified["family_name"] == "Lovelace")
        #expect(verified["picture"] == "https://p/a.png")
        #expect(verified["nonce"] == nil)
        #expect(api.idp.isEmulatorToken(token))
        #expect(api.idp.provider(forIssuer: verified["iss"]?.stringValue ?? "") == "google")
        #expect(api.idp.provider(forIssuer: "https://accounts.google.com") == nil)
        #expect(api.idp.provider(forIssuer: "http://127.0.0.1:9999/emulator/v1/idp/nope") == nil)

        // Any JWKS consumer verifies it with the published key.
        let jwk = try #require(api.call("GET", "/emulator/v1/idp/google/jwks").json["keys"]?[0]?.objectValue)
        let kid = try #require(jwk["kid"]?.stringValue)
        let viaJWK = try JWT.verify(token, rsaKeys: [kid: try RSAPublicKey(jwk: jwk)], now: 1_767_225_600)
        #expect(viaJWK.claims == verified)

        // A changed payload, an HS256 key and an expired token are refused.
        let parts = token.split(separator: ".").map(String.init)
        var tamperedClaims = verified
        tamperedClaims["email"] = "eve@example.com"
        let tampered = parts[0] + "." + Base64URL.encode(tamperedClaims.serializedBytes()) + "." + parts[2]
        #expect(throws: (any Error).self) { try api.idp.verify(tampered) }
        let anon = api.project.configuration.apiKeys.anon
        #expect(!api.idp.isEmulatorToken(anon))
        #expect(throws: (any Error).self) { try api.idp.verify(anon) }
        clock.advance(seconds: 3600)
        #expect(throws: JWTError.invalidClaims([.expired])) { try api.idp.verify(token) }
        let expired = try #require(api.idpMint("google", ["email": "x@example.com", "expires_in": -10]).json["id_token"]?.stringValue)
        #expect(throws: JWTError.invalidClaims([.expired])) { try api.idp.verify(expired) }
    }

    @Test func mintDefaults() throws {
        let api = idpAPI()
        func mint(_ provider: String, _ body: JSONObject) throws -> JSONObject {
            let token = try #require(api.idpMint(provider, body).json["id_token"]?.stringValue)
            return try api.idp.verify(token)
        }
        // Stable subject per (provider, lowercased email), in the provider's style.
        let google = try mint("google", ["email": "grace@example.com"])
        let googleSub = try #require(google["sub"]?.stringValue)
        #expect(googleSub.count == 21 && googleSub.hasPrefix("1") && googleSub.allSatisfy(\.isNumber))
        #expect(try mint("google", ["email": "GRACE@example.com"])["sub"]?.stringValue == googleSub)
        #expect(try mint("github", ["email": "grace@example.com", "aud": "gh"])["sub"]?.stringValue != googleSub)
        let appleSub = try #require(try mint("apple", ["email": "grace@example.com"])["sub"]?.stringValue)
        #expect(appleSub.range(of: #"^\d{6}\.[0-9a-f]{32}\.\d{4}$"#, options: .regularExpression) != nil)
        // GitHub's API types the id as an integer: eight digits here.
        let githubSub = try #require(try mint("github", ["email": "grace@example.com", "aud": "gh"])["sub"]?.stringValue)
        #expect(githubSub.range(of: #"^[1-9][0-9]{7}$"#, options: .regularExpression) != nil)
        let bitbucketSub = try #require(try mint("bitbucket", ["email": "grace@example.com", "aud": "bb"])["sub"]?.stringValue)
        #expect(bitbucketSub.range(of: #"^\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}$"#, options: .regularExpression) != nil)
        let notionSub = try #require(try mint("notion", ["email": "grace@example.com", "aud": "n"])["sub"]?.stringValue)
        #expect(notionSub.range(of: #"^[0-9a-f]{32}$"#, options: .regularExpression) != nil)
        // Without an email the subject is random; an explicit one is kept.
        #expect(try mint("google", [:])["sub"] != mint("google", [:])["sub"])
        #expect(try mint("google", ["sub": "given-sub"])["sub"] == "given-sub")

        // aud: the first configured client id; Apple falls back to the iOS bundle id; or as given.
        #expect(google["aud"] == "google-client-1")
        #expect(try mint("google", ["aud": ["a", "b"]])["aud"] == ["a", "b"])

        // nonce: FIPS 180-4 / NIST example "abc" → SHA-256 ba7816bf...
        #expect(try mint("google", ["nonce": "abc"])["nonce"]
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")

        // Apple's shape: no name, string email_verified, private relay flag, auth_time.
        let apple = try mint("apple", ["email": "x1@privaterelay.appleid.com", "name": "Hidden Name", "nonce": "abc"])
        #expect(apple["aud"] == "com.example.app")
        #expect(apple["name"] == nil)
        #expect(apple["email_verified"] == "true")
        #expect(apple["is_private_email"] == true)
        #expect(apple["auth_time"]?.int64Value == 1_767_225_600)
        #expect(apple["nonce"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try mint("apple", ["email": "plain@example.com", "email_verified": false])["is_private_email"] == nil)
        #expect(try mint("apple", ["email": "plain@example.com", "email_verified": false])["email_verified"] == "false")

        // Extra claims are merged last and may override.
        let extra = try mint("google", ["email": "h@example.com", "claims": ["hd": "example.com", "email_verified": false]])
        #expect(extra["hd"] == "example.com")
        #expect(extra["email_verified"] == false)
    }

    @Test func mintErrors() throws {
        let api = idpAPI()
        let unknownKey = api.idpMint("google", ["email": "a@example.com", "emial": "typo"])
        #expect(unknownKey.status == 400)
        #expect(errorCode(unknownKey) == "validation_failed")
        #expect(unknownKey.json["msg"]?.stringValue?.contains("\"emial\"") == true)

        let noAudience = api.idpMint("github", ["email": "a@example.com"])
        #expect(noAudience.status == 400)
        #expect(errorCode(noAudience) == "validation_failed")
        #expect(noAudience.json["msg"]?.stringValue?.contains("\"aud\"") == true)
        #expect(api.idpMint("google", ["aud": 5]).status == 400)
        #expect(api.idpMint("google", ["expires_in": "soon"]).status == 400)
        #expect(api.idpMint("google", ["claims": [1]]).status == 400)

        let service: HTTPHeaders = ["apikey": api.project.configuration.apiKeys.serviceRole]
        let badJSON = api.respond(to: request("POST", "/emulator/v1/idp/google/id_token", headers: service, body: "{\"email\":"))
        #expect(badJSON.status == 400)
        #expect(errorCode(badJSON) == "bad_json")
        #expect(api.idpMint("friendster", [:]).status == 404)

        // The mint route is the service_role's alone, at the root and through the gateway.
        let noKey = api.call("POST", "/emulator/v1/idp/google/id_token", ["email": "a@example.com"])
        #expect(noKey.status == 401)
        #expect(errorCode(noKey) == "no_authorization")
        let anon = api.call("POST", "/emulator/v1/idp/google/id_token", ["email": "a@example.com"],
                            headers: ["apikey": api.project.configuration.apiKeys.anon])
        #expect(anon.status == 403)
        #expect(api.call("POST", "/auth/v1/emulator/v1/idp/google/id_token", ["email": "a@example.com"]).status == 401)
    }

    // MARK: The consent page

    @Test func pageListsPreviousAccountsEscaped() throws {
        let api = idpAPI()
        // A GitHub identity stored earlier, with markup in its name.
        let session = api.signUp("page-owner@example.com")
        let userID = try #require(session["user"]?["id"]?.stringValue)
        try api.project.database.write { conn in
            try conn.insertIdentity(IdentityRecord(
                id: api.project.environment.uuid(), providerID: "gh-4242", userID: userID,
                identityData: #"{"email":"octo@example.com","name":"<b>Octo</b> & \"Cat\""}"#,
                provider: "github", at: 1_767_225_600_000_000))
        }
        let page = api.call("GET", "/emulator/v1/idp/github/authorize?client_id=%3Cscript%3Ex%3C%2Fscript%3E"
            + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A9999%2Fcallback&response_type=code&state=a%22b&scope=user%3Aemail")
        #expect(page.status == 200)
        #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
        let html = page.text
        #expect(html.contains("Sign in with GitHub"))
        #expect(!html.contains("<script>x"))
        #expect(html.contains("&lt;script&gt;x&lt;/script&gt;"))
        #expect(html.contains("name=\"state\" value=\"a&#34;b\""))
        #expect(html.contains("&lt;b&gt;Octo&lt;/b&gt; &amp; &#34;Cat&#34;"))
        #expect(html.contains("data-email=\"octo@example.com\""))
        #expect(html.contains("data-sub=\"gh-4242\""))
        for id in ["id=\"email\"", "id=\"name\"", "id=\"email_verified\"", "id=\"continue\"", "id=\"cancel\""] {
            #expect(html.contains(id))
        }
        // Self-contained: no stylesheets, scripts or images fetched from anywhere.
        #expect(!html.contains("<link") && !html.contains("src=") && !html.contains("<script"))

        // Picking the stored account keeps its subject.
        let picked = api.idpApprove("github", email: "OCTO@example.com")
        #expect(picked.status == 302)
        let code = try #require(queryItems(picked.headers["Location"] ?? "")["code"])
        let redeemed = try #require(api.idp.redeem(code: code, provider: "github"))
        #expect(redeemed.claims["sub"] == "gh-4242")
        #expect(redeemed.claims["name"] == "<b>Octo</b> & \"Cat\"")

        // An approved account is offered afterwards (this process's memory).
        _ = api.idpApprove("github", email: "new-face@example.com", name: "New Face")
        let again = api.call("GET", "/emulator/v1/idp/github/authorize?client_id=c&redirect_uri=http%3A%2F%2Fx%2Fcb&response_type=code")
        #expect(again.text.contains("data-email=\"new-face@example.com\""))
        #expect(again.text.contains("data-email=\"octo@example.com\""))
    }

    @Test func invalidRequestsGetAnErrorPage() {
        let api = idpAPI()
        for query in ["redirect_uri=http%3A%2F%2Fx%2Fcb&response_type=code",
                      "client_id=c&response_type=code",
                      "client_id=c&redirect_uri=http%3A%2F%2Fx%2Fcb&response_type=token",
                      "client_id=c&redirect_uri=http%3A%2F%2Fx%2Fcb",
                      "client_id=c&redirect_uri=javascript%3Aalert(1)&response_type=code",
                      "client_id=c&redirect_uri=http%3A%2F%2Fx%2Fcb&response_type=code&response_mode=fragment"] {
            let response = api.call("GET", "/emulator/v1/idp/google/authorize?" + query)
            #expect(response.status == 400, "\(query)")
            #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
            #expect(response.headers["Location"] == nil)
            #expect(response.text.contains("Invalid authorization request"))
        }
        // A form without an email shows the page again.
        let missing = api.idpApprove("google", email: "")
        #expect(missing.status == 400)
        #expect(missing.text.contains("id=\"problem\""))
    }

    @Test func approveRedirectsWithCodeAndState() throws {
        let api = idpAPI()
        let response = api.idpApprove("google", email: "approve@example.com", name: "Approve Me", state: "s&t=1",
                                      redirect: "http://127.0.0.1:3000/cb?keep=yes",
                                      extra: [("nonce", "raw-nonce"), ("email_verified", "false"), ("email_verified", "true")])
        #expect(response.status == 302)
        let location = try #require(response.headers["Location"])
        #expect(location.hasPrefix("http://127.0.0.1:3000/cb?keep=yes&code="))
        let items = queryItems(location)
        #expect(items["state"] == "s&t=1")
        #expect(items["keep"] == "yes")
        let code = try #require(items["code"])
        #expect(try Base64URL.decode(code).count == 32)

        let redeemed = try #require(api.idp.redeem(code: code, provider: "google"))
        #expect(redeemed.claims["aud"] == "client-google")
        #expect(redeemed.claims["email"] == "approve@example.com")
        #expect(redeemed.claims["email_verified"] == true)
        #expect(redeemed.claims["name"] == "Approve Me")
        #expect(redeemed.claims["sub"]?.stringValue == api.idp.subject(provider: "google", email: "approve@example.com"))
        // The code flow's nonce is echoed as sent (OIDC Core §3.1.3.7).
        #expect(redeemed.claims["nonce"] == "raw-nonce")
        #expect(redeemed.claims["at_hash"]?.stringValue == FakeIdentityProvider.accessTokenHash(redeemed.accessToken))
        #expect(redeemed.appleUser == nil)
        // The claims sign into a token the fake provider verifies.
        #expect(try api.idp.verify(api.idp.sign(redeemed.claims)) == redeemed.claims)
        // Single use, and a code belongs to its provider.
        #expect(api.idp.redeem(code: code, provider: "google") == nil)
        let other = try #require(queryItems(api.idpApprove("google", email: "approve@example.com").headers["Location"] ?? "")["code"])
        #expect(api.idp.redeem(code: other, provider: "github") == nil)
        #expect(api.idp.redeem(code: other, provider: "google") != nil)

        // An unchecked "email verified" box (only the hidden false is sent).
        let unverified = api.idpApprove("google", email: "unverified@example.com", extra: [("email_verified", "false")])
        let unverifiedCode = try #require(queryItems(unverified.headers["Location"] ?? "")["code"])
        #expect(api.idp.redeem(code: unverifiedCode, provider: "google")?.claims["email_verified"] == false)
    }

    @Test func denyRedirectsWithAccessDenied() throws {
        let api = idpAPI()
        let response = api.idpPost("/emulator/v1/idp/google/authorize", [
            ("client_id", "c"), ("redirect_uri", "http://127.0.0.1:9999/callback"), ("response_type", "code"),
            ("state", "deny-state"), ("action", "deny"),
        ])
        #expect(response.status == 302)
        let items = queryItems(response.headers["Location"] ?? "")
        #expect(items["error"] == "access_denied")
        #expect(items["state"] == "deny-state")
        #expect(items["error_description"]?.isEmpty == false)
        #expect(items["code"] == nil)
    }

    @Test func appleFormPostSendsUserOnlyTheFirstTime() throws {
        let api = idpAPI()
        func approve() throws -> (html: String, code: String) {
            let response = api.idpApprove("apple", email: "first@example.com", name: "Ada Lovelace", state: "apple-state")
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
            let html = response.text
            #expect(html.contains("method=\"post\" action=\"http://127.0.0.1:9999/callback\""))
            #expect(hiddenValue(html, "state") == "apple-state")
            #expect(html.contains("type=\"submit\""))
            return (html, try #require(hiddenValue(html, "code")))
        }
        let first = try approve()
        let user = try #require(hiddenValue(first.html, "user"))
        #expect(try JSON(parsing: user) == ["name": ["firstName": "Ada", "lastName": "Lovelace"], "email": "first@example.com"])
        let redeemed = try #require(api.idp.redeem(code: first.code, provider: "apple"))
        #expect(redeemed.appleUser == user)
        #expect(redeemed.claims["name"] == nil)
        #expect(redeemed.claims["email_verified"] == "true")

        let second = try approve()
        #expect(hiddenValue(second.html, "user") == nil)
        #expect(api.idp.redeem(code: second.code, provider: "apple")?.appleUser == nil)

        // Other providers answer form_post when asked, without `user`.
        let google = api.idpApprove("google", email: "fp@example.com", extra: [("response_mode", "form_post")])
        #expect(google.status == 200)
        #expect(hiddenValue(google.text, "code") != nil)
        #expect(hiddenValue(google.text, "user") == nil)
    }

    @Test func codesExpireOnTheVirtualClock() throws {
        let clock = ManualClock()
        let api = idpAPI(clock: clock)
        func code() throws -> String {
            try #require(queryItems(api.idpApprove("google", email: "late@example.com").headers["Location"] ?? "")["code"])
        }
        let fresh = try code()
        clock.advance(seconds: 599)
        #expect(api.idp.redeem(code: fresh, provider: "google") != nil)
        let stale = try code()
        clock.advance(seconds: 600)
        #expect(api.idp.redeem(code: stale, provider: "google") == nil)
        let stale2 = try code()
        clock.advance(seconds: 601)
        let response = api.idpPost("/emulator/v1/idp/google/token", [
            ("grant_type", "authorization_code"), ("code", stale2), ("redirect_uri", "http://127.0.0.1:9999/callback"),
            ("client_id", "client-google"),
        ])
        #expect(response.status == 400)
        #expect(response.json["error"] == "invalid_grant")
    }

    @Test func tokenEndpointAndUserinfo() throws {
        let api = idpAPI()
        // RFC 7636 Appendix B: verifier → S256 challenge.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let approved = api.idpApprove("google", email: "tok@example.com", name: "Token User",
                                      extra: [("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"),
                                              ("code_challenge_method", "S256")])
        let code = try #require(queryItems(approved.headers["Location"] ?? "")["code"])
        let base: [(String, String)] = [("grant_type", "authorization_code"), ("code", code),
                                        ("redirect_uri", "http://127.0.0.1:9999/callback")]
        // Client authentication by HTTP Basic (RFC 6749 §2.3.1).
        let basic = "Basic " + Base64.encode(Array("client-google:secret".utf8))
        let response = api.idpPost("/emulator/v1/idp/google/token", base + [("code_verifier", verifier)],
                                   headers: ["Authorization": basic])
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.json["token_type"] == "Bearer")
        #expect(response.json["expires_in"] == 3600)
        #expect(response.json["scope"] == "openid email profile")
        #expect(response.json["refresh_token"]?.stringValue?.isEmpty == false)
        let idToken = try #require(response.json["id_token"]?.stringValue)
        let claims = try api.idp.verify(idToken)
        #expect(claims["email"] == "tok@example.com")
        #expect(claims["aud"] == "client-google")
        let accessToken = try #require(response.json["access_token"]?.stringValue)
        #expect(claims["at_hash"]?.stringValue == FakeIdentityProvider.accessTokenHash(accessToken))

        let info = api.call("GET", "/emulator/v1/idp/google/userinfo", bearer: accessToken)
        #expect(info.status == 200)
        #expect(info.json["sub"] == claims["sub"])
        #expect(info.json["email"] == "tok@example.com")
        #expect(info.json["email_verified"] == true)
        #expect(info.json["name"] == "Token User")
        #expect(api.call("GET", "/emulator/v1/idp/github/userinfo", bearer: accessToken).status == 401)
        let refused = api.call("GET", "/emulator/v1/idp/google/userinfo", bearer: "nope")
        #expect(refused.status == 401)
        #expect(refused.headers["WWW-Authenticate"] == "Bearer error=\"invalid_token\"")
        #expect(api.call("GET", "/emulator/v1/idp/google/userinfo").status == 401)

        // Reuse, a wrong grant type, a wrong redirect, a missing or wrong PKCE verifier.
        let reused = api.idpPost("/emulator/v1/idp/google/token", base + [("code_verifier", verifier)])
        #expect(reused.status == 400 && reused.json["error"] == "invalid_grant")
        #expect(api.idpPost("/emulator/v1/idp/google/token", [("grant_type", "password")]).json["error"] == "unsupported_grant_type")
        #expect(api.idpPost("/emulator/v1/idp/google/token", [("grant_type", "authorization_code")]).json["error"] == "invalid_request")
        func freshCode(_ extra: [(String, String)] = []) throws -> String {
            try #require(queryItems(api.idpApprove("google", email: "tok@example.com", extra: extra).headers["Location"] ?? "")["code"])
        }
        let wrongRedirect = api.idpPost("/emulator/v1/idp/google/token", [
            ("grant_type", "authorization_code"), ("code", try freshCode()), ("redirect_uri", "http://evil/cb"),
        ])
        #expect(wrongRedirect.json["error"] == "invalid_grant")
        let wrongClient = api.idpPost("/emulator/v1/idp/google/token", [
            ("grant_type", "authorization_code"), ("code", try freshCode()),
            ("redirect_uri", "http://127.0.0.1:9999/callback"), ("client_id", "someone-else"),
        ])
        #expect(wrongClient.json["error"] == "invalid_grant")
        let pkce = [("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"), ("code_challenge_method", "S256")]
        let noVerifier = api.idpPost("/emulator/v1/idp/google/token", [
            ("grant_type", "authorization_code"), ("code", try freshCode(pkce)), ("redirect_uri", "http://127.0.0.1:9999/callback"),
        ])
        #expect(noVerifier.json["error"] == "invalid_grant")
        let badVerifier = api.idpPost("/emulator/v1/idp/google/token", [
            ("grant_type", "authorization_code"), ("code", try freshCode(pkce)),
            ("redirect_uri", "http://127.0.0.1:9999/callback"), ("code_verifier", verifier + "x"),
        ])
        #expect(badVerifier.json["error"] == "invalid_grant")
    }

    @Test func autoApproveWithLoginHint() throws {
        let api = idpAPI { $0.identityProviders.autoApprove = true }
        let query = "client_id=c&redirect_uri=http%3A%2F%2F127.0.0.1%3A9999%2Fcallback&response_type=code&state=auto"
        let approved = api.call("GET", "/emulator/v1/idp/google/authorize?" + query + "&login_hint=auto%40example.com")
        #expect(approved.status == 302)
        let items = queryItems(approved.headers["Location"] ?? "")
        #expect(items["state"] == "auto")
        let code = try #require(items["code"])
        let claims = try #require(api.idp.redeem(code: code, provider: "google")).claims
        #expect(claims["email"] == "auto@example.com")
        #expect(claims["email_verified"] == true)
        #expect(claims["sub"]?.stringValue == api.idp.subject(provider: "google", email: "auto@example.com"))
        // Without a hint (or with one that is no email) the page is shown; with auto-approve
        // off, the hint only fills the field.
        #expect(api.call("GET", "/emulator/v1/idp/google/authorize?" + query).status == 200)
        #expect(api.call("GET", "/emulator/v1/idp/google/authorize?" + query + "&login_hint=someone").status == 200)
        let manual = idpAPI()
        let page = manual.call("GET", "/emulator/v1/idp/google/authorize?" + query + "&login_hint=auto%40example.com")
        #expect(page.status == 200)
        #expect(page.text.contains("value=\"auto@example.com\""))
    }

    @Test func publicPaths() {
        for path in ["/emulator/v1/idp/google/jwks", "/emulator/v1/idp/google/authorize", "/emulator/v1/idp/google/token",
                     "/emulator/v1/idp/custom:x/userinfo", "/emulator/v1/idp/apple/.well-known/openid-configuration"] {
            #expect(ControlIdPEndpoints.isPublic(path: path), "\(path)")
        }
        for path in ["/emulator/v1/idp/google/id_token", "/emulator/v1/idp/google", "/emulator/v1/idp//jwks",
                     "/emulator/v1/reset", "/emulator/v1/idp/google/jwks/extra", "/emulator/v1/idp/../reset",
                     "/emulator/v1/idp/google/.well-known/other"] {
            #expect(!ControlIdPEndpoints.isPublic(path: path), "\(path)")
        }
    }

    // MARK: Key persistence

    /// The provider key is the emulator's own secret: an export leaves it out unless asked for,
    /// and importing such a snapshot leaves the providers to make a new key.
    @Test func keyLeavesAnExportOnlyWhenAskedFor() throws {
        func kid(_ api: GoTrueAPI) -> String? { api.call("GET", "/emulator/v1/idp/google/jwks").json["keys"]?[0]?["kid"]?.stringValue }
        let api = idpAPI(database: try TestStore.database())
        _ = try #require(api.idpMint("google", ["email": "snap@example.com"]).json["id_token"]?.stringValue)
        let original = try #require(kid(api))

        let plain = api.control("GET", "/emulator/v1/export")
        #expect(plain.status == 200)
        #expect(plain.json["tables"]?["idp_signing_keys"] == nil)
        #expect(!plain.text.contains("\"d\":"))
        let full = api.control("GET", "/emulator/v1/export?include_secrets=true")
        #expect(full.json["tables"]?["idp_signing_keys"]?[0]?["kid"]?.stringValue == original)
        #expect(api.control("GET", "/emulator/v1/export?include_secrets=maybe").status == 400)

        // With the key, an import keeps it; without, the next token is signed by a new one.
        #expect(api.controlRaw("POST", "/emulator/v1/import", body: full.text).status == 200)
        #expect(kid(api) == original)
        #expect(api.controlRaw("POST", "/emulator/v1/import", body: plain.text).status == 200)
        let token = try #require(api.idpMint("google", ["email": "snap@example.com"]).json["id_token"]?.stringValue)
        let replaced = try #require(kid(api))
        #expect(replaced != original)
        #expect(try api.idp.verify(token)["email"] == "snap@example.com")
    }

    @Test func keySurvivesRestartsAndIsReplacedAfterReset() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("idp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("auth.db").path

        func kid(_ api: GoTrueAPI) -> String? { api.call("GET", "/emulator/v1/idp/google/jwks").json["keys"]?[0]?["kid"]?.stringValue }
        let first = idpAPI(database: try Database(path: path))
        let token = try #require(first.idpMint("google", ["email": "persist@example.com"]).json["id_token"]?.stringValue)
        let original = try #require(kid(first))

        // Another project (a restart, or a second process) on the same file signs with that key.
        let second = idpAPI(database: try Database(path: path))
        #expect(kid(second) == original)
        #expect(second.idp.isEmulatorToken(token))
        #expect(try second.idp.verify(token)["email"] == "persist@example.com")

        // A reset empties the table: the next need makes a new key, and both projects follow it.
        #expect(second.control("POST", "/emulator/v1/reset").status == 200)
        #expect(!first.idp.isEmulatorToken(token))
        #expect(throws: (any Error).self) { try first.idp.verify(token) }
        let replaced = try #require(kid(first))
        #expect(replaced != original)
        #expect(kid(second) == replaced)
    }
}

/// Beyond loopback (`Dashboard.requiresKey`) the consent page asks for the project's key first:
/// otherwise anyone on the network could sign in as any user through it.
@Suite struct ConsentBeyondLoopbackTests {
    @Test func theConsentPageAsksForTheKeyFirst() throws {
        let api = idpAPI { $0.identityProviders.autoApprove = true }
        api.project.dashboard.configure(enabled: true, requiresKey: true)
        let query = "client_id=c&redirect_uri=http%3A%2F%2F127.0.0.1%3A9999%2Fcallback&response_type=code&login_hint=auto%40example.com"
        // Not even auto-approval skips it.
        let prompt = api.call("GET", "/emulator/v1/idp/google/authorize?" + query)
        #expect(prompt.status == 401)
        #expect(prompt.text.contains("id=\"unlock\""))
        #expect(prompt.headers["Location"] == nil)

        // Approving without the key, or with a wrong one, shows the prompt again.
        let bare = api.idpApprove("google", email: "eve@example.com")
        #expect(bare.status == 401)
        let wrong = api.idpApprove("google", email: "eve@example.com", extra: [("key", "guess")])
        #expect(wrong.status == 403)
        #expect(wrong.text.contains("id=\"problem\""))
        #expect(try api.idp.knownAccount(provider: "google", email: "eve@example.com") == nil)

        // Typed into the page, the key unlocks the form, which then carries it.
        let key = api.project.configuration.apiKeys.serviceRole
        let unlocked = api.idpPost("/emulator/v1/idp/google/authorize", [
            ("client_id", "c"), ("redirect_uri", "http://127.0.0.1:9999/callback"), ("response_type", "code"),
            ("key", key), ("action", "unlock"),
        ])
        #expect(unlocked.status == 200)
        #expect(unlocked.text.contains("id=\"consent\""))
        #expect(unlocked.text.contains("name=\"key\" value=\"\(key)\""))
        let approved = api.idpApprove("google", email: "ok@example.com", extra: [("key", key)])
        #expect(approved.status == 302)
        #expect(queryItems(approved.headers["Location"] ?? "")["code"] != nil)

        // The key as a header (scripts) or the dashboard's login cookie work as for the dashboard.
        let viaHeader = api.call("GET", "/emulator/v1/idp/google/authorize?" + query, headers: ["apikey": key])
        #expect(viaHeader.status == 302)
    }

    @Test func onLoopbackNothingChanges() {
        let api = idpAPI()
        #expect(api.idpApprove("google", email: "free@example.com").status == 302)
    }
}
