import AuthJSON
import AuthCrypto

/// A JWS key: its algorithm, its key id and its material. Asymmetric keys carry their public
/// half and, when they can sign, their private half. With a `kid`, signed headers carry it, as
/// GoTrue does when its JWK has a key id.
public struct JWTKey: Sendable {
    public enum Material: Sendable {
        case secret([UInt8])
        case rsa(RSAPublicKey, RSAPrivateKey?)
        case p256(P256PublicKey, P256PrivateKey?)
        case ed25519(Ed25519PublicKey, Ed25519PrivateKey?)
    }

    public var kid: String?
    public var algorithm: JWTAlgorithm
    public var material: Material

    public init(kid: String? = nil, algorithm: JWTAlgorithm, material: Material) {
        self.kid = kid
        self.algorithm = algorithm
        self.material = material
    }

    /// An HMAC key.
    public init(kid: String? = nil, secret: [UInt8], algorithm: JWTAlgorithm = .hs256) {
        self.init(kid: kid, algorithm: algorithm, material: .secret(secret))
    }

    /// The secret's UTF-8 bytes, as GoTrue uses `GOTRUE_JWT_SECRET`.
    public init(kid: String? = nil, secret: String, algorithm: JWTAlgorithm = .hs256) {
        self.init(kid: kid, secret: Array(secret.utf8), algorithm: algorithm)
    }

    public init(kid: String? = nil, rsa key: RSAPrivateKey) {
        self.init(kid: kid, algorithm: .rs256, material: .rsa(key.publicKey, key))
    }

    public init(kid: String? = nil, p256 key: P256PrivateKey) {
        self.init(kid: kid, algorithm: .es256, material: .p256(key.publicKey, key))
    }

    public init(kid: String? = nil, ed25519 key: Ed25519PrivateKey) {
        self.init(kid: kid, algorithm: .edDSA, material: .ed25519(key.publicKey, key))
    }

    /// The HMAC secret; empty for an asymmetric key.
    public var secret: [UInt8] {
        if case .secret(let bytes) = material { return bytes }
        return []
    }

    /// Whether the key holds what signing needs (a secret, or a private key).
    public var canSign: Bool {
        switch material {
        case .secret: true
        case .rsa(_, let key): key != nil
        case .p256(_, let key): key != nil
        case .ed25519(_, let key): key != nil
        }
    }

    /// Whether the key is symmetric (never published in a JWKS).
    public var isSymmetric: Bool {
        if case .secret = material { return true }
        return false
    }

    /// The key without its private half (a secret stays a secret).
    public var publicOnly: JWTKey {
        var copy = self
        switch material {
        case .secret: break
        case .rsa(let key, _): copy.material = .rsa(key, nil)
        case .p256(let key, _): copy.material = .p256(key, nil)
        case .ed25519(let key, _): copy.material = .ed25519(key, nil)
        }
        return copy
    }
}

/// The keys a verifier accepts, selected as GoTrue's `parseJWTClaims` key function selects
/// them (internal/api/auth.go): a string `kid` names a key of `keys`; a token whose `kid` is
/// missing (or, with `unknownKidUsesFallback`, unknown) falls back to `fallback` only when its
/// `alg` is HS256, so legacy HS256 tokens signed with `GOTRUE_JWT_SECRET` keep working.
public struct JWTKeySet: Sendable {
    /// Keys selected by the token header's `kid`.
    public var keys: [JWTKey]
    /// The HS256 key for tokens without a usable `kid`, e.g. GoTrue's `GOTRUE_JWT_SECRET`.
    public var fallback: JWTKey?
    /// When a token names a `kid` that is not in `keys`: `false` (default) rejects it;
    /// `true` reproduces GoTrue, which then falls back to the plain secret for HS256 tokens.
    public var unknownKidUsesFallback: Bool
    /// `GOTRUE_JWT_VALID_METHODS`: the `alg` values accepted at all (golang-jwt's
    /// `WithValidMethods`, checked before any key is looked up). nil means the algorithms of
    /// the set's keys, as GoTrue's `ApplyDefaults` derives the list from its keys.
    public var validMethods: [String]?

    /// The algorithms accepted: `validMethods`, else those of the keys and the fallback.
    var acceptedMethods: [String] {
        if let validMethods { return validMethods }
        return (keys + [fallback].compactMap { $0 }).map(\.algorithm.rawValue)
    }

    public init(keys: [JWTKey] = [], fallback: JWTKey? = nil, unknownKidUsesFallback: Bool = false,
                validMethods: [String]? = nil) {
        self.keys = keys
        self.fallback = fallback
        self.unknownKidUsesFallback = unknownKidUsesFallback
        self.validMethods = validMethods
    }

    /// A single HS256 secret used for every token.
    public init(secret: [UInt8]) {
        self.init(fallback: JWTKey(secret: secret))
    }

    func key(forKid kid: String) -> JWTKey? {
        // Exact UTF-8 comparison, as Go compares strings (not Swift's canonical equivalence).
        keys.first { $0.kid.map { $0.utf8.elementsEqual(kid.utf8) } ?? false }
    }
}
