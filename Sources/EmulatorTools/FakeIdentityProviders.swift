import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats
import GoTrue
import Synchronization

enum IdentityProviderError: Error, CustomStringConvertible {
    case storedKeyInvalid
    case noSigningKey
    case wrongKey

    var description: String {
        switch self {
        case .storedKeyInvalid: "the stored identity provider key is not a valid RSA JWK"
        case .noSigningKey: "the emulator has no identity provider key"
        case .wrongKey: "the token was not signed with the emulator's identity provider key"
        }
    }
}

/// The fake providers as GoTrue's own code uses them (the id_token grant and the OAuth
/// callback), and the logic behind the `/emulator/v1/idp/...` routes. A value built per request.
struct FakeIdentityProvider: IdentityProviderSeam, Sendable {
    let api: Core

    init(api: Core) { self.api = api }

    private var project: Project { api.project }
    private var store: IdentityProviderStore { project.identityProviderStore }

    static let pathPrefix = GoTrueAPI.emulatorPrefix + "/idp/"

    // MARK: Names

    /// Providers with a fake issuer: those `GET /settings` lists, the newer ones GoTrue also
    /// supports, and any custom OIDC provider (`custom:<id>`).
    static let providerNames: Set<String> = Set(ExternalSettings.settingsProviders + ["x", "zoom", "vercel_marketplace"])

    static func isKnown(_ provider: String) -> Bool {
        if providerNames.contains(provider) { return true }
        guard provider.hasPrefix("custom:") else { return false }
        let id = provider.utf8.dropFirst(7)
        return !id.isEmpty && id.count <= 64 && id.allSatisfy { b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
                || b == UInt8(ascii: ".")
        }
    }

    static func checkProvider(_ provider: String) throws(AuthError) {
        guard isKnown(provider) else {
            throw AuthError(404, .validationFailed, "Unknown identity provider \(GoStrconv.quote(provider))")
        }
    }

    /// How the consent page names the provider.
    static func displayName(_ provider: String) -> String {
        if provider.hasPrefix("custom:") { return "Custom OIDC (\(provider.dropFirst(7)))" }
        let names: [String: String] = [
            "apple": "Apple", "azure": "Microsoft", "bitbucket": "Bitbucket", "discord": "Discord",
            "facebook": "Facebook", "snapchat": "Snapchat", "figma": "Figma", "fly": "Fly.io", "github": "GitHub",
            "gitlab": "GitLab", "google": "Google", "keycloak": "Keycloak", "kakao": "Kakao", "linkedin": "LinkedIn",
            "linkedin_oidc": "LinkedIn", "notion": "Notion", "spotify": "Spotify", "slack": "Slack",
            "slack_oidc": "Slack", "workos": "WorkOS", "twitch": "Twitch", "twitter": "Twitter", "x": "X",
            "zoom": "Zoom", "vercel_marketplace": "Vercel Marketplace",
        ]
        return names[provider] ?? provider
    }

    // MARK: Issuers

    /// "<externalURL>/emulator/v1/idp/": every fake issuer starts with it.
    var issuerBase: String {
        var base = api.snapshot.configuration.externalURL
        while base.hasSuffix("/") { base.removeLast() }
        return base + FakeIdentityProvider.pathPrefix
    }

    /// "<externalURL>/emulator/v1/idp/<provider>"
    func issuer(for provider: String) -> String { issuerBase + provider }

    /// The provider name when `iss` is one of the fake issuers, else nil.
    func provider(forIssuer iss: String) -> String? {
        let base = issuerBase
        guard iss.hasPrefix(base) else { return nil }
        let name = String(iss.dropFirst(base.count))
        return FakeIdentityProvider.isKnown(name) ? name : nil
    }

    /// The fake provider's authorization endpoint with `query` appended (encoded as Go's
    /// `url.Values.Encode`, the way golang.org/x/oauth2 builds `AuthCodeURL`).
    func authorizationURL(provider: String, query: [QueryItem]) -> String {
        let url = issuer(for: provider) + "/authorize"
        return query.isEmpty ? url : url + "?" + GoURL.encode(query)
    }

    // MARK: Tokens

    /// True when the token's header `kid` is the emulator's signing key id. Never creates a key.
    func isEmulatorToken(_ token: String) -> Bool {
        guard let kid = IdPCrypto.headerKid(token), kid.hasPrefix(IdPCrypto.kidPrefix),
              let key = try? store.signingKey(project, create: false) else { return false }
        return key.kid == kid
    }

