import CAuthCrypto

/// Why a secp256k1 key was refused. Descriptions never contain key material.
public enum Secp256k1KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A coordinate or the private scalar is not exactly 32 bytes.
    case invalidLength
    /// The private scalar is 0 or not below the group order n (SEC 1 section 3.2.1).
    case scalarOutOfRange
    /// (x, y) is not a point of y^2 = x^3 + 7 with coordinates below p (SEC 1 section 3.2.2.1).
    case pointNotOnCurve

    public var description: String {
        switch self {
        case .invalidLength: "secp256k1 coordinates and private scalars must be exactly 32 bytes"
        case .scalarOutOfRange: "secp256k1 private scalar must be between 1 and n - 1"
        case .pointNotOnCurve: "secp256k1 public key is not a point on the curve"
        }
    }
}

/// A secp256k1 public key (SEC 2 section 2.4.1): an affine point, coordinates as 32
/// big-endian bytes. The curve's cofactor is 1, so a point on the curve is in the group.
public struct Secp256k1PublicKey: Sendable, Equatable {
    public let x: [UInt8]
    public let y: [UInt8]

    public init(x: [UInt8], y: [UInt8]) throws(Secp256k1KeyError) {
        guard x.count == 32, y.count == 32 else { throw .invalidLength }
        guard cauth_secp256k1_check_point(x, y) == 0 else { throw .pointNotOnCurve }
        self.x = x
        self.y = y
    }

    init(validatedX x: [UInt8], y: [UInt8]) {
        self.x = x
        self.y = y
    }

    /// The uncompressed SEC 1 encoding (section 2.3.3): 0x04 || x || y.
    public var uncompressed: [UInt8] { [0x04] + x + y }

    /// ECDSA verification (SEC 1 section 4.1.4) of r || s over a 32-byte digest. Both s and
    /// n - s verify, as ECDSA defines.
    public func isValidSignature(_ signature: [UInt8], digest: [UInt8]) -> Bool {
        guard signature.count == 64, digest.count == 32 else { return false }
        return cauth_secp256k1_verify(signature, digest, x, y) == 1
    }

    /// Public-key recovery (SEC 1 section 4.1.6) from r || s, the recovery id 0 to 3 and the
    /// 32-byte digest that was signed; nil when no key results (r or s outside [1, n - 1], no
    /// curve point with that x, or the point at infinity). High s is accepted, as go-ethereum's
    /// `crypto.Ecrecover` accepts it.
    public static func recover(signature: [UInt8], recoveryID: Int, digest: [UInt8]) -> Secp256k1PublicKey? {
        guard signature.count == 64, digest.count == 32, (0...3).contains(recoveryID) else { return nil }
        var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
        guard cauth_secp256k1_recover(&x, &y, signature, Int32(recoveryID), digest) == 0 else { return nil }
        return Secp256k1PublicKey(validatedX: x, y: y)
    }
}

/// A secp256k1 private key: the scalar d in [1, n - 1] as 32 big-endian bytes, with Q = d G.
public struct Secp256k1PrivateKey: Sendable {
    private let d: [UInt8]
    public let publicKey: Secp256k1PublicKey
    private let nonceSeed: RFC6979Nonces.Seed

    public init(scalar: [UInt8]) throws(Secp256k1KeyError) {
        guard scalar.count == 32 else { throw .invalidLength }
        guard cauth_secp256k1_scalar_is_valid(scalar) == 1 else { throw .scalarOutOfRange }
        var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
        let status = cauth_secp256k1_mul_base(&x, &y, scalar)
        precondition(status == 0, "secp256k1 base-point multiplication failed for a valid scalar")
        d = scalar
        publicKey = Secp256k1PublicKey(validatedX: x, y: y)
        nonceSeed = RFC6979Nonces.Seed(privateKey: scalar)
    }

    /// d as 32 big-endian bytes.
    public var scalar: [UInt8] { d }

    /// Deterministic ECDSA (RFC 6979 section 3.2 with HMAC-SHA256, as Ethereum wallets sign)
    /// over a 32-byte digest: r || s with low s (EIP-2), and the recovery id of that signature.
    public func signature(digest: [UInt8]) -> (signature: [UInt8], recoveryID: Int) {
        precondition(digest.count == 32, "secp256k1 signing expects a 32-byte digest")
        var nonces = RFC6979Nonces(seed: nonceSeed, privateKey: d, digest: digest, reduce: Self.reduce)
        var signature = [UInt8](repeating: 0, count: 64)
        var recoveryID: Int32 = 0
        while true {
            let k = nonces.next()
            // Fails only for k outside [1, n - 1] or r = 0 or s = 0; RFC 6979 section 3.2 step
            // h.3 then moves on to the next candidate.
            if cauth_secp256k1_sign(&signature, &recoveryID, d, k, digest) == 0 { return (signature, Int(recoveryID)) }
            nonces.reject()
        }
    }

    static func reduce(_ h1: [UInt8]) -> [UInt8] {
        var reduced = [UInt8](repeating: 0, count: 32)
        cauth_secp256k1_scalar_reduce(&reduced, h1)
        return reduced
    }
}
