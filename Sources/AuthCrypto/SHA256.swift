import CAuthCrypto

/// Selects the SHA-256 compression implementation. The public API always uses `.automatic`;
/// tests and the benchmark pass `.portable` to exercise and time the pure-Swift path on
/// machines that have the hardware one.
package enum SHA256Implementation: Sendable, Equatable {
    /// Hardware instructions when this CPU has them (x86 SHA extensions, ARMv8 SHA2), else portable.
    case automatic
    /// The pure-Swift compression function.
    case portable

    /// Whether the hardware path is compiled in and supported by this CPU (checked once).
    package static let hardwareAvailable: Bool = cauth_sha256_hw_available() != 0

    package var usesHardware: Bool { self == .automatic && Self.hardwareAvailable }
}

/// Eight 32-bit words (the SHA-256 chaining value), stored inline.
package typealias Words8 = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

/// 64 bytes of inline storage for a partial input block.
typealias Block64 = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

@inline(__always)
func withWords<R>(_ words: inout Words8, _ body: (UnsafeMutablePointer<UInt32>) -> R) -> R {
    withUnsafeMutablePointer(to: &words) { $0.withMemoryRebound(to: UInt32.self, capacity: 8, body) }
}

/// Big-endian serialisation of the first `count` state words (FIPS 180-4 section 6.2.2 step 4).
func bigEndianBytes(_ words: Words8, count: Int) -> [UInt8] {
    var copy = words
    return withWords(&copy) { w in
        [UInt8](unsafeUninitializedCapacity: count * 4) { out, initialized in
            for i in 0..<count {
                let v = w[i]
                out[4 * i] = UInt8(truncatingIfNeeded: v &>> 24)
                out[4 * i + 1] = UInt8(truncatingIfNeeded: v &>> 16)
                out[4 * i + 2] = UInt8(truncatingIfNeeded: v &>> 8)
                out[4 * i + 3] = UInt8(truncatingIfNeeded: v)
            }
            initialized = count * 4
        }
    }
}

/// The Merkle-Damgard engine shared by SHA-256 and SHA-224 (they differ only in the initial
/// value and the digest truncation, FIPS 180-4 sections 5.3.2, 5.3.3, 6.3).
package struct SHA256Engine: Sendable, BlockCompressing {
    var state: Words8
    var blocks = BlockBuffer64()
    let hardware: Bool

    init(initialValue: Words8, implementation: SHA256Implementation) {
        state = initialValue
        hardware = implementation.usesHardware
    }

    /// True when no partial block is pending (e.g. right after absorbing exactly 64 bytes).
    var isBlockAligned: Bool { blocks.buffered == 0 }

    mutating func compress(_ blocks: UnsafeRawPointer, count: Int) {
        let hardware = self.hardware
        withWords(&state) { s in
            if hardware {
                cauth_sha256_hw_compress(s, blocks.assumingMemoryBound(to: UInt8.self), count)
            } else {
                SHA256Portable.compress(s, blocks, count)
            }
        }
    }

    /// Pads (FIPS 180-4 section 5.1.1) and returns the final chaining value.
    func finalState() -> Words8 { padded().state }
}

/// SHA-256 and SHA-224: one engine, a 64-byte block, and all but the initial value and the
/// digest length in common (FIPS 180-4 sections 5.3.2, 5.3.3, 6.3). Package-wide only for the
/// benchmark's `hash(data:implementation:)`.
package protocol SHA256Family: HashFunction {
    /// The initial hash value H(0).
    static var initialValue: Words8 { get }
    var engine: SHA256Engine { get set }
    init(engine: SHA256Engine)
}

extension SHA256Family {
    public static var blockByteCount: Int { 64 }

    public init() { self.init(implementation: .automatic) }

    package init(implementation: SHA256Implementation) {
        self.init(engine: SHA256Engine(initialValue: Self.initialValue, implementation: implementation))
    }

    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { engine.absorb(bufferPointer) }

    /// The leftmost `byteCount` bytes of the final chaining value (FIPS 180-4 sections 6.2.2, 6.3).
    public func finalize() -> [UInt8] { bigEndianBytes(engine.finalState(), count: Self.byteCount / 4) }

    package static func hash(data: some Sequence<UInt8>, implementation: SHA256Implementation) -> [UInt8] {
        var hasher = Self(implementation: implementation)
        hasher.update(data: data)
        return hasher.finalize()
    }
}

/// SHA-256 (FIPS 180-4 section 6.2). Uses the CPU's SHA instructions when available.
public struct SHA256: SHA256Family {
    public static let byteCount = 32

