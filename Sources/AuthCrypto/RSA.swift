import CAuthCrypto

/// Why an RSA key was refused. Descriptions never contain key material.
public enum RSAKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Even, or outside the accepted size (1024 to 16384 bits).
    case invalidModulus
    /// Not odd, not above 1, or not below the modulus.
    case invalidExponent
    /// The private values do not belong together (p * q != n, bad d, ...).
    case inconsistentKey

    public var description: String {
        switch self {
        case .invalidModulus: "RSA modulus must be odd and between 1024 and 16384 bits"
        case .invalidExponent: "RSA public exponent must be odd, above 1 and below the modulus"
        case .inconsistentKey: "RSA private key values are inconsistent"
        }
    }
}

/// An RSA public key (RFC 8017 section 3.1): modulus n and public exponent e as unsigned
/// big-endian bytes without leading zeros.
public struct RSAPublicKey: Sendable, Equatable {
    public let modulus: [UInt8]
    public let exponent: [UInt8]
    let n: BigUInt
    let e: BigUInt

    /// Accepted modulus sizes. 1024 bits is below today's 2048-bit minimum, but keeps tests
    /// fast and still verifies old third-party keys; the upper bound caps verification cost.
    public static let minimumModulusBits = 1024
    public static let maximumModulusBits = 16384

    /// Leading zero bytes are stripped (JWKs must not have them, RFC 7518 section 6.3.1.1, but
    /// some publishers add one as if encoding a signed integer).
    public init(modulus: [UInt8], exponent: [UInt8]) throws(RSAKeyError) {
        try self.init(n: BigUInt(bigEndian: modulus), e: BigUInt(bigEndian: exponent))
    }

    init(n: BigUInt, e: BigUInt) throws(RSAKeyError) {
        guard n.isOdd, (Self.minimumModulusBits...Self.maximumModulusBits).contains(n.bitWidth) else {
            throw .invalidModulus
        }
        guard e.isOdd, e > .one, e < n else { throw .invalidExponent }
        self.n = n
        self.e = e
        modulus = n.bytes
        exponent = e.bytes
    }

    /// The modulus length in bytes, k in RFC 8017: every signature has exactly this length.
    public var byteCount: Int { modulus.count }

    /// The modulus length in bits.
    public var bitCount: Int { n.bitWidth }
}

/// An RSA private key in the two-prime CRT form (RFC 8017 section 3.2, second representation,
/// with d kept too), as JWK stores it (RFC 7518 section 6.3.2). All values are unsigned
/// big-endian bytes without leading zeros.
public struct RSAPrivateKey: Sendable {
    public let publicKey: RSAPublicKey
    let dValue: BigUInt
    let pValue: BigUInt
    let qValue: BigUInt
    let dpValue: BigUInt
    let dqValue: BigUInt
    let qinvValue: BigUInt
    /// The key as the C core prepares it for signing, built once per key.
    let prepared: RSAPreparedKey

    public var n: [UInt8] { publicKey.modulus }
    public var e: [UInt8] { publicKey.exponent }
    public var d: [UInt8] { dValue.bytes }
    public var p: [UInt8] { pValue.bytes }
    public var q: [UInt8] { qValue.bytes }
    /// d mod (p - 1).
    public var dp: [UInt8] { dpValue.bytes }
    /// d mod (q - 1).
    public var dq: [UInt8] { dqValue.bytes }
    /// q^-1 mod p.
    public var qinv: [UInt8] { qinvValue.bytes }

    /// Builds a key from n, e, d and the primes, deriving the CRT values. Rejects a key whose
    /// parts do not fit together: p * q must equal n, and a signature made with the derived
    /// CRT values must verify under (n, e), which fails for a wrong d or a composite p or q.
    public init(n: [UInt8], e: [UInt8], d: [UInt8], p: [UInt8], q: [UInt8]) throws(RSAKeyError) {
        try self.init(
            publicKey: RSAPublicKey(modulus: n, exponent: e),
            d: BigUInt(bigEndian: d), p: BigUInt(bigEndian: p), q: BigUInt(bigEndian: q))
        let probe = Array("RSA private key consistency check".utf8)
        let signature = RSA.signPKCS1v15SHA256(probe, key: self)
        guard RSA.verifyPKCS1v15SHA256(probe, signature: signature, key: publicKey) else { throw .inconsistentKey }
    }

    /// Derives the CRT values; checks only what the arithmetic needs (the caller decides
    /// whether a signing round trip is also required).
    init(publicKey: RSAPublicKey, d: BigUInt, p: BigUInt, q: BigUInt) throws(RSAKeyError) {
        let three = BigUInt(3)
        guard p >= three, q >= three, p.isOdd, q.isOdd, p != q, p * q == publicKey.n,
              !d.isZero, d < publicKey.n
        else { throw .inconsistentKey }
        self.publicKey = publicKey
        dValue = d
        pValue = p
        qValue = q
        dpValue = d % (p - .one)
        dqValue = d % (q - .one)
        // Fermat: q^(p-2) = q^-1 mod p when p is prime. If p is not prime the check below
        // (or the caller's signing round trip) catches it.
        qinvValue = q.power(p - BigUInt(2), modulus: p, secret: true)
        guard (q * qinvValue) % p == .one else { throw .inconsistentKey }
        prepared = RSAPreparedKey(
            n: publicKey.n, e: publicKey.e, p: p, q: q, dp: dpValue, dq: dqValue, qinv: qinvValue)
    }

