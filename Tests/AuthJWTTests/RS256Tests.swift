import AuthCrypto
import PythonTestSupport
import Testing
import AuthJSON
@testable import AuthJWT

/// RFC 7515 Appendix A.2: the RS256 example JWS and the private RSA JWK of A.2.1 (the same key
/// as RFC 7517 Appendix A.2).
enum RS256Vectors {
    static let privateJWKText = #"""
        {"kty":"RSA",
         "n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ",
         "e":"AQAB",
         "d":"Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ",
         "p":"4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc",
         "q":"uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc",
         "dp":"BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3QCLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0",
         "dq":"h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-kyNlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU",
         "qi":"IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U"
        }
        """#
    static let privateJWK = try! JSON(parsing: privateJWKText).objectValue!
    static let privateKey = try! RSAPrivateKey(jwk: privateJWK)
    static let publicKey = privateKey.publicKey

    /// The compact JWS of A.2.1 (header `{"alg":"RS256"}`, no kid; exp 1300819380).
    static let jws = "eyJhbGciOiJSUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    /// A generated test key (1024 bits for speed) standing in for a second issuer.
    static let otherKey = RSAPrivateKey.generate(bits: 1024, random: SeededRandom(seed: 7517))

    static let claims: JSONObject = [
        "iss": "https://accounts.google.com", "aud": "emulator-client", "sub": "110169484474386276334",
        "email": "user@example.com", "email_verified": true, "iat": 1_700_000_000, "exp": 1_700_003_600,
        "nonce": "n-0S6_WzA2Mj",
    ]
}

func rsaVerifyError(_ token: String, keys: [String: RSAPublicKey], now: Int64 = 1_700_000_000, leeway: Int64 = 0) -> JWTError? {
    do {
        _ = try JWT.verify(token, rsaKeys: keys, now: now, leeway: leeway)
        return nil
    } catch {
        return error
    }
}

@Suite struct RS256KnownAnswerTests {
    @Test func verifiesAppendixA2() throws {
        let jwt = try JWT.verify(RS256Vectors.jws, rsaKeys: ["2011-04-29": RS256Vectors.publicKey], now: 1_300_819_379)
        #expect(jwt.header == ["alg": "RS256"])
        #expect(jwt.claims == ["iss": "joe", "exp": 1_300_819_380, "http://example.com/is_root": true])
        // At the exp second the token has expired, with the same error as HS256 tokens.
        #expect(rsaVerifyError(RS256Vectors.jws, keys: ["k": RS256Vectors.publicKey], now: 1_300_819_380)
            == .invalidClaims([.expired]))
        #expect(rsaVerifyError(RS256Vectors.jws, keys: ["k": RS256Vectors.publicKey], now: 1_300_819_380, leeway: 1) == nil)
    }

    @Test func resigningTheSigningInputReproducesAppendixA2() {
        let parts = RS256Vectors.jws.split(separator: ".")
        let signature = RSA.signPKCS1v15SHA256(Array((parts[0] + "." + parts[1]).utf8), key: RS256Vectors.privateKey)
        #expect(Base64URL.encode(signature) == parts[2])
    }

    @Test func privateJWKRoundTripsTheRFCValues() throws {
        // privateJWK re-derives dp, dq and qi; they must equal the published ones exactly.
        let exported = RS256Vectors.privateKey.privateJWK(kid: "2011-04-29")
        for name in ["n", "e", "d", "p", "q", "dp", "dq", "qi"] {
            #expect(exported[name] == RS256Vectors.privateJWK[name], "member \(name)")
        }
        #expect(exported.keys == ["kty", "use", "alg", "kid", "n", "e", "d", "p", "q", "dp", "dq", "qi"])
        let reloaded = try RSAPrivateKey(jwk: exported)
        #expect(reloaded.publicKey == RS256Vectors.publicKey)
        #expect(reloaded.d == RS256Vectors.privateKey.d)
    }

    @Test func publicJWKLayout() throws {
        let jwk = RS256Vectors.publicKey.jwk(kid: "2011-04-29")
        #expect(jwk.keys == ["kty", "use", "alg", "kid", "n", "e"])
        #expect(jwk["kty"] == "RSA" && jwk["use"] == "sig" && jwk["alg"] == "RS256" && jwk["kid"] == "2011-04-29")
        #expect(jwk["n"] == RS256Vectors.privateJWK["n"])
        #expect(jwk["e"] == "AQAB")
        #expect(try RSAPublicKey(jwk: jwk) == RS256Vectors.publicKey)
        // A JWKS document's serialization carries no private member.
        let text = JSON.object(["keys": [.object(jwk)]]).serialized()
        for member in ["\"d\"", "\"p\"", "\"q\"", "\"dp\"", "\"dq\"", "\"qi\""] { #expect(!text.contains(member)) }
    }

    @Test func thumbprintMatchesRFC7638Example() throws {
        // RFC 7638 section 3.1: the example RSA key and its SHA-256 thumbprint.
        let jwk: JSONObject = [
            "kty": "RSA", "e": "AQAB", "alg": "RS256", "kid": "2011-04-29",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        ]
        #expect(try RSAPublicKey(jwk: jwk).thumbprint == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }
}

@Suite struct RS256SigningTests {
    @Test func headerLayoutAndDeterminism() throws {
        let token = JWT.signRS256(claims: RS256Vectors.claims, key: RS256Vectors.privateKey, kid: "google-1")
        let parts = token.split(separator: ".")
        #expect(try Base64URL.decode(parts[0]) == Array(#"{"alg":"RS256","kid":"google-1","typ":"JWT"}"#.utf8))
        #expect(try Base64URL.decode(parts[1]) == RS256Vectors.claims.serializedBytes())
        #expect(try Base64URL.decode(parts[2]).count == 256)
        #expect(JWT.signRS256(claims: RS256Vectors.claims, key: RS256Vectors.privateKey, kid: "google-1") == token)

        let withoutKid = JWT.signRS256(claims: [:], key: RS256Vectors.privateKey, kid: nil)
        #expect(try Base64URL.decode(withoutKid.split(separator: ".")[0]) == Array(#"{"alg":"RS256","typ":"JWT"}"#.utf8))
    }

    @Test func roundTripWithKid() throws {
        let keys = ["google-1": RS256Vectors.publicKey, "apple-1": RS256Vectors.otherKey.publicKey]
        for (kid, key) in [("google-1", RS256Vectors.privateKey), ("apple-1", RS256Vectors.otherKey)] {
            let token = JWT.signRS256(claims: RS256Vectors.claims, key: key, kid: kid)
            let jwt = try JWT.verify(token, rsaKeys: keys, now: 1_700_000_000)
            #expect(jwt.claims == RS256Vectors.claims)
            #expect(jwt.claims.keys == RS256Vectors.claims.keys)
            #expect(jwt.header["kid"] == .string(kid))
        }
    }

    @Test func tokenWithoutKidIsTriedAgainstEveryKey() throws {
        // go-oidc's key set behaviour for id_tokens without a kid.
        let token = JWT.signRS256(claims: RS256Vectors.claims, key: RS256Vectors.otherKey, kid: nil)
        let keys = ["a": RS256Vectors.publicKey, "b": RS256Vectors.otherKey.publicKey]
        #expect(try JWT.verify(token, rsaKeys: keys, now: 1_700_000_000).claims == RS256Vectors.claims)
        #expect(rsaVerifyError(token, keys: ["a": RS256Vectors.publicKey]) == .signatureInvalid(.signatureMismatch))
        #expect(rsaVerifyError(token, keys: [:]) == .unverifiable(.unknownKey(kid: nil, algorithm: "RS256")))
    }
}

@Suite struct RS256RejectionTests {
    let keys = ["google-1": RS256Vectors.publicKey]
    var token: String { JWT.signRS256(claims: RS256Vectors.claims, key: RS256Vectors.privateKey, kid: "google-1") }

    @Test func timeClaimsUseTheSharedChecks() {
        #expect(rsaVerifyError(token, keys: keys, now: 1_700_003_600) == .invalidClaims([.expired]))
        #expect(rsaVerifyError(token, keys: keys, now: 1_700_003_599) == nil)
        #expect(rsaVerifyError(token, keys: keys, now: 1_700_003_600, leeway: 60) == nil)
        var future = RS256Vectors.claims
        future["nbf"] = .number(1_800_000_000)
        future["exp"] = .number(1_000)
        let both = JWT.signRS256(claims: future, key: RS256Vectors.privateKey, kid: "google-1")
        #expect(rsaVerifyError(both, keys: keys) == .invalidClaims([.expired, .notValidYet]))
    }

    @Test func unknownKidIsUnverifiable() {
        let other = JWT.signRS256(claims: RS256Vectors.claims, key: RS256Vectors.privateKey, kid: "rotated-away")
        #expect(rsaVerifyError(other, keys: keys) == .unverifiable(.unknownKey(kid: "rotated-away", algorithm: "RS256")))
        #expect(rsaVerifyError(other, keys: keys)?.description
            == "token is unverifiable: error while executing keyfunc: unrecognized JWT kid rotated-away for algorithm RS256")
    }

    @Test func wrongKeyUnderTheRightKidIsASignatureMismatch() {
        let forged = JWT.signRS256(claims: RS256Vectors.claims, key: RS256Vectors.otherKey, kid: "google-1")
        #expect(rsaVerifyError(forged, keys: keys) == .signatureInvalid(.signatureMismatch))
    }

    @Test func tamperedPartsAreRejected() throws {
        var parts = token.split(separator: ".").map(String.init)
        var claims = RS256Vectors.claims
        claims["email"] = "attacker@example.com"
        let swapped = [parts[0], Base64URL.encode(claims.serializedBytes()), parts[2]].joined(separator: ".")
        #expect(rsaVerifyError(swapped, keys: keys) == .signatureInvalid(.signatureMismatch))

        var signature = try Base64URL.decode(parts[2])
        signature[100] ^= 0x40
        parts[2] = Base64URL.encode(signature)
        #expect(rsaVerifyError(parts.joined(separator: "."), keys: keys) == .signatureInvalid(.signatureMismatch))
        // A truncated signature is still valid base64url, but not k bytes long.
        parts[2] = Base64URL.encode(signature.dropLast())
        #expect(rsaVerifyError(parts.joined(separator: "."), keys: keys) == .signatureInvalid(.signatureMismatch))
    }

    @Test func otherAlgorithmsAreNotAccepted() {
        // An HS256 token where only RSA keys exist, including the classic confusion attack:
        // MACed with the public key's bytes as the HMAC secret.
        for secret in [RS256Vectors.publicKey.modulus, Array("secret".utf8)] {
            let hs = JWT.sign(claims: RS256Vectors.claims, key: JWTKey(kid: "google-1", secret: secret))
            #expect(rsaVerifyError(hs, keys: keys) == .signatureInvalid(.algorithmNotAccepted("HS256")))
        }
        let none = b64(#"{"alg":"none","kid":"google-1"}"#) + "." + b64("{}") + "."
        #expect(rsaVerifyError(none, keys: keys) == .signatureInvalid(.algorithmNotAccepted("none")))
        let rs512 = b64(#"{"alg":"RS512"}"#) + "." + b64("{}") + ".AAAA"
        #expect(rsaVerifyError(rs512, keys: keys) == .signatureInvalid(.algorithmNotAccepted("RS512")))
        let lowercase = b64(#"{"alg":"rs256"}"#) + "." + b64("{}") + ".AAAA"
        #expect(rsaVerifyError(lowercase, keys: keys) == .unverifiable(.algorithmUnavailable))
    }

    @Test func hs256VerificationStillRefusesRS256Tokens() {
        // The HMAC verifier's behaviour is unchanged by RS256 joining JWTAlgorithm.
        let secretKeys = JWTKeySet(keys: [JWTKey(kid: "google-1", secret: secret)], fallback: JWTKey(secret: secret))
        #expect(verifyError(token, keys: secretKeys) == .signatureInvalid(.algorithmNotAccepted("RS256")))
    }

    @Test func malformedTokensFailAsForHS256() {
        #expect(rsaVerifyError("a.b", keys: keys) == .malformed(.segmentCount))
        #expect(rsaVerifyError("a.b.c.d", keys: keys) == .malformed(.segmentCount))
        #expect(rsaVerifyError("e+.e30.AAAA", keys: keys) == .malformed(.headerBase64(offset: 1)))
        #expect(rsaVerifyError(b64(#"{"alg":"RS256"}"#) + "." + b64("[]") + ".AAAA", keys: keys) == .malformed(.claimsJSON))
        #expect(rsaVerifyError(b64(#"{"alg":"RS256"}"#) + "." + b64(#"{"exp":"soon"}"#) + ".AAAA", keys: keys)
            == .malformed(.claimsJSON))
        #expect(rsaVerifyError(b64(#"{"alg":"RS256"}"#) + "." + b64("{}") + ".AA=A", keys: keys)
            == .malformed(.signatureBase64(offset: 2)))
        #expect(rsaVerifyError(b64(#"{"typ":"JWT"}"#) + "." + b64("{}") + ".AAAA", keys: keys)
            == .unverifiable(.algorithmUnspecified))
    }
}

@Suite struct DecodeUnverifiedTests {
    @Test func decodesWithoutKeyOrClock() throws {
        // Signed by a key nobody here holds, and long expired: still decoded.
        let token = JWT.signRS256(claims: RS256Vectors.claims, key: RS256Vectors.otherKey, kid: "real-provider-key")
        let jwt = try JWT.decodeUnverified(token)
        #expect(jwt.claims == RS256Vectors.claims)
        #expect(jwt.header["kid"] == "real-provider-key")
        #expect(jwt.signature.count == 128)
        let parts = token.split(separator: ".")
        #expect(jwt.signingInput == String(parts[0]) + "." + String(parts[1]))
        let a2 = try JWT.decodeUnverified(RS256Vectors.jws)
        #expect(a2.claims["iss"] == "joe")
        // Any registered algorithm decodes, HS256 included, and a tampered signature too.
        let hs = JWT.sign(claims: ["sub": "x"], key: JWTKey(secret: secret))
        #expect(try JWT.decodeUnverified(hs).claims == ["sub": "x"])
        #expect(try JWT.decodeUnverified(String(token.dropLast(4)) + "AAAA").claims == RS256Vectors.claims)
    }

    @Test func keepsTheParsingStrictness() {
        func error(_ token: String) -> JWTError? {
            do {
                _ = try JWT.decodeUnverified(token)
                return nil
            } catch {
                return error
            }
        }
        #expect(error("only.two") == .malformed(.segmentCount))
        #expect(error(b64("{") + "." + b64("{}") + ".") == .malformed(.headerJSON))
        #expect(error(b64(#"{"alg":"RS256"}"#) + "." + b64("1") + ".") == .malformed(.claimsJSON))
        #expect(error(b64(#"{"alg":"RS256"}"#) + "." + b64(#"{"sub":5}"#) + ".") == .malformed(.claimsJSON))
        #expect(error(b64(#"{}"#) + "." + b64("{}") + ".") == .unverifiable(.algorithmUnspecified))
        #expect(error(b64(#"{"alg":"XS1"}"#) + "." + b64("{}") + ".") == .unverifiable(.algorithmUnavailable))
        #expect(error(b64(#"{"alg":"RS256"}"#) + "." + b64("{}") + ".A") == .malformed(.signatureBase64(offset: 0)))
    }
}

@Suite struct JWKTests {
    @Test func privateJWKOfGeneratedKeyRoundTrips() throws {
        let key = RS256Vectors.otherKey
        let jwk = key.privateJWK(kid: "apple-1")
        let reloaded = try RSAPrivateKey(jwk: try JSON(parsing: JSON.object(jwk).serialized()).objectValue!)
        #expect(reloaded.publicKey == key.publicKey)
        #expect(reloaded.d == key.d && reloaded.p == key.p && reloaded.q == key.q)
        let token = JWT.signRS256(claims: RS256Vectors.claims, key: reloaded, kid: "apple-1")
        #expect(token == JWT.signRS256(claims: RS256Vectors.claims, key: key, kid: "apple-1"))
    }

    @Test func invalidJWKsAreRefused() {
        var jwk = RS256Vectors.privateJWK
        jwk["dp"] = jwk["dq"]
        #expect(throws: JWKError.invalidKey(.inconsistentKey)) { try RSAPrivateKey(jwk: jwk) }

        jwk = RS256Vectors.privateJWK
        jwk["d"] = RS256Vectors.privateJWK["dp"]
        #expect(throws: JWKError.invalidKey(.inconsistentKey)) { try RSAPrivateKey(jwk: jwk) }

        jwk = RS256Vectors.privateJWK
        jwk["p"] = nil
        #expect(throws: JWKError.unsupported("private key without its primes")) { try RSAPrivateKey(jwk: jwk) }

        jwk = RS256Vectors.privateJWK
        jwk["oth"] = [["r": "AQAB", "d": "AQAB", "t": "AQAB"]]
        #expect(throws: JWKError.unsupported("multi-prime key (oth)")) { try RSAPrivateKey(jwk: jwk) }

        jwk = RS256Vectors.privateJWK
        jwk["qi"] = "not base64url!"
        #expect(throws: JWKError.invalidMember("qi")) { try RSAPrivateKey(jwk: jwk) }

        jwk = RS256Vectors.privateJWK
        jwk["kty"] = "EC"
        #expect(throws: JWKError.unsupportedKeyType) { try RSAPrivateKey(jwk: jwk) }
        #expect(throws: JWKError.unsupportedKeyType) { try RSAPublicKey(jwk: jwk) }

        #expect(throws: JWKError.invalidMember("n")) { try RSAPublicKey(jwk: ["kty": "RSA", "e": "AQAB"]) }
        #expect(throws: JWKError.invalidMember("e")) { try RSAPublicKey(jwk: ["kty": "RSA", "n": "AQAB", "e": 65537]) }
        #expect(throws: JWKError.invalidKey(.invalidModulus)) { try RSAPublicKey(jwk: ["kty": "RSA", "n": "AQAB", "e": "AQAB"]) }
    }
}

/// Cross-checks with PyJWT backed by `cryptography` (OpenSSL): PyJWT accepts our tokens with
/// the JWK we publish; OpenSSL accepts our private key numbers and signs exactly as we do;
/// and we accept PyJWT's tokens signed with keys OpenSSL generated.
enum PythonRSA {
    static let available: Bool = {
        guard Python.hasPyJWT else { return false }
        return (try? Python.run(script: "import cryptography, jwt.algorithms; print(jwt.algorithms.has_crypto)", input: ""))
            == "True\n"
    }()

    static var shouldRun: Bool { available || Python.isCI }

    static let script = #"""
        import sys, json, base64, warnings, jwt
        from jwt.algorithms import RSAAlgorithm
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding, rsa
        warnings.simplefilter("ignore")
        def b64(data):
            return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
        for line in sys.stdin:
            req = json.loads(line)
            if req["op"] == "verify":
                key = jwt.PyJWK(req["jwk"]).key
                claims = jwt.decode(req["token"], key, algorithms=["RS256"],
                                    options={"verify_exp": False, "verify_nbf": False, "verify_iat": False,
                                             "verify_aud": False, "verify_iss": False})
                print(json.dumps({"claims": claims, "header": jwt.get_unverified_header(req["token"])}))
            elif req["op"] == "import":
                # from_jwk builds RSAPrivateNumbers(...).private_key(), which OpenSSL checks.
                key = RSAAlgorithm.from_jwk(json.dumps(req["jwk"]))
                signature = key.sign(req["message"].encode(), padding.PKCS1v15(), hashes.SHA256())
                print(json.dumps({"signature": b64(signature)}))
            else:
                key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
                token = jwt.encode(req["claims"], key, algorithm="RS256", headers={"kid": req["kid"]})
                print(json.dumps({"jwk": json.loads(RSAAlgorithm.to_jwk(key)), "token": token}))
        """#
}

@Suite struct RS256PythonCrossCheckTests {
    @Test(.enabled(if: PythonRSA.shouldRun, "needs Python 3 with PyJWT and cryptography (AUTH_EMULATOR_PYTHON)"))
    func interoperatesWithPyJWTAndOpenSSL() throws {
        try #require(PythonRSA.available, "Python with PyJWT and cryptography is required under CI")
        let generated = RSAPrivateKey.generate(bits: 2048, random: SystemRandom())
        let ours = [(RS256Vectors.privateKey, "rfc-7515"), (generated, "generated"), (RS256Vectors.otherKey, "small")]
        let message = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjcm9zcy1jaGVjayJ9"
        var requests: [String] = []
        for (key, kid) in ours {
            let token = JWT.signRS256(claims: RS256Vectors.claims, key: key, kid: kid)
            requests.append(JSON.object(["op": "verify", "token": .string(token), "jwk": .object(key.publicKey.jwk(kid: kid))]).serialized())
            requests.append(JSON.object(["op": "import", "message": .string(message), "jwk": .object(key.privateJWK(kid: kid))]).serialized())
        }
        let mints = 2
        for i in 0..<mints {
            requests.append(JSON.object(["op": "mint", "claims": .object(RS256Vectors.claims), "kid": .string("py-\(i)")]).serialized())
        }
        let lines = try Python.run(script: PythonRSA.script, input: requests.joined(separator: "\n") + "\n")
            .split(separator: "\n").map(String.init)
        try #require(lines.count == 2 * ours.count + mints)

        for (index, (key, kid)) in ours.enumerated() {
            // PyJWT verified our token with our public JWK and read the same claims and header.
            let verified = try JSON(parsing: lines[2 * index])
            #expect(verified["claims"] == .object(RS256Vectors.claims), "key \(kid)")
            #expect(verified["header"] == ["alg": "RS256", "kid": .string(kid), "typ": "JWT"])
            // OpenSSL accepted our private numbers and its PKCS#1 v1.5 signature equals ours.
            let imported = try JSON(parsing: lines[2 * index + 1])
            let expected = Base64URL.encode(RSA.signPKCS1v15SHA256(Array(message.utf8), key: key))
            #expect(imported["signature"] == .string(expected), "key \(kid)")
        }
        for i in 0..<mints {
            let minted = try JSON(parsing: lines[2 * ours.count + i])
            let token = try #require(minted["token"]?.stringValue)
            let jwk = try #require(minted["jwk"]?.objectValue)
            // We accept PyJWT's token with the public half of its key...
            let publicKey = try RSAPublicKey(jwk: jwk)
            let jwt = try JWT.verify(token, rsaKeys: ["py-\(i)": publicKey], now: 1_700_000_000)
            #expect(jwt.claims == RS256Vectors.claims)
            // ...load its private JWK (validated), and, PKCS#1 v1.5 being deterministic and both
            // sides serializing these claims identically, mint the very same token.
            let privateKey = try RSAPrivateKey(jwk: jwk)
            #expect(privateKey.publicKey == publicKey)
            #expect(JWT.signRS256(claims: RS256Vectors.claims, key: privateKey, kid: "py-\(i)") == token)
            // A flipped claims bit in their token is refused.
            var parts = token.split(separator: ".").map(String.init)
            var payload = try Base64URL.decode(parts[1])
            payload[payload.count - 3] ^= 0x01
            parts[1] = Base64URL.encode(payload)
            #expect(throws: JWTError.self) { try JWT.verify(parts.joined(separator: "."), rsaKeys: ["py-\(i)": publicKey], now: 0) }
        }
    }
}