    /// FIPS 180-4 section 5.3.3.
    package static let initialValue: Words8 = (
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
    )

    package var engine: SHA256Engine

    package init(engine: SHA256Engine) { self.engine = engine }
}

/// SHA-224 (FIPS 180-4 section 6.3): SHA-256 with its own initial value, truncated to 224 bits.
public struct SHA224: SHA256Family {
    public static let byteCount = 28

    /// FIPS 180-4 section 5.3.2.
    package static let initialValue: Words8 = (
        0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939, 0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4
    )

    package var engine: SHA256Engine

    package init(engine: SHA256Engine) { self.engine = engine }
}

/// The pure-Swift SHA-256 compression function (FIPS 180-4 section 6.2.2).
enum SHA256Portable {
    /// FIPS 180-4 section 4.2.2: the round constants, one table shared with the hardware paths.
    static var k: UnsafePointer<UInt32> { cauth_sha256_round_constants() }

    static func compress(_ state: UnsafeMutablePointer<UInt32>, _ blocks: UnsafeRawPointer, _ count: Int) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            let w = schedule.baseAddress!
            let k = self.k
            for block in 0..<count {
                let base = blocks + block * 64
                for i in 0..<16 {
                    w[i] = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
                }
                rounds(state, w, k)
            }
        }
    }

    @inline(__always)
    static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

    /// One round (FIPS 180-4 section 6.2.2 step 3) in place: `d` becomes the new e and `h` the
    /// new a; the caller renames the rest. Ch and Maj in their three- and four-operation forms,
    /// and each big sigma nested so that it needs one copy of its input instead of three:
    /// ROTR6(e) ^ ROTR11(e) ^ ROTR25(e) = ROTR6(e ^ ROTR5(e ^ ROTR14(e))), and likewise
    /// ROTR2(a) ^ ROTR13(a) ^ ROTR22(a) = ROTR2(a ^ ROTR11(a ^ ROTR9(a))) (section 4.1.2).
    @inline(__always)
    static func round(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
                      _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ kw: UInt32) {
        let t1 = h &+ rotr(e ^ rotr(e ^ rotr(e, 14), 5), 6) &+ (g ^ (e & (f ^ g))) &+ kw
        let t2 = rotr(a ^ rotr(a ^ rotr(a, 9), 11), 2) &+ ((a & b) ^ (c & (a ^ b)))
        d &+= t1
        h = t1 &+ t2
    }

    /// Expands the schedule in place from w[0..<16] and runs the 64 rounds into `state`.
    /// w[0..<16] is left untouched, which the PBKDF2 loop relies on for its fixed padding words.
    @inline(__always)
    static func rounds(_ state: UnsafeMutablePointer<UInt32>, _ w: UnsafeMutablePointer<UInt32>,
                       _ k: UnsafePointer<UInt32>) {
        for i in 16..<64 {
            let x = w[i - 15], y = w[i - 2]
            // Small sigmas (section 4.1.2), rotations nested as in `round`.
            let s0 = rotr(x ^ rotr(x, 11), 7) ^ (x &>> 3)
            let s1 = rotr(y ^ rotr(y, 2), 17) ^ (y &>> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var a = state[0], b = state[1], c = state[2], d = state[3]
        var e = state[4], f = state[5], g = state[6], h = state[7]
        // Eight rounds per pass with the working variables renamed instead of shifted
        // (FIPS 180-4 section 6.2.2 step 3 moves h <- g <- ... <- a each round): the same
        // arithmetic without the seven register moves a round that the shifting costs.
        var i = 0
        while i < 64 {
            round(a, b, c, &d, e, f, g, &h, k[i] &+ w[i])
            round(h, a, b, &c, d, e, f, &g, k[i + 1] &+ w[i + 1])
            round(g, h, a, &b, c, d, e, &f, k[i + 2] &+ w[i + 2])
            round(f, g, h, &a, b, c, d, &e, k[i + 3] &+ w[i + 3])
            round(e, f, g, &h, a, b, c, &d, k[i + 4] &+ w[i + 4])
            round(d, e, f, &g, h, a, b, &c, k[i + 5] &+ w[i + 5])
            round(c, d, e, &f, g, h, a, &b, k[i + 6] &+ w[i + 6])
            round(b, c, d, &e, f, g, h, &a, k[i + 7] &+ w[i + 7])
            i &+= 8
        }
        state[0] &+= a
        state[1] &+= b
        state[2] &+= c
        state[3] &+= d
        state[4] &+= e
        state[5] &+= f
        state[6] &+= g
        state[7] &+= h
    }
}
