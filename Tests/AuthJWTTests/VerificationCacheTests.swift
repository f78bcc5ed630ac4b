import AuthCrypto
import AuthJSON
import Testing
@testable import AuthJWT

/// `JWTVerificationCache` must answer every call exactly as `JWT.verify` would at that moment:
/// the same claims or the same error, whatever changed since the token was first verified.
@Suite struct VerificationCacheTests {
    typealias Outcome = Result<JSONObject, JWTError>

    static func direct(_ token: String, _ keys: JWTKeySet, _ now: Int64) -> Outcome {
        do { return .success(try JWT.verify(token, keys: keys, now: now).claims) } catch { return .failure(error) }
    }

    static func cached(_ cache: inout JWTVerificationCache, _ token: String, _ keys: JWTKeySet, _ now: Int64) -> Outcome {
        do { return .success(try cache.verify(token, keys: keys, now: now).claims) } catch { return .failure(error) }
    }

    static let other = JWK(generating: .es256, kid: "kid-ES256", random: SeededRandom(seed: 99))

    /// Every token against every key set and time, in two orders (so each answer is also
    /// checked after the cache was filled under a different key set or time).
    @Test func answersAsVerifyWouldWhateverChanged() {
        let secret = JWTKey(secret: Array("a-secret-of-at-least-thirty-two-bytes!!".utf8))
        let rotated = JWTKey(secret: Array("another-secret-of-thirty-two-bytes-or-more".utf8))
        let es = JWKTypeTests.generated[.es256]!.key
        let ed = JWKTypeTests.generated[.edDSA]!.key
        let tokens = [
            JWT.sign(claims: ["sub": "a", "exp": 1_000], key: secret),
            JWT.sign(claims: ["sub": "b", "exp": 2_000, "nbf": 500], key: secret),
            JWT.sign(claims: ["sub": "c", "exp": 1_000], key: es),
            JWT.sign(claims: ["sub": "d", "exp": 1_000], key: ed),
            JWT.sign(claims: ["sub": "e", "exp": 1_000], key: Self.other.key),  // same kid as `es`, other key
            JWT.sign(claims: ["sub": "f"], key: rotated),
            "not.a.token",
        ]
        let keySets = [
            JWTKeySet(keys: [es.publicOnly, ed.publicOnly], fallback: secret, unknownKidUsesFallback: true),
            JWTKeySet(keys: [es.publicOnly], fallback: rotated, unknownKidUsesFallback: true),
            JWTKeySet(keys: [Self.other.key.publicOnly, ed.publicOnly], fallback: secret, unknownKidUsesFallback: true),
            JWTKeySet(keys: [es.publicOnly, ed.publicOnly], fallback: secret, unknownKidUsesFallback: true, validMethods: ["HS256"]),
            JWTKeySet(keys: [], fallback: nil),
        ]
        let times: [Int64] = [100, 600, 999, 1_000, 1_500, 2_000]
        var cases: [(String, JWTKeySet, Int64)] = []
        for token in tokens { for keys in keySets { for now in times { cases.append((token, keys, now)) } } }
        for order in [cases, cases.reversed()] {
            var cache = JWTVerificationCache()
            var successes = 0
            for _ in 0..<2 {
                for (token, keys, now) in order {
                    let expected = Self.direct(token, keys, now)
                    #expect(Self.cached(&cache, token, keys, now) == expected, "\(token.prefix(20)) at \(now)")
                    if case .success = expected { successes += 1 }
                }
            }
            #expect(successes > 20)  // the matrix exercises hits, not only failures
        }
    }

