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

    /// Expands the schedule in place from w[0..<16] and runs the 64 rounds into `state`.
    /// w[0..<16] is left untouched, which the PBKDF2 loop relies on for its fixed padding words.
    @inline(__always)
    static func rounds(_ state: UnsafeMutablePointer<UInt32>, _ w: UnsafeMutablePointer<UInt32>,
                       _ k: UnsafePointer<UInt32>) {
        for i in 16..<64 {
            let x = w[i - 15], y = w[i - 2]
            let s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x &>> 3)
            let s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y &>> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var a = state[0], b = state[1], c = state[2], d = state[3]
        var e = state[4], f = state[5], g = state[6], h = state[7]
        for i in 0..<64 {
            let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[i] &+ w[i]
            let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
            h = g
            g = f
            f = e
            e = d &+ t1
            d = c
            c = b
            b = a
            a = t1 &+ t2
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
