import AuthCrypto
import Testing
import AuthJSON
@testable import AuthJWT

let secret = Array("super-secret-jwt-token-with-at-least-32-characters-long".utf8)
let keySet = JWTKeySet(secret: secret)

func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

/// Builds a token from raw header/payload JSON text, signed with `key` (default: `secret`).
func token(header: String, payload: String, key: [UInt8] = secret) -> String {
    let input = b64(header) + "." + b64(payload)
    return input + "." + Base64URL.encode(HMAC<SHA256>.authenticationCode(for: input.utf8, using: SymmetricKey(data: key)))
}

func verifyError(_ token: String, keys: JWTKeySet = keySet, now: Int64 = 1_700_000_000, leeway: Int64 = 0,
                 options: JWTValidationOptions = JWTValidationOptions()) -> JWTError? {
    do {
        _ = try JWT.verify(token, keys: keys, now: now, leeway: leeway, options: options)
        return nil
    } catch {
        return error
    }
}

@Suite struct RFC7515Tests {
    // RFC 7515 Appendix A.1: the HS256 example JWS and its JWK ("kty":"oct").
    static let jws = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let k = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"

    @Test func verifiesAppendixA1() throws {
        let keys = JWTKeySet(secret: try Base64URL.decode(Self.k))
        let jwt = try JWT.verify(Self.jws, keys: keys, now: 1_300_819_379)
        #expect(jwt.header == ["typ": "JWT", "alg": "HS256"])
        #expect(jwt.claims == ["iss": "joe", "exp": 1_300_819_380, "http://example.com/is_root": true])
        #expect(jwt.claims.keys == ["iss", "exp", "http://example.com/is_root"])
        #expect(Base64URL.encode(jwt.signature) == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        // The example's exp is 1300819380: at that second it has expired.
        #expect(verifyError(Self.jws, keys: keys, now: 1_300_819_380) == .invalidClaims([.expired]))
    }

    @Test func resigningTheSigningInputReproducesTheSignature() throws {
        let key = JWTKey(secret: try Base64URL.decode(Self.k))
        let parts = Self.jws.split(separator: ".")
        let signingInput = parts[0] + "." + parts[1]
        #expect(Base64URL.encode(JWT.mac(String(signingInput), key)) == parts[2])
    }
}

@Suite struct JWTSigningTests {
    @Test func jwtIOExampleToken() {
        // The example token shown by default on jwt.io (HS256, secret "your-256-bit-secret").
        let claims: JSONObject = ["sub": "1234567890", "name": "John Doe", "iat": 1_516_239_022]
        #expect(JWT.sign(claims: claims, key: JWTKey(secret: "your-256-bit-secret"))
            == "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
            + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
            + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
    }

    @Test func supabaseLocalDevelopmentKeys() throws {
        // The anon and service_role keys `supabase start` prints for the default local secret.
        let anon = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
            + ".eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9"
            + ".CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0"
        let serviceRole = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
            + ".eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0"
            + ".EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU"
        let key = JWTKey(secret: secret)
        #expect(JWTSigner.sign(claims: ["iss": "supabase-demo", "role": "anon", "exp": 1_983_812_996], key: key) == anon)
        #expect(JWTSigner.sign(claims: ["iss": "supabase-demo", "role": "service_role", "exp": 1_983_812_996], key: key)
            == serviceRole)
        let verified = try JWTVerifier.verify(token: serviceRole, keys: keySet, now: 1_700_000_000)
        #expect(verified.claims["role"] == "service_role")
    }

    @Test func headerLayout() throws {
        let plain = JWT.sign(claims: [:], key: JWTKey(secret: secret))
        #expect(try Base64URL.decode(plain.split(separator: ".")[0]) == Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let withKid = JWT.sign(claims: [:], key: JWTKey(kid: "key-1", secret: secret))
        #expect(try Base64URL.decode(withKid.split(separator: ".")[0])
            == Array(#"{"alg":"HS256","kid":"key-1","typ":"JWT"}"#.utf8))
        #expect(try Base64URL.decode(plain.split(separator: ".")[1]) == Array("{}".utf8))
    }

    @Test func roundTripKeepsClaimOrderAndValues() throws {
        let claims: JSONObject = [
            "aud": "authenticated", "exp": 1_700_003_600, "iat": 1_700_000_000, "sub": "user",
            "email": "a<b>&c@example.com", "user_metadata": ["ß": "ü", "n": 1.5], "is_anonymous": false,
        ]
        let signed = JWT.sign(claims: claims, key: JWTKey(secret: secret))
        let jwt = try JWT.verify(signed, keys: keySet, now: 1_700_000_000)
        #expect(jwt.claims == claims)
        #expect(jwt.claims.keys == claims.keys)
        #expect(jwt.signingInput == signed.split(separator: ".").prefix(2).joined(separator: "."))
        #expect(try Base64URL.decode(signed.split(separator: ".")[1]) == claims.serializedBytes())
    }
}

