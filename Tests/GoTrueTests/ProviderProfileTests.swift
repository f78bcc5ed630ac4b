import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

// The OAuth providers whose `GetUserData` reads their own API (internal/api/provider/*.go):
// the fake providers answer in each API's shape, and the GoTrue side reads the answers as each
// Go provider does. Expected identity_data: the provider files, field by field.

@Suite struct ProviderProfileTests {
    private let account = IdentityProviderStore.Account(subject: "12345678", email: "ada.l@example.com", emailVerified: true,
                                                        name: "Ada Lovelace", picture: "https://img.example/ada.png")

    private func profile(_ provider: String, url: String = "", account: IdentityProviderStore.Account? = nil) throws -> ProviderUserData {
        let account = account ?? self.account
        let data = try ProviderAPIs.userData(provider: provider, url: url,
                                             tokenExtras: FakeProviderProfiles.tokenExtras(provider: provider, account: account)) { url in
            FakeProviderProfiles.answer(provider: provider, url: url, account: account)
        }
        return try #require(data, "\(provider) reads its API")
    }

    @Test(arguments: [
        ("github", ["iss": "https://api.github.com", "sub": "12345678", "name": "Ada Lovelace", "full_name": "Ada Lovelace",
                    "preferred_username": "ada-l", "user_name": "ada-l", "avatar_url": "https://img.example/ada.png",
                    "provider_id": "12345678"] as JSONObject, ["picture"]),
        ("gitlab", ["iss": "https://gitlab.com", "sub": "12345678", "name": "Ada Lovelace", "picture": "https://img.example/ada.png",
                    "avatar_url": "https://img.example/ada.png", "full_name": "Ada Lovelace"], ["user_name", "preferred_username"]),
        ("bitbucket", ["iss": "https://api.bitbucket.org/2.0", "name": "Ada Lovelace", "picture": "https://img.example/ada.png"], []),
        ("discord", ["iss": "https://discord.com/api", "name": "ada-l#0", "full_name": "ada-l",
                     "picture": "https://cdn.discordapp.com/embed/avatars/0.png", "custom_claims": ["global_name": "Ada Lovelace"]], []),
        ("facebook", ["iss": "https://graph.facebook.com/me?fields=email,first_name,last_name,name,picture", "name": "Ada Lovelace",
                      "nickname": "Ada Lovelace", "slug": "Ada Lovelace", "picture": "https://img.example/ada.png"], []),
        ("figma", ["iss": "https://api.figma.com", "name": "Ada Lovelace", "avatar_url": "https://img.example/ada.png"], ["picture"]),
        ("fly", ["iss": "https://api.fly.io", "full_name": "Ada Lovelace"], ["name"]),
        ("kakao", ["iss": "https://kapi.kakao.com", "name": "Ada Lovelace", "preferred_username": "Ada Lovelace",
                   "user_name": "Ada Lovelace", "avatar_url": "https://img.example/ada.png"], ["picture"]),
        ("linkedin", ["iss": "https://api.linkedin.com", "name": "Ada Lovelace", "picture": "https://img.example/ada.png"], []),
        ("notion", ["iss": "https://api.notion.com", "name": "Ada Lovelace", "picture": "https://img.example/ada.png"], []),
        ("slack_oidc", ["iss": "https://slack.com/api", "name": "Ada Lovelace",
                        "custom_claims": ["https://slack.com/team_id": "T0EMULATOR"]], []),
        ("snapchat", ["iss": "https://accounts.snapchat.com/accounts/oauth2/token", "name": "Ada Lovelace", "slug": "Ada Lovelace"], []),
        ("spotify", ["iss": "https://api.spotify.com/v1", "name": "Ada Lovelace", "picture": "https://img.example/ada.png"], []),
        ("twitch", ["iss": "https://api.twitch.tv", "name": "ada-l", "full_name": "ada-l", "nickname": "Ada Lovelace",
                    "slug": "Ada Lovelace"], []),
        ("twitter", ["iss": "https://api.twitter.com/1.1/account/verify_credentials.json", "preferred_username": "ada-l",
                     "user_name": "ada-l"], []),
        ("x", ["iss": "https://api.x.com", "preferred_username": "ada-l", "profile": "https://x.com/ada-l",
               "custom_claims": ["created_at": "2026-01-01T00:00:00.000Z"]], []),
        ("zoom", ["iss": "https://api.zoom.us/v2", "name": "Ada Lovelace", "picture": "https://img.example/ada.png"], []),
        ("workos", ["iss": "https://api.workos.com", "name": "Ada Lovelace",
                    "custom_claims": ["connection_id": "conn_emulator", "organization_id": "org_emulator"]], ["picture"]),
    ] as [(String, JSONObject, [String])])
    func identityDataAsTheProviderFileBuildsIt(_ provider: String, _ expected: JSONObject, _ absent: [String]) throws {
        var data = try profile(provider)
        data.promotePrimaryEmail()
        let identity = data.metadata.identityData
        for (key, value) in expected { #expect(identity[key] == value, "\(provider) \(key)") }
        for key in absent { #expect(identity[key] == nil, "\(provider) has no \(key)") }
        #expect(identity["sub"] != nil && identity["provider_id"] == identity["sub"], "\(provider)")
        #expect(identity["email"] == "ada.l@example.com", "\(provider)")
    }

    /// Each provider's own rule for whether the address counts as verified.
    @Test func emailVerificationFollowsEachProvider() throws {
        var unverified = account
        unverified.emailVerified = false
        #expect(try profile("github", account: unverified).emails == [ProviderEmail(email: "ada.l@example.com", verified: false, primary: true)])
        #expect(try profile("gitlab", account: unverified).emails.last?.verified == false)
        #expect(try profile("gitlab").emails.last?.verified == true)
        #expect(try profile("spotify").emails.first?.verified == false)  // always, in spotify.go
        #expect(try profile("notion", account: unverified).emails.first?.verified == true)  // always, in notion.go
        #expect(try profile("slack", account: unverified).emails.first?.verified == true)
        #expect(try profile("slack_oidc", account: unverified).emails.first?.verified == false)
        // X only hands out a confirmed address.
        #expect(try profile("x", account: unverified).emails.isEmpty)
    }

    /// `chooseHost` and GitHub Enterprise's `/api/v3`; a configured Keycloak realm.
    @Test func configuredHosts() throws {
        #expect(try profile("github", url: "https://ghe.example/").metadata.issuer == "https://ghe.example/api/v3")
        #expect(try profile("gitlab", url: "https://gitlab.example").metadata.issuer == "https://gitlab.example")
        let keycloak = try profile("keycloak", url: "https://kc.example/realms/x")
        #expect(keycloak.metadata.issuer == "https://kc.example/realms/x")
        #expect(keycloak.metadata.customClaims?["preferred_username"] == "ada-l")
        #expect(keycloak.metadata.name == "Ada Lovelace" && keycloak.metadata.fullName == "Ada Lovelace")
    }

    /// Go's decoder: an `int` id sent as a string fails `GetUserData`; the id_token providers
    /// have no API here.
    @Test func decodingTypesAndIDTokenProviders() throws {
        #expect(throws: ProviderAPIs.Failure.self) {
            _ = try ProviderAPIs.userData(provider: "github", url: "", tokenExtras: [:]) { _ in ["id": "12"] }
        }
        #expect(throws: ProviderAPIs.Failure.self) {
            _ = try ProviderAPIs.userData(provider: "github", url: "", tokenExtras: [:]) { _ in nil }
        }
        for provider in ["google", "apple", "azure", "linkedin_oidc", "vercel_marketplace"] {
            #expect(try ProviderAPIs.userData(provider: provider, url: "", tokenExtras: [:]) { _ in nil } == nil)
        }
        // A subject made before the API was imitated still yields an integer id.
        let old = FakeProviderProfiles.numericID("0123456789abcdef0123456789abcdef")
        #expect(old >= 100_000_000 && old == FakeProviderProfiles.numericID("0123456789abcdef0123456789abcdef"))
    }

