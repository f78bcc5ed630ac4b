import Testing
@testable import AuthCrypto

/// RFC 7515 Appendix A.2 ("Example JWS Using RSASSA-PKCS1-v1_5 SHA-256"): the RSA key of
/// A.2.1 (also RFC 7517 Appendix A.2) and the JWS signing input and signature it produces.
enum RFC7515A2 {
    static let n = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let e = "AQAB"
    static let d = "Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ"
    static let p = "4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc"
    static let q = "uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc"
    static let dp = "BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3QCLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0"
    static let dq = "h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-kyNlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU"
    static let qi = "IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U"
    static let signingInput = "eyJhbGciOiJSUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let signature = "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    static func bytes(_ text: String) -> [UInt8] { try! Base64URL.decode(text) }

    static let privateKey = try! RSAPrivateKey(n: bytes(n), e: bytes(e), d: bytes(d), p: bytes(p), q: bytes(q))
}

/// Keys generated once per test process from fixed seeds (1024 bits keeps debug runs quick).
enum TestKeys {
    static let first = RSAPrivateKey.generate(bits: 1024, random: SeededRandom(seed: 7515))
    static let second = RSAPrivateKey.generate(bits: 1024, random: SeededRandom(seed: 7518))
}

@Suite struct RSAKnownAnswerTests {
    @Test func rfc7515AppendixA2SignatureIsReproduced() throws {
        let key = RFC7515A2.privateKey
        let signature = RSA.signPKCS1v15SHA256(Array(RFC7515A2.signingInput.utf8), key: key)
        #expect(Base64URL.encode(signature) == RFC7515A2.signature)
        #expect(RSA.verifyPKCS1v15SHA256(
            Array(RFC7515A2.signingInput.utf8), signature: RFC7515A2.bytes(RFC7515A2.signature), key: key.publicKey))
    }

    @Test func rfc7515AppendixA2CRTValuesAreDerived() {
        let key = RFC7515A2.privateKey
        #expect(key.dp == RFC7515A2.bytes(RFC7515A2.dp))
        #expect(key.dq == RFC7515A2.bytes(RFC7515A2.dq))
        #expect(key.qinv == RFC7515A2.bytes(RFC7515A2.qi))
        #expect(key.n == RFC7515A2.bytes(RFC7515A2.n))
        #expect(key.publicKey.bitCount == 2048)
        #expect(key.publicKey.byteCount == 256)
        #expect(key.e == [0x01, 0x00, 0x01])
    }

    @Test func encodedBlockLayout() {
        // RFC 8017 section 9.2: 00 01 FF..FF 00 || DigestInfo(sha256) || H, here for k = 128.
        let block = RSA.encode(Array("abc".utf8), length: 128)
        #expect(block.count == 128)
        #expect(block[0] == 0x00 && block[1] == 0x01)
        #expect(block[2..<(128 - 52)].allSatisfy { $0 == 0xff })
        #expect(block[128 - 52] == 0x00)
        #expect(Array(block[(128 - 51)..<(128 - 32)]) == unhex("3031300d060960864801650304020105000420"))
        // FIPS 180-4 example: SHA-256("abc").
        #expect(Array(block.suffix(32)) == unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
    }
}

@Suite struct RSATamperTests {
    let message = Array(RFC7515A2.signingInput.utf8)
    let signature = RFC7515A2.bytes(RFC7515A2.signature)
    let key = RFC7515A2.privateKey.publicKey

    @Test func flippedMessageBitsAreRejected() {
        for index in [0, message.count / 2, message.count - 1] {
            for bit in [0, 7] {
                var tampered = message
                tampered[index] ^= 1 << bit
                #expect(!RSA.verifyPKCS1v15SHA256(tampered, signature: signature, key: key))
            }
        }
        #expect(!RSA.verifyPKCS1v15SHA256(message + [0x2e], signature: signature, key: key))
        #expect(!RSA.verifyPKCS1v15SHA256([], signature: signature, key: key))
    }