    /// Verifies an emulator-signed RS256 token: the signature with the emulator's key, `exp` and
    /// `nbf` against the project's (virtual) clock. Returns the claims. Throws on any failure.
    func verify(_ token: String) throws -> JSONObject {
        guard let key = try store.signingKey(project, create: false) else { throw IdentityProviderError.noSigningKey }
        return try IdPCrypto.verify(token, key: key.privateKey.publicKey, kid: key.kid, now: project.environment.now().unixSeconds)
    }

    /// Signs `claims` with the project's key (made on first use).
    func sign(_ claims: JSONObject) throws -> String {
        guard let key = try store.signingKey(project, create: true) else { throw IdentityProviderError.noSigningKey }
        return IdPCrypto.sign(claims, key: key.privateKey, kid: key.kid)
    }

    /// The JWKS document (RFC 7517 §5) every fake provider publishes.
    func jwks() throws -> JSON {
        guard let key = try store.signingKey(project, create: true) else { throw IdentityProviderError.noSigningKey }
        return ["keys": [.object(key.publicJWK)]]
    }

    // MARK: Subjects and claims

    /// A stable subject per (provider, email), shaped like the provider's own: Google's 21-digit
    /// numbers, Apple's `000000.<32 hex>.0000` team-scoped ids; the integer ids of GitHub, GitLab
    /// and Kakao (their APIs type them as numbers), Discord's and X's snowflakes, Twitch's and
    /// Figma's digits, Bitbucket's braced UUIDs; 32 hex digits elsewhere. Random (same shapes)
    /// without an email.
    func subject(provider: String, email: String?) -> String {
        let seed: [UInt8]
        if let email, !email.isEmpty {
            seed = SHA256.hash(data: Array((provider + "\n" + email.lowercased()).utf8))
        } else {
            seed = project.environment.randomBytes(32)
        }
        func number(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }
        func padded(_ value: UInt64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        switch provider {
        case "google":
            // UInt64.max has 20 digits: "1" and 20 digits is Google's 21-digit shape.
            return "1" + padded(number(seed[0..<8]), 20)
        case "apple":
            return padded(number(seed[0..<4]) % 1_000_000, 6) + "." + Hex.encode(seed[4..<20]) + "."
                + padded(number(seed[20..<22]) % 10_000, 4)
        case "github", "gitlab", "twitch":
            return String(number(seed[0..<4]) % 90_000_000 + 10_000_000)
        case "kakao":
            return String(number(seed[0..<5]) % 9_000_000_000 + 1_000_000_000)
        case "discord", "x", "twitter", "figma":
            return String(number(seed[0..<8]) % 900_000_000_000_000_000 + 100_000_000_000_000_000)
        case "bitbucket":
            let hex = Hex.encode(seed[0..<16])
            let groups = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
            return "{" + groups.joined(separator: "-") + "}"
        default:
            return Hex.encode(seed[0..<16])
        }
    }

    /// What Apple and Google do with the nonce an app passes: the token carries the lowercase
    /// hex SHA-256 of the raw nonce, which GoTrue's id_token grant recomputes (reference §11.3).
    static func hashedNonce(_ raw: String) -> String { Hex.encode(SHA256.hash(data: Array(raw.utf8))) }

    static func isPrivateRelay(_ email: String?) -> Bool {
        email?.lowercased().hasSuffix("@privaterelay.appleid.com") ?? false
    }

    /// id_token claims in the provider's style. Order: iss, aud, exp, iat, sub, then the rest;
    /// `extra` is merged last, so it can override anything.
    ///
    /// Apple never puts the user's name into the id_token (it comes once, in the `user` form
    /// field), writes `email_verified` (and `is_private_email`) as strings, and adds `auth_time`
    /// and `nonce_supported`. Google adds `azp` and the profile claims.
    func idTokenClaims(provider: String, account: IdentityProviderStore.Account, audience: JSON, nonce: String?,
                       issuedAt: Int64, expiresIn: Int64, extra: JSONObject = JSONObject()) -> JSONObject {
        var claims = JSONObject()
        claims["iss"] = .string(issuer(for: provider))
        claims["aud"] = audience
        claims["exp"] = .number(issuedAt + expiresIn)
        claims["iat"] = .number(issuedAt)
        claims["sub"] = .string(account.subject)
        if provider == "apple" {
            if let nonce { claims["nonce"] = .string(nonce) }
            if let email = account.email {
                claims["email"] = .string(email)
                claims["email_verified"] = .string(account.emailVerified ? "true" : "false")
                if FakeIdentityProvider.isPrivateRelay(email) { claims["is_private_email"] = true }
            }
            claims["auth_time"] = .number(issuedAt)
            claims["nonce_supported"] = true
        } else {
            if provider == "google", let azp = audience.stringValue ?? audience.arrayValue?.first?.stringValue {
                claims["azp"] = .string(azp)
            }
            if let email = account.email {
                claims["email"] = .string(email)
                claims["email_verified"] = .bool(account.emailVerified)
            }
            if let nonce { claims["nonce"] = .string(nonce) }
            if let name = account.name, !name.isEmpty {
                claims["name"] = .string(name)
                let (given, family) = FakeIdentityProvider.splitName(name)
                if provider == "google" {
                    claims["given_name"] = .string(given)
                    if !family.isEmpty { claims["family_name"] = .string(family) }
                }
            }
            if let picture = account.picture { claims["picture"] = .string(picture) }
        }
        for (key, value) in extra { claims[key] = value }
        return claims
    }

    /// "Ada Lovelace" → ("Ada", "Lovelace"): Apple's `firstName`/`lastName`, Google's
    /// `given_name`/`family_name`.
    static func splitName(_ name: String) -> (String, String) {
        let trimmed = GoStrings.trimSpace(name)
        guard let space = trimmed.firstIndex(of: " ") else { return (trimmed, "") }
        return (String(trimmed[..<space]), GoStrings.trimSpace(trimmed[trimmed.index(after: space)...]))
    }

    /// OpenID Connect Core 1.0 §3.1.3.6: base64url of the left half of SHA-256(access token).
    static func accessTokenHash(_ accessToken: String) -> String {
        Base64URL.encode(SHA256.hash(data: Array(accessToken.utf8)).prefix(16))
    }

    // MARK: Authorization codes

    /// Records an approval and returns its single-use authorization code (256 random bits,
    /// base64url) with Apple's `user` field when this is the subject's first authorization.
    func approve(provider: String, request: AuthorizationRequest, account: IdentityProviderStore.Account) throws(AuthError) -> (code: String, appleUser: String?) {
        let firstInProcess = store.remember(account, provider: provider)
        var appleUser: String?
        if provider == "apple", firstInProcess {
            // Apple sends `user` only the first time a person authorizes the app; an identity
            // already stored means that time is past.
            let known = try api.read { try $0.identity(providerID: account.subject, provider: provider) }
            if known == nil { appleUser = FakeIdentityProvider.appleUser(account) }
        }
        let code = Base64URL.encode(project.environment.randomBytes(32))
        let now = project.environment.now()
        store.insert(code: code, IdentityProviderStore.PendingCode(
            provider: provider, clientID: request.clientID, redirectURI: request.redirectURI, scope: request.scope,
            nonce: request.nonce.isEmpty ? nil : request.nonce,
            codeChallenge: request.codeChallenge.isEmpty ? nil : request.codeChallenge,
            codeChallengeMethod: request.codeChallengeMethod.isEmpty ? "plain" : request.codeChallengeMethod,
            account: account, appleUser: appleUser,
            expiresAt: now.adding(seconds: IdentityProviderStore.codeLifetimeSeconds).microseconds
        ), now: now.microseconds)
        return (code, appleUser)
    }

    /// `{"name":{"firstName":..,"lastName":..},"email":..}`, as Apple posts it.
    static func appleUser(_ account: IdentityProviderStore.Account) -> String {
        var user = JSONObject()
        if let name = account.name, !GoStrings.trimSpace(name).isEmpty {
            let (first, last) = splitName(name)
            user["name"] = ["firstName": .string(first), "lastName": .string(last)]
        }
        if let email = account.email { user["email"] = .string(email) }
        return user.serialized()
    }

    /// The tokens a redeemed code yields: the id_token claims, a provider access token (usable
    /// at the userinfo endpoint for an hour) and a refresh token.
    func issue(_ pending: IdentityProviderStore.PendingCode) -> IdentityProviderRedemption {
        let now = project.environment.now()
        let accessToken = Base64URL.encode(project.environment.randomBytes(32))
        let refreshToken = Base64URL.encode(project.environment.randomBytes(32))
        store.insert(accessToken: accessToken, IdentityProviderStore.ProviderGrant(
            provider: pending.provider, account: pending.account,
            expiresAt: now.adding(seconds: IdentityProviderStore.accessTokenLifetimeSeconds).microseconds
        ), now: now.microseconds)
        let claims = idTokenClaims(provider: pending.provider, account: pending.account, audience: .string(pending.clientID),
                                   nonce: pending.nonce, issuedAt: now.unixSeconds,
                                   expiresIn: IdentityProviderStore.accessTokenLifetimeSeconds,
                                   extra: ["at_hash": .string(FakeIdentityProvider.accessTokenHash(accessToken))])
        return IdentityProviderRedemption(claims: claims, accessToken: accessToken, refreshToken: refreshToken,
                                          appleUser: pending.appleUser,
                                          tokenExtras: FakeProviderProfiles.tokenExtras(provider: pending.provider, account: pending.account))
    }

    /// Single-use: the code's id_token claims (as the token endpoint would sign them), provider
    /// access/refresh tokens, and for Apple's first authorization the `user` JSON text. Nil when
    /// the code is unknown, used, expired (virtual clock) or another provider's.
    func redeem(code: String, provider: String) -> IdentityProviderRedemption? {
        guard let pending = store.take(code: code, provider: provider, now: project.environment.now().microseconds) else {
            return nil
        }
        return issue(pending)
    }

    /// The account a provider knows for `email`: one approved in this process, else the newest
    /// identity with that email, so returning users keep their subject and name.
    func knownAccount(provider: String, email: String) throws(AuthError) -> IdentityProviderStore.Account? {
        let lowered = email.lowercased()
        if let account = store.approvedAccounts(provider: provider).first(where: { $0.email?.lowercased() == lowered }) {
            return account
        }
        let record = try api.read { try $0.idpAccount(provider: provider, email: lowered) }
        return record.map { .init(subject: $0.subject, email: $0.email ?? email, emailVerified: true, name: $0.name, picture: nil) }
    }

    /// Accounts to offer on the consent page: this process's approvals, then earlier identities,
    /// without duplicates, at most 20.
    func previousAccounts(provider: String) throws(AuthError) -> [IdentityProviderStore.Account] {
        var accounts = store.approvedAccounts(provider: provider)
        let stored = try api.read { try $0.idpAccounts(provider: provider, limit: IdentityProviderStore.maximumRememberedAccounts) }
        for record in stored {
            guard let email = record.email, !email.isEmpty else { continue }
            if accounts.contains(where: { $0.subject == record.subject || $0.email?.lowercased() == email.lowercased() }) { continue }
            accounts.append(.init(subject: record.subject, email: email, emailVerified: true, name: record.name, picture: nil))
        }
        return Array(accounts.filter { $0.email != nil }.prefix(IdentityProviderStore.maximumRememberedAccounts))
    }
}

/// The RSA operations the fake providers need, in one place.
enum IdPCrypto {
    static let kidPrefix = "emulator-"

