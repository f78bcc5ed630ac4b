import CAuthCrypto

/// A non-negative integer of any size for RSA: 64-bit limbs, least significant first, with no
/// high zero limbs (zero has none). The heavy loops (Montgomery exponentiation, Miller-Rabin,
/// multiplication, division, gcd) run in C (`bignum.c`) because unoptimised Swift is far too
/// slow for them; only the cheap linear operations are written here.
struct BigUInt: Sendable, Hashable, Comparable, CustomStringConvertible {
    private(set) var limbs: [UInt64]

    init(limbs: [UInt64]) {
        self.limbs = limbs
        normalize()
    }

    init(_ value: UInt64) {
        limbs = value == 0 ? [] : [value]
    }

    /// Reads an unsigned big-endian byte string (RFC 8017 section 4.2, OS2IP); leading zero
    /// bytes are allowed.
    init(bigEndian bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        var limbs = [UInt64](repeating: 0, count: (bytes.count + 7) / 8)
        for (index, byte) in bytes.reversed().enumerated() {
            limbs[index / 8] |= UInt64(byte) << (8 * UInt64(index % 8))
        }
        self.init(limbs: limbs)
    }

    private mutating func normalize() {
        while let last = limbs.last, last == 0 { limbs.removeLast() }
    }

    static let zero = BigUInt(0)
    static let one = BigUInt(1)

    var isZero: Bool { limbs.isEmpty }
    var isOdd: Bool { (limbs.first ?? 0) & 1 == 1 }

    var bitWidth: Int {
        guard let top = limbs.last else { return 0 }
        return 64 * limbs.count - top.leadingZeroBitCount
    }

    /// The value as big-endian bytes (RFC 8017 section 4.1, I2OSP): the minimum number of
    /// bytes (none for zero) by default, or exactly `count` bytes, left-padded with zeros.
    /// Returns nil when the value needs more than `count` bytes.
    func bigEndianBytes(count: Int? = nil) -> [UInt8]? {
        let minimal = (bitWidth + 7) / 8
        let length = count ?? minimal
        guard minimal <= length else { return nil }
        var out = [UInt8](repeating: 0, count: length)
        for index in 0..<minimal {
            out[length - 1 - index] = UInt8(truncatingIfNeeded: limbs[index / 8] >> (8 * UInt64(index % 8)))
        }
        return out
    }

    /// Minimal big-endian bytes.
    var bytes: [UInt8] { bigEndianBytes()! }

    /// The limbs zero-extended to `count`.
    func padded(to count: Int) -> [UInt64] {
        precondition(count >= limbs.count)
        return limbs + [UInt64](repeating: 0, count: count - limbs.count)
    }

    var description: String { isZero ? "0x0" : "0x" + Hex.encode(bytes) }

    static func < (lhs: BigUInt, rhs: BigUInt) -> Bool {
        if lhs.limbs.count != rhs.limbs.count { return lhs.limbs.count < rhs.limbs.count }
        for index in stride(from: lhs.limbs.count - 1, through: 0, by: -1) where lhs.limbs[index] != rhs.limbs[index] {
            return lhs.limbs[index] < rhs.limbs[index]
        }
        return false
    }

    static func + (lhs: BigUInt, rhs: BigUInt) -> BigUInt {
        let count = max(lhs.limbs.count, rhs.limbs.count)
        var out = [UInt64](repeating: 0, count: count + 1)
        var carry: UInt64 = 0
        for index in 0..<count {
            let a = index < lhs.limbs.count ? lhs.limbs[index] : 0
            let b = index < rhs.limbs.count ? rhs.limbs[index] : 0
            let (s1, c1) = a.addingReportingOverflow(b)
            let (s2, c2) = s1.addingReportingOverflow(carry)
            out[index] = s2
            carry = (c1 ? 1 : 0) + (c2 ? 1 : 0)
        }
        out[count] = carry
        return BigUInt(limbs: out)
    }

