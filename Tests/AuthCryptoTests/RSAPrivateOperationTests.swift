import PythonTestSupport
import Testing
@testable import AuthCrypto

/// The C core's CRT private operation (`cauth_rsa_private`), on its vector path where this CPU
/// has AVX-512 IFMA and on the portable path, against the plain exponentiation m^d mod n and
/// against OpenSSL's signatures.
@Suite struct RSAPrivateOperationTests {
    /// A key from two primes of the given sizes (either may be the larger), e = 65537.
    static func key(primeBits: (Int, Int), seed: UInt64) -> RSAPrivateKey {
        let random = SeededRandom(seed: seed)
        while true {
            let p = RSAPrivateKey.randomPrime(bits: primeBits.0, e: 65537, random: random)
            let q = RSAPrivateKey.randomPrime(bits: primeBits.1, e: 65537, random: random)
            let pMinus1 = p - .one, qMinus1 = q - .one
            let lambda = pMinus1 * qMinus1 / BigUInt.gcd(pMinus1, qMinus1)
            let d = RSAPrivateKey.inverse(of: 65537, modulo: lambda)
            guard let publicKey = try? RSAPublicKey(n: p * q, e: BigUInt(65537)),
                  let key = try? RSAPrivateKey(publicKey: publicKey, d: d, p: p, q: q)
            else { continue }
            return key
        }
    }

    /// Messages that stress the reductions and the recombination: 0, 1, 2, n - 1, n - 2, the
    /// primes and multiples of them (s is 0 modulo one prime), and seeded random values.
    static func messages(for key: RSAPrivateKey, seed: UInt64) -> [BigUInt] {
        let n = key.publicKey.n, p = key.pValue, q = key.qValue
        let random = SeededRandom(seed: seed)
        var list = [BigUInt.zero, .one, BigUInt(2), n - .one, n - BigUInt(2), p, q, p * BigUInt(3), q * BigUInt(5),
                    p - .one, q + .one]
        for _ in 0..<6 { list.append(BigUInt(bigEndian: random.bytes(count: key.publicKey.byteCount)) % n) }
        return list
    }

    func expectCRTMatchesPlain(_ key: RSAPrivateKey, seed: UInt64) {
        for m in Self.messages(for: key, seed: seed) {
            let expected = m.power(key.dValue, modulus: key.publicKey.n, secret: true)
            for portable in [false, true] {
                #expect(RSA.signatureRepresentative(m, key: key, portable: portable) == expected,
                        "\(key.publicKey.bitCount)-bit key, portable \(portable), m = \(m)")
            }
        }
    }

    @Test func crtMatchesPlainExponentiation() {
        expectCRTMatchesPlain(RFC7515A2.privateKey, seed: 1)
        expectCRTMatchesPlain(TestKeys.first, seed: 2)
        expectCRTMatchesPlain(TestKeys.second, seed: 3)
    }

    /// Primes of different lengths (whole bytes, as randomPrime makes them), in either order,
    /// and sizes at the edge of the IFMA path's vector sizes: 1032 bits fit 20 digits of 52
    /// bits with the 2 bits of headroom it needs, 1040 take 24.
    @Test(arguments: [(600, 424), (424, 600), (1096, 952), (1032, 1016), (1016, 1040)])
    func unevenPrimes(bits: (Int, Int)) {
        let key = Self.key(primeBits: bits, seed: UInt64(bits.0 * 10_000 + bits.1))
        #expect(key.pValue.bitWidth == bits.0 && key.qValue.bitWidth == bits.1)
        expectCRTMatchesPlain(key, seed: 4)
    }

    static let opensslScript = #"""
        import sys, random
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding, rsa
        rng = random.Random(8017)
        for bits in (1024, 2048, 3072, 4096):
            key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
            numbers = key.private_numbers()
            for length in (0, 1, 64, 1000):
                message = bytes(rng.getrandbits(8) for _ in range(length))
                signature = key.sign(message, padding.PKCS1v15(), hashes.SHA256())
                values = (numbers.public_numbers.n, numbers.public_numbers.e, numbers.d, numbers.p, numbers.q)
                print(" ".join(["%x" % v for v in values] + [message.hex(), signature.hex()]))
        """#

    /// PKCS #1 v1.5 is deterministic: for keys OpenSSL generated, both of our paths must give
    /// OpenSSL's signature byte for byte.
    @Test(.enabled(if: Python.shouldRun, "needs Python 3 with cryptography (AUTH_EMULATOR_PYTHON)"))
    func signaturesMatchOpenSSL() throws {
        let lines = try Python.run(script: Self.opensslScript, input: "").split(separator: "\n")
        try #require(lines.count == 16)
        func bytes(_ hex: Substring) throws -> [UInt8] { try Hex.decode(hex.count % 2 == 1 ? "0" + hex : String(hex)) }
        for line in lines {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            try #require(fields.count == 7)
            let key = try RSAPrivateKey(n: bytes(fields[0]), e: bytes(fields[1]), d: bytes(fields[2]),
                                        p: bytes(fields[3]), q: bytes(fields[4]))
            let message = try bytes(fields[5]), expected = try bytes(fields[6])
            #expect(RSA.signPKCS1v15SHA256(message, key: key) == expected, "\(key.publicKey.bitCount) bits")
            let m = BigUInt(bigEndian: RSA.encode(message, length: key.publicKey.byteCount))
            let portable = RSA.signatureRepresentative(m, key: key, portable: true)
            #expect(portable.bigEndianBytes(count: key.publicKey.byteCount) == expected, "\(key.publicKey.bitCount) bits")
        }
    }
}
