import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats
import GoTrue
import Synchronization

/// The emulator's fake OpenID Connect providers: one issuer per social provider
/// (`<API_EXTERNAL_URL>/emulator/v1/idp/<provider>`), all signing RS256 id_tokens with one RSA
/// key per project. Social sign-in then works offline: GoTrue's `/authorize` sends the browser
/// to the fake provider's consent page, the page redirects back to `/callback` with a code,
/// and GoTrue redeems that code in-process; native sign-in (`grant_type=id_token`) gets tokens
/// from the mint route and verifies them against the same key.
///
/// The per-project state (the cached key, pending authorization codes, provider access tokens,
/// accounts approved in this process) lives in `IdentityProviderStore`, shared by every copy of
/// the project; the signing key itself is in the database (`idp_signing_keys`).
public final class IdentityProviderStore: Sendable {
    /// The signing key in force, with what every use needs precomputed.
    struct SigningKey: Sendable {
        let kid: String
        let privateKey: RSAPrivateKey
        let publicJWK: JSONObject
    }

    /// One test account as the fake provider knows it.
    struct Account: Sendable, Equatable {
        var subject: String
        var email: String?
        var emailVerified: Bool
        var name: String?
        var picture: String?
    }

    /// An approved authorization waiting for its code to be redeemed.
    struct PendingCode: Sendable {
        var provider: String
        var clientID: String
        var redirectURI: String
        var scope: String
        /// The authorization request's `nonce`, copied verbatim into the id_token (OpenID Connect
        /// Core 1.0 §3.1.3.7 step 11: the claim equals the value sent in the request).
        var nonce: String?
        var codeChallenge: String?
        var codeChallengeMethod: String
        var account: Account
        /// Apple's `user` form field (first authorization only).
        var appleUser: String?
        /// Unix microseconds on the project's clock.
        var expiresAt: Int64
    }

    /// What a provider access token grants at the userinfo endpoint.
    struct ProviderGrant: Sendable {
        var provider: String
        var account: Account
        var expiresAt: Int64
    }

    private struct State {
        var key: SigningKey?
        var codes: [String: PendingCode] = [:]
        var accessTokens: [String: ProviderGrant] = [:]
        /// Per provider, newest first.
        var approved: [String: [Account]] = [:]
        /// `provider + "\n" + subject` of every approval in this process (Apple's first-time
        /// `user` field).
        var authorized: Set<String> = []
    }

    private let state = Mutex(State())
    /// Held while a key is generated, so concurrent first requests make one key, not several.
    private let generation = Mutex(())

    /// Codes live ten minutes, as Google's and Apple's do (RFC 6749 §4.1.2 recommends at most 10).
    static let codeLifetimeSeconds: Int64 = 600
    /// Provider access tokens, as the real providers' (one hour).
    static let accessTokenLifetimeSeconds: Int64 = 3600
    /// Bounds on what is kept in memory between prunings of expired entries.
    static let maximumPending = 10_000
    static let maximumRememberedAccounts = 20

    public init() {}

    /// Forgets the in-memory state (codes, provider tokens, remembered accounts, first-time
    /// authorizations). The key is the database's: a reset of the database replaces it anyway.
    public func reset() {
        state.withLock { $0 = State() }
    }

    // MARK: Signing key