    @Test func flippedSignatureBitsAreRejected() {
        for index in [0, 1, signature.count / 2, signature.count - 1] {
            for bit in [0, 3, 7] {
                var tampered = signature
                tampered[index] ^= 1 << bit
                #expect(!RSA.verifyPKCS1v15SHA256(message, signature: tampered, key: key))
            }
        }
    }

    @Test func wrongLengthsAndOutOfRangeValuesAreRejected() throws {
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: Array(signature.dropLast()), key: key))
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: [0] + signature, key: key))
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: signature + [0], key: key))
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: [], key: key))
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: [UInt8](repeating: 0, count: 256), key: key))
        // s = n and s = n + (signature) are not representatives (RFC 8017 section 5.2.2).
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: key.modulus, key: key))
        let shifted = BigUInt(bigEndian: signature) + key.n
        if let sameLength = shifted.bigEndianBytes(count: 256) {
            #expect(!RSA.verifyPKCS1v15SHA256(message, signature: sameLength, key: key))
        }
    }

    @Test func wrongKeyIsRejected() {
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: signature, key: TestKeys.first.publicKey))
        let other = RSA.signPKCS1v15SHA256(message, key: TestKeys.first)
        #expect(RSA.verifyPKCS1v15SHA256(message, signature: other, key: TestKeys.first.publicKey))
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: other, key: TestKeys.second.publicKey))
    }

    @Test func aBlockWithAnotherDigestInfoIsRejected() throws {
        // Sign (with the raw private operation) a block whose DigestInfo OID is altered but whose
        // tail is the right SHA-256 digest: a verifier comparing whole blocks must refuse it.
        let privateKey = RFC7515A2.privateKey
        var block = RSA.encode(message, length: 256)
        block[block.count - 32 - 19 + 6] ^= 0x01
        let s = RSA.signatureRepresentative(BigUInt(bigEndian: block), key: privateKey)
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: s.bigEndianBytes(count: 256)!, key: key))
        // The untouched block does verify, so the construction itself is sound.
        let good = RSA.signatureRepresentative(BigUInt(bigEndian: RSA.encode(message, length: 256)), key: privateKey)
        #expect(RSA.verifyPKCS1v15SHA256(message, signature: good.bigEndianBytes(count: 256)!, key: key))
    }
}

@Suite struct RSAKeyValidationTests {
    let n = RFC7515A2.bytes(RFC7515A2.n)

    @Test func publicKeysAreValidated() throws {
        #expect(throws: RSAKeyError.invalidModulus) { try RSAPublicKey(modulus: Array(n.dropLast()) + [n.last! & 0xfe], exponent: [1, 0, 1]) }
        #expect(throws: RSAKeyError.invalidModulus) { try RSAPublicKey(modulus: Array(n.prefix(126)) + [0x01], exponent: [3]) }
        #expect(throws: RSAKeyError.invalidModulus) { try RSAPublicKey(modulus: [], exponent: [3]) }
        #expect(throws: RSAKeyError.invalidExponent) { try RSAPublicKey(modulus: n, exponent: [1]) }
        #expect(throws: RSAKeyError.invalidExponent) { try RSAPublicKey(modulus: n, exponent: [0x01, 0x00, 0x00]) }
        #expect(throws: RSAKeyError.invalidExponent) { try RSAPublicKey(modulus: n, exponent: []) }
        #expect(throws: RSAKeyError.invalidExponent) { try RSAPublicKey(modulus: n, exponent: n) }
        // A leading zero byte (a signed-integer habit) is accepted and normalised away.
        let padded = try RSAPublicKey(modulus: [0] + n, exponent: [0, 1, 0, 1])
        #expect(padded.modulus == n)
        #expect(padded.exponent == [1, 0, 1])
        #expect(padded == RFC7515A2.privateKey.publicKey)
        // 1024 bits is the smallest accepted size.
        #expect(TestKeys.first.publicKey.bitCount == 1024)
    }

