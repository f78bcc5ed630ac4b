import AuthCrypto
import AuthJSON
import Testing
@testable import AuthJWT

/// JWKs of every supported type (RFC 7517, RFC 7518 §6, RFC 8037) and the JWS algorithms they
/// sign with, verified by golang-jwt's rules with its error texts.
@Suite struct JWKTypeTests {
    static let algorithms: [JWTAlgorithm] = [.hs256, .rs256, .es256, .edDSA]
    /// One generated key per algorithm (RSA from a seeded source, so the suite stays fast).
    static let generated: [JWTAlgorithm: JWK] = {
        var keys: [JWTAlgorithm: JWK] = [:]
        for algorithm in algorithms {
            keys[algorithm] = JWK(generating: algorithm, kid: "kid-\(algorithm.rawValue)", random: SeededRandom(seed: 41))
        }
        return keys
    }()

    @Test(arguments: algorithms) func generatedKeysSignAndVerify(_ algorithm: JWTAlgorithm) throws {
        let jwk = try #require(Self.generated[algorithm])
        #expect(jwk.canSign && jwk.key.canSign)
        #expect(jwk.key.algorithm == algorithm)
        // The CLI's member order: kty, kid, use, key_ops, alg, ext, then the key material.
        #expect(Array(jwk.privateJSON.map(\.key).prefix(6)) == ["kty", "kid", "use", "key_ops", "alg", "ext"])
        let token = JWT.sign(claims: ["sub": "u", "exp": 1_700_003_600], key: jwk.key)
        let parts = token.split(separator: ".")
        let header = try JSON(parsing: Base64URL.decode(parts[0]))
        #expect(header == ["alg": .string(algorithm.rawValue), "kid": .string("kid-\(algorithm.rawValue)"), "typ": "JWT"])
        // Verified with the public half only, as a JWKS consumer has it.
        let keys = JWTKeySet(keys: [jwk.key.publicOnly])
        #expect(try JWT.verify(token, keys: keys, now: 1_700_000_000).claims["sub"] == "u")
    }

    @Test(arguments: algorithms) func publicJWKsCarryNoPrivateMaterial(_ algorithm: JWTAlgorithm) throws {
        let jwk = try #require(Self.generated[algorithm])
        guard let object = jwk.publicJSON else {
            #expect(algorithm == .hs256)  // symmetric keys are never published
            return
        }
        for member in ["d", "p", "q", "dp", "dq", "qi", "k"] { #expect(object[member] == nil) }
        #expect(object["use"] == "sig")
        #expect(object["key_ops"] == ["verify"])
        #expect(object["ext"] == true)  // kept, as jwx keeps every non-private member
        #expect(object.map(\.key) == object.map(\.key).sorted())
        let reread = try JWK(object)
        #expect(!reread.key.canSign)
        let token = JWT.sign(claims: ["sub": "x"], key: jwk.key)
        #expect(throws: Never.self) { try JWT.verify(token, keys: JWTKeySet(keys: [reread.key]), now: 0) }
    }

    @Test(arguments: [(JWTAlgorithm.rs256, "crypto/rsa: verification error"), (.es256, "crypto/ecdsa: verification error"),
                      (.edDSA, "ed25519: verification error")])
    func wrongSignaturesFailWithGosErrors(_ algorithm: JWTAlgorithm, _ text: String) throws {
        let jwk = try #require(Self.generated[algorithm])
        let other = JWK(generating: algorithm, kid: "kid-\(algorithm.rawValue)", random: SeededRandom(seed: 42))
        let forged = JWT.sign(claims: ["sub": "u"], key: other.key)
        #expect(throws: JWTError.signatureInvalid(.verificationFailed(text))) {
            try JWT.verify(forged, keys: JWTKeySet(keys: [jwk.key.publicOnly]), now: 0)
        }
        #expect(JWTError.signatureInvalid(.verificationFailed(text)).description == "token signature is invalid: " + text)
    }

    @Test func keyTypeMismatchIsGolangJWTsInvalidKeyType() throws {
        let rsa = try #require(Self.generated[.rs256])
        let ec = try #require(Self.generated[.es256])
        // An ES256 token whose kid names the RSA key.
        var misnamed = ec.key
        misnamed.kid = rsa.key.kid
        let token = JWT.sign(claims: ["sub": "u"], key: misnamed)
        let error = JWTError.signatureInvalid(.invalidKeyType("ECDSA verify expects *ecdsa.PublicKey"))
        #expect(throws: error) { try JWT.verify(token, keys: JWTKeySet(keys: [rsa.key.publicOnly], validMethods: ["ES256", "RS256"]), now: 0) }
        #expect(error.description == "token signature is invalid: key is of invalid type: ECDSA verify expects *ecdsa.PublicKey")
    }

