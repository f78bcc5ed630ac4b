import AuthJSON
import AuthCrypto

/// RS256 (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 section 3.3): what OpenID Connect
/// providers sign id_tokens with, and what any JWKS-aware library verifies.
extension JWT {
    /// Signs `claims` (serialized in their own key order, like `JWT.sign`) with RS256. The
    /// header is `{"alg":"RS256","kid":...,"typ":"JWT"}` in sorted key order, `kid` only when
    /// given. Deterministic: the same claims and key give the same token.
    public static func signRS256(claims: JSONObject, key: RSAPrivateKey, kid: String?) -> String {
        var header: JSONObject = ["alg": .string(JWTAlgorithm.rs256.rawValue)]
        if let kid { header["kid"] = .string(kid) }
        header["typ"] = "JWT"
        let signingInput = Base64URL.encode(header.serializedBytes(sortedKeys: true)) + "."
            + Base64URL.encode(claims.serializedBytes())
        let signature = RSA.signPKCS1v15SHA256(Array(signingInput.utf8), key: key)
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Verifies an RS256 token against public keys by `kid`, with the same checks, order and
    /// error values as `verify(_:keys:now:leeway:options:)`: segments, header, claims, `alg`
    /// present and registered, signature encoding, then `alg` must be exactly `RS256` (an HS256
    /// or `none` token fails as `.signatureInvalid(.algorithmNotAccepted)`, so a public key can
    /// never be misused as an HMAC secret), key lookup, signature, `exp` / `nbf` (`iat`).
    ///
    /// Key lookup follows go-oidc's `RemoteKeySet`, which GoTrue uses to check provider
    /// id_tokens: a token naming a `kid` is checked only against that key (unknown kid:
    /// `.unverifiable(.unknownKey)`); a token without one is tried against every key.
    public static func verify(
        _ token: String, rsaKeys: [String: RSAPublicKey], now: Int64, leeway: Int64 = 0,
        options: JWTValidationOptions = JWTValidationOptions()
    ) throws(JWTError) -> JWT {
        let parsed = try parse(token)
        guard parsed.algorithm == JWTAlgorithm.rs256.rawValue else {
            throw .signatureInvalid(.algorithmNotAccepted(parsed.algorithm))
        }
        let kid = parsed.header["kid"]?.stringValue
        let candidates: [RSAPublicKey]
        if let kid {
            // Exact UTF-8 comparison, as Go compares strings (not Swift's canonical equivalence).
            candidates = rsaKeys.filter { $0.key.utf8.elementsEqual(kid.utf8) }.map(\.value)
        } else {
            candidates = Array(rsaKeys.values)
        }
        guard !candidates.isEmpty else { throw .unverifiable(.unknownKey(kid: kid, algorithm: parsed.algorithm)) }

        let message = Array(parsed.token.signingInput.utf8)
        guard candidates.contains(where: {
            RSA.verifyPKCS1v15SHA256(message, signature: parsed.token.signature, key: $0)
        }) else {
            throw .signatureInvalid(.signatureMismatch)
        }
        try parsed.times.check(now: now, leeway: leeway, options: options)
        return parsed.token
    }

    /// Decodes a token WITHOUT checking its signature or time claims: for tokens from real
    /// providers whose keys cannot be fetched offline. Everything else is as strict as
    /// `verify`: three segments, strict base64url, JSON-object header and claims, typed time
    /// claims, a registered `alg`, a decodable signature (golang-jwt's `ParseUnverified`
    /// checks, plus the signature encoding). Never trust its claims for authentication.
    public static func decodeUnverified(_ token: String) throws(JWTError) -> JWT {
        try parse(token).token
    }
}

/// Why a JWK could not be read. Descriptions never contain key material.
public enum JWKError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `kty` is not one this module reads (or, for the RSA initialisers, not "RSA").
    case unsupportedKeyType
    /// A required member is missing, not a string, or not strict unpadded base64url.
    case invalidMember(String)
    /// Members this implementation does not support (`oth`, multi-prime keys; a private key
    /// without its primes).
    case unsupported(String)
    /// The numbers do not form a valid RSA key.
    case invalidKey(RSAKeyError)
    /// The members do not form a valid elliptic-curve key (not on the curve, out of range).
    case invalidCurveKey(String)

    public var description: String {
        switch self {
        case .unsupportedKeyType: "JWK key type (kty) is not supported; expected oct, RSA, EC (P-256) or OKP (Ed25519)"
        case .invalidMember(let name): "JWK member \"\(name)\" is missing or not valid base64url"
        case .unsupported(let what): "JWK uses an unsupported feature: \(what)"
        case .invalidKey(let problem): "JWK is not a valid RSA key: \(problem)"
        case .invalidCurveKey(let problem): "JWK is not a valid key: \(problem)"
        }
    }
}