    @Test func inconsistentPrivateKeysAreRejected() throws {
        let b = RFC7515A2.bytes
        let (e, d, p, q) = (b(RFC7515A2.e), b(RFC7515A2.d), b(RFC7515A2.p), b(RFC7515A2.q))
        // The published values are accepted in either prime order.
        #expect(throws: Never.self) { try RSAPrivateKey(n: n, e: e, d: d, p: q, q: p) }
        // d off by two: p * q still matches, but signatures no longer verify.
        var wrongD = d
        wrongD[wrongD.count - 1] ^= 0x02
        #expect(throws: RSAKeyError.inconsistentKey) { try RSAPrivateKey(n: n, e: e, d: wrongD, p: p, q: q) }
        // The primes of another key.
        let other = TestKeys.first
        #expect(throws: RSAKeyError.inconsistentKey) { try RSAPrivateKey(n: n, e: e, d: d, p: other.p, q: other.q) }
        // Swapped roles: n given as a prime.
        #expect(throws: RSAKeyError.inconsistentKey) { try RSAPrivateKey(n: n, e: e, d: d, p: n, q: [1]) }
        // A different public exponent with the same d.
        #expect(throws: RSAKeyError.inconsistentKey) { try RSAPrivateKey(n: n, e: [3], d: d, p: p, q: q) }
        // Factors whose product is not n.
        #expect(throws: RSAKeyError.inconsistentKey) { try RSAPrivateKey(n: n, e: e, d: d, p: n, q: [3]) }
    }
}

@Suite struct RSAKeyGenerationTests {
    @Test func generatedKeysAreConsistent() throws {
        for key in [TestKeys.first, TestKeys.second] {
            let n = BigUInt(bigEndian: key.n), p = BigUInt(bigEndian: key.p), q = BigUInt(bigEndian: key.q)
            let d = BigUInt(bigEndian: key.d)
            #expect(p * q == n)
            #expect(n.bitWidth == 1024)
            #expect(p.bitWidth == 512 && q.bitWidth == 512)
            #expect(p > q)
            #expect(key.e == [0x01, 0x00, 0x01])
            // Top two bits of each prime set (FIPS 186-5 A.1.3 lower bound), |p - q| large.
            #expect(p.bytes[0] >= 0xc0 && q.bytes[0] >= 0xc0)
            #expect((p - q).bitWidth > 512 - 100)
            // e d = 1 mod lcm(p - 1, q - 1), and d below that lcm, above 2^(nlen/2).
            let lambda = (p - .one) * (q - .one) / BigUInt.gcd(p - .one, q - .one)
            #expect(BigUInt(65537) * d % lambda == .one)
            #expect(d < lambda)
            #expect(d.bitWidth > 512)
            // Round trip, and the key rebuilds from its own parts.
            let message = Array("generated key round trip".utf8)
            let signature = RSA.signPKCS1v15SHA256(message, key: key)
            #expect(signature.count == 128)
            #expect(RSA.verifyPKCS1v15SHA256(message, signature: signature, key: key.publicKey))
            let rebuilt = try RSAPrivateKey(n: key.n, e: key.e, d: key.d, p: key.p, q: key.q)
            #expect(rebuilt.dp == key.dp && rebuilt.dq == key.dq && rebuilt.qinv == key.qinv)
        }
        #expect(TestKeys.first.n != TestKeys.second.n)
    }

    @Test func generationIsDeterministicForASeed() {
        let again = RSAPrivateKey.generate(bits: 1024, random: SeededRandom(seed: 7515))
        #expect(again.n == TestKeys.first.n)
        #expect(again.d == TestKeys.first.d)
    }

