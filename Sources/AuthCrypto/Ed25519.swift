import CAuthCrypto

/// Why an Ed25519 key was refused. Descriptions never contain key material.
public enum Ed25519KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Private keys (seeds) and public keys are exactly 32 bytes (RFC 8032 section 5.1.5).
    case invalidLength
    /// The public key is not the encoding of a curve point (RFC 8032 section 5.1.3): y is not
    /// below p, no x satisfies the curve equation, or x = 0 with the sign bit set.
    case invalidPointEncoding

    public var description: String {
        switch self {
        case .invalidLength: "Ed25519 keys must be exactly 32 bytes"
        case .invalidPointEncoding: "Ed25519 public key is not a valid point encoding"
        }
    }
}

/// An Ed25519 public key (RFC 8032 section 5.1.5): the 32-byte encoding of the point A =
/// [s]B (section 5.1.2). The point is decoded once, when the key is created.
public struct Ed25519PublicKey: Sendable, Equatable {
    private let encoding: [UInt8]
    private let point: cauth_ed25519_point

    /// Accepts exactly 32 bytes that decode to a curve point under the strict rules of RFC 8032
    /// section 5.1.3 (canonical y, x = 0 only with a clear sign bit). Points of small order are
    /// valid encodings and are accepted, as the RFC does.
    public init(rawRepresentation: [UInt8]) throws(Ed25519KeyError) {
        guard rawRepresentation.count == 32 else { throw .invalidLength }
        var point = cauth_ed25519_point()
        guard cauth_ed25519_point_decode(&point, rawRepresentation) == 0 else { throw .invalidPointEncoding }
        self.encoding = rawRepresentation
        self.point = point
    }

    /// For an encoding this module computed itself, which always decodes.
    init(derivedEncoding: [UInt8]) {
        var point = cauth_ed25519_point()
        let status = cauth_ed25519_point_decode(&point, derivedEncoding)
        precondition(status == 0, "derived Ed25519 public key does not decode")
        self.encoding = derivedEncoding
        self.point = point
    }

    /// The 32-byte encoding of A (RFC 8032 section 5.1.2).
    public var rawRepresentation: [UInt8] { encoding }

    public static func == (lhs: Ed25519PublicKey, rhs: Ed25519PublicKey) -> Bool {
        lhs.encoding == rhs.encoding
    }

    /// RFC 8032 5.1.7: rejects wrong length, non-canonical S (S >= L), undecodable R; cofactorless check [S]B = R + [k]A.
    ///
    /// The signature is R (32 bytes) followed by S (32 bytes, little-endian) and k is
    /// SHA-512(R || A || M) reduced mod L. The check computes [S]B - [k]A and compares its
    /// canonical encoding with R byte for byte, which accepts exactly what decoding R strictly
    /// and comparing points would: an R that is non-canonical (y >= p, or x = 0 with the sign
    /// bit set) or not on the curve can never equal a computed encoding. The cofactorless
    /// equation is the one RFC 8032 permits as sufficient and the one OpenSSL uses.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        var hash = SHA512()
        hash.update(data: signature[0..<32])
        hash.update(data: encoding)
        hash.update(data: message)
        let k = hash.finalize()
        var point = self.point
        return cauth_ed25519_verify(signature, k, &point) == 1
    }
}

/// An Ed25519 private key (RFC 8032 section 5.1.5): a 32-byte seed, from which the secret
/// scalar s, the nonce prefix and the public key are derived once.
public struct Ed25519PrivateKey: Sendable {
    private let seedBytes: [UInt8]
    /// s: the first half of SHA-512(seed) with bits 0-2 and 255 cleared and bit 254 set.
    private let scalar: [UInt8]
    /// The second half of SHA-512(seed), hashed with each message to derive the nonce.
    private let prefix: [UInt8]
    public let publicKey: Ed25519PublicKey

    /// The 32-byte private key of RFC 8032 (section 5.1.5). Every 32-byte string is valid.
    public init(seed: [UInt8]) throws(Ed25519KeyError) {
        guard seed.count == 32 else { throw .invalidLength }
        self.init(validSeed: seed)
    }

    /// RFC 8032 section 5.1.5 steps 1-4.
    private init(validSeed seed: [UInt8]) {
        let digest = SHA512.hash(data: seed)
        var scalar = Array(digest[0..<32])
        scalar[0] &= 0xf8
        scalar[31] &= 0x7f
        scalar[31] |= 0x40
        var encoding = [UInt8](repeating: 0, count: 32)
        cauth_ed25519_base_mul(&encoding, scalar)
        self.seedBytes = seed
        self.scalar = scalar
        self.prefix = Array(digest[32..<64])
        self.publicKey = Ed25519PublicKey(derivedEncoding: encoding)
    }

    /// A fresh key from 32 bytes of `random` (RFC 8032 section 5.1.5: the private key is 32
    /// octets of cryptographically secure random data).
    public static func generate(random: some RandomSource) -> Ed25519PrivateKey {
        Ed25519PrivateKey(validSeed: random.bytes(count: 32))
    }

    /// The 32-byte private key this key was made from.
    public var seed: [UInt8] { seedBytes }

    /// RFC 8032 section 5.1.6. Deterministic: the same key and message always give the same
    /// 64 bytes, R || S. The nonce r = SHA-512(prefix || M) mod L never repeats across
    /// messages, and [r]B is computed in constant time.
    public func signature(for message: [UInt8]) -> [UInt8] {
        var hash = SHA512()
        hash.update(data: prefix)
        hash.update(data: message)
        var nonce = [UInt8](repeating: 0, count: 32)
        cauth_ed25519_scalar_reduce(&nonce, hash.finalize())
        var commitment = [UInt8](repeating: 0, count: 32)
        cauth_ed25519_base_mul(&commitment, nonce)
        return signature(for: message, nonce: nonce, commitment: commitment)
    }

    /// RFC 8032 section 5.1.6 steps 4-6 for a given nonce r (below L) and encoding of R:
    /// S = (r + k s) mod L with k = SHA-512(R || A || M) mod L. Separate so tests can build
    /// signatures around chosen, even invalid, R encodings.
    func signature(for message: [UInt8], nonce: [UInt8], commitment: [UInt8]) -> [UInt8] {
        var hash = SHA512()
        hash.update(data: commitment)
        hash.update(data: publicKey.rawRepresentation)
        hash.update(data: message)
        var k = [UInt8](repeating: 0, count: 32)
        cauth_ed25519_scalar_reduce(&k, hash.finalize())
        var s = [UInt8](repeating: 0, count: 32)
        cauth_ed25519_scalar_muladd(&s, k, scalar, nonce)
        return commitment + s
    }
}
