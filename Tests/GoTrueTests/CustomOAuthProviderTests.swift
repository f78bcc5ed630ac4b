import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: the real server's internal/api/custom_oauth_admin.go (and its tests),
// middleware.go's requireCustomOAuthEnabled, utilities/url_validator.go and token_oidc.go's
// `custom:` branch.

private let fakeIssuer = "http://127.0.0.1:9999/emulator/v1/idp/custom:acme"

private extension GoTrueAPI {
    var admin: HTTPHeaders { ["Authorization": "Bearer " + project.configuration.apiKeys.serviceRole] }

    func providers(_ method: String, _ path: String = "", _ body: JSONObject? = nil) -> HTTPResponse {
        call(method, "/admin/custom-providers" + path, body.map(JSON.object), headers: admin)
    }
}

private func oidcBody(_ changes: JSONObject = [:]) -> JSONObject {
    var body: JSONObject = [
        "provider_type": "oidc", "identifier": "custom:acme", "name": "Acme", "client_id": "acme-client",
        "client_secret": "acme-secret", "issuer": .string(fakeIssuer),
    ]
    for (key, value) in changes { body[key] = value }
    return body
}

private func oauth2Body(_ changes: JSONObject = [:]) -> JSONObject {
    var body: JSONObject = [
        "provider_type": "oauth2", "identifier": "custom:gh", "name": "GitHub Enterprise", "client_id": "gh-client",
        "client_secret": "gh-secret", "authorization_url": "https://github.example.com/login/oauth/authorize",
        "token_url": "https://github.example.com/login/oauth/access_token", "userinfo_url": "https://api.github.example.com/user",
    ]
    for (key, value) in changes { body[key] = value }
    return body
}

private func expectError(_ response: HTTPResponse, _ status: Int, _ code: String, _ message: String,
                         sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
    #expect(errorCode(response) == code, "\(response.text)", sourceLocation: sourceLocation)
    #expect(response.json["msg"]?.stringValue == message, "\(response.text)", sourceLocation: sourceLocation)
}