    /// A verified token is not verified again while the key set keeps its key.
    @Test func aHitSkipsTheSignatureCheck() throws {
        let key = JWTKey(secret: Array("a-secret-of-at-least-thirty-two-bytes!!".utf8))
        let token = JWT.sign(claims: ["sub": "a"], key: key)
        var cache = JWTVerificationCache()
        _ = try cache.verify(token, keys: JWTKeySet(fallback: key), now: 0)
        #expect(cache.count == 1)
        // A key set whose fallback has the same secret but nothing else in common still hits
        // (same kid, algorithm and material), and the answer is the same token.
        #expect(try cache.verify(token, keys: JWTKeySet(keys: [], fallback: key, unknownKidUsesFallback: true), now: 5)
            .claims["sub"] == "a")
        #expect(cache.count == 1)
    }

    @Test func startsOverWhenFull() throws {
        let key = JWTKey(secret: Array("a-secret-of-at-least-thirty-two-bytes!!".utf8))
        let keys = JWTKeySet(fallback: key)
        var cache = JWTVerificationCache(capacity: 4)
        for i in 0..<4 { _ = try cache.verify(JWT.sign(claims: ["n": .number(Double(i))], key: key), keys: keys, now: 0) }
        #expect(cache.count == 4)
        _ = try cache.verify(JWT.sign(claims: ["n": 4], key: key), keys: keys, now: 0)
        #expect(cache.count == 1)
    }

    /// The cache hashes only a token's length and last bytes: a token that shares them with a
    /// cached one (same signature, another payload of the same length) is still refused.
    @Test func aTokenSharingTheCachedSignatureIsVerifiedAfresh() throws {
        let key = JWTKey(secret: Array("a-secret-of-at-least-thirty-two-bytes!!".utf8))
        let keys = JWTKeySet(fallback: key)
        let token = JWT.sign(claims: ["sub": "alice"], key: key)
        var cache = JWTVerificationCache()
        #expect(try cache.verify(token, keys: keys, now: 0).claims["sub"] == "alice")
        let parts = token.split(separator: ".").map(String.init)
        let forged = [parts[0], Base64URL.encode(Array(#"{"sub":"malle"}"#.utf8)), parts[2]].joined(separator: ".")
        #expect(forged.utf8.count == token.utf8.count)
        #expect(forged.utf8.suffix(16).elementsEqual(token.utf8.suffix(16)))
        #expect(throws: JWTError.self) { try cache.verify(forged, keys: keys, now: 0) }
        #expect(try cache.verify(token, keys: keys, now: 0).claims["sub"] == "alice")
    }
}

@Suite struct VerificationCacheKeyTests {
    /// Keys are equal only byte for byte (U+212A KELVIN SIGN is "K" to String's `==`).
    @Test func keysCompareBytes() {
        let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJLIn0.Ksig"
        let kelvin = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJLIn0.\u{212A}sig"
        #expect(token == kelvin)  // String's canonical equivalence
        #expect(JWTVerificationCache.Key(token: token) != JWTVerificationCache.Key(token: kelvin))
        #expect(JWTVerificationCache.Key(token: token) == JWTVerificationCache.Key(token: String(decoding: Array(token.utf8), as: UTF8.self)))
    }

    /// A cached token spelled with U+212A KELVIN SIGN for one of its K is refused as JWT.verify
    /// refuses it, whichever bucket its hash leads to (a small cache: two buckets per entry).
    @Test func aKelvinSpellingOfACachedTokenIsNoHit() {
        let key = JWTKey(secret: Array("a-secret-of-at-least-thirty-two-bytes!!".utf8))
        let keys = JWTKeySet(fallback: key)
        var token = ""
        for n in 0..<10_000 {
            token = JWT.sign(claims: ["sub": .string("user-\(n)")], key: key)
            if token.utf8.filter({ $0 == UInt8(ascii: "K") }).count >= 4 { break }
        }
        var cache = JWTVerificationCache(capacity: 1)
        var variants = 0
        for (index, scalar) in token.unicodeScalars.enumerated() where scalar == "K" {
            var scalars = Array(token.unicodeScalars)
            scalars[index] = "\u{212A}"
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars)
            let variant = String(view)
            #expect(variant == token)  // to String's ==
            #expect(throws: JWTError.self) { try JWT.verify(variant, keys: keys, now: 0) }
            #expect(throws: JWTError.self) {
                _ = try cache.verify(token, keys: keys, now: 0)  // cached again after each refusal
                return try cache.verify(variant, keys: keys, now: 0)
            }
            variants += 1
        }
        #expect(variants >= 4)
    }
}
