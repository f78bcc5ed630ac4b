import AuthJSON
import GoFormats

/// `GetUserData` of the OAuth providers that read their own API after the code exchange
/// (GitHub's `/user` and `/user/emails`, Discord's `/users/@me`, Keycloak's and Slack's userinfo,
/// ...) rather than an id_token (`internal/api/provider/<name>.go`): the requests each makes, and
/// how its answers become user data, field by field and with Go's decoding types. The answers
/// come from the identity-provider seam (the emulator's fake providers imitate each API).
package enum ProviderAPIs {
    /// A failed request, or an answer Go's decoder refuses: `GetUserData`'s error.
    package struct Failure: Error {
        package var reason: String
    }

    /// One GET of the provider's API: the decoded JSON answer, nil for a failed request.
    package typealias Fetch = (_ url: String) -> JSON?

    /// The providers whose profile comes from an API here. The others (Apple, Azure, Google,
    /// LinkedIn OIDC, Vercel Marketplace, custom providers) parse the id_token.
    package static let providers: Set<String> = [
        "bitbucket", "discord", "facebook", "figma", "fly", "github", "gitlab", "kakao", "keycloak", "linkedin", "notion",
        "slack", "slack_oidc", "snapchat", "spotify", "twitch", "twitter", "workos", "x", "zoom",
    ]

    /// `chooseHost`: `https://<default>` without a configured URL, else the URL less one
    /// trailing slash.
    package static func chooseHost(_ configured: String, _ defaultHost: String) -> String {
        guard !configured.isEmpty else { return "https://" + defaultHost }
        return configured.hasSuffix("/") ? String(configured.dropLast()) : configured
    }

    /// The provider's user data, or nil when `provider` reads an id_token instead.
    /// `tokenExtras` are the token response's other fields (WorkOS's `profile`).
    package static func userData(provider: String, url configured: String, tokenExtras: JSONObject,
                         fetch: Fetch) throws(Failure) -> ProviderUserData? {
        func get(_ url: String) throws(Failure) -> APIValue {
            guard let answer = fetch(url) else { throw Failure(reason: "request to \(url) failed") }
            return APIValue(answer)
        }
        var data = ProviderUserData()
        var m = ProviderClaims()
        func emails(_ address: String, verified: Bool) {
            if !address.isEmpty { data.emails.append(ProviderEmail(email: address, verified: verified, primary: true)) }
        }
        switch provider {
        case "github":
            var api = chooseHost(configured, "api.github.com")
            if !api.hasSuffix("api.github.com") { api += "/api/v3" }  // GitHub Enterprise
            let u = try get(api + "/user")
            let id = String(try u.int("id"))
            _ = try u.string("email")  // decoded, never used
            m.standard(issuer: api, id: id, name: try u.string("name"), picture: "")  // no `Picture`
            m.avatarURL = try u.string("avatar_url")
            m.preferredUsername = try u.string("login")
            m.userName = m.preferredUsername
            for e in try get(api + "/user/emails").array() {
                let address = try e.string("email")
                if !address.isEmpty {
                    data.emails.append(ProviderEmail(email: address, verified: try e.bool("verified"), primary: try e.bool("primary")))
                }
            }
        case "gitlab":
            let host = chooseHost(configured, "gitlab.com")
            let u = try get(host + "/api/v4/user")
            let id = String(try u.int("id"))
            let email = try u.string("email")
            let confirmedAt = try u.string("confirmed_at")
            m.standard(issuer: host, id: id, name: try u.string("name"), picture: try u.string("avatar_url"))
            // Secondary addresses carry no confirmation state; the main one comes last.
            for e in try get(host + "/api/v4/user/emails").array() {
                _ = try e.int("id")
                let address = try e.string("email")
                if !address.isEmpty { data.emails.append(ProviderEmail(email: address, verified: false, primary: false)) }
            }
            emails(email, verified: !confirmedAt.isEmpty)
        case "bitbucket":
            let api = chooseHost(configured, "api.bitbucket.org") + "/2.0"
            let u = try get(api + "/user")
            let uuid = try u.string("uuid")
            let avatar = try u.object("avatar").string("href")
            m.standard(issuer: api, id: uuid, name: try u.string("display_name"), picture: avatar)
            for e in try get(api + "/user/emails").array("values") {
                let address = try e.string("email")
                if !address.isEmpty {
                    data.emails.append(ProviderEmail(email: address, verified: try e.bool("is_confirmed"), primary: try e.bool("is_primary")))
                }
            }
        case "discord":
            let api = chooseHost(configured, "discord.com") + "/api"
            let u = try get(api + "/users/@me")
            let id = try u.string("id"), avatar = try u.string("avatar"), discriminator = try u.string("discriminator")
            let username = try u.string("username")
            emails(try u.string("email"), verified: try u.bool("verified"))
            let avatarURL: String
            if avatar.isEmpty {
                // The default avatar: the discriminator modulo 5 (`strconv.Atoi` must read it).
                guard let number = Int(discriminator), !discriminator.hasPrefix("+") else {
                    throw Failure(reason: "strconv.Atoi: parsing \(GoStrconv.quote(discriminator)): invalid syntax")
                }
                avatarURL = "https://cdn.discordapp.com/embed/avatars/\(number % 5).png"
            } else {
                avatarURL = "https://cdn.discordapp.com/avatars/\(id)/\(avatar).\(avatar.hasPrefix("a_") ? "gif" : "png")"
            }
            m.standard(issuer: api, id: id, name: username + "#" + discriminator, picture: avatarURL)
            m.fullName = username
            m.customClaims = ["global_name": .string(try u.string("global_name"))]
        case "facebook":
            // The profile URL with its field list is the issuer; the appsecret_proof GoTrue
            // appends to the request is not.
            let profile = chooseHost(configured, "graph.facebook.com") + "/me?fields=email,first_name,last_name,name,picture"
            let u = try get(profile)
            let id = try u.string("id")
            let name = GoStrings.trimSpace(try u.string("first_name") + " " + u.string("last_name"))
            let alias = try u.string("name")
            let picture = try u.object("picture").object("data").string("url")
            emails(try u.string("email"), verified: true)
            m.standard(issuer: profile, id: id, name: name, picture: picture)
            m.nickName = alias
            m.slug = alias
        case "figma":
            let api = chooseHost(configured, "api.figma.com")
            let u = try get(api + "/v1/me")
            let id = try u.string("id"), email = try u.string("email"), handle = try u.string("handle")
            emails(email, verified: true)
            m.standard(issuer: api, id: id, name: handle, picture: "")  // no `Picture`
            m.avatarURL = try u.string("img_url")
            m.email = email
            m.emailVerified = true
        case "fly":
            let api = chooseHost(configured, "api.fly.io")
            let u = try get(api + "/oauth/token/info")
            let userID = try u.string("user_id"), email = try u.string("email")
            emails(email, verified: true)
            m.standard(issuer: api, id: userID, name: "", picture: "")
            m.fullName = try u.string("user_name")  // `Name` is not set
            m.email = email
            m.emailVerified = true
            m.customClaims = ["resource_owner_id": .string(try u.string("resource_owner_id")),
                              "organizations": try u.raw("organizations", as: .array),
                              "application": try u.raw("application", as: .object),
                              "scope": try u.raw("scope", as: .array),
                              "created_at": .number(Double(try u.int("created_at")))]
        case "kakao":
            let api = chooseHost(configured, "kapi.kakao.com")
            let u = try get(api + "/v2/user/me")
            let id = String(try u.int("id"))
            let account = try u.object("kakao_account")
            let profile = try account.object("profile")
            let nickname = try profile.string("nickname")
            let valid = try account.bool("is_email_valid"), verified = try account.bool("is_email_verified")
            emails(try account.string("email"), verified: valid && verified)
            m.standard(issuer: api, id: id, name: nickname, picture: "")  // no `Picture`
            m.avatarURL = try profile.string("profile_image_url")
            m.preferredUsername = nickname
            m.userName = nickname
        case "keycloak":
            // The realm's OIDC userinfo: four claims read by type, every other one kept under
            // custom_claims.
            guard case .object(let claims) = try get(configured + "/protocol/openid-connect/userinfo").value else {
                throw Failure(reason: "userinfo is not an object")
            }
            let name = claims["name"]?.stringValue ?? "", sub = claims["sub"]?.stringValue ?? ""
            let email = claims["email"]?.stringValue ?? ""
            let verified: Bool = if case .bool(let b)? = claims["email_verified"] { b } else { false }
            emails(email, verified: verified)
            var custom = claims
            for key in ["name", "sub", "email", "email_verified"] { _ = custom.removeValue(forKey: key) }
            m.standard(issuer: configured, id: sub, name: name, picture: "")
            m.email = email
            m.emailVerified = verified
            m.customClaims = custom
        case "linkedin":
            let api = chooseHost(configured, "api.linkedin.com")
            let me = try get(api + "/v2/me?projection=(id,firstName,lastName,profilePicture(displayImage~:playableStreams))")
            let id = try me.string("id")
            func localized(_ key: String) throws(Failure) -> String {
                let field = try me.object(key)
                let locale = try field.object("preferredLocale")
                let tag = try locale.string("language") + "_" + locale.string("country")
                return try field.object("localized").string(tag)
            }
            let name = GoStrings.trimSpace(try localized("firstName") + " " + localized("lastName"))
            let images = try me.object("profilePicture").object("displayImage~").array("elements")
            let avatar = try images.first?.array("identifiers").first?.string("identifier") ?? ""
            let elements = try get(api + "/v2/emailAddress?q=members&projection=(elements*(handle~))").array("elements")
            let email = try elements.first?.object("handle~").string("emailAddress") ?? ""
            emails(email, verified: true)
            m.standard(issuer: api, id: id, name: name, picture: avatar)
            m.email = email
            m.emailVerified = true
        case "notion":
            let api = chooseHost(configured, "api.notion.com")
            let user = try get(api + "/v1/users/me").object("bot").object("owner").object("user")
            let id = try user.string("id")
            emails(try user.object("person").string("email"), verified: true)
            m.standard(issuer: api, id: id, name: try user.string("name"), picture: try user.string("avatar_url"))
        case "slack", "slack_oidc":
            let api = chooseHost(configured, "slack.com") + "/api"
            let u = try get(api + "/openid.connect.userInfo")
            let id = try u.string("https://slack.com/user_id")
            // The legacy provider vouches for every address; the OIDC one passes Slack's flag on.
            emails(try u.string("email"), verified: provider == "slack" ? true : try u.bool("email_verified"))
            m.standard(issuer: api, id: id, name: try u.string("name"), picture: try u.string("picture"))
            m.customClaims = ["https://slack.com/team_id": .string(try u.string("https://slack.com/team_id"))]
        case "snapchat":
            // A GraphQL query in the query string; the issuer is the token URL (`IssuerSnapchat`).
            let me = try get("https://kit.snapchat.com/v1/me?query=" + GoURL.queryEscape("{me { externalId displayName bitmoji { avatar id } email } }"))
                .object("data").object("me")
            let id = try me.string("externalId"), name = try me.string("displayName")
            let avatar = try me.object("bitmoji").string("avatar")
            emails(try me.string("email"), verified: true)
            m.standard(issuer: "https://accounts.snapchat.com/accounts/oauth2/token", id: id, name: name, picture: avatar)
            m.slug = name
        case "spotify":
            let api = chooseHost(configured, "api.spotify.com/v1")
            let u = try get(api + "/me")
            let id = try u.string("id")
            // The largest image (height × width); the first of equals.
            var avatar = "", largest = -1
            for image in try u.array("images") {
                let size = try image.int("height") * image.int("width")
                if size > largest {
                    largest = size
                    avatar = try image.string("url")
                }
            }
            emails(try u.string("email"), verified: false)
            m.standard(issuer: api, id: id, name: try u.string("display_name"), picture: avatar)
        case "twitch":
            let api = chooseHost(configured, "api.twitch.tv")
            guard let u = try get(api + "/helix/users").array("data").first else {
                throw Failure(reason: "unable to find user with twitch provider")
            }
            let id = try u.string("id"), login = try u.string("login"), display = try u.string("display_name")
            emails(try u.string("email"), verified: true)
            m.standard(issuer: api, id: id, name: login, picture: try u.string("profile_image_url"))
            m.nickName = display
            m.customClaims = ["broadcaster_type": .string(try u.string("broadcaster_type")),
                              "description": .string(try u.string("description")),
                              "type": .string(try u.string("type")),
                              "offline_image_url": .string(try u.string("offline_image_url")),
                              "view_count": .number(Double(try u.int("view_count")))]
            m.slug = display
        case "twitter":
            // `FetchUserData` (OAuth 1.0a): account/verify_credentials, the endpoint URL the issuer.
            let endpoint = chooseHost(configured, "api.twitter.com") + "/1.1/account/verify_credentials.json"
            let u = try get(endpoint + "?include_email=true&include_entities=false&skip_status=true")
            let id = try u.string("id_str"), screenName = try u.string("screen_name")
            emails(try u.string("email"), verified: true)
            m.standard(issuer: endpoint, id: id, name: try u.string("name"), picture: try u.string("profile_image_url_https"))
            m.preferredUsername = screenName
            m.userName = screenName
        case "x":
            let api = chooseHost(configured, "api.x.com")
            let u = try get(api + "/2/users/me?user.fields=id,name,username,confirmed_email,profile_image_url,url,created_at")
                .object("data")
            let id = try u.string("id"), username = try u.string("username")
            emails(try u.string("confirmed_email"), verified: true)
            m.standard(issuer: api, id: id, name: try u.string("name"), picture: try u.string("profile_image_url"))
            m.preferredUsername = username
            m.userName = username
            m.profile = "https://x.com/" + username
            m.website = try u.string("url")
            m.customClaims = ["created_at": .string(try u.string("created_at"))]
        case "zoom":
            let api = chooseHost(configured, "api.zoom.us") + "/v2"
            let u = try get(api + "/users/me")
            let id = try u.string("id")
            let name = GoStrings.trimSpace(try u.string("first_name") + " " + u.string("last_name"))
            let loginType = try u.string("login_type"), verified = try u.int("verified")
            emails(try u.string("email"), verified: loginType != "100" || verified != 0)
            m.standard(issuer: api, id: id, name: name, picture: try u.string("pic_url"))
        case "workos":
            // No request: the profile comes with the token (`tok.Extra("profile")`).
            let profile = APIValue(tokenExtras["profile"] ?? .null)
            let id = try profile.string("id")
            let name = GoStrings.trimSpace(try profile.string("first_name") + " " + profile.string("last_name"))
            emails(try profile.string("email"), verified: true)
            m.standard(issuer: chooseHost(configured, "api.workos.com"), id: id, name: name, picture: "")
            m.customClaims = ["connection_id": .string(try profile.string("connection_id")),
                              "organization_id": .string(try profile.string("organization_id"))]
        default:
            return nil
        }
        data.metadata = m
        return data
    }
}

