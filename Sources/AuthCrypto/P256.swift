import CAuthCrypto

/// Why a P-256 key was refused. Descriptions never contain key material.
public enum P256KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A coordinate or the private scalar is not exactly 32 bytes.
    case invalidLength
    /// The private scalar is 0 or not below the group order n (FIPS 186-5 section 6.2.1).
    case scalarOutOfRange
    /// x or y is not below the field prime p (SEC 1 section 3.2.2.1 step 2).
    case coordinateOutOfRange
    /// (x, y) does not satisfy y^2 = x^3 - 3x + b (SEC 1 section 3.2.2.1 step 3).
    case pointNotOnCurve
    /// x = y = 0: the fixed-length stand-in some encoders use for the point at infinity,
    /// which is never a valid public key (SEC 1 section 3.2.2.1 step 1).
    case pointAtInfinity

    public var description: String {
        switch self {
        case .invalidLength: "P-256 coordinates and private scalars must be exactly 32 bytes"
        case .scalarOutOfRange: "P-256 private scalar must be between 1 and n - 1"
        case .coordinateOutOfRange: "P-256 public key coordinate is not below the field prime"
        case .pointNotOnCurve: "P-256 public key is not a point on the curve"
        case .pointAtInfinity: "P-256 public key is the point at infinity"
        }
    }
}

/// A P-256 public key: an affine point (x, y) with both coordinates as 32 big-endian bytes,
/// as JWK carries them (RFC 7518 section 6.2.1.2 and 6.2.1.3).
///
/// Construction performs full public-key validation (SEC 1 section 3.2.2.1), so every value
/// of this type is a point of the prime-order group; the cofactor of P-256 is 1, which makes
/// the n Q = O check of step 4 unnecessary.
public struct P256PublicKey: Sendable, Equatable {
    /// 32 bytes, big-endian.
    public let x: [UInt8]
    /// 32 bytes, big-endian.
    public let y: [UInt8]

    /// Validates and wraps (x, y): both exactly 32 bytes, both below p, on the curve, and not
    /// the all-zero encoding of the point at infinity.
    public init(x: [UInt8], y: [UInt8]) throws(P256KeyError) {
        guard x.count == 32, y.count == 32 else { throw .invalidLength }
        switch cauth_p256_check_point(x, y) {
        case CAUTH_P256_POINT_VALID: break
        case CAUTH_P256_POINT_OUT_OF_RANGE: throw .coordinateOutOfRange
        case CAUTH_P256_POINT_INFINITY: throw .pointAtInfinity
        default: throw .pointNotOnCurve
        }
        self.x = x
        self.y = y
    }

    /// For points this module computed itself (d G), which need no second validation.
    init(validatedX x: [UInt8], y: [UInt8]) {
        self.x = x
        self.y = y
    }

    /// Verifies a JOSE ES256 signature (RFC 7518 section 3.4): exactly 64 bytes, r || s, each
    /// 32 big-endian bytes, over SHA-256 of `message`, following SEC 1 section 4.1.4 /
    /// FIPS 186-5 section 6.4.2. Rejects any other length and r or s outside [1, n - 1]. Both
    /// s and n - s are accepted, as ECDSA defines (JOSE does not ask for low-S).
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        return isValidSignature(signature, digest: SHA256.hash(data: message))
    }

    /// The same check on a precomputed 32-byte digest (test vectors are often given that way).
    func isValidSignature(_ signature: [UInt8], digest: [UInt8]) -> Bool {
        guard signature.count == 64, digest.count == 32 else { return false }
        return cauth_p256_verify(signature, digest, x, y) == 1
    }
}

/// A P-256 private key: the scalar d in [1, n - 1] as 32 big-endian bytes (the JWK "d"
/// member, RFC 7518 section 6.2.2.1), with its public key Q = d G.
public struct P256PrivateKey: Sendable {
    /// Kept private so the scalar is only read deliberately, through `scalar`.
    private let d: [UInt8]
    public let publicKey: P256PublicKey
    private let nonceSeed: RFC6979Nonces.Seed

    /// Accepts exactly 32 bytes encoding 1 <= d < n and derives Q = d G (constant time).
    public init(scalar: [UInt8]) throws(P256KeyError) {
        guard scalar.count == 32 else { throw .invalidLength }
        guard cauth_p256_scalar_is_valid(scalar) == 1 else { throw .scalarOutOfRange }
        var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
        // d is in [1, n - 1], so d G is never the point at infinity.
        let status = cauth_p256_mul_base(&x, &y, scalar)
        precondition(status == 0, "P-256 base-point multiplication failed for a valid scalar")
        d = scalar
        publicKey = P256PublicKey(validatedX: x, y: y)
        nonceSeed = RFC6979Nonces.Seed(privateKey: scalar)
    }

    /// A fresh key by rejection sampling (FIPS 186-5 appendix A.2.2): draw 256 random bits
    /// and retry until they encode a value in [1, n - 1]. That is the appendix's procedure
    /// (which draws c <= n - 2 and uses d = c + 1) up to the shift by one, so d is uniform.
    /// A draw is rejected with probability below 2^-32, because n is just under 2^256.
    public static func generate(random: some RandomSource) -> P256PrivateKey {
        while true {
            if let key = try? P256PrivateKey(scalar: random.bytes(count: 32)) { return key }
        }
    }

    /// d as 32 big-endian bytes.
    public var scalar: [UInt8] { d }