    static func generateKey(random: any RandomSource) -> RSAPrivateKey {
        RSAPrivateKey.generate(bits: 2048, random: random)
    }

    /// "emulator-" + the first 16 hex digits of the key's RFC 7638 thumbprint: SHA-256 over the
    /// required members in lexicographic order without whitespace (§3.2, §3.3).
    static func keyID(_ key: RSAPublicKey) -> String {
        let members = "{\"e\":\"\(Base64URL.encode(key.exponent))\",\"kty\":\"RSA\",\"n\":\"\(Base64URL.encode(key.modulus))\"}"
        return kidPrefix + Hex.encode(SHA256.hash(data: Array(members.utf8)).prefix(8))
    }

    static func publicJWK(_ key: RSAPublicKey, kid: String) -> JSONObject { key.jwk(kid: kid) }

    static func privateJWK(_ key: RSAPrivateKey, kid: String) -> JSONObject { key.privateJWK(kid: kid) }

    static func privateKey(jwk: JSONObject) throws -> RSAPrivateKey { try RSAPrivateKey(jwk: jwk) }

    static func sign(_ claims: JSONObject, key: RSAPrivateKey, kid: String) -> String {
        JWT.signRS256(claims: claims, key: key, kid: kid)
    }

    static func verify(_ token: String, key: RSAPublicKey, kid: String, now: Int64) throws -> JSONObject {
        try JWT.verify(token, rsaKeys: [kid: key], now: now).claims
    }

    /// The header's `kid`, without any verification.
    static func headerKid(_ token: String) -> String? {
        guard let dot = token.utf8.firstIndex(of: UInt8(ascii: ".")),
              let bytes = try? Base64URL.decode(token[..<dot]),
              let header = try? JSON(parsing: bytes) else { return nil }
        return header["kid"]?.stringValue
    }
}

extension FakeIdentityProvider {
    func serves(_ provider: String) -> Bool { FakeIdentityProvider.isKnown(provider) }

    func discoveryDocument(provider: String) -> JSONObject? {
        ControlIdPEndpoints.discoveryDocument(issuer: issuer(for: provider), provider: provider).objectValue
    }

    /// The provider's API as the account behind the access token sees it (`FakeProviderProfiles`);
    /// an unknown or expired token is a failed request, as a 401 would be.
    func providerAPI(provider: String, accessToken: String, url: String) -> JSON? {
        guard let grant = store.grant(accessToken: accessToken, provider: provider, now: project.environment.now().microseconds) else {
            return nil
        }
        return FakeProviderProfiles.answer(provider: provider, url: url, account: grant.account)
    }
}