@Suite struct CustomOAuthProviderTests {
    /// One case per rule of `adminCustomOAuthProviderCreate`, in its order of checks.
    static let createRules: [(String, JSONObject, String)] = [
        ("provider type", oidcBody(["provider_type": "saml"]), "provider_type must be either 'oauth2' or 'oidc'"),
        ("no type", oidcBody(["provider_type": .null]), "provider_type must be either 'oauth2' or 'oidc'"),
        ("identifier", oidcBody(["identifier": ""]), "identifier is required"),
        ("prefix", oidcBody(["identifier": "acme"]), "identifier must start with 'custom:' prefix, e.g. 'custom:acme'"),
        ("name", oidcBody(["name": ""]), "name is required"),
        ("client id", oidcBody(["client_id": ""]), "client_id is required"),
        ("client secret", oidcBody(["client_secret": .null]), "client_secret is required"),
        ("issuer", oidcBody(["issuer": ""]), "issuer is required for OIDC providers"),
        ("authorization url", oauth2Body(["authorization_url": ""]), "authorization_url is required for OAuth2 providers"),
        ("token url", oauth2Body(["token_url": ""]), "token_url is required for OAuth2 providers"),
        ("userinfo url", oauth2Body(["userinfo_url": ""]), "userinfo_url is required for OAuth2 providers"),
        ("reserved param", oidcBody(["authorization_params": ["state": "x"]]), "Cannot override reserved OAuth parameter: state"),
        ("reserved nonce", oidcBody(["authorization_params": ["nonce": "n"]]), "Cannot override reserved OAuth parameter: nonce"),
        ("param type", oidcBody(["authorization_params": ["prompt": 1]]), "Authorization parameter \"prompt\" must be a string"),
        ("mapping target", oidcBody(["attribute_mapping": ["role": "groups"]]), "Cannot map to protected system field: role"),
        ("mapping app_metadata", oidcBody(["attribute_mapping": ["app_metadata": "x"]]), "Cannot map to protected system field: app_metadata"),
        ("claims allowlist", oidcBody(["custom_claims_allowlist": ["groups", "  "]]), "custom_claims_allowlist entries must be non-empty strings"),
        ("https", oauth2Body(["token_url": "http://github.example.com/token"]), "URL must use HTTPS"),
        ("hostname", oauth2Body(["token_url": "https:///token"]), "URL must have a valid hostname"),
        ("localhost", oauth2Body(["token_url": "https://localhost:8443/token"]), "URL cannot point to localhost or loopback addresses"),
        ("loopback", oauth2Body(["token_url": "https://127.0.0.2/token"]), "URL cannot resolve to loopback addresses"),
        ("private", oauth2Body(["userinfo_url": "https://192.168.1.4/user"]), "URL cannot resolve to private network addresses"),
        ("link-local", oauth2Body(["jwks_uri": "https://169.254.169.254/keys"]), "URL cannot resolve to link-local addresses"),
        ("private v6", oauth2Body(["authorization_url": "https://[fd00::1]/authorize"]), "URL cannot resolve to private network addresses"),
        // Go's url.Parse refuses a `\` in userinfo, as GoTrue answers; a browser would read
        // 127.0.0.1 (WHATWG: `\` ends the authority of an https URL) where a split at the last
        // "@" reads evil.example.
        ("backslash userinfo", oauth2Body(["authorization_url": #"https://127.0.0.1:9999\@evil.example/authorize"#]), "Invalid URL format"),
        ("backslash host", oauth2Body(["token_url": #"https://evil.example\@127.0.0.1/token"#]), "Invalid URL format"),
        // Go's To4: an IPv4-mapped address is the IPv4 address it holds.
        ("mapped loopback", oauth2Body(["token_url": "https://[::ffff:127.0.0.1]/token"]), "URL cannot resolve to loopback addresses"),
        ("mapped private", oauth2Body(["token_url": "https://[::ffff:a00:1]/token"]), "URL cannot resolve to private network addresses"),
        ("link-local multicast", oauth2Body(["token_url": "https://224.0.0.251/token"]), "URL cannot resolve to link-local addresses"),
        // Names to Go, loopback to a browser (WHATWG IPv4 parser) and to a resolver.
        ("hex loopback", oauth2Body(["authorization_url": "https://0x7f.1/authorize"]), "URL cannot resolve to loopback addresses"),
        ("number loopback", oauth2Body(["authorization_url": "https://2130706433/authorize"]), "URL cannot resolve to loopback addresses"),
        ("localhost dot", oauth2Body(["authorization_url": "https://LocalHost./authorize"]), "URL cannot resolve to loopback addresses"),
        // Go accepts any run of port digits; a browser refuses a port past 65535.
        ("port", oauth2Body(["authorization_url": "https://idp.example:99999/authorize"]), "Invalid URL format"),
        ("oidc issuer https", oidcBody(["issuer": "http://idp.example.com"]), "URL must use HTTPS"),
        ("discovery unreachable", oidcBody(["issuer": "https://idp.example.com"]),
         "OIDC discovery from \"https://idp.example.com/.well-known/openid-configuration\" failed: oidc: discovery request to "
            + "https://idp.example.com/.well-known/openid-configuration failed: the emulator makes no outbound requests; use an "
            + "issuer of its fake identity provider, http://127.0.0.1:9999/emulator/v1/idp/custom:<name>"),
        ("issuer mismatch", oidcBody(["discovery_url": "http://127.0.0.1:9999/emulator/v1/idp/custom:other/.well-known/openid-configuration"]),
         "OIDC discovery from \"http://127.0.0.1:9999/emulator/v1/idp/custom:other/.well-known/openid-configuration\" failed: "
            + "oidc: issuer mismatch, expected \"\(fakeIssuer)\" got \"http://127.0.0.1:9999/emulator/v1/idp/custom:other\""),
        ("no document", oidcBody(["issuer": "http://127.0.0.1:9999/emulator/v1/idp/nope!"]),
         "OIDC discovery from \"http://127.0.0.1:9999/emulator/v1/idp/nope!/.well-known/openid-configuration\" failed: oidc: "
            + "discovery request to http://127.0.0.1:9999/emulator/v1/idp/nope!/.well-known/openid-configuration returned 404 Not Found"),
    ]

    @Test(arguments: createRules)
    func createValidation(_ rule: (String, JSONObject, String)) throws {
        let api = try makeAPI()
        expectError(api.providers("POST", "", rule.1), 400, "validation_failed", rule.2)
        #expect(api.providers("GET").json["providers"]?.arrayValue?.isEmpty == true, "\(rule.0)")
    }

    @Test func badJSONIsGoUnmarshalError() throws {
        let api = try makeAPI()
        expectError(api.providers("POST", "", oidcBody(["scopes": "openid"])), 400, "bad_json",
                    "Could not parse request body as JSON: json: cannot unmarshal string into Go struct field "
                        + "AdminCustomOAuthProviderParams.scopes of type []string")
    }

    @Test func oidcRoundTrip() throws {
        let api = try makeAPI()
        let created = api.providers("POST", "", oidcBody(["scopes": ["email"], "attribute_mapping": ["name": "preferred_username"],
                                                          "authorization_params": ["prompt": "login"]]))
        #expect(created.status == 201, "\(created.text)")
        let o = try #require(created.json.objectValue)
        #expect(o.keys == ["id", "provider_type", "identifier", "name", "client_id", "acceptable_client_ids", "scopes",
                           "pkce_enabled", "attribute_mapping", "custom_claims_allowlist", "authorization_params", "enabled",
                           "email_optional", "issuer", "skip_nonce_check", "discovery_document", "created_at", "updated_at"])
        #expect(o["scopes"] == ["openid", "email"])  // openid first, added for OIDC
        #expect(o["pkce_enabled"] == true && o["enabled"] == true && o["email_optional"] == false)
        #expect(o["acceptable_client_ids"] == .null)  // the model as built; the row holds []
        #expect(o["discovery_document"]?.objectValue?["issuer"]?.stringValue == fakeIssuer)
        #expect(o["discovery_document"]?.objectValue?["jwks_uri"]?.stringValue == fakeIssuer + "/jwks")
        #expect(!created.text.contains("acme-secret"))

        let fetched = api.providers("GET", "/custom:acme")
        #expect(fetched.status == 200)
        #expect(fetched.json["acceptable_client_ids"] == [])
        #expect(fetched.json["attribute_mapping"] == ["name": "preferred_username"])
        #expect(!fetched.text.contains("acme-secret"))

        let updated = api.providers("PUT", "/custom:acme", ["name": "Acme 2", "scopes": ["profile"], "enabled": false,
                                                             "client_secret": "rotated"])
        #expect(updated.status == 200, "\(updated.text)")
        #expect(updated.json["name"] == "Acme 2")
        #expect(updated.json["scopes"] == ["openid", "profile"])
        #expect(updated.json["enabled"] == false)
        #expect(!updated.text.contains("rotated"))
        let row = try #require(try Core(project: api.project).read { conn in try conn.customOAuthProvider(identifier: "custom:acme") })
        #expect(row.clientSecret == "rotated")

        let listed = api.providers("GET")
        #expect(listed.json["providers"]?.arrayValue?.count == 1)
        #expect(!listed.text.contains("secret\""))

        let deleted = api.providers("DELETE", "/custom:acme")
        #expect(deleted.status == 204 && deleted.body.isEmpty)
        expectError(api.providers("GET", "/custom:acme"), 404, "custom_provider_not_found", "Custom OAuth provider not found")
        expectError(api.providers("DELETE", "/custom:acme"), 404, "custom_provider_not_found", "Custom OAuth provider not found")
        expectError(api.providers("PUT", "/custom:acme", ["name": "x"]), 404, "custom_provider_not_found", "Custom OAuth provider not found")
    }

    @Test func oauth2ShapeAndTypeFilter() throws {
        let api = try makeAPI()
        let created = api.providers("POST", "", oauth2Body(["pkce_enabled": false, "email_optional": true]))
        #expect(created.status == 201, "\(created.text)")
        let o = try #require(created.json.objectValue)
        #expect(o["scopes"] == .null && o["issuer"] == nil && o["discovery_document"] == nil)
        #expect(o["token_url"] == "https://github.example.com/login/oauth/access_token")
        #expect(o["pkce_enabled"] == false && o["email_optional"] == true && o["attribute_mapping"] == [:])
        #expect(api.providers("POST", "", oidcBody()).status == 201)

        #expect(api.providers("GET", "?type=oauth2").json["providers"]?.arrayValue?.map { $0["identifier"] } == ["custom:gh"])
        #expect(api.providers("GET", "?type=oidc").json["providers"]?.arrayValue?.map { $0["identifier"] } == ["custom:acme"])
        #expect(api.providers("GET").json["providers"]?.arrayValue?.map { $0["identifier"] } == ["custom:acme", "custom:gh"])
        expectError(api.providers("GET", "?type=saml"), 400, "validation_failed", "type must be either 'oauth2' or 'oidc'")
    }

    /// `FindAllCustomOAuthProvidersByType` orders by `provider_type desc` only: Postgres reads the
    /// one type through its index, oldest first; the whole list is newest first.
    @Test func aTypeFilteredListIsOldestFirst() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        for name in ["one", "two", "three"] {
            #expect(api.providers("POST", "", oauth2Body(["identifier": .string("custom:\(name)")])).status == 201)
            clock.advance(seconds: 1)
        }
        #expect(api.providers("GET", "?type=oauth2").json["providers"]?.arrayValue?.map { $0["identifier"] }
            == ["custom:one", "custom:two", "custom:three"])
        #expect(api.providers("GET").json["providers"]?.arrayValue?.map { $0["identifier"] }
            == ["custom:three", "custom:two", "custom:one"])
    }

    /// chi mounts `/{identifier}/`: one trailing slash names the same provider.
    @Test func aTrailingSlashNamesTheProvider() throws {
        let api = try makeAPI()
        #expect(api.providers("POST", "", oidcBody()).status == 201)
        #expect(api.providers("GET", "/custom:acme/").json["identifier"] == "custom:acme")
        #expect(api.providers("PUT", "/custom:acme/", ["name": "Renamed"]).json["name"] == "Renamed")
        #expect(api.providers("DELETE", "/custom:acme/").status == 204)
    }

    @Test func conflictAndPathPrefix() throws {
        let api = try makeAPI()
        #expect(api.providers("POST", "", oidcBody()).status == 201)
        expectError(api.providers("POST", "", oidcBody()), 400, "conflict", "A custom OAuth provider with this identifier already exists")
        for method in ["GET", "PUT", "DELETE"] {
            expectError(api.providers(method, "/acme", method == "PUT" ? [:] : nil), 400, "validation_failed",
                        "identifier must start with 'custom:' prefix, e.g. 'custom:acme'")
        }
        // chi matches the escaped path, so an escaped colon is not the prefix.
        expectError(api.providers("GET", "/custom%3Aacme"), 400, "validation_failed",
                    "identifier must start with 'custom:' prefix, e.g. 'custom:custom%3Aacme'")
    }

    @Test func updateValidation() throws {
        let api = try makeAPI()
        #expect(api.providers("POST", "", oidcBody()).status == 201)
        #expect(api.providers("POST", "", oauth2Body()).status == 201)
        expectError(api.providers("PUT", "/custom:acme", ["authorization_params": ["redirect_uri": "x"]]), 400,
                    "validation_failed", "Cannot override reserved OAuth parameter: redirect_uri")
        expectError(api.providers("PUT", "/custom:acme", ["attribute_mapping": ["email_verified": "x"]]), 400,
                    "validation_failed", "Cannot map to protected system field: email_verified")
        expectError(api.providers("PUT", "/custom:acme", ["custom_claims_allowlist": [""]]), 400,
                    "validation_failed", "custom_claims_allowlist entries must be non-empty strings")
        // Validations before the lookup: a missing provider still gets them first.
        expectError(api.providers("PUT", "/custom:none", ["authorization_params": ["state": "x"]]), 400,
                    "validation_failed", "Cannot override reserved OAuth parameter: state")
        expectError(api.providers("PUT", "/custom:gh", ["userinfo_url": "http://api.example.com/user"]), 400,
                    "validation_failed", "URL must use HTTPS")
        expectError(api.providers("PUT", "/custom:acme", ["issuer": "https://idp.example.com"]), 400, "validation_failed",
                    "OIDC discovery from \"https://idp.example.com/.well-known/openid-configuration\" failed: oidc: discovery request "
                        + "to https://idp.example.com/.well-known/openid-configuration failed: the emulator makes no outbound requests; "
                        + "use an issuer of its fake identity provider, http://127.0.0.1:9999/emulator/v1/idp/custom:<name>")
        // OAuth2 fields sent to an OIDC provider are ignored, as in updateProviderFromParams.
        let ignored = api.providers("PUT", "/custom:acme", ["token_url": "http://nope", "provider_type": "oauth2"])
        #expect(ignored.status == 200 && ignored.json["token_url"] == nil && ignored.json["provider_type"] == "oidc")
    }

    @Test func quota() throws {
        let api = try makeAPI { $0.customOAuth.maxProviders = 1 }
        #expect(api.providers("POST", "", oidcBody()).status == 201)
        expectError(api.providers("POST", "", oauth2Body()), 400, "over_custom_provider_quota",
                    "Maximum number of custom OAuth/OIDC providers reached")
        #expect(api.providers("DELETE", "/custom:acme").status == 204)
        #expect(api.providers("POST", "", oauth2Body()).status == 201)
    }

    @Test func disabledAndAdminOnly() throws {
        let api = try makeAPI { $0.customOAuth.enabled = false }
        for (method, path) in [("GET", ""), ("POST", ""), ("GET", "/custom:a"), ("PUT", "/custom:a"), ("DELETE", "/custom:a")] {
            expectError(api.providers(method, path, method == "GET" || method == "DELETE" ? nil : oidcBody()), 404,
                        "feature_disabled", "Custom OAuth providers are disabled")
        }
        // The admin check comes first.
        let anonymous = api.call("GET", "/admin/custom-providers", bearer: api.project.configuration.apiKeys.anon)
        expectError(anonymous, 403, "not_admin", "User not allowed")
        let grant = api.call("POST", "/token?grant_type=id_token", ["provider": "custom:acme", "id_token": "x.y.z"])
        expectError(grant, 400, "validation_failed", "Custom OAuth providers are disabled")
    }

    @Test func idTokenGrantThroughFakeIssuer() throws {
        let api = try makeAPI()
        var body = oidcBody(["acceptable_client_ids": ["acme-ios"]])
        body["custom_claims_allowlist"] = ["groups"]
        #expect(api.providers("POST", "", body).status == 201)
        #expect(api.providers("POST", "", oauth2Body()).status == 201)

        let mint = api.call("POST", "/emulator/v1/idp/custom:acme/id_token",
                            ["email": "ada@example.com", "name": "Ada", "aud": "acme-ios", "nonce": "n-1"],
                            headers: ["apikey": api.project.configuration.apiKeys.serviceRole])
        let token = try #require(mint.json["id_token"]?.stringValue, "\(mint.text)")
        #expect(claims(of: token)["iss"]?.stringValue == fakeIssuer)

        let session = api.call("POST", "/token?grant_type=id_token",
                               ["provider": "custom:acme", "id_token": .string(token), "nonce": "n-1"])
        #expect(session.status == 200, "\(session.text)")
        let user = try #require(session.json["user"]?.objectValue)
        #expect(user["email"] == "ada@example.com")
        #expect(user["app_metadata"]?["provider"] == "custom:acme")
        #expect(user["identities"]?.arrayValue?.first?["provider"] == "custom:acme")
        #expect(user["user_metadata"]?["iss"]?.stringValue == fakeIssuer)

        // The provider's own client id is an accepted audience too (the mint route's default).
        let second = api.call("POST", "/emulator/v1/idp/custom:acme/id_token", ["email": "ada@example.com"],
                              headers: ["apikey": api.project.configuration.apiKeys.serviceRole])
        #expect(claims(of: second.json["id_token"]?.stringValue ?? "")["aud"] == "acme-client")
        let again = api.call("POST", "/token?grant_type=id_token", ["provider": "custom:acme", "id_token": second.json["id_token"] ?? .null])
        #expect(again.status == 200, "\(again.text)")
        #expect(again.json["user"]?["id"] == user["id"])

        let wrong = api.call("POST", "/emulator/v1/idp/custom:acme/id_token", ["email": "b@example.com", "aud": "someone-else"],
                             headers: ["apikey": api.project.configuration.apiKeys.serviceRole])
        let refused = api.call("POST", "/token?grant_type=id_token", ["provider": "custom:acme", "id_token": wrong.json["id_token"] ?? .null])
        #expect(refused.status == 400)
        #expect(refused.json["error_description"] == "Unacceptable audience in id_token: [someone-else]")

        expectError(api.call("POST", "/token?grant_type=id_token", ["provider": "custom:none", "id_token": .string(token)]), 400,
                    "validation_failed", "Custom provider \"custom:none\" not found")
        expectError(api.call("POST", "/token?grant_type=id_token", ["provider": "custom:gh", "id_token": .string(token)]), 400,
                    "validation_failed", "Provider \"custom:gh\" is not an OIDC provider")
        #expect(api.providers("PUT", "/custom:acme", ["enabled": false]).status == 200)
        expectError(api.call("POST", "/token?grant_type=id_token", ["provider": "custom:acme", "id_token": .string(token)]), 400,
                    "provider_disabled", "Custom provider \"custom:acme\" is disabled")
    }

    @Test func redirectFlowThroughFakeIssuer() throws {
        let api = try makeAPI { $0.identityProviders.autoApprove = true }
        #expect(api.providers("POST", "", oidcBody(["scopes": ["email"], "authorization_params": ["prompt": "consent"],
                                                    "attribute_mapping": ["nickname": "email"],
                                                    "custom_claims_allowlist": ["iss", "absent"]])).status == 201)
        let start = api.call("GET", "/authorize?provider=custom:acme&redirect_to=http://127.0.0.1:3000/cb&login_hint=flow@example.com")
        #expect(start.status == 302, "\(start.text)")
        let location = try #require(start.headers["Location"])
        #expect(location.hasPrefix(fakeIssuer + "/authorize?"))
        let query = RedirectURL(location).query
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        #expect(value("client_id") == "acme-client")
        #expect(value("scope") == "openid email")
        #expect(value("prompt") == "consent")
        #expect(value("redirect_uri") == "http://127.0.0.1:9999/auth/v1/callback")
        #expect(value("code_challenge_method") == "S256" && value("code_challenge")?.count == 43)  // pkce_enabled

        let page = follow(api, location)
        #expect(page.status == 302, "\(page.text)")
        let callback = follow(api, try #require(page.headers["Location"]))
        let done = try #require(callback.headers["Location"])
        #expect(done.hasPrefix("http://127.0.0.1:3000/cb#access_token="), "\(done)")
        let access = RedirectURL.parseQuery(RedirectURL(done).fragment).first { $0.name == "access_token" }!.value
        let user = api.call("GET", "/user", bearer: access).json
        #expect(user["email"] == "flow@example.com")
        #expect(user["app_metadata"]?["provider"] == "custom:acme")
        let identity = try #require(user["identities"]?.arrayValue?.first)
        #expect(identity["provider"] == "custom:acme")
        #expect(identity["identity_data"]?["nickname"] == "flow@example.com")  // attribute_mapping
        #expect(identity["identity_data"]?["custom_claims"] == ["iss": .string(fakeIssuer)])  // the allowlist

        // The provider's failures, as GoTrue words them.
        #expect(api.providers("PUT", "/custom:acme", ["enabled": false]).status == 200)
        let disabled = api.call("GET", "/authorize?provider=custom:acme")
        expectError(disabled, 400, "validation_failed", "Unsupported provider: custom provider custom:acme is disabled")
        expectError(api.call("GET", "/authorize?provider=custom:nope"), 400, "validation_failed",
                    "Unsupported provider: custom provider custom:nope not found")
    }

    @Test func oauth2RedirectFlowOnFakeEndpoints() throws {
        let api = try makeAPI { $0.identityProviders.autoApprove = true }
        let base = "http://127.0.0.1:9999/emulator/v1/idp/custom:gh"
        #expect(api.providers("POST", "", oauth2Body(["authorization_url": .string(base + "/authorize"),
                                                      "token_url": .string(base + "/token"),
                                                      "userinfo_url": .string(base + "/userinfo"),
                                                      "scopes": ["read:user"], "pkce_enabled": false])).status == 201)
        let start = api.call("GET", "/authorize?provider=custom:gh&redirect_to=http://127.0.0.1:3000/cb&login_hint=gh@example.com")
        let location = try #require(start.headers["Location"])
        #expect(location.hasPrefix(base + "/authorize?"))
        #expect(RedirectURL(location).query.first { $0.name == "scope" }?.value == "read:user")  // no openid for OAuth2
        #expect(!location.contains("code_challenge"))  // pkce_enabled false
        let callback = follow(api, try #require(follow(api, location).headers["Location"]))
        let done = try #require(callback.headers["Location"])
        #expect(done.hasPrefix("http://127.0.0.1:3000/cb#access_token="), "\(done)")
        let access = RedirectURL.parseQuery(RedirectURL(done).fragment).first { $0.name == "access_token" }!.value
        let user = api.call("GET", "/user", bearer: access).json
        #expect(user["email"] == "gh@example.com")
        #expect(user["identities"]?.arrayValue?.first?["provider"] == "custom:gh")

        // A provider whose endpoints are elsewhere cannot complete offline: the exchange fails.
        #expect(api.providers("POST", "", oauth2Body(["identifier": "custom:real"])).status == 201)
        let real = api.call("GET", "/authorize?provider=custom:real")
        #expect(real.headers["Location"]?.hasPrefix("https://github.example.com/login/oauth/authorize?client_id=gh-client") == true)
    }

    /// `GOTRUE_CUSTOM_OAUTH_EXTERNAL_URL` (`loadCustomProvider`): custom providers are sent a
    /// redirect_uri on that base (trailing slashes trimmed), built-in ones keep the server's; the
    /// browser comes back through it (a proxy in front of the server) and the flow completes.
    @Test func customProvidersRedirectThroughTheirExternalURL() throws {
        let api = try makeAPI {
            $0.identityProviders.autoApprove = true
            $0.customOAuth.externalURL = "https://auth.example.com//"
            enableGoogle(&$0)
        }
        let base = "http://127.0.0.1:9999/emulator/v1/idp/custom:gh"
        #expect(api.providers("POST", "", oauth2Body(["authorization_url": .string(base + "/authorize"),
                                                      "token_url": .string(base + "/token"),
                                                      "userinfo_url": .string(base + "/userinfo"), "pkce_enabled": false])).status == 201)
        let location = try #require(api.call("GET", "/authorize?provider=custom:gh&login_hint=gh@example.com").headers["Location"])
        #expect(RedirectURL(location).query.first { $0.name == "redirect_uri" }?.value == "https://auth.example.com/callback")
        let back = try #require(follow(api, location).headers["Location"])
        #expect(back.hasPrefix("https://auth.example.com/callback?"), "\(back)")
        let done = try #require(follow(api, back).headers["Location"])
        #expect(done.hasPrefix("http://127.0.0.1:3000#access_token="), "\(done)")
        let google = try #require(api.call("GET", "/authorize?provider=google").headers["Location"])
        #expect(RedirectURL(google).query.first { $0.name == "redirect_uri" }?.value == "http://127.0.0.1:9999/auth/v1/callback")
        // As `CustomOAuthConfiguration.Validate`, a value that is not a URL is refused.
        var bad = api.project.configuration
        bad.customOAuth.externalURL = "not a url"
        #expect(bad.problem()?.hasPrefix("GOTRUE_CUSTOM_OAUTH_EXTERNAL_URL: ") == true)
    }

    @Test func redirectFlowWhenDisabled() throws {
        let api = try makeAPI { $0.customOAuth.enabled = false }
        expectError(api.call("GET", "/authorize?provider=custom:acme"), 400, "validation_failed",
                    "Unsupported provider: custom OAuth providers are disabled")
    }
}

/// Follows a redirect to this server in-process (scheme and host stripped).
private func follow(_ api: GoTrueAPI, _ location: String) -> HTTPResponse {
    var target = Substring(location)
    if let scheme = target.firstIndex(of: ":"), target[scheme...].hasPrefix("://") {
        let rest = target[target.index(scheme, offsetBy: 3)...]
        target = rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
    }
    return api.call("GET", String(target))
}
