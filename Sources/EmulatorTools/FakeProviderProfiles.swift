import AuthCrypto
import AuthJSON
import GoFormats
import GoTrue

/// What each fake provider's own API answers about an account: GitHub's `/user` and
/// `/user/emails`, Discord's `/users/@me`, Keycloak's userinfo, ... in the provider's shape, for
/// the GoTrue side's `GetUserData` (`ProviderAPIs`) to read as it reads the real ones. Built from
/// the account the sign-in page approved: its subject, email (and whether it is verified), name
/// and picture; a username is the email's local part.
enum FakeProviderProfiles {
    /// The answer to a GET of `url`, nil for a path the provider has no answer for.
    static func answer(provider: String, url: String, account: IdentityProviderStore.Account) -> JSON? {
        let path = pathOf(url)
        let email = account.email ?? ""
        let name = account.name ?? ""
        let picture = account.picture ?? ""
        func text(_ value: String) -> JSON { value.isEmpty ? .null : .string(value) }
        switch (provider, path) {
        case ("github", let p) where p.hasSuffix("/user"):
            return ["id": .number(Double(numericID(account.subject))), "login": .string(username(account)),
                    "name": text(name), "email": text(email), "avatar_url": .string(picture)]
        case ("github", let p) where p.hasSuffix("/user/emails"):
            guard !email.isEmpty else { return [] }
            return [["email": .string(email), "primary": true, "verified": .bool(account.emailVerified), "visibility": "private"]]
        case ("gitlab", let p) where p.hasSuffix("/api/v4/user"):
            return ["id": .number(Double(numericID(account.subject))), "username": .string(username(account)),
                    "name": .string(name), "email": .string(email), "avatar_url": text(picture),
                    "confirmed_at": account.emailVerified ? "2026-01-01T00:00:00.000Z" : .null]
        case ("gitlab", let p) where p.hasSuffix("/api/v4/user/emails"):
            return []
        case ("bitbucket", let p) where p.hasSuffix("/2.0/user"):
            return ["uuid": .string(account.subject), "display_name": .string(name.isEmpty ? username(account) : name),
                    "username": .string(username(account)), "avatar": ["href": .string(picture)]]
        case ("bitbucket", let p) where p.hasSuffix("/2.0/user/emails"):
            guard !email.isEmpty else { return ["values": []] }
            return ["values": [["email": .string(email), "is_primary": true, "is_confirmed": .bool(account.emailVerified)]]]
        case ("discord", let p) where p.hasSuffix("/users/@me"):
            // New-style accounts: discriminator "0", the display name in `global_name`.
            return ["id": .string(account.subject), "username": .string(username(account)), "discriminator": "0",
                    "global_name": text(name), "avatar": .null, "email": text(email), "verified": .bool(account.emailVerified)]
        case ("facebook", let p) where p.hasSuffix("/me"):
            let (first, last) = FakeIdentityProvider.splitName(name)
            return ["id": .string(account.subject), "email": text(email), "first_name": .string(first), "last_name": .string(last),
                    "name": .string(name), "picture": ["data": ["url": .string(picture)]]]
        case ("figma", let p) where p.hasSuffix("/v1/me"):
            return ["id": .string(account.subject), "email": .string(email), "handle": .string(name.isEmpty ? username(account) : name),
                    "img_url": .string(picture)]
        case ("fly", let p) where p.hasSuffix("/oauth/token/info"):
            return ["resource_owner_id": .string(account.subject), "user_id": .string(account.subject),
                    "user_name": .string(name.isEmpty ? username(account) : name), "email": .string(email),
                    "organizations": [], "scope": ["read"], "application": ["uid": "auth-emulator"],
                    "expires_in": 3600, "created_at": .number(1_767_225_600)]
        case ("kakao", let p) where p.hasSuffix("/v2/user/me"):
            return ["id": .number(Double(numericID(account.subject))),
                    "kakao_account": ["profile": ["nickname": .string(name.isEmpty ? username(account) : name),
                                                  "profile_image_url": .string(picture)],
                                      "email": .string(email), "is_email_valid": true,
                                      "is_email_verified": .bool(account.emailVerified)]]
        case ("keycloak", let p) where p.hasSuffix("/protocol/openid-connect/userinfo"):
            var claims: JSONObject = ["sub": .string(account.subject), "preferred_username": .string(username(account))]
            if !name.isEmpty { claims["name"] = .string(name) }
            if !email.isEmpty {
                claims["email"] = .string(email)
                claims["email_verified"] = .bool(account.emailVerified)
            }
            return .object(claims)
        case ("linkedin", let p) where p.hasSuffix("/v2/me"):
            let (first, last) = FakeIdentityProvider.splitName(name)
            let locale: JSON = ["country": "US", "language": "en"]
            var me: JSONObject = ["id": .string(account.subject),
                                  "firstName": ["localized": ["en_US": .string(first)], "preferredLocale": locale],
                                  "lastName": ["localized": ["en_US": .string(last)], "preferredLocale": locale]]
            if !picture.isEmpty {
                me["profilePicture"] = ["displayImage~": ["elements": [["identifiers": [["identifier": .string(picture)]]]]]]
            }
            return .object(me)
        case ("linkedin", let p) where p.hasSuffix("/v2/emailAddress"):
            return ["elements": [["handle": "urn:li:emailAddress:1", "handle~": ["emailAddress": .string(email)]]]]
        case ("notion", let p) where p.hasSuffix("/v1/users/me"):
            return ["object": "user", "type": "bot",
                    "bot": ["owner": ["type": "user", "user": ["object": "user", "id": .string(account.subject), "name": .string(name),
                                                               "avatar_url": text(picture), "type": "person",
                                                               "person": ["email": .string(email)]]]]]
        case ("slack", let p), ("slack_oidc", let p):
            guard p.hasSuffix("/openid.connect.userInfo") else { return nil }
            return ["ok": true, "sub": .string(account.subject), "https://slack.com/user_id": .string(account.subject),
                    "https://slack.com/team_id": "T0EMULATOR", "email": .string(email),
                    "email_verified": .bool(account.emailVerified), "name": .string(name), "picture": .string(picture)]
        case ("snapchat", let p) where p.hasSuffix("/v1/me"):
            var me: JSONObject = ["externalId": .string(account.subject), "displayName": .string(name.isEmpty ? username(account) : name),
                                  "bitmoji": ["avatar": .string(picture), "id": .string(account.subject)]]
            if !email.isEmpty { me["email"] = .string(email) }
            return ["data": ["me": .object(me)]]
        case ("spotify", let p) where p.hasSuffix("/me"):
            return ["id": .string(account.subject), "display_name": .string(name.isEmpty ? username(account) : name),
                    "email": .string(email), "images": picture.isEmpty ? [] : [["url": .string(picture), "height": 300, "width": 300]]]
        case ("twitch", let p) where p.hasSuffix("/helix/users"):
            return ["data": [["id": .string(account.subject), "login": .string(username(account)),
                              "display_name": .string(name.isEmpty ? username(account) : name), "type": "", "broadcaster_type": "",
                              "description": "", "profile_image_url": .string(picture), "offline_image_url": "",
                              "view_count": 0, "email": .string(email), "created_at": "2026-01-01T00:00:00Z"]]]
        case ("twitter", let p) where p.hasSuffix("/1.1/account/verify_credentials.json"):
            return ["id_str": .string(account.subject), "screen_name": .string(username(account)), "name": .string(name),
                    "profile_image_url_https": .string(picture), "email": .string(email)]
        case ("x", let p) where p.hasSuffix("/2/users/me"):
            var data: JSONObject = ["id": .string(account.subject), "name": .string(name), "username": .string(username(account)),
                                    "created_at": "2026-01-01T00:00:00.000Z"]
            if !email.isEmpty && account.emailVerified { data["confirmed_email"] = .string(email) }
            if !picture.isEmpty { data["profile_image_url"] = .string(picture) }
            return ["data": .object(data)]
        case ("zoom", let p) where p.hasSuffix("/v2/users/me"):
            let (first, last) = FakeIdentityProvider.splitName(name)
            return ["id": .string(account.subject), "first_name": .string(first), "last_name": .string(last), "email": .string(email),
                    "verified": account.emailVerified ? 1 : 0, "login_type": "1", "pic_url": .string(picture)]
        default:
            return nil
        }
    }