extension RSAPublicKey {
    /// The public JWK (RFC 7517 section 4, RFC 7518 section 6.3.1) for a JWKS document:
    /// `{"kty":"RSA","use":"sig","alg":"RS256","kid":...,"n":...,"e":...}`, with n and e as
    /// unpadded base64url of their minimal big-endian bytes (RFC 7518 section 6.3.1.1).
    public func jwk(kid: String) -> JSONObject {
        [
            "kty": "RSA", "use": "sig", "alg": .string(JWTAlgorithm.rs256.rawValue), "kid": .string(kid),
            "n": .string(Base64URL.encode(modulus)), "e": .string(Base64URL.encode(exponent)),
        ]
    }

    /// The JWK thumbprint (RFC 7638 section 3): base64url SHA-256 of
    /// `{"e":...,"kty":"RSA","n":...}` (required members only, sorted, no whitespace). A
    /// stable key id derived from the key itself.
    public var thumbprint: String {
        let members: JSONObject = [
            "e": .string(Base64URL.encode(exponent)), "kty": "RSA", "n": .string(Base64URL.encode(modulus)),
        ]
        return Base64URL.encode(SHA256.hash(data: members.serializedBytes(sortedKeys: true)))
    }

    /// Reads a public RSA JWK (`kty` "RSA" with `n` and `e`; other members are ignored).
    public init(jwk: JSONObject) throws(JWKError) {
        guard jwk["kty"]?.stringValue == "RSA" else { throw .unsupportedKeyType }
        let n = try JWKMember.bytes(jwk, "n"), e = try JWKMember.bytes(jwk, "e")
        do throws(RSAKeyError) {
            try self.init(modulus: n, exponent: e)
        } catch {
            throw .invalidKey(error)
        }
    }
}

extension RSAPrivateKey {
    /// The private JWK (RFC 7518 section 6.3.2) for storage: the public members plus d, p, q,
    /// dp, dq and qi. Contains the private key: never publish it.
    public func privateJWK(kid: String) -> JSONObject {
        var jwk = publicKey.jwk(kid: kid)
        for (name, value) in [("d", d), ("p", p), ("q", q), ("dp", dp), ("dq", dq), ("qi", qinv)] {
            jwk[name] = .string(Base64URL.encode(value))
        }
        return jwk
    }

    /// Reads a private RSA JWK with its primes (RFC 7518 section 6.3.2: when `p` is present,
    /// `q`, `dp`, `dq` and `qi` must be too). The key is validated as by
    /// `init(n:e:d:p:q:)`, and given CRT members must equal the derived ones. Multi-prime keys
    /// (`oth`) and keys without primes are refused.
    public init(jwk: JSONObject) throws(JWKError) {
        guard jwk["kty"]?.stringValue == "RSA" else { throw .unsupportedKeyType }
        guard jwk["oth"] == nil else { throw .unsupported("multi-prime key (oth)") }
        guard jwk["p"] != nil, jwk["q"] != nil else { throw .unsupported("private key without its primes") }
        let n = try JWKMember.bytes(jwk, "n"), e = try JWKMember.bytes(jwk, "e")
        let d = try JWKMember.bytes(jwk, "d"), p = try JWKMember.bytes(jwk, "p"), q = try JWKMember.bytes(jwk, "q")
        let dp = try JWKMember.bytes(jwk, "dp"), dq = try JWKMember.bytes(jwk, "dq")
        let qi = try JWKMember.bytes(jwk, "qi")
        do throws(RSAKeyError) {
            self = try RSAPrivateKey(n: n, e: e, d: d, p: p, q: q)
        } catch {
            throw .invalidKey(error)
        }
        // Compared as numbers: leading zero bytes do not change the value.
        for (given, derived) in [(dp, self.dp), (dq, self.dq), (qi, self.qinv)]
        where Array(given.drop(while: { $0 == 0 })) != derived {
            throw .invalidKey(.inconsistentKey)
        }
    }
}

/// Base64url members of a JWK.
enum JWKMember {
    static func bytes(_ jwk: JSONObject, _ name: String) throws(JWKError) -> [UInt8] {
        guard case .string(let text)? = jwk[name], !text.isEmpty,
              let bytes = try? Base64URL.decode(text)
        else { throw .invalidMember(name) }
        return bytes
    }
}
