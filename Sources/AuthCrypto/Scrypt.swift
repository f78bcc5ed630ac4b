import CAuthCrypto

/// scrypt (RFC 7914): PBKDF2-HMAC-SHA256 around ROMix's memory-hard mixing. Firebase's
/// password hashes (`$fbscrypt$`) are built on it.
public enum Scrypt {
    public enum Failure: Error, Equatable, Sendable {
        /// Parameters golang.org/x/crypto/scrypt's `Key` refuses, with its message.
        case invalidParameters(String)
        /// The working memory (128 * r * N bytes) is over `memoryLimit` or could not be allocated.
        case outOfMemory
    }

    /// `keyLength` bytes from `password` and `salt` with cost `n` (a power of 2 above 1), block
    /// size `r` and parallelism `p` (section 2). `memoryLimit` bounds the 128 * r * N bytes
    /// ROMix holds.
    public static func deriveKey(
        password: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, keyLength: Int, memoryLimit: UInt64
    ) throws(Failure) -> [UInt8] {
        guard n > 1, n & (n - 1) == 0 else { throw .invalidParameters("scrypt: N must be > 1 and a power of 2") }
        let maxInt = UInt64(Int.max)
        guard r >= 1, p >= 1, r.multipliedFullWidth(by: p).high == 0, r &* p < 1 << 30, r <= maxInt / 128 / p,
              r <= maxInt / 256, n <= maxInt / 128 / r
        else { throw .invalidParameters("scrypt: parameters are too large") }
        guard 128 * r * n <= memoryLimit else { throw .outOfMemory }
        let blockWords = 32 * Int(r)  // 128 * r bytes as 32-bit words
        var b = PBKDF2.deriveKey(password: password, salt: salt, iterations: 1, keyLength: Int(p) * blockWords * 4)
        guard let raw = cauth_calloc(Int(n) + 2, blockWords * 4) else { throw .outOfMemory }
        defer { cauth_free(raw) }
        let v = raw.bindMemory(to: UInt32.self, capacity: (Int(n) + 2) * blockWords)
        let x = v + Int(n) * blockWords, y = x + blockWords
        for chunk in 0..<Int(p) {
            let base = chunk * blockWords * 4
            for i in 0..<blockWords {
                x[i] = UInt32(b[base + 4 * i]) | UInt32(b[base + 4 * i + 1]) << 8
                    | UInt32(b[base + 4 * i + 2]) << 16 | UInt32(b[base + 4 * i + 3]) << 24
            }
            romix(x, y, v, n: Int(n), r: Int(r))
            for i in 0..<blockWords {
                for j in 0..<4 { b[base + 4 * i + j] = UInt8(truncatingIfNeeded: x[i] >> (8 * UInt32(j))) }
            }
        }
        return PBKDF2.deriveKey(password: password, salt: b, iterations: 1, keyLength: keyLength)
    }

    /// scryptROMix (section 5) on the block `x`, in place; `v` holds N blocks, `y` one.
    static func romix(_ x: UnsafeMutablePointer<UInt32>, _ y: UnsafeMutablePointer<UInt32>,
                      _ v: UnsafeMutablePointer<UInt32>, n: Int, r: Int) {
        let words = 32 * r
        let t = UnsafeMutablePointer<UInt32>.allocate(capacity: 32)
        defer { t.deallocate() }
        for i in 0..<n {
            (v + i * words).update(from: x, count: words)
            blockMix(x, y, t, r: r)
        }
        for _ in 0..<n {
            // Integerify: the first 64 bits of the last 64-byte block, little-endian.
            let last = (2 * r - 1) * 16
            let j = Int((UInt64(x[last]) | UInt64(x[last + 1]) << 32) & UInt64(n - 1))
            let vj = v + j * words
            for k in 0..<words { x[k] ^= vj[k] }
            blockMix(x, y, t, r: r)
        }
    }

    /// scryptBlockMix (section 4) on `b` in place, through `y`: the outputs of even steps
    /// first, then the odd ones. `t` is 32 words of scratch.
    static func blockMix(_ b: UnsafeMutablePointer<UInt32>, _ y: UnsafeMutablePointer<UInt32>,
                         _ t: UnsafeMutablePointer<UInt32>, r: Int) {
        t.update(from: b + (2 * r - 1) * 16, count: 16)
        for i in 0..<(2 * r) {
            for k in 0..<16 { t[k] ^= b[i * 16 + k] }
            salsa20_8(t, scratch: t + 16)
            (y + (i % 2 == 0 ? i / 2 : r + i / 2) * 16).update(from: t, count: 16)
        }
        b.update(from: y, count: 32 * r)
    }

    /// Salsa20/8's core (section 3) on 16 words in place: four double rounds, then the input
    /// added back. `x` is 16 words of scratch.
    static func salsa20_8(_ b: UnsafeMutablePointer<UInt32>, scratch x: UnsafeMutablePointer<UInt32>) {
        x.update(from: b, count: 16)
        for _ in 0..<4 {
            for (a, p, c, d) in quarterRounds {
                x[p] ^= (x[a] &+ x[d]).rotated(7)
                x[c] ^= (x[p] &+ x[a]).rotated(9)
                x[d] ^= (x[c] &+ x[p]).rotated(13)
                x[a] ^= (x[d] &+ x[c]).rotated(18)
            }
        }
        for i in 0..<16 { b[i] &+= x[i] }
    }

    /// The quarter-rounds of a double round, each as (a, b, c, d) of the section 3 listing:
    /// the four columns, then the four rows.
    static let quarterRounds: [(Int, Int, Int, Int)] = [
        (0, 4, 8, 12), (5, 9, 13, 1), (10, 14, 2, 6), (15, 3, 7, 11),
        (0, 1, 2, 3), (5, 6, 7, 4), (10, 11, 8, 9), (15, 12, 13, 14),
    ]
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotated(_ n: UInt32) -> UInt32 { self << n | self >> (32 - n) }
}
