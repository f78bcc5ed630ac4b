/// BLAKE2b (RFC 7693), unkeyed, with any digest length from 1 to 64 bytes: the hash Argon2
/// (RFC 9106 section 3.2) is built on. One-shot over a list of parts, which is how Argon2 feeds
/// it (a length prefix, then the data).
public enum BLAKE2b {
    public static let maximumByteCount = 64
    static let blockByteCount = 128

    /// RFC 7693 section 2.6: SHA-512's initial value.
    static let iv: [UInt64] = [
        0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
        0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
    ]

    /// RFC 7693 section 2.7: the message word schedule of each of the 12 rounds (rounds 10
    /// and 11 repeat 0 and 1).
    static let sigma: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
        [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
        [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
        [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
        [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    ]

    /// The `byteCount`-byte digest of the concatenation of `parts`.
    public static func hash(_ parts: [[UInt8]], byteCount: Int = maximumByteCount) -> [UInt8] {
        precondition((1...maximumByteCount).contains(byteCount), "BLAKE2b digest length out of range")
        var h = iv
        // Parameter block (section 2.5): digest length, no key, fanout 1, depth 1.
        h[0] ^= 0x0101_0000 ^ UInt64(byteCount)
        var block = [UInt8](repeating: 0, count: blockByteCount)
        var filled = 0
        var counter: UInt64 = 0
        for part in parts {
            var offset = 0
            while offset < part.count {
                // A full block is compressed only once more input follows: the last block,
                // full or not, is compressed with the final flag (section 3.3).
                if filled == blockByteCount {
                    counter &+= UInt64(blockByteCount)
                    compress(&h, block, counter: counter, last: false)
                    filled = 0
                }
                let take = min(blockByteCount - filled, part.count - offset)
                for i in 0..<take { block[filled + i] = part[offset + i] }
                filled += take
                offset += take
            }
        }
        counter &+= UInt64(filled)
        for i in filled..<blockByteCount { block[i] = 0 }
        compress(&h, block, counter: counter, last: true)
        var out = [UInt8](repeating: 0, count: byteCount)
        for i in 0..<byteCount { out[i] = UInt8(truncatingIfNeeded: h[i / 8] >> (8 * UInt64(i % 8))) }
        return out
    }

    /// Function F (section 3.2). The byte counter stays below 2^64 here, so its high word is 0.
    static func compress(_ h: inout [UInt64], _ block: [UInt8], counter: UInt64, last: Bool) {
        var m = [UInt64](repeating: 0, count: 16)
        for i in 0..<16 {
            var word: UInt64 = 0
            for j in 0..<8 { word |= UInt64(block[i * 8 + j]) << (8 * UInt64(j)) }
            m[i] = word
        }
        var v = h + iv
        v[12] ^= counter
        if last { v[14] = ~v[14] }
        for round in 0..<12 {
            let s = sigma[round % 10]
            for (k, (a, b, c, d)) in quarterRounds.enumerated() { mix(&v, a, b, c, d, m[s[2 * k]], m[s[2 * k + 1]]) }
        }
        for i in 0..<8 { h[i] ^= v[i] ^ v[i + 8] }
    }

    /// The word indices G mixes in a round (section 3.2): the four columns of the 4x4 state,
    /// then its four diagonals. Argon2's permutation P follows the same order.
    static let quarterRounds: [(Int, Int, Int, Int)] = [
        (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
        (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14),
    ]

    /// The mixing function G (section 3.1), rotations 32, 24, 16, 63.
    @inline(__always)
    static func mix(_ v: inout [UInt64], _ a: Int, _ b: Int, _ c: Int, _ d: Int, _ x: UInt64, _ y: UInt64) {
        v[a] = v[a] &+ v[b] &+ x
        v[d] = rotateRight(v[d] ^ v[a], 32)
        v[c] = v[c] &+ v[d]
        v[b] = rotateRight(v[b] ^ v[c], 24)
        v[a] = v[a] &+ v[b] &+ y
        v[d] = rotateRight(v[d] ^ v[a], 16)
        v[c] = v[c] &+ v[d]
        v[b] = rotateRight(v[b] ^ v[c], 63)
    }

    @inline(__always)
    static func rotateRight(_ x: UInt64, _ n: UInt64) -> UInt64 { x >> n | x << (64 - n) }
}