    /// Deterministic ECDSA (RFC 6979 section 3.2 with HMAC-SHA256) over SHA-256 of `message`:
    /// the JOSE ES256 form r || s, 64 bytes (RFC 7518 section 3.4). The same key and message
    /// always give the same signature, so no random source is needed and a weak one cannot
    /// leak the key. s is the plain RFC 6979 value; JOSE does not require low-S.
    public func signature(for message: [UInt8]) -> [UInt8] {
        signature(digest: SHA256.hash(data: message))
    }

    /// Signs a precomputed 32-byte SHA-256 digest (SEC 1 section 4.1.3, FIPS 186-5 section
    /// 6.4.1) with the RFC 6979 nonce for it.
    func signature(digest: [UInt8]) -> [UInt8] {
        precondition(digest.count == 32, "P-256 signing expects a 32-byte SHA-256 digest")
        var nonces = RFC6979Nonces(seed: nonceSeed, privateKey: d, digest: digest)
        var signature = [UInt8](repeating: 0, count: 64)
        while true {
            let k = nonces.next()
            // Fails only for k outside [1, n - 1] or r = 0 or s = 0 (each with probability
            // about 2^-128); RFC 6979 section 3.2 step h.3 then moves on to the next candidate.
            if cauth_p256_sign(&signature, d, k, digest) == 0 { return signature }
            nonces.reject()
        }
    }
}

/// The nonce generator of RFC 6979 section 3.2 with HMAC-SHA256 for a 256-bit group order
/// (P-256, and secp256k1 for Ethereum wallets). With qlen = hlen = 256 bits, bits2int of a
/// 32-byte string is just its value (section 2.3.2), one HMAC output is exactly one candidate
/// (step h.2), and bits2octets(h1) is h1 mod n (section 2.3.4), which `reduce` computes.
struct RFC6979Nonces {
    private var k: [UInt8]
    private var v: [UInt8]
    /// HMAC keyed with the current K, reused while K stays the same (step h loops).
    private var keyed: HMAC<SHA256>

    /// Step d's HMAC before h1: under the fixed K of step c, over the fixed V of step b, 0x00
    /// and x. It depends on the private key alone, so a key computes it once and each
    /// signature starts from it, three SHA-256 blocks sooner (the key's two pads and the
    /// first block of V || 0x00 || x).
    struct Seed: Sendable {
        fileprivate let stepD: HMAC<SHA256>

        init(privateKey x: [UInt8]) {
            var mac = HMAC<SHA256>(key: SymmetricKey(data: [UInt8](repeating: 0x00, count: 32)))  // step c
            mac.update(data: [UInt8](repeating: 0x01, count: 32))                                // step b
            mac.update(data: [0x00])
            mac.update(data: x)
            stepD = mac
        }
    }

    /// Steps b to g for private key x (int2octets: its 32 bytes), whose `Seed` is `seed`, and
    /// message digest h1.
    init(seed: Seed, privateKey x: [UInt8], digest h1: [UInt8],
         reduce: ([UInt8]) -> [UInt8] = RFC6979Nonces.reduceP256) {
        let reduced = reduce(h1)
        v = [UInt8](repeating: 0x01, count: 32)                          // step b
        k = Self.mac(seed.stepD, reduced)                                // steps c, d
        keyed = HMAC<SHA256>(key: SymmetricKey(data: k))
        v = Self.mac(keyed, v)                                           // step e
        k = Self.mac(keyed, v, [0x01], x, reduced)                       // step f
        keyed = HMAC<SHA256>(key: SymmetricKey(data: k))
        v = Self.mac(keyed, v)                                           // step g
    }

    /// h1 mod n for P-256.
    static func reduceP256(_ h1: [UInt8]) -> [UInt8] {
        var reduced = [UInt8](repeating: 0, count: 32)
        cauth_p256_scalar_reduce(&reduced, h1)
        return reduced
    }

    /// Step h.1-h.2: the next candidate k (T = V = HMAC_K(V), one block suffices).
    mutating func next() -> [UInt8] {
        v = Self.mac(keyed, v)
        return v
    }

    /// Step h.3, after a candidate was refused: K = HMAC_K(V || 0x00), V = HMAC_K(V).
    mutating func reject() {
        k = Self.mac(keyed, v, [0x00])
        keyed = HMAC<SHA256>(key: SymmetricKey(data: k))
        v = Self.mac(keyed, v)
    }

    private static func mac(_ keyed: HMAC<SHA256>, _ parts: [UInt8]...) -> [UInt8] {
        var mac = keyed
        for part in parts { mac.update(data: part) }
        return mac.finalize()
    }
}

/// Raw group operations for tests: results as (x, y) bytes, nil for the point at infinity.
enum P256Arithmetic {
    /// (scalar mod n) G, constant time.
    static func multiplyBase(_ scalar: [UInt8]) -> (x: [UInt8], y: [UInt8])? {
        precondition(scalar.count == 32)
        var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
        return cauth_p256_mul_base(&x, &y, scalar) == 0 ? (x, y) : nil
    }

    /// (scalar mod n) P for a valid point P, constant time in the scalar.
    static func multiply(_ scalar: [UInt8], _ point: P256PublicKey) -> (x: [UInt8], y: [UInt8])? {
        precondition(scalar.count == 32)
        var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
        return cauth_p256_mul(&x, &y, scalar, point.x, point.y) == 0 ? (x, y) : nil
    }

    /// (u1 mod n) G + (u2 mod n) Q, variable time (public values only).
    static func multiplyDouble(_ u1: [UInt8], _ u2: [UInt8], _ q: P256PublicKey) -> (x: [UInt8], y: [UInt8])? {
        precondition(u1.count == 32 && u2.count == 32)
        var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
        return cauth_p256_mul_double_vartime(&x, &y, u1, u2, q.x, q.y) == 0 ? (x, y) : nil
    }
}
