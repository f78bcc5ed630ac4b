import PythonTestSupport
import Testing
@testable import AuthCrypto

/// Curve constants (FIPS 186-5 / SP 800-186 section 3.2.1.3) as big-endian hex.
enum P256Constants {
    static let p = "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"
    static let n = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"
    static let gx = "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
    static let gy = "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"

    static let generator = try! P256PublicKey(x: unhex(gx), y: unhex(gy))

    static func big(_ hex: String) -> BigUInt { BigUInt(bigEndian: unhex(hex)) }
    static func bytes(_ value: BigUInt) -> [UInt8] { value.bigEndianBytes(count: 32)! }
    static func scalar(_ value: UInt64) -> [UInt8] { bytes(BigUInt(value)) }

    /// a^-1 mod n by Fermat (n is prime).
    static func inverse(_ a: BigUInt) -> BigUInt {
        let order = big(n)
        return a.power(order - BigUInt(2), modulus: order, secret: false)
    }
}

/// RFC 6979 appendix A.2.5: the P-256 key pair, and the SHA-256 signatures of "sample" and
/// "test" with the nonces k that section 3.2 derives for them.
enum RFC6979A25 {
    static let d = "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721"
    static let ux = "60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"
    static let uy = "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299"
    static let vectors: [(message: String, k: String, r: String, s: String)] = [
        ("sample",
         "a6e3c57dd01abe90086538398355dd4c3b17aa873382b0f24d6129493d8aad60",
         "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716",
         "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"),
        ("test",
         "d16b6ae827f17175e040871a1c7ec3500192c4c92677336ec2537acaee0008e0",
         "f1abb023518351cd71d881567b1ea663ed3efcf6c5132b354f28d3b0b7d38367",
         "019f4113742a2b14bd25926b49c649155f267e60d3814b4c0cc84250e46f0083"),
    ]

    static let privateKey = try! P256PrivateKey(scalar: unhex(d))
}

/// RFC 7515 appendix A.3: the ES256 example key (also RFC 7517 appendix A.2) and the JWS
/// signature over its signing input. ECDSA there used a random nonce, so the signature can
/// only be verified, not reproduced.
enum RFC7515A3 {
    static let x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    static let d = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"
    static let signingInput = "eyJhbGciOiJFUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let signature = "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    static func bytes(_ text: String) -> [UInt8] { try! Base64URL.decode(text) }
}

@Suite struct P256KnownAnswerTests {
    @Test func rfc6979NoncesAndSignaturesAreReproduced() throws {
        let key = RFC6979A25.privateKey
        for vector in RFC6979A25.vectors {
            let message = utf8(vector.message)
            var nonces = RFC6979Nonces(seed: .init(privateKey: key.scalar), privateKey: key.scalar,
                                       digest: SHA256.hash(data: message))
            #expect(nonces.next().hexString == vector.k, "k for \(vector.message)")
            let signature = key.signature(for: message)
            #expect(signature.hexString == vector.r + vector.s, "signature of \(vector.message)")
            #expect(key.publicKey.isValidSignature(signature, for: message))
            // Deterministic: signing again gives the same bytes.
            #expect(key.signature(for: message) == signature)
        }
    }

    @Test func rfc6979KeyPair() throws {
        let key = RFC6979A25.privateKey
        #expect(key.publicKey.x.hexString == RFC6979A25.ux)
        #expect(key.publicKey.y.hexString == RFC6979A25.uy)
        #expect(key.scalar.hexString == RFC6979A25.d)
        #expect(try P256PublicKey(x: unhex(RFC6979A25.ux), y: unhex(RFC6979A25.uy)) == key.publicKey)
    }

    @Test func rfc7515AppendixA3KeyPairAndSignature() throws {
        let key = try P256PrivateKey(scalar: RFC7515A3.bytes(RFC7515A3.d))
        #expect(key.publicKey.x == RFC7515A3.bytes(RFC7515A3.x))
        #expect(key.publicKey.y == RFC7515A3.bytes(RFC7515A3.y))
        let message = utf8(RFC7515A3.signingInput)
        let signature = RFC7515A3.bytes(RFC7515A3.signature)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: message + [0x2e]))
        // Our own (deterministic) signature over the same input verifies as well.
        #expect(key.publicKey.isValidSignature(key.signature(for: message), for: message))
    }
}