    /// End to end: a GitHub sign-in through the fake provider stores GitHub's identity data.
    @Test func aGitHubSignInStoresGitHubsProfile() throws {
        let api = try makeAPI { config in
            config.enableProvider("github", clientID: "gh-client", secret: "secret")
            config.identityProviders.autoApprove = true
        }
        let start = api.call("GET", "/authorize?provider=github&redirect_to=http://127.0.0.1:3000/cb&login_hint=octo.cat@example.com")
        let provider = api.call("GET", FakeProviderProfiles.pathOf(start.headers["Location"] ?? "") + "?"
                                + (start.headers["Location"]?.split(separator: "?", maxSplits: 1).last.map(String.init) ?? ""))
        let back = provider.headers["Location"] ?? ""
        let callback = api.call("GET", FakeProviderProfiles.pathOf(back) + "?" + (back.split(separator: "?", maxSplits: 1).last.map(String.init) ?? ""))
        #expect(callback.headers["Location"]?.contains("#access_token=") == true, "\(callback.headers["Location"] ?? callback.text)")
        let user = try #require(try api.storedUser(email: "octo.cat@example.com"))
        let shown = api.admin("GET", "/admin/users/\(user.id)").json
        let identity = shown["identities"]?[0]?["identity_data"]
        #expect(identity?["iss"] == "https://api.github.com")
        #expect(identity?["user_name"] == "octo-cat")
        #expect(identity?["preferred_username"] == "octo-cat")
        #expect(identity?["sub"]?.stringValue?.allSatisfy(\.isNumber) == true)
        #expect(identity?["email_verified"] == true)
        #expect(shown["user_metadata"]?["user_name"] == "octo-cat")
        #expect(shown["identities"]?[0]?["id"] == identity?["sub"])
    }
}