    @Test func validMethodsComeBeforeKeys() throws {
        let ec = try #require(Self.generated[.es256])
        let token = JWT.sign(claims: ["sub": "u"], key: ec.key)
        // Without a list, the keys' own algorithms are the valid methods (GoTrue's default).
        #expect(throws: JWTError.signatureInvalid(.algorithmNotAccepted("ES256"))) {
            try JWT.verify(token, keys: JWTKeySet(secret: Array("secret".utf8)), now: 0)
        }
        // Listed but no key for its kid: GoTrue's key-function error.
        #expect(throws: JWTError.unverifiable(.unknownKey(kid: "kid-ES256", algorithm: "ES256"))) {
            try JWT.verify(token, keys: JWTKeySet(fallback: JWTKey(secret: Array("secret".utf8)), unknownKidUsesFallback: true,
                                                  validMethods: ["HS256", "ES256"]), now: 0)
        }
    }

    @Test(arguments: [
        (#"{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}"#, "not a valid key"),
        (#"{"kty":"EC","crv":"P-521","x":"AA","y":"AA"}"#, "only P-256"),
        (#"{"kty":"OKP","crv":"Ed25519","x":"AAAA"}"#, "not a valid key"),
        (#"{"kty":"oct","k":"c2VjcmV0","alg":"RS256"}"#, "\"alg\" RS256 with a oct key"),
        (#"{"kty":"RSA","n":"AQAB","e":"AQAB"}"#, "not a valid RSA key"),
        (#"{"kty":"XYZ"}"#, "not supported"),
        (#"{"kty":"oct","k":"c2VjcmV0","key_ops":"sign"}"#, "\"key_ops\""),
    ])
    func invalidJWKs(_ text: String, _ message: String) throws {
        let object = try #require(try JSON(parsing: Array(text.utf8)).objectValue)
        do {
            _ = try JWK(object)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test func mismatchedPrivateAndPublicHalvesAreRefused() throws {
        let a = try #require(Self.generated[.es256]).privateJSON
        let b = JWK(generating: .es256, kid: "b", random: SeededRandom(seed: 7)).privateJSON
        var mixed = a
        mixed["d"] = b["d"]
        #expect(throws: JWKError.invalidCurveKey(#""d" does not match "x" and "y""#)) { try JWK(mixed) }
        var okp = try #require(Self.generated[.edDSA]).privateJSON
        okp["d"] = JWK(generating: .edDSA, kid: "c", random: SeededRandom(seed: 8)).privateJSON["d"]
        #expect(throws: JWKError.invalidCurveKey(#""d" does not match "x""#)) { try JWK(okp) }
    }

    /// Each half of an EC or OKP key is refused with its own reason; a malformed "d" is a
    /// member error, and a key without "d" loads as a public key that cannot sign.
    @Test func curveKeyHalvesAreRefusedWithTheirReasons() throws {
        var ec = try #require(Self.generated[.es256]).privateJSON
        ec["d"] = .string(Base64URL.encode([UInt8](repeating: 0, count: 32)))
        #expect(throws: JWKError.invalidCurveKey("\(P256KeyError.scalarOutOfRange)")) { try JWK(ec) }
        ec["d"] = "not base64url!"
        #expect(throws: JWKError.invalidMember("d")) { try JWK(ec) }
        ec["d"] = nil
        #expect(try JWK(ec).key.canSign == false)
        ec["y"] = ec["x"]
        #expect(throws: JWKError.invalidCurveKey("\(P256KeyError.pointNotOnCurve)")) { try JWK(ec) }

        var okp = try #require(Self.generated[.edDSA]).privateJSON
        okp["d"] = .string(Base64URL.encode([UInt8](repeating: 1, count: 31)))
        #expect(throws: JWKError.invalidCurveKey("\(Ed25519KeyError.invalidLength)")) { try JWK(okp) }
        okp["d"] = nil
        #expect(try JWK(okp).key.canSign == false)
        okp["x"] = .string(Base64URL.encode([UInt8](repeating: 0xff, count: 32)))
        #expect(throws: JWKError.invalidCurveKey("\(Ed25519KeyError.invalidPointEncoding)")) { try JWK(okp) }
    }

    /// GoTrue loads `oct` keys (GOTRUE_JWT_KEYS, `signing_keys_path`, the runtime config) through
    /// jwx v2, whose check of a symmetric key asks only for a non-empty `k`, and golang-jwt
    /// signs HS256 with a key of any length: a 3-byte key is accepted, an empty one refused.
    @Test func octKeysOfAnyNonEmptyLengthLoadAsGoTrueLoadsThem() throws {
        let short = try JWK(["kty": "oct", "k": "YWJj", "kid": "short", "key_ops": ["sign", "verify"]])
        #expect(short.keyOperations == ["sign", "verify"])
        #expect(throws: JWKError.self) { try JWK(["kty": "oct", "k": "", "kid": "empty"]) }
        #expect(throws: JWKError.self) { try JWK(["kty": "oct", "kid": "none"]) }
    }
}
