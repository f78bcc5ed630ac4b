import AuthJSON
import AuthJWT

public struct JWTSettings: Sendable {
    /// `GOTRUE_JWT_SECRET`; the `supabase start` default.
    public var secret: String = JWTSettings.defaultSecret
    /// `GOTRUE_JWT_EXP`: access-token lifetime in seconds.
    public var expirySeconds: Int = 3600
    /// `GOTRUE_JWT_AUD`.
    public var audience: String = "authenticated"
    /// `GOTRUE_JWT_ADMIN_ROLES`: token roles accepted by admin endpoints (`supabase start` sets
    /// `service_role` only; GoTrue's own default adds `supabase_admin`).
    public var adminRoles: [String] = ["service_role"]
    /// `GOTRUE_JWT_ADMIN_GROUP_NAME`: the *user* role allowed to set app_metadata via PUT /user.
    public var adminGroupName: String = "admin"
    /// `GOTRUE_JWT_DEFAULT_GROUP_NAME`: the `role` given to new users.
    public var defaultGroupName: String = "authenticated"
    /// `GOTRUE_JWT_ISSUER`: `iss` claim when non-empty. `supabase start` sets the local auth URL.
    public var issuer: String = ""
    /// `GOTRUE_JWT_KEY_ID`: `kid` for the plain secret.
    public var keyID: String = ""
    /// `GOTRUE_JWT_KEYS`: private JWKs (`oct`, `RSA`, `EC` P-256, `OKP` Ed25519); the one whose
    /// `key_ops` has `sign` signs, the others verify only (reference §7.3).
    public var keys: [JWK] = []
    /// `GOTRUE_JWT_VALID_METHODS`: the `alg` values incoming tokens may use; nil means the
    /// algorithms of the configured keys (HS256 alone without keys), as `ApplyDefaults` sets.
    public var validMethods: [String]?

    public static let defaultSecret = "super-secret-jwt-token-with-at-least-32-characters-long"

    /// The `kid` of the Supabase CLI's built-in signing key.
    public static let cliDefaultKeyID = "b81269f1-21d8-4f2e-b719-c2240a840d90"

    /// The ES256 key every `supabase start` project signs user tokens with unless
    /// `signing_keys_path` names others: a fixed, published key of the CLI's default
    /// configuration (`pkg/config`, since CLI 2.70; random per start before), like the demo JWT
    /// secret. The same key here means tokens verify with the JWKS a local stack's other
    /// services are given.
    public static let cliDefaultKey: JWK = {
        let members: JSONObject = [
            "kty": "EC", "kid": .string(cliDefaultKeyID), "use": "sig", "key_ops": ["sign", "verify"],
            "alg": "ES256", "ext": true, "d": "dIhR8wywJlqlua4y_yMq2SLhlFXDZJBCvFrY1DCHyVU", "crv": "P-256",
            "x": "M5Sjqn5zwC9Kl1zVfUUGvv9boQjCGd45G8sdopBExB4",
            "y": "P6IXMvA2WYXSHSOMTBH2jsw_9rrzGy89FjPf6oOsIxQ",
        ]  // in the order the CLI serialises it for GOTRUE_JWT_KEYS
        do {
            return try JWK(members)
        } catch {
            // A fixed key: failing to read it is a bug the tests catch at once.
            preconditionFailure("the CLI's default signing key does not parse: \(error)")
        }
    }()

    public init() {}

    /// The JWK that signs, if `keys` has one (`GetSigningJwk`).
    public var signingJWK: JWK? { keys.first(where: \.canSign) }

    /// The key tokens are signed with: the signing JWK, else the secret as HS256 with
    /// `GOTRUE_JWT_KEY_ID` as its `kid` when set.
    public var signingKey: JWTKey {
        if let jwk = signingJWK { return jwk.key }
        return JWTKey(kid: keyID.isEmpty ? nil : keyID, secret: Array(secret.utf8))
    }

    /// The key role tokens (`auth-emulator token --role`, `/emulator/v1/token`) are signed
    /// with, as the anon and service_role keys are: the signing key, except the CLI's built-in
    /// one, which `supabase start` uses for user tokens only (its API keys stay HS256).
    public var roleTokenKey: JWTKey {
        guard signingJWK?.key.kid == JWTSettings.cliDefaultKeyID else { return signingKey }
        return JWTKey(kid: keyID.isEmpty ? nil : keyID, secret: Array(secret.utf8))
    }

    /// The accepted algorithms in force (`ApplyDefaults`: the keys' algorithms).
    public var acceptedMethods: [String] {
        if let validMethods { return validMethods }
        return keys.isEmpty ? [JWTAlgorithm.hs256.rawValue] : JWTSettings.methods([], adding: keys)
    }

    /// `methods`, then the algorithms of `keys` it lacks, in key order.
    public static func methods(_ methods: [String], adding keys: [JWK]) -> [String] {
        var result = methods
        for jwk in keys where !result.contains(jwk.key.algorithm.rawValue) { result.append(jwk.key.algorithm.rawValue) }
        return result
    }

    /// Verification keys as `parseJWTClaims` resolves them: by `kid` among the configured keys
    /// (public halves) or `GOTRUE_JWT_KEY_ID` for the secret; otherwise, for HS256 tokens only,
    /// the plain secret.
    public var verificationKeys: JWTKeySet {
        var set = keys.map { $0.key.publicOnly }
        let secretBytes = Array(secret.utf8)
        if !keyID.isEmpty { set.append(JWTKey(kid: keyID, secret: secretBytes)) }
        return JWTKeySet(keys: set, fallback: JWTKey(secret: secretBytes), unknownKidUsesFallback: true,
                         validMethods: acceptedMethods)
    }

    /// `/.well-known/jwks.json`: the public keys, never a symmetric one.
    public var publicJWKs: [JSONObject] { keys.compactMap(\.publicJSON) }
}