    /// A fresh key with e = 65537 (RFC 7518 section 6.3.1.2 recommends it; FIPS 186-5 A.1.1
    /// requires 2^16 < e < 2^256), following FIPS 186-5 appendix A.1.3 with probable primes:
    /// each prime has exactly bits/2 bits with its top two bits set (so p, q >= sqrt(2) *
    /// 2^(bits/2 - 1) and n has exactly `bits` bits), is odd, has no factor below 2048, has
    /// gcd(e, prime - 1) = 1 and passes Miller-Rabin with the rounds of FIPS 186-5 Table B.1;
    /// |p - q| > 2^(bits/2 - 100); d = e^-1 mod lcm(p - 1, q - 1) with d > 2^(bits/2).
    ///
    /// `bits` must be a multiple of 16 between 1024 and 16384.
    public static func generate(bits: Int = 2048, random: some RandomSource) -> RSAPrivateKey {
        let sizes = RSAPublicKey.minimumModulusBits...RSAPublicKey.maximumModulusBits
        precondition(bits % 16 == 0 && sizes.contains(bits), "RSA key size must be a multiple of 16 in \(sizes)")
        let e = BigUInt(65537)
        let half = bits / 2
        let minimumDistance = BigUInt.one.shifted(left: half - 100)
        let minimumD = BigUInt.one.shifted(left: half)
        while true {
            var p = randomPrime(bits: half, e: 65537, random: random)
            var q = randomPrime(bits: half, e: 65537, random: random)
            if p < q { swap(&p, &q) }
            guard p - q > minimumDistance else { continue }
            let pMinus1 = p - .one, qMinus1 = q - .one
            let lambda = pMinus1 * qMinus1 / BigUInt.gcd(pMinus1, qMinus1)
            let d = inverse(of: 65537, modulo: lambda)
            guard d > minimumD, let publicKey = try? RSAPublicKey(n: p * q, e: e),
                  let key = try? RSAPrivateKey(publicKey: publicKey, d: d, p: p, q: q)
            else { continue }
            return key
        }
    }

    /// Miller-Rabin rounds for a prime factor of `bits` bits: FIPS 186-5 Table B.1 (the
    /// 2^-112 / 2^-128 / 2^-144 column for 1024 / 1536 / 2048-bit primes), and 7 rounds for
    /// the 512-bit primes of test-sized 1024-bit keys (FIPS 186-4 Table C.3, 2^-100).
    static func millerRabinRounds(bits: Int) -> Int {
        switch bits {
        case ..<1024: 7
        case ..<1536: 5
        default: 4
        }
    }

    static func randomPrime(bits: Int, e: UInt32, random: some RandomSource) -> BigUInt {
        let rounds = millerRabinRounds(bits: bits)
        while true {
            var bytes = random.bytes(count: bits / 8)
            bytes[0] |= 0xc0
            bytes[bytes.count - 1] |= 1
            let candidate = BigUInt(bigEndian: bytes)
            // gcd(e, candidate - 1) = 1 for the prime e means e does not divide candidate - 1.
            guard !candidate.hasSmallPrimeFactor, candidate.remainder(dividingBy: e) != 1,
                  candidate.isProbablePrime(rounds: rounds, random: random)
            else { continue }
            return candidate
        }
    }

    /// e^-1 mod m for a small e coprime to m, without a big extended Euclid: with
    /// t = (m mod e)^-1 mod e, the number m * (e - t) + 1 is divisible by e, and the quotient is
    /// the inverse (below m because t >= 1).
    static func inverse(of e: UInt32, modulo m: BigUInt) -> BigUInt {
        let r = Int64(m.remainder(dividingBy: e))
        // Extended Euclid on machine words: r * t = 1 mod e.
        var (oldR, newR) = (Int64(e), r)
        var (oldT, newT): (Int64, Int64) = (0, 1)
        while newR != 0 {
            let quotient = oldR / newR
            (oldR, newR) = (newR, oldR - quotient * newR)
            (oldT, newT) = (newT, oldT - quotient * newT)
        }
        precondition(oldR == 1, "exponent is not invertible")
        let t = (oldT % Int64(e) + Int64(e)) % Int64(e)
        return (m * BigUInt(UInt64(Int64(e) - t)) + .one) / BigUInt(UInt64(e))
    }
}

extension BigUInt {
    /// self * 2^count.
    func shifted(left count: Int) -> BigUInt {
        precondition(count >= 0)
        if isZero { return self }
        let limbShift = count / 64, bitShift = UInt64(count % 64)
        var out = [UInt64](repeating: 0, count: limbs.count + limbShift + 1)
        for (index, limb) in limbs.enumerated() {
            out[index + limbShift] |= limb << bitShift
            if bitShift > 0 { out[index + limbShift + 1] |= limb >> (64 - bitShift) }
        }
        return BigUInt(limbs: out)
    }
}

/// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 section 8.2), the JWS "RS256" algorithm
/// (RFC 7518 section 3.3).
public enum RSA {
    /// DER of DigestInfo { sha256, NULL } up to the digest (RFC 8017 section 9.2, note 1).
    static let sha256DigestInfoPrefix: [UInt8] = [
        0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00,
        0x04, 0x20,
    ]

    /// EMSA-PKCS1-v1_5-ENCODE (RFC 8017 section 9.2): 0x00 0x01 PS 0x00 T, PS being at least
    /// eight 0xff bytes. Every modulus this module accepts (>= 1024 bits) leaves room.
    static func encode(_ message: [UInt8], length: Int) -> [UInt8] {
        let t = sha256DigestInfoPrefix + SHA256.hash(data: message)
        precondition(length >= t.count + 11, "intended encoded message length too short")
        return [0x00, 0x01] + [UInt8](repeating: 0xff, count: length - t.count - 3) + [0x00] + t
    }

    /// RSASSA-PKCS1-V1_5-SIGN (RFC 8017 section 8.2.1). Deterministic: the same message and
    /// key always give the same signature, exactly `key.publicKey.byteCount` bytes.
    public static func signPKCS1v15SHA256(_ message: [UInt8], key: RSAPrivateKey) -> [UInt8] {
        let k = key.publicKey.byteCount
        let m = BigUInt(bigEndian: encode(message, length: k))
        return signatureRepresentative(m, key: key).bigEndianBytes(count: k)!
    }

    /// RSASP1 with the CRT values (RFC 8017 section 5.2.1, step 2.b), for m below n.
    /// `portable` keeps the C core off its vector path (tests compare the two).
    static func signatureRepresentative(_ m: BigUInt, key: RSAPrivateKey, portable: Bool = false) -> BigUInt {
        // A fault in the CRT arithmetic could leak a prime through the signature (Boneh,
        // DeMillo, Lipton 1997); the C core checks its result with the cheap public exponent
        // and gives nothing back if that fails, and then the slower route without CRT runs.
        key.prepared.privateOperation(m, portable: portable)
            ?? m.power(key.dValue, modulus: key.publicKey.n, secret: true)
    }

    /// RSASSA-PKCS1-V1_5-VERIFY (RFC 8017 section 8.2.2): the signature must be exactly k
    /// bytes and below n, and the recovered block must equal the whole expected encoding,
    /// compared byte for byte (no parsing of the block, so no lax-ASN.1 forgeries).
    public static func verifyPKCS1v15SHA256(_ message: [UInt8], signature: [UInt8], key: RSAPublicKey) -> Bool {
        let k = key.byteCount
        guard signature.count == k else { return false }
        let s = BigUInt(bigEndian: signature)
        guard s < key.n else { return false }
        let m = s.power(key.e, modulus: key.n, secret: false)
        guard let recovered = m.bigEndianBytes(count: k) else { return false }
        return constantTimeEquals(recovered, encode(message, length: k))
    }
}

/// A private key as the C core prepares it for the CRT private operation (`cauth_rsa_key`):
/// copies of n, e, p, q, dp, dq and qInv with their Montgomery constants and, on CPUs with
/// AVX-512 IFMA, the vector form of p and q. Built once per key; afterwards the C side only
/// reads it, so concurrent signers can share it.
final class RSAPreparedKey: @unchecked Sendable {
    private let key: OpaquePointer
    private let modulusLimbs: Int

    /// The values must belong together (p q = n, the CRT values derived from them), as
    /// `RSAPrivateKey` checks before building this.
    init(n: BigUInt, e: BigUInt, p: BigUInt, q: BigUInt, dp: BigUInt, dq: BigUInt, qinv: BigUInt) {
        let pl = p.limbs.count, ql = q.limbs.count
        guard let key = cauth_rsa_key_new(
            n.limbs, n.limbs.count, e.limbs, e.limbs.count, p.limbs, pl, q.limbs, ql,
            dp.padded(to: pl), dq.padded(to: ql), qinv.padded(to: pl))
        else { preconditionFailure("RSA key preparation failed (out of memory)") }
        self.key = key
        modulusLimbs = n.limbs.count
    }

    deinit { cauth_rsa_key_free(key) }

    /// m^d mod n for m below n, or nil when the result failed the check with the public
    /// exponent. `portable` keeps the C core off its vector path.
    func privateOperation(_ m: BigUInt, portable: Bool) -> BigUInt? {
        var out = [UInt64](repeating: 0, count: modulusLimbs)
        let status = cauth_rsa_private(key, &out, m.padded(to: modulusLimbs), portable ? CAUTH_RSA_PORTABLE : 0)
        precondition(status >= 0, "RSA private operation failed (input not below n, or out of memory)")
        return status == 0 ? BigUInt(limbs: out) : nil
    }
}