    @Test func generates2048BitKeys() throws {
        let key = RSAPrivateKey.generate(random: SystemRandom())
        #expect(key.publicKey.bitCount == 2048)
        #expect(key.p.count == 128 && key.q.count == 128)
        #expect(BigUInt(bigEndian: key.p) * BigUInt(bigEndian: key.q) == BigUInt(bigEndian: key.n))
        let message = Array("2048-bit round trip".utf8)
        let signature = RSA.signPKCS1v15SHA256(message, key: key)
        #expect(signature.count == 256)
        #expect(RSA.verifyPKCS1v15SHA256(message, signature: signature, key: key.publicKey))
        #expect(!RSA.verifyPKCS1v15SHA256(message, signature: signature, key: RFC7515A2.privateKey.publicKey))
    }

    @Test func millerRabinRoundsFollowFIPS186() {
        #expect(RSAPrivateKey.millerRabinRounds(bits: 512) == 7)
        #expect(RSAPrivateKey.millerRabinRounds(bits: 1024) == 5)
        #expect(RSAPrivateKey.millerRabinRounds(bits: 1536) == 4)
        #expect(RSAPrivateKey.millerRabinRounds(bits: 2048) == 4)
    }
}

@Suite struct BigUIntTests {
    func big(_ hex: String) -> BigUInt { BigUInt(bigEndian: unhex(hex.count % 2 == 1 ? "0" + hex : hex)) }

    @Test func bytesRoundTrip() {
        #expect(BigUInt(bigEndian: [0, 0, 1, 2]).bytes == [1, 2])
        #expect(BigUInt(bigEndian: []).isZero)
        #expect(BigUInt.zero.bytes == [])
        #expect(BigUInt(0x0102).bigEndianBytes(count: 4) == [0, 0, 1, 2])
        #expect(BigUInt(0x0102).bigEndianBytes(count: 1) == nil)
        let value = big("0123456789abcdeffedcba98765432100f")
        #expect(value.bytes.hexString == "0123456789abcdeffedcba98765432100f")
        #expect(value.bitWidth == 129)
    }

