/// SHA-1 (FIPS 180-4 section 6.1). Broken for collision resistance; kept for HMAC-SHA1
/// interoperability (e.g. TOTP, RFC 6238) where HMAC's security does not rest on it.
public struct SHA1: HashFunction, BlockCompressing {
    public static let blockByteCount = 64
    public static let byteCount = 20

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32) =
        // FIPS 180-4 section 5.3.1.
        (0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0)
    var blocks = BlockBuffer64()

    public init() {}

    public mutating func update(bufferPointer input: UnsafeRawBufferPointer) { absorb(input) }

    public func finalize() -> [UInt8] {
        let s = padded().state
        var out = [UInt8]()
        out.reserveCapacity(20)
        for v in [s.0, s.1, s.2, s.3, s.4] {
            out.append(UInt8(truncatingIfNeeded: v &>> 24))
            out.append(UInt8(truncatingIfNeeded: v &>> 16))
            out.append(UInt8(truncatingIfNeeded: v &>> 8))
            out.append(UInt8(truncatingIfNeeded: v))
        }
        return out
    }

    @inline(__always)
    private static func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &<< n) | (x &>> (32 &- n)) }

    mutating func compress(_ blocks: UnsafeRawPointer, count: Int) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { schedule in
            let w = schedule.baseAddress!
            for block in 0..<count {
                let base = blocks + block * 64
                for i in 0..<16 {
                    w[i] = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
                }
                for i in 16..<80 {
                    w[i] = Self.rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1)
                }
                var (a, b, c, d, e) = state
                // FIPS 180-4 sections 4.1.1 (f_t) and 4.2.1 (K_t).
                for i in 0..<80 {
                    let f: UInt32, k: UInt32
                    switch i {
                    case 0..<20: f = (b & c) | (~b & d); k = 0x5a827999
                    case 20..<40: f = b ^ c ^ d; k = 0x6ed9eba1
                    case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8f1bbcdc
                    default: f = b ^ c ^ d; k = 0xca62c1d6
                    }
                    let t = Self.rotl(a, 5) &+ f &+ e &+ k &+ w[i]
                    e = d
                    d = c
                    c = Self.rotl(b, 30)
                    b = a
                    a = t
                }
                state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
            }
        }
    }
}