extension ProviderClaims {
    /// What most provider files fill alike: `Subject` and `ProviderId` from the id, `Name`
    /// and `FullName` from the name, `Picture` and `AvatarURL` from the picture (an empty value
    /// is left out of identity_data, as a field a file does not set).
    package mutating func standard(issuer: String, id: String, name: String, picture: String) {
        self.issuer = issuer
        subject = id
        providerID = id
        self.name = name
        fullName = name
        self.picture = picture
        avatarURL = picture
    }
}

/// A value of a provider's answer read with Go's `encoding/json` typing into a struct: absent
/// or `null` is the zero value, a value of another JSON type fails the decoding.
package struct APIValue {
    package let value: JSON
    package init(_ value: JSON) { self.value = value }

    private func member(_ key: String) throws(ProviderAPIs.Failure) -> JSON? {
        switch value {
        case .object(let object): return object[key]
        case .null: return nil
        default: throw ProviderAPIs.Failure(reason: "json: cannot unmarshal \(value.goKind) into an object")
        }
    }

    private func mismatch(_ key: String, _ found: JSON, _ goType: String) -> ProviderAPIs.Failure {
        ProviderAPIs.Failure(reason: "json: cannot unmarshal \(found.goKind) into field \(key) of type \(goType)")
    }

    package func string(_ key: String) throws(ProviderAPIs.Failure) -> String {
        switch try member(key) {
        case nil, .null?: return ""
        case .string(let s)?: return s
        case let other?: throw mismatch(key, other, "string")
        }
    }

    package func bool(_ key: String) throws(ProviderAPIs.Failure) -> Bool {
        switch try member(key) {
        case nil, .null?: return false
        case .bool(let b)?: return b
        case let other?: throw mismatch(key, other, "bool")
        }
    }

    /// An `int` field: a JSON number without a fraction, within 64 bits.
    package func int(_ key: String) throws(ProviderAPIs.Failure) -> Int {
        switch try member(key) {
        case nil, .null?: return 0
        case .number(let n)? where n.rounded() == n && abs(n) < 9.2e18: return Int(n)
        case let other?: throw mismatch(key, other, "int")
        }
    }

    /// A nested struct: absent or `null` reads as one with zero values.
    package func object(_ key: String) throws(ProviderAPIs.Failure) -> APIValue {
        switch try member(key) {
        case nil, .null?: return APIValue(.null)
        case .object(let o)?: return APIValue(.object(o))
        case let other?: throw mismatch(key, other, "struct")
        }
    }

    /// A slice field.
    package func array(_ key: String) throws(ProviderAPIs.Failure) -> [APIValue] {
        switch try member(key) {
        case nil, .null?: return []
        case .array(let elements)?: return elements.map(APIValue.init)
        case let other?: throw mismatch(key, other, "slice")
        }
    }

    /// The value itself as a slice (a top-level array answer).
    package func array() throws(ProviderAPIs.Failure) -> [APIValue] {
        switch value {
        case .null: return []
        case .array(let elements): return elements.map(APIValue.init)
        default: throw ProviderAPIs.Failure(reason: "json: cannot unmarshal \(value.goKind) into a slice")
        }
    }

    package enum Kind { case array, object }

    /// A field kept as it came (`[]string`, `map[string]string`, a slice of structs): checked
    /// for its JSON kind, `null` when absent.
    package func raw(_ key: String, as kind: Kind) throws(ProviderAPIs.Failure) -> JSON {
        switch (try member(key), kind) {
        case (nil, _), (.null?, _): return .null
        case (.array(let a)?, .array): return .array(a)
        case (.object(let o)?, .object): return .object(o)
        case (let other?, _): throw mismatch(key, other, kind == .array ? "slice" : "map")
        }
    }
}