@Suite struct P256ScalarMultiplicationTests {
    typealias C = P256Constants
    let n = P256Constants.big(P256Constants.n)

    /// Small multiples of G, computed independently with Python's `cryptography` (OpenSSL).
    static let twoG = ("7cf27b188d034f7e8a52380304b51ac3c08969e277f21b35a60b48fc47669978",
                       "07775510db8ed040293d9ac69f7430dbba7dade63ce982299e04b79d227873d1")
    static let threeG = ("5ecbe4d1a6330a44c8f7ef951d4bf165e6c6b721efada985fb41661bc6e7fd6c",
                         "8734640c4998ff7e374b06ce1a64a2ecd82ab036384fb83d9a79b127a27d5032")

    func hex(_ point: (x: [UInt8], y: [UInt8])?) -> String? {
        point.map { $0.x.hexString + $0.y.hexString }
    }

    /// Edge scalars for all three multiplication routines: zero and the multiples of n give the
    /// point at infinity, the rest reduce mod n. n - 34 is the scalar for which a signed
    /// 5-bit window ladder meets P + P in its last addition.
    @Test func edgeScalarsAgreeAcrossRoutines() throws {
        let g = C.generator
        let negGy = C.bytes(C.big(C.p) - C.big(C.gy))
        let cases: [(String, BigUInt, String?)] = [
            ("0", .zero, nil),
            ("1", .one, C.gx + C.gy),
            ("2", BigUInt(2), Self.twoG.0 + Self.twoG.1),
            ("3", BigUInt(3), Self.threeG.0 + Self.threeG.1),
            ("n - 1", n - .one, C.gx + negGy.hexString),
            ("n", n, nil),
            ("n + 1", n + .one, C.gx + C.gy),
            ("n + 2", n + BigUInt(2), Self.twoG.0 + Self.twoG.1),
            ("2^256 - 1", BigUInt.one.shifted(left: 256) - .one, nil),
            ("n - 34", n - BigUInt(34), nil),
            ("n - 2", n - BigUInt(2), nil),
            ("2^255", BigUInt.one.shifted(left: 255), nil),
            ("2^252", BigUInt.one.shifted(left: 252), nil),
            ("15 * 2^252 + 2^251", BigUInt(31).shifted(left: 251), nil),
            ("2^256 mod n", BigUInt.one.shifted(left: 256) % n, nil),
            ("31", BigUInt(31), nil), ("32", BigUInt(32), nil), ("33", BigUInt(33), nil), ("64", BigUInt(64), nil),
        ]
        for (label, k, expected) in cases {
            let scalar = C.bytes(k)
            let base = hex(P256Arithmetic.multiplyBase(scalar))
            if let expected { #expect(base == expected, "\(label) G") }
            if k % n == .zero { #expect(base == nil, "\(label) G is the point at infinity") }
            #expect(hex(P256Arithmetic.multiply(scalar, g)) == base, "\(label): variable-point routine")
            #expect(hex(P256Arithmetic.multiplyDouble(scalar, C.scalar(0), g)) == base, "\(label): u1 only")
            #expect(hex(P256Arithmetic.multiplyDouble(C.scalar(0), scalar, g)) == base, "\(label): u2 only")
            // (k - 1) G + 1 G: the double multiplication meets G + G and G + (-G) here.
            let minusOne = C.bytes((k + n - .one) % n)
            #expect(hex(P256Arithmetic.multiplyDouble(minusOne, C.scalar(1), g)) == base, "\(label): split")
        }
        // (n - 1) G = -G, so it has G's x and the negated y.
        #expect(P256Arithmetic.multiplyBase(C.bytes(n - .one))?.y == negGy)
    }

    /// u1 G + u2 Q = (u1 + u2 d) G for Q = d G, and k (d G) = (k d) G, on seeded random values,
    /// including sums that cancel to the point at infinity and that double.
    @Test func randomScalarsAreConsistent() throws {
        let random = SeededRandom(seed: 256)
        for round in 0..<12 {
            let d = BigUInt(bigEndian: random.bytes(count: 32)) % (n - .one) + .one
            let q = try #require(P256Arithmetic.multiplyBase(C.bytes(d)))
            let key = try P256PublicKey(x: q.x, y: q.y)
            let u1 = BigUInt(bigEndian: random.bytes(count: 32)) % n
            var u2 = BigUInt(bigEndian: random.bytes(count: 32)) % n
            if round == 0 { u2 = (n - u1) * C.inverse(d) % n }  // u1 + u2 d = 0: infinity
            if round == 1 { u2 = u1 * C.inverse(d) % n }          // u1 G = u2 Q: a doubling
            let combined = (u1 + u2 * d) % n
            let expected = hex(P256Arithmetic.multiplyBase(C.bytes(combined)))
            #expect(hex(P256Arithmetic.multiplyDouble(C.bytes(u1), C.bytes(u2), key)) == expected, "round \(round)")
            #expect(hex(P256Arithmetic.multiply(C.bytes(u1), key)) == hex(P256Arithmetic.multiplyBase(C.bytes(u1 * d % n))))
            if round == 0 { #expect(expected == nil) }
        }
    }
}

/// Public keys and private scalars that must be refused, and the boundary values that must not.
@Suite struct P256KeyValidationTests {
    typealias C = P256Constants

    /// A valid point with x = 0 (0^3 - 3 * 0 + b is a square mod p): its x has a second
    /// 256-bit encoding, x + p = p, which must be refused as out of range.
    static let zeroXPointY = "66485c780e2f83d72433bd5d84a06bb6541c2af31dae871728bf856a174f93f4"

    @Test func publicKeysAreValidated() throws {
        let gx = unhex(C.gx), gy = unhex(C.gy), p = unhex(C.p)
        let ones = [UInt8](repeating: 0xff, count: 32), zero = [UInt8](repeating: 0, count: 32)
        var gyPlusOne = gy
        gyPlusOne[31] &+= 1
        let cases: [(String, [UInt8], [UInt8], P256KeyError?)] = [
            ("generator", gx, gy, nil),
            ("x = 0 is a valid point", zero, unhex(Self.zeroXPointY), nil),
            ("x = p aliases x = 0", p, unhex(Self.zeroXPointY), .coordinateOutOfRange),
            ("x = p", p, gy, .coordinateOutOfRange),
            ("y = p", gx, p, .coordinateOutOfRange),
            ("x = 2^256 - 1", ones, gy, .coordinateOutOfRange),
            ("y = 2^256 - 1", gx, ones, .coordinateOutOfRange),
            ("y + 1 is off the curve", gx, gyPlusOne, .pointNotOnCurve),
            ("x and y swapped", gy, gx, .pointNotOnCurve),
            ("(0, 0) stands for infinity", zero, zero, .pointAtInfinity),
            ("(0, y) with the wrong y", zero, gy, .pointNotOnCurve),
            ("x 31 bytes", Array(gx.dropFirst()), gy, .invalidLength),
            ("x 33 bytes", [0] + gx, gy, .invalidLength),
            ("y 31 bytes", gx, Array(gy.dropFirst()), .invalidLength),
            ("y 33 bytes", gx, gy + [0], .invalidLength),
            ("empty", [], [], .invalidLength),
        ]
        for (label, x, y, error) in cases {
            if let error {
                #expect(throws: error, "\(label)") { try P256PublicKey(x: x, y: y) }
            } else {
                #expect(throws: Never.self, "\(label)") { try P256PublicKey(x: x, y: y) }
            }
        }
        // The negated generator (y = p - Gy) is valid too.
        #expect(throws: Never.self) { try P256PublicKey(x: gx, y: C.bytes(C.big(C.p) - C.big(C.gy))) }
    }

    @Test func privateScalarsAreValidated() throws {
        let n = C.big(C.n)
        #expect(throws: P256KeyError.scalarOutOfRange) { try P256PrivateKey(scalar: C.scalar(0)) }
        #expect(throws: P256KeyError.scalarOutOfRange) { try P256PrivateKey(scalar: C.bytes(n)) }
        #expect(throws: P256KeyError.scalarOutOfRange) { try P256PrivateKey(scalar: C.bytes(n + .one)) }
        #expect(throws: P256KeyError.scalarOutOfRange) { try P256PrivateKey(scalar: [UInt8](repeating: 0xff, count: 32)) }
        #expect(throws: P256KeyError.invalidLength) { try P256PrivateKey(scalar: [1]) }
        #expect(throws: P256KeyError.invalidLength) { try P256PrivateKey(scalar: [0] + C.scalar(1)) }
        #expect(throws: P256KeyError.invalidLength) { try P256PrivateKey(scalar: []) }
        // The extremes 1 and n - 1 are keys: Q = G and Q = -G.
        #expect(try P256PrivateKey(scalar: C.scalar(1)).publicKey == C.generator)
        let last = try P256PrivateKey(scalar: C.bytes(n - .one))
        #expect(last.publicKey.x == unhex(C.gx))
        #expect(last.publicKey.y == C.bytes(C.big(C.p) - C.big(C.gy)))
        let message = utf8("extreme keys still sign")
        #expect(last.publicKey.isValidSignature(last.signature(for: message), for: message))
    }

    @Test func errorDescriptionsAreDistinct() {
        let all: [P256KeyError] = [.invalidLength, .scalarOutOfRange, .coordinateOutOfRange, .pointNotOnCurve, .pointAtInfinity]
        #expect(Set(all.map(\.description)).count == all.count)
    }
}

/// Verification edge cases in the manner of Project Wycheproof's ECDSA tests (written for this
/// key, not taken from there): every row mutates a valid signature, message or digest.
@Suite struct P256SignatureEdgeCaseTests {
    typealias C = P256Constants
    static let key = RFC6979A25.privateKey
    static let message = utf8("sample")
    static let signature = key.signature(for: message)

    struct Case {
        let label: String
        let signature: [UInt8]
        var message: [UInt8] = P256SignatureEdgeCaseTests.message
        let valid: Bool
    }

    static func withR(_ r: BigUInt) -> [UInt8] { C.bytes(r) + Array(signature[32...]) }
    static func withS(_ s: BigUInt) -> [UInt8] { Array(signature[..<32]) + C.bytes(s) }

    static var cases: [Case] {
        let n = C.big(C.n), s = BigUInt(bigEndian: signature[32...])
        let max = BigUInt.one.shifted(left: 256) - .one
        var flippedR = signature, flippedS = signature
        flippedR[5] ^= 0x10
        flippedS[63] ^= 0x01
        var flippedMessage = message
        flippedMessage[0] ^= 0x01
        let der = [0x30, 0x46, 0x02, 0x21, 0x00] + Array(signature[..<32]) + [0x02, 0x21, 0x00] + Array(signature[32...])
        return [
            Case(label: "valid", signature: signature, valid: true),
            Case(label: "high S (n - s) is valid ECDSA and JOSE does not forbid it", signature: withS(n - s), valid: true),
            Case(label: "r = 0", signature: withR(.zero), valid: false),
            Case(label: "s = 0", signature: withS(.zero), valid: false),
            Case(label: "r = s = 0", signature: [UInt8](repeating: 0, count: 64), valid: false),
            Case(label: "r = n", signature: withR(n), valid: false),
            Case(label: "s = n", signature: withS(n), valid: false),
            Case(label: "r = 2^256 - 1", signature: withR(max), valid: false),
            Case(label: "s = 2^256 - 1", signature: withS(max), valid: false),
            Case(label: "r = 1", signature: withR(.one), valid: false),
            Case(label: "s = 1", signature: withS(.one), valid: false),
            Case(label: "r = n - 1", signature: withR(n - .one), valid: false),
            Case(label: "r and s swapped", signature: Array(signature[32...] + signature[..<32]), valid: false),
            Case(label: "a bit of r flipped", signature: flippedR, valid: false),
            Case(label: "a bit of s flipped", signature: flippedS, valid: false),
            Case(label: "63 bytes", signature: Array(signature.dropLast()), valid: false),
            Case(label: "65 bytes, zero appended", signature: signature + [0], valid: false),
            Case(label: "65 bytes, zero prepended", signature: [0] + signature, valid: false),
            Case(label: "empty", signature: [], valid: false),
            Case(label: "DER encoding instead of r || s", signature: der, valid: false),
            Case(label: "message with a flipped bit", signature: signature, message: flippedMessage, valid: false),
            Case(label: "message with a byte appended", signature: signature, message: message + [0], valid: false),
            Case(label: "empty message", signature: signature, message: [], valid: false),
        ]
    }

    @Test func verificationTable() {
        for c in Self.cases {
            #expect(Self.key.publicKey.isValidSignature(c.signature, for: c.message) == c.valid, "\(c.label)")
        }
    }

    @Test func anotherKeyRejects() throws {
        let other = try P256PrivateKey(scalar: C.scalar(2))
        #expect(!other.publicKey.isValidSignature(Self.signature, for: Self.message))
        #expect(!RFC6979A25.privateKey.publicKey.isValidSignature(other.signature(for: Self.message), for: Self.message))
    }

    /// Verification that must end at a chosen point R = (x, y), x >= startX: pick R on the
    /// curve and u1, u2, then set Q = u2^-1 (R - u1 G), r = x mod n, s = r / u2 and e = u1 s,
    /// so that u1 = e / s and u2 = r / s. Returns the key, R's x, the digest e and r || s.
    static func forcedR(startX: BigUInt) throws -> (key: P256PublicKey, x: BigUInt, digest: [UInt8], signature: [UInt8]) {
        let p = C.big(C.p), n = C.big(C.n)
        let b = C.big("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b")
        var x = startX, y = BigUInt.zero
        while true {
            // p = 3 mod 4, so a square c has the square root c^((p + 1) / 4).
            let rhs = (x * x % p * x + p * BigUInt(3) - BigUInt(3) * x + b) % p
            y = rhs.power((p + .one) / BigUInt(4), modulus: p, secret: false)
            if y * y % p == rhs { break }
            x = x + .one
        }
        let point = try P256PublicKey(x: C.bytes(x), y: C.bytes(y))
        let u1 = C.big("1111111111111111111111111111111111111111111111111111111111111111")
        let u2 = C.big("2222222222222222222222222222222222222222222222222222222222222222")
        let difference = try #require(P256Arithmetic.multiplyDouble(C.bytes(n - u1), C.scalar(1), point))
        let q = try #require(P256Arithmetic.multiply(C.bytes(C.inverse(u2)), P256PublicKey(x: difference.x, y: difference.y)))
        let r = x % n, s = x % n * C.inverse(u2) % n
        return (try P256PublicKey(x: q.x, y: q.y), x, C.bytes(u1 * s % n), C.bytes(r) + C.bytes(s))
    }

    /// Rows on precomputed digests, where a test can choose e to force a situation that
    /// random messages reach with negligible probability.
    @Test func digestLevelTable() throws {
        let n = C.big(C.n), p = C.big(C.p)
        let publicKey = Self.key.publicKey, d = BigUInt(bigEndian: Self.key.scalar)
        let digest = SHA256.hash(data: Self.message)
        let r = BigUInt(bigEndian: Self.signature[..<32])

        // s = 5 for nonce k: e = s k - r d, so that s + n still fits in 32 bytes.
        let k = C.big("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
        let kr = try #require(P256Arithmetic.multiplyBase(C.bytes(k)))
        let smallR = BigUInt(bigEndian: kr.x) % n
        let smallSDigest = C.bytes((BigUInt(5) * k % n + n - smallR * d % n) % n)

        // x_R >= n (r = x_R - n; a chance of about 2^-64 otherwise) and a small x_R (r + n fits).
        let large = try Self.forcedR(startX: n)
        let small = try Self.forcedR(startX: .one)
        #expect(large.x >= n && large.x < p && small.x < n)

        let rows: [(String, P256PublicKey, [UInt8], [UInt8], Bool)] = [
            ("message digest", publicKey, digest, Self.signature, true),
            ("digest + 1", publicKey, C.bytes((BigUInt(bigEndian: digest) + .one) % n), Self.signature, false),
            // e = -r d makes u1 G + u2 Q the point at infinity (SEC 1 section 4.1.4 step 5).
            ("R at infinity", publicKey, C.bytes((n - r * d % n) % n), Self.signature, false),
            ("s = 5", publicKey, smallSDigest, C.bytes(smallR) + C.scalar(5), true),
            ("s = 5 + n, not reduced", publicKey, smallSDigest, C.bytes(smallR) + C.bytes(BigUInt(5) + n), false),
            ("s = n - 5, the negated s, is valid too", publicKey, smallSDigest, C.bytes(smallR) + C.bytes(n - BigUInt(5)), true),
            ("x_R >= n, r = x_R - n", large.key, large.digest, large.signature, true),
            ("x_R >= n, r = x_R itself", large.key, large.digest, C.bytes(large.x) + Array(large.signature[32...]), false),
            ("x_R >= n, digest + 1", large.key, C.bytes((BigUInt(bigEndian: large.digest) + .one) % n), large.signature, false),
            ("small x_R", small.key, small.digest, small.signature, true),
            ("small x_R, r + n, not reduced", small.key, small.digest, C.bytes(small.x + n) + Array(small.signature[32...]), false),
        ]
        for (label, key, digest, signature, valid) in rows {
            #expect(key.isValidSignature(signature, digest: digest) == valid, "\(label)")
        }
    }
}

@Suite struct P256KeyGenerationTests {
    /// Yields the given 32-byte blocks in order (single-threaded tests only).
    final class ScriptedRandom: RandomSource, @unchecked Sendable {
        var blocks: [[UInt8]]
        init(_ blocks: [[UInt8]]) { self.blocks = blocks }
        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            let block = blocks.removeFirst()
            precondition(block.count == buffer.count)
            buffer.copyBytes(from: block)
        }
    }

    @Test func rejectionSamplingSkipsOutOfRangeDraws() throws {
        let n = P256Constants.big(P256Constants.n)
        let good = P256Constants.bytes(n - BigUInt(7))
        let random = ScriptedRandom([
            [UInt8](repeating: 0, count: 32), P256Constants.bytes(n), [UInt8](repeating: 0xff, count: 32), good,
        ])
        let key = P256PrivateKey.generate(random: random)
        #expect(key.scalar == good)
        #expect(random.blocks.isEmpty)
    }

    @Test func generatedKeysSignAndAreDeterministicPerSeed() throws {
        let first = P256PrivateKey.generate(random: SeededRandom(seed: 6979))
        let again = P256PrivateKey.generate(random: SeededRandom(seed: 6979))
        let other = P256PrivateKey.generate(random: SystemRandom())
        #expect(first.scalar == again.scalar && first.publicKey == again.publicKey)
        #expect(first.scalar != other.scalar)
        #expect(first.scalar.count == 32 && first.publicKey.x.count == 32 && first.publicKey.y.count == 32)
        #expect(try P256PrivateKey(scalar: first.scalar).publicKey == first.publicKey)
        for length in [0, 1, 32, 64, 65, 1000] {
            let message = SeededRandom(seed: UInt64(length)).bytes(count: length)
            for key in [first, other] {
                let signature = key.signature(for: message)
                #expect(signature.count == 64)
                #expect(key.publicKey.isValidSignature(signature, for: message), "length \(length)")
            }
        }
    }
}

/// Cross-checks with Python's `cryptography` (OpenSSL) in both directions: OpenSSL verifies our
/// signatures (converted to DER) and its RFC 6979 signatures equal ours byte for byte, we
/// verify OpenSSL's randomized signatures, and both sides derive the same public points.
enum PythonEC {
    static let available: Bool = {
        guard Python.interpreter != nil else { return false }
        return (try? Python.run(script: "from cryptography.hazmat.primitives.asymmetric import ec; print('ok')", input: ""))
            == "ok\n"
    }()

    static var shouldRun: Bool { available || Python.isCI }

    static let script = #"""
        import sys
        # Messages arrive as "m" + hex, so that an empty message is still a field.
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, utils
        curve = ec.SECP256R1()
        def rs(signature):
            r, s = utils.decode_dss_signature(signature)
            return "%064x%064x" % (r, s)
        for line in sys.stdin:
            op, *args = line.split()
            if op == "verify":
                x, y, message, signature = args
                key = ec.EllipticCurvePublicNumbers(int(x, 16), int(y, 16), curve).public_key()
                der = utils.encode_dss_signature(int(signature[:64], 16), int(signature[64:], 16))
                try:
                    key.verify(der, bytes.fromhex(message[1:]), ec.ECDSA(hashes.SHA256()))
                    print("valid")
                except InvalidSignature:
                    print("invalid")
            elif op == "derive":
                d, message = args
                key = ec.derive_private_key(int(d, 16), curve)
                numbers = key.public_key().public_numbers()
                signature = key.sign(bytes.fromhex(message[1:]), ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
                print("%064x %064x %s" % (numbers.x, numbers.y, rs(signature)))
            else:
                key = ec.generate_private_key(curve)
                numbers = key.public_key().public_numbers()
                signature = key.sign(bytes.fromhex(args[0][1:]), ec.ECDSA(hashes.SHA256()))
                d = key.private_numbers().private_value
                print("%064x %064x %064x %s" % (d, numbers.x, numbers.y, rs(signature)))
        """#
}

@Suite struct P256PythonCrossCheckTests {
    @Test(.enabled(if: PythonEC.shouldRun, "needs Python 3 with cryptography (AUTH_EMULATOR_PYTHON or python3 on PATH)"))
    func interoperatesWithOpenSSL() throws {
        try #require(PythonEC.available, "Python with cryptography is required under CI")
        let random = SeededRandom(seed: 0x9256)
        let keys = (0..<16).map { _ in P256PrivateKey.generate(random: random) } + [RFC6979A25.privateKey]
        let messages = keys.indices.map { random.bytes(count: [0, 1, 32, 100][$0 % 4]) }
        let mints = 16
        var requests: [String] = []
        var ours: [[UInt8]] = []
        for (key, message) in zip(keys, messages) {
            let signature = key.signature(for: message)
            ours.append(signature)
            requests.append("verify \(key.publicKey.x.hexString) \(key.publicKey.y.hexString) m\(message.hexString) \(signature.hexString)")
            requests.append("derive \(key.scalar.hexString) m\(message.hexString)")
        }
        // One tampered signature, so the Python side is seen to reject too.
        var tampered = ours[0]
        tampered[10] ^= 0x40
        requests.append("verify \(keys[0].publicKey.x.hexString) \(keys[0].publicKey.y.hexString) m\(messages[0].hexString) \(tampered.hexString)")
        let mintMessages = (0..<mints).map { random.bytes(count: 1 + $0 * 7) }
        for message in mintMessages { requests.append("mint m\(message.hexString)") }

        let lines = try Python.run(script: PythonEC.script, input: requests.joined(separator: "\n") + "\n")
            .split(separator: "\n").map(String.init)
        try #require(lines.count == 2 * keys.count + 1 + mints)

        for (index, key) in keys.enumerated() {
            #expect(lines[2 * index] == "valid", "OpenSSL verifies our signature \(index)")
            let derived = lines[2 * index + 1].split(separator: " ").map(String.init)
            try #require(derived.count == 3)
            #expect(derived[0] == key.publicKey.x.hexString && derived[1] == key.publicKey.y.hexString, "Q for key \(index)")
            #expect(derived[2] == ours[index].hexString, "OpenSSL's RFC 6979 signature equals ours, key \(index)")
        }
        #expect(lines[2 * keys.count] == "invalid")

        var highS = 0
        let half = P256Constants.big(P256Constants.n) / BigUInt(2)
        for (index, message) in mintMessages.enumerated() {
            let fields = lines[2 * keys.count + 1 + index].split(separator: " ").map(String.init)
            try #require(fields.count == 4)
            let (d, x, y, signature) = (unhex(fields[0]), unhex(fields[1]), unhex(fields[2]), unhex(fields[3]))
            let key = try P256PrivateKey(scalar: d)
            #expect(key.publicKey.x == x && key.publicKey.y == y, "public point of OpenSSL key \(index)")
            let publicKey = try P256PublicKey(x: x, y: y)
            #expect(publicKey.isValidSignature(signature, for: message), "OpenSSL signature \(index)")
            #expect(!publicKey.isValidSignature(signature, for: message + [0]))
            if BigUInt(bigEndian: signature[32...]) > half { highS += 1 }
        }
        // OpenSSL does not normalise s, so both halves occur (each with probability 1/2).
        #expect(highS > 0 && highS < mints)
    }
}