@Suite struct JWTRejectionTests {
    let good = JWT.sign(claims: ["sub": "u", "exp": 1_700_003_600], key: JWTKey(secret: secret))

    @Test func segmentCounts() {
        for bad in ["", "abc", "a.b", "a.b.c.d", good + ".", "." + good, "...."] {
            let error = verifyError(bad)
            #expect(error == .malformed(.segmentCount), "\(bad)")
            #expect(error?.description == "token is malformed: token contains an invalid number of segments")
        }
        // Three empty segments are three segments: the empty header fails JSON decoding (as in Go).
        #expect(verifyError("..") == .malformed(.headerJSON))
    }

    @Test func tamperedPartsFail() {
        let parts = good.split(separator: ".").map(String.init)
        // Re-encoded header and payload that still parse: the MAC no longer matches.
        let otherHeader = b64(#"{"alg":"HS256","typ":"JWT","x":1}"#)
        let otherPayload = b64(#"{"sub":"admin","exp":1700003600}"#)
        for forged in [otherHeader + "." + parts[1] + "." + parts[2], parts[0] + "." + otherPayload + "." + parts[2]] {
            #expect(verifyError(forged) == .signatureInvalid(.signatureMismatch))
        }
        // Every single-character change of the signature fails one way or another.
        var signature = Array(parts[2])
        for i in signature.indices {
            let original = signature[i]
            signature[i] = original == "A" ? "B" : "A"
            let forged = parts[0] + "." + parts[1] + "." + String(signature)
            #expect(verifyError(forged) != nil, "signature index \(i)")
            signature[i] = original
        }
        #expect(verifyError(parts[0] + "." + parts[1] + ".") == .signatureInvalid(.signatureMismatch))
        #expect(verifyError(good, keys: JWTKeySet(secret: Array("another-secret-of-sufficient-length!".utf8)))
            == .signatureInvalid(.signatureMismatch))
        #expect(verifyError(good) == nil)
    }

    @Test func base64Strictness() {
        let parts = good.split(separator: ".").map(String.init)
        #expect(verifyError("e*J." + parts[1] + "." + parts[2]) == .malformed(.headerBase64(offset: 1)))
        #expect(verifyError(parts[0] + "=." + parts[1] + "." + parts[2])?.description
            == "token is malformed: could not base64 decode header: illegal base64 data at input byte \(parts[0].utf8.count)")
        #expect(verifyError(parts[0] + "." + parts[1] + "+." + parts[2])
            == .malformed(.claimsBase64(offset: parts[1].utf8.count)))
        #expect(verifyError(parts[0] + "." + parts[1] + "." + parts[2] + "=")
            == .malformed(.signatureBase64(offset: parts[2].utf8.count)))
        // 43 symbols carry 258 bits: the last symbol's low 2 bits must be zero.
        var signature = Array(parts[2])
        let last = signature.count - 1
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let value = alphabet.firstIndex(of: signature[last])!
        signature[last] = alphabet[value | 1]
        #expect(verifyError(parts[0] + "." + parts[1] + "." + String(signature)) == .malformed(.signatureBase64(offset: last)))
    }

    @Test func headerAndPayloadMustBeJSONObjects() {
        #expect(verifyError(token(header: "[1]", payload: "{}")) == .malformed(.headerJSON))
        #expect(verifyError(token(header: "{", payload: "{}"))?.description == "token is malformed: could not JSON decode header")
        #expect(verifyError(token(header: #"{"alg":"HS256"}"#, payload: "1")) == .malformed(.claimsJSON))
        #expect(verifyError(token(header: #"{"alg":"HS256"}"#, payload: "{}x"))?.description
            == "token is malformed: could not JSON decode claim")
        #expect(verifyError(token(header: #"{"alg":"HS256"}"#, payload: "{}")) == nil)
    }

    @Test func algorithms() {
        let cases: [(String, String)] = [
            (#"{"alg":"none","typ":"JWT"}"#, "token signature is invalid: signing method none is invalid"),
            (#"{"alg":"HS384"}"#, "token signature is invalid: signing method HS384 is invalid"),
            (#"{"alg":"RS256"}"#, "token signature is invalid: signing method RS256 is invalid"),
            (#"{"alg":"EdDSA"}"#, "token signature is invalid: signing method EdDSA is invalid"),
            (#"{"alg":"hs256"}"#, "token is unverifiable: signing method (alg) is unavailable"),
            (#"{"alg":"NONE"}"#, "token is unverifiable: signing method (alg) is unavailable"),
            (#"{"alg":""}"#, "token is unverifiable: signing method (alg) is unavailable"),
            (#"{"typ":"JWT"}"#, "token is unverifiable: signing method (alg) is unspecified"),
            (#"{"alg":256}"#, "token is unverifiable: signing method (alg) is unspecified"),
            (#"{"alg":null}"#, "token is unverifiable: signing method (alg) is unspecified"),
        ]
        for (header, expected) in cases {
            #expect(verifyError(token(header: header, payload: #"{"sub":"u"}"#))?.description == expected, "\(header)")
        }
        // alg "none" with an empty signature: the classic bypass.
        let unsigned = b64(#"{"alg":"none"}"#) + "." + b64(#"{"sub":"admin"}"#) + "."
        #expect(verifyError(unsigned) == .signatureInvalid(.algorithmNotAccepted("none")))
        // Duplicate alg: last wins, as in Go.
        #expect(verifyError(token(header: #"{"alg":"HS256","alg":"none"}"#, payload: "{}"))
            == .signatureInvalid(.algorithmNotAccepted("none")))
    }
}

@Suite struct JWTClaimTests {
    let key = JWTKey(secret: secret)

    @Test func expiry() {
        let t = JWT.sign(claims: ["exp": 1000], key: key)
        #expect(verifyError(t, now: 999) == nil)
        #expect(verifyError(t, now: 1000) == .invalidClaims([.expired]))
        #expect(verifyError(t, now: 1000)?.description == "token has invalid claims: token is expired")
        #expect(verifyError(t, now: 1009, leeway: 10) == nil)
        #expect(verifyError(t, now: 1010, leeway: 10) == .invalidClaims([.expired]))
        // Fractions truncate to the second, like golang-jwt's NumericDate.
        #expect(verifyError(JWT.sign(claims: ["exp": 1000.9], key: key), now: 1000) == .invalidClaims([.expired]))
        // exp 0 is a real (long past) time for GoTrue's claims struct.
        #expect(verifyError(JWT.sign(claims: ["exp": 0], key: key), now: 1) == .invalidClaims([.expired]))
        // No exp at all is accepted: golang-jwt v5 does not require it.
        #expect(verifyError(JWT.sign(claims: ["sub": "x"], key: key)) == nil)
        #expect(verifyError(JWT.sign(claims: ["exp": nil], key: key)) == nil)
        #expect(verifyError(JWT.sign(claims: ["exp": 1e300], key: key), now: Int64.max) == .invalidClaims([.expired]))
    }

    @Test func notBefore() {
        let t = JWT.sign(claims: ["nbf": 1000], key: key)
        #expect(verifyError(t, now: 999) == .invalidClaims([.notValidYet]))
        #expect(verifyError(t, now: 999)?.description == "token has invalid claims: token is not valid yet")
        #expect(verifyError(t, now: 1000) == nil)
        #expect(verifyError(t, now: 995, leeway: 5) == nil)
        #expect(verifyError(t, now: 994, leeway: 5) == .invalidClaims([.notValidYet]))
    }

    @Test func combinedFailuresAreJoined() {
        let t = JWT.sign(claims: ["exp": 100, "nbf": 2000, "iat": 3000], key: key)
        #expect(verifyError(t, now: 1000)?.description == "token has invalid claims: token is expired, token is not valid yet")
        #expect(verifyError(t, now: 1000, options: JWTValidationOptions(rejectIssuedInFuture: true))?.description
            == "token has invalid claims: token is expired, token is not valid yet, token used before issued")
    }

    @Test func issuedAtIsOptIn() {
        let t = JWT.sign(claims: ["iat": 2000], key: key)
        #expect(verifyError(t, now: 1000) == nil)
        let strict = JWTValidationOptions(rejectIssuedInFuture: true)
        #expect(verifyError(t, now: 1000, options: strict) == .invalidClaims([.usedBeforeIssued]))
        #expect(verifyError(t, now: 1990, leeway: 10, options: strict) == nil)
        #expect(verifyError(t, now: 2000, options: strict) == nil)
    }

    @Test func claimTypes() {
        // Non-numeric time claims fail like Go's json decoding into NumericDate.
        for bad: JSON in ["soon", true, [1], ["a": 1], "1e400", " 5", "0x10"] {
            #expect(verifyError(JWT.sign(claims: ["exp": bad], key: key)) == .malformed(.claimsJSON), "\(bad)")
            #expect(verifyError(JWT.sign(claims: ["nbf": bad], key: key)) == .malformed(.claimsJSON), "\(bad)")
            #expect(verifyError(JWT.sign(claims: ["iat": bad], key: key)) == .malformed(.claimsJSON), "\(bad)")
        }
        // A quoted JSON number is accepted, as Go decodes it into json.Number.
        #expect(verifyError(JWT.sign(claims: ["exp": "1000"], key: key), now: 1000) == .invalidClaims([.expired]))
        #expect(verifyError(JWT.sign(claims: ["exp": "1000"], key: key), now: 999) == nil)
        // Registered string claims.
        #expect(verifyError(JWT.sign(claims: ["sub": 5], key: key)) == .malformed(.claimsJSON))
        #expect(verifyError(JWT.sign(claims: ["iss": false], key: key)) == .malformed(.claimsJSON))
        #expect(verifyError(JWT.sign(claims: ["aud": 1], key: key)) == .malformed(.claimsJSON))
        #expect(verifyError(JWT.sign(claims: ["aud": ["a", 1]], key: key)) == .malformed(.claimsJSON))
        #expect(verifyError(JWT.sign(claims: ["aud": ["a", "b"], "sub": nil], key: key)) == nil)
        // Decoding errors come before algorithm checks, as in golang-jwt.
        #expect(verifyError(token(header: #"{"alg":"none"}"#, payload: #"{"exp":"x"}"#)) == .malformed(.claimsJSON))
    }
}

@Suite struct JWTKeySelectionTests {
    let k1 = JWTKey(kid: "k1", secret: Array("first-secret-first-secret-first-secret".utf8))
    let k2 = JWTKey(kid: "k2", secret: Array("second-secret-second-secret-second-secret".utf8))
    let legacy = JWTKey(secret: secret)

    @Test func selectsByKid() throws {
        let keys = JWTKeySet(keys: [k1, k2], fallback: legacy)
        #expect(try JWT.verify(JWT.sign(claims: ["n": 1], key: k1), keys: keys, now: 0).claims["n"] == 1)
        #expect(try JWT.verify(JWT.sign(claims: ["n": 2], key: k2), keys: keys, now: 0).header["kid"] == "k2")
        // Signed with k1's secret but claiming kid k2.
        let wrong = JWTKey(kid: "k2", secret: k1.secret)
        #expect(verifyError(JWT.sign(claims: [:], key: wrong), keys: keys) == .signatureInvalid(.signatureMismatch))
    }

    @Test func noKidUsesFallback() throws {
        let keys = JWTKeySet(keys: [k1], fallback: legacy)
        #expect(verifyError(JWT.sign(claims: [:], key: legacy), keys: keys) == nil)
        #expect(verifyError(JWT.sign(claims: [:], key: JWTKey(secret: k1.secret)), keys: keys)
            == .signatureInvalid(.signatureMismatch))
        // A non-string kid is ignored, as GoTrue's key function does.
        #expect(verifyError(token(header: #"{"alg":"HS256","kid":7}"#, payload: "{}"), keys: keys) == nil)
        let noFallback = JWTKeySet(keys: [k1])
        #expect(verifyError(JWT.sign(claims: [:], key: legacy), keys: noFallback)?.description
            == "token is unverifiable: error while executing keyfunc: unrecognized JWT kid <nil> for algorithm HS256")
    }

    @Test func unknownKid() {
        let stranger = JWTKey(kid: "k9", secret: secret)
        let strict = JWTKeySet(keys: [k1], fallback: legacy)
        #expect(verifyError(JWT.sign(claims: [:], key: stranger), keys: strict) == .unverifiable(.unknownKey(kid: "k9", algorithm: "HS256")))
        #expect(verifyError(JWT.sign(claims: [:], key: stranger), keys: strict)?.description
            == "token is unverifiable: error while executing keyfunc: unrecognized JWT kid k9 for algorithm HS256")
        // GoTrue's behaviour: an unknown kid on an HS256 token falls back to the plain secret.
        let goTrue = JWTKeySet(keys: [k1], fallback: legacy, unknownKidUsesFallback: true)
        #expect(verifyError(JWT.sign(claims: [:], key: stranger), keys: goTrue) == nil)
        #expect(verifyError(JWT.sign(claims: [:], key: JWTKey(kid: "k9", secret: k1.secret)), keys: goTrue)
            == .signatureInvalid(.signatureMismatch))
    }

    @Test func errorTextsNeverContainTokenOrKey() {
        let t = JWT.sign(claims: ["exp": 1], key: legacy)
        let tampered = String(t.dropLast()) + (t.last == "A" ? "B" : "A")
        for candidate in [t, tampered, "x.y", t + "=", b64("{") + "." + b64("{}") + ".AA"] {
            guard let text = verifyError(candidate, keys: JWTKeySet(keys: [k1], fallback: legacy))?.description else {
                continue
            }
            for part in candidate.split(separator: ".") where part.count > 3 {
                #expect(!text.contains(part), "\(text)")
            }
            #expect(!text.contains("super-secret"))
        }
    }
}