    /// The project's signing key: the cached one while the database still holds its row, else
    /// the database's (another process, or a reset followed by a new key), else, when `create`,
    /// a new one generated and stored (first writer wins across processes). Nil when there is
    /// none and `create` is false.
    func signingKey(_ project: Project, create: Bool) throws -> SigningKey? {
        let kid = try project.database.read { try $0.idpSigningKeyID() }
        if let kid {
            if let cached = state.withLock({ $0.key }), cached.kid == kid { return cached }
            return try load(project)
        }
        guard create else { return nil }
        return try generation.withLock { _ throws -> SigningKey? in
            // Another thread may have made it while this one waited.
            if try project.database.read({ try $0.idpSigningKeyID() }) != nil { return try load(project) }
            let privateKey = IdPCrypto.generateKey(random: project.environment.random)
            let kid = IdPCrypto.keyID(privateKey.publicKey)
            let record = IdPSigningKeyRecord(
                kid: kid, privateJWK: IdPCrypto.privateJWK(privateKey, kid: kid).serialized(),
                createdAt: project.environment.now().microseconds)
            let stored = try project.database.write { try $0.insertIdPSigningKeyIfNone(record) }
            guard stored.kid == kid else { return try load(project) }
            let key = SigningKey(kid: kid, privateKey: privateKey, publicJWK: IdPCrypto.publicJWK(privateKey.publicKey, kid: kid))
            state.withLock { $0.key = key }
            return key
        }
    }

    private func load(_ project: Project) throws -> SigningKey? {
        guard let record = try project.database.read({ try $0.idpSigningKey() }) else { return nil }
        if let cached = state.withLock({ $0.key }), cached.kid == record.kid { return cached }
        guard let object = try JSON(parsing: record.privateJWK).objectValue else { throw IdentityProviderError.storedKeyInvalid }
        let privateKey = try IdPCrypto.privateKey(jwk: object)
        let key = SigningKey(kid: record.kid, privateKey: privateKey,
                             publicJWK: IdPCrypto.publicJWK(privateKey.publicKey, kid: record.kid))
        state.withLock { $0.key = key }
        return key
    }

    // MARK: Codes and provider tokens

    func insert(code: String, _ pending: PendingCode, now: Int64) {
        state.withLock { $0.codes.insert(pending, at: code, now: now) }
    }

    /// Single use: the code is removed whatever happens next (RFC 6749 §4.1.2). Nil when unknown,
    /// already used, expired on the project's clock, or issued by another provider (such a code
    /// is left alone: it is not this provider's to revoke).
    func take(code: String, provider: String, now: Int64) -> PendingCode? {
        state.withLock { s in
            guard let pending = s.codes[code], pending.provider == provider else { return nil }
            s.codes[code] = nil
            return pending.expiresAt > now ? pending : nil
        }
    }

    func insert(accessToken: String, _ grant: ProviderGrant, now: Int64) {
        state.withLock { $0.accessTokens.insert(grant, at: accessToken, now: now) }
    }

    func grant(accessToken: String, provider: String, now: Int64) -> ProviderGrant? {
        state.withLock { s in
            guard let grant = s.accessTokens[accessToken], grant.provider == provider, grant.expiresAt > now else { return nil }
            return grant
        }
    }

    // MARK: Accounts

    /// Records an approval; true when this is the first one of `account` by `provider` in this
    /// process.
    func remember(_ account: Account, provider: String) -> Bool {
        state.withLock { s in
            var list = s.approved[provider, default: []]
            list.removeAll { $0.subject == account.subject || ($0.email != nil && $0.email?.lowercased() == account.email?.lowercased()) }
            list.insert(account, at: 0)
            s.approved[provider] = Array(list.prefix(IdentityProviderStore.maximumRememberedAccounts))
            return s.authorized.insert(provider + "\n" + account.subject).inserted
        }
    }

    func approvedAccounts(provider: String) -> [Account] {
        state.withLock { $0.approved[provider] ?? [] }
    }
}

/// A code or provider token that lapses at `expiresAt` (Unix microseconds, project clock).
private protocol Expiring {
    var expiresAt: Int64 { get }
}

extension IdentityProviderStore.PendingCode: Expiring {}

extension IdentityProviderStore.ProviderGrant: Expiring {}

private extension Dictionary where Key == String, Value: Expiring {
    /// Stores `value` under `key`, first dropping the expired entries once `maximumPending` are
    /// held, so flows that are never finished cannot grow the table without bound.
    mutating func insert(_ value: Value, at key: String, now: Int64) {
        if count >= IdentityProviderStore.maximumPending { self = filter { $0.value.expiresAt > now } }
        self[key] = value
    }
}