    @Test func arithmeticMatchesMachineWords() {
        let random = SeededRandom(seed: 1)
        for _ in 0..<200 {
            let a = random.next64() >> 1, b = random.next64() >> 33 | 1
            #expect((BigUInt(a) + BigUInt(b)).bytes == BigUInt(a + b).bytes)
            #expect((BigUInt(a) * BigUInt(b)) == BigUInt(bigEndian: productBytes(a, b)))
            #expect(BigUInt(a) / BigUInt(b) == BigUInt(a / b))
            #expect(BigUInt(a) % BigUInt(b) == BigUInt(a % b))
            if a >= b { #expect(BigUInt(a) - BigUInt(b) == BigUInt(a - b)) }
            #expect(BigUInt(a).remainder(dividingBy: UInt32(truncatingIfNeeded: b)) == UInt32(a % (b & 0xffff_ffff)))
        }
    }

    func productBytes(_ a: UInt64, _ b: UInt64) -> [UInt8] {
        let (high, low) = a.multipliedFullWidth(by: b)
        return (0..<8).reversed().map { UInt8(truncatingIfNeeded: high >> (8 * UInt64($0))) }
            + (0..<8).reversed().map { UInt8(truncatingIfNeeded: low >> (8 * UInt64($0))) }
    }

    @Test func divisionIdentityOnLargeNumbers() {
        let random = SeededRandom(seed: 2)
        for (aBytes, dBytes) in [(256, 128), (256, 1), (200, 199), (64, 64), (33, 9)] {
            let a = BigUInt(bigEndian: random.bytes(count: aBytes))
            let d = BigUInt(bigEndian: random.bytes(count: dBytes)) + .one
            let (quotient, remainder) = a.quotientAndRemainder(dividingBy: d)
            #expect(remainder < d)
            #expect(quotient * d + remainder == a)
        }
    }

    @Test func modularExponentiation() {
        // Small cases against a machine-word square-and-multiply.
        let random = SeededRandom(seed: 3)
        for _ in 0..<100 {
            let m = random.next64() | 1 | (1 << 63), base = random.next64(), exponent = random.next64() >> 40
            var expected: UInt64 = 1, square = base % m, e = exponent
            while e > 0 {
                if e & 1 == 1 { expected = mulmod(expected, square, m) }
                square = mulmod(square, square, m)
                e >>= 1
            }
            for secret in [true, false] {
                #expect(BigUInt(base).power(BigUInt(exponent), modulus: BigUInt(m), secret: secret) == BigUInt(expected))
            }
        }
        // Fermat's little theorem for the Mersenne primes 2^127 - 1 and 2^521 - 1.
        for bits in [127, 521] {
            let prime = BigUInt.one.shifted(left: bits) - .one
            let base = BigUInt(bigEndian: random.bytes(count: 40))
            #expect(base.power(prime - .one, modulus: prime, secret: true) == .one)
            #expect(base.power(prime - .one, modulus: prime, secret: false) == .one)
            #expect(base.power(.zero, modulus: prime, secret: true) == .one)
        }
    }

    func mulmod(_ a: UInt64, _ b: UInt64, _ m: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return m.dividingFullWidth((product.high % m, product.low)).remainder
    }

    @Test func gcd() {
        #expect(BigUInt.gcd(BigUInt(48), BigUInt(180)) == BigUInt(12))
        #expect(BigUInt.gcd(.zero, BigUInt(7)) == BigUInt(7))
        let random = SeededRandom(seed: 4)
        let common = BigUInt(bigEndian: random.bytes(count: 20)) + .one
        let a = common * BigUInt(bigEndian: random.bytes(count: 60)).shifted(left: 3)
        #expect(a % BigUInt.gcd(a, common) == .zero)
        #expect(BigUInt.gcd(a, common) == common)
    }

    @Test func primality() {
        let random = SeededRandom(seed: 5)
        for bits in [127, 521, 607] {
            let prime = BigUInt.one.shifted(left: bits) - .one
            #expect(prime.isProbablePrime(rounds: 8, random: random))
            #expect((prime * BigUInt(3)).hasSmallPrimeFactor)
        }
        // Composites: 2^128 + 1 (= 59649589127497217 * 5704689200685129054721), a Carmichael
        // number (Arnault's 397-digit strong pseudoprime is overkill; 2465 = 5 * 17 * 29 and
        // 41041 = 7 * 11 * 13 * 41 are Carmichael numbers), and a product of two primes.
        #expect(!(BigUInt.one.shifted(left: 128) + .one).isProbablePrime(rounds: 8, random: random))
        #expect(!BigUInt(2465).isProbablePrime(rounds: 8, random: random))
        #expect(!BigUInt(41041).isProbablePrime(rounds: 8, random: random))
        let m127 = BigUInt.one.shifted(left: 127) - .one, m521 = BigUInt.one.shifted(left: 521) - .one
        #expect(!(m127 * m521).isProbablePrime(rounds: 8, random: random))
        #expect(!(m127 * m127).isProbablePrime(rounds: 8, random: random))
        // Trial division sees factors below 2048 and only those.
        #expect(BigUInt(2039 * 2029).hasSmallPrimeFactor)
        #expect(!BigUInt(2053 * 2063).hasSmallPrimeFactor)
        #expect((m521 * BigUInt(1021)).hasSmallPrimeFactor)
        #expect(!m521.hasSmallPrimeFactor)
    }

    @Test func smallInverse() {
        let random = SeededRandom(seed: 6)
        for _ in 0..<10 {
            var m = BigUInt(bigEndian: random.bytes(count: 64))
            if m.remainder(dividingBy: 65537) == 0 { m = m + .one }
            let inverse = RSAPrivateKey.inverse(of: 65537, modulo: m)
            #expect(inverse < m)
            #expect(inverse * BigUInt(65537) % m == .one)
        }
    }
}