    /// Requires lhs >= rhs.
    static func - (lhs: BigUInt, rhs: BigUInt) -> BigUInt {
        precondition(lhs >= rhs, "BigUInt subtraction would be negative")
        var out = lhs.limbs
        var borrow: UInt64 = 0
        for index in 0..<out.count {
            let b = index < rhs.limbs.count ? rhs.limbs[index] : 0
            let (d1, o1) = out[index].subtractingReportingOverflow(b)
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            out[index] = d2
            borrow = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
        return BigUInt(limbs: out)
    }

    static func * (lhs: BigUInt, rhs: BigUInt) -> BigUInt {
        if lhs.isZero || rhs.isZero { return .zero }
        var out = [UInt64](repeating: 0, count: lhs.limbs.count + rhs.limbs.count)
        cauth_bn_mul(&out, lhs.limbs, lhs.limbs.count, rhs.limbs, rhs.limbs.count)
        return BigUInt(limbs: out)
    }

    /// Requires a non-zero divisor.
    func quotientAndRemainder(dividingBy divisor: BigUInt) -> (quotient: BigUInt, remainder: BigUInt) {
        precondition(!divisor.isZero, "BigUInt division by zero")
        if self < divisor { return (.zero, self) }
        var quotient = [UInt64](repeating: 0, count: limbs.count)
        var remainder = [UInt64](repeating: 0, count: divisor.limbs.count)
        let status = cauth_bn_divmod(&quotient, &remainder, limbs, limbs.count, divisor.limbs, divisor.limbs.count)
        precondition(status == 0, "bignum division failed (out of memory)")
        return (BigUInt(limbs: quotient), BigUInt(limbs: remainder))
    }

    static func / (lhs: BigUInt, rhs: BigUInt) -> BigUInt { lhs.quotientAndRemainder(dividingBy: rhs).quotient }
    static func % (lhs: BigUInt, rhs: BigUInt) -> BigUInt { lhs.quotientAndRemainder(dividingBy: rhs).remainder }

    /// self mod a small non-zero modulus.
    func remainder(dividingBy modulus: UInt32) -> UInt32 {
        precondition(modulus != 0)
        return isZero ? 0 : cauth_bn_mod_u32(limbs, limbs.count, modulus)
    }

    /// self^exponent mod `modulus` (odd, above 1). `secret` selects the exponent-independent
    /// schedule for private exponents (see `cauth_bn_modexp`).
    func power(_ exponent: BigUInt, modulus: BigUInt, secret: Bool) -> BigUInt {
        precondition(modulus.isOdd && modulus > .one, "Montgomery exponentiation needs an odd modulus above 1")
        let width = modulus.limbs.count
        // Bases of any size reduce first; the C side takes up to `width` limbs.
        let base = limbs.count > width ? self % modulus : self
        var result = [UInt64](repeating: 0, count: width)
        let exponentLimbs = exponent.isZero ? [0] : exponent.limbs
        let status = cauth_bn_modexp(
            &result, base.padded(to: width), exponentLimbs, exponentLimbs.count, modulus.limbs, width, secret ? 1 : 0)
        precondition(status == 0, "bignum exponentiation failed (out of memory)")
        return BigUInt(limbs: result)
    }

    static func gcd(_ a: BigUInt, _ b: BigUInt) -> BigUInt {
        let width = max(a.limbs.count, b.limbs.count)
        if width == 0 { return .zero }
        var result = [UInt64](repeating: 0, count: width)
        let status = cauth_bn_gcd(&result, a.padded(to: width), b.padded(to: width), width)
        precondition(status == 0, "bignum gcd failed (out of memory)")
        return BigUInt(limbs: result)
    }

    /// Whether an odd prime below 2048 divides self.
    var hasSmallPrimeFactor: Bool {
        cauth_bn_has_small_prime_factor(limbs, limbs.count) == 1
    }

    /// Miller-Rabin with `rounds` random bases (FIPS 186-5 appendix B.3.1); self must be odd
    /// and above 3.
    func isProbablePrime(rounds: Int, random: some RandomSource) -> Bool {
        precondition(isOdd && self > BigUInt(3))
        var bases = [UInt64](repeating: 0, count: rounds * limbs.count)
        bases.withUnsafeMutableBytes { random.fill($0) }
        let verdict = cauth_bn_miller_rabin(limbs, limbs.count, bases, rounds)
        precondition(verdict >= 0, "Miller-Rabin failed (out of memory)")
        return verdict == 1
    }
}