    /// WorkOS sends the profile with the token (`profile` in the token response).
    static func tokenExtras(provider: String, account: IdentityProviderStore.Account) -> JSONObject {
        guard provider == "workos" else { return [:] }
        let (first, last) = FakeIdentityProvider.splitName(account.name ?? "")
        return ["profile": ["object": "profile", "id": .string(account.subject), "email": .string(account.email ?? ""),
                            "first_name": .string(first), "last_name": .string(last),
                            "connection_id": "conn_emulator", "connection_type": "GenericOIDC",
                            "organization_id": "org_emulator", "idp_id": .string(account.subject)]]
    }

    /// The URL's path, without scheme, host or query.
    static func pathOf(_ url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        if let slash = rest.firstIndex(of: "/") { rest = rest[slash...] } else { return "/" }
        if let query = rest.firstIndex(of: "?") { rest = rest[..<query] }
        return String(rest)
    }

    /// The account's login: its email's local part (letters, digits and `-`), else `user`.
    static func username(_ account: IdentityProviderStore.Account) -> String {
        let local = (account.email ?? "").split(separator: "@").first.map(String.init) ?? ""
        let login = String(local.lowercased().map { $0.isLetter && $0.isASCII || $0.isNumber && $0.isASCII ? $0 : "-" })
        return login.isEmpty ? "user" : login
    }

    /// A numeric id for providers whose API types it as an integer: the subject when it is one
    /// (as subjects made here are for those providers), else a stable number derived from it
    /// (subjects from before the provider's API was imitated).
    static func numericID(_ subject: String) -> Int {
        if subject.count <= 15, !subject.isEmpty, subject.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(subject) { return n }
        let digest = SHA256.hash(data: Array(subject.utf8))
        return Int(digest[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 900_000_000) + 100_000_000
    }
}
