import CAuthCrypto

/// A source of random bytes. The server takes one by injection (never calling a global
/// generator directly) so scenarios can swap in a deterministic source and replay runs.
public protocol RandomSource: Sendable {
    /// Overwrites every byte of `buffer` with random bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

extension RandomSource {
    /// Overwrites every element of `bytes` with random bytes.
    public func fill(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { fill($0) }
    }

    /// `count` fresh random bytes.
    public func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0, "byte count must not be negative")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// A random 64-bit value.
    public func next64() -> UInt64 {
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { fill($0) }
        return value
    }

    /// A `RandomNumberGenerator` drawing from this source, for the standard library's
    /// `Int.random(in:using:)`, `shuffled(using:)`, etc.
    public var generator: RandomSourceGenerator { RandomSourceGenerator(self) }
}

/// The operating system's cryptographically secure generator (`getrandom(2)` on Linux,
/// `arc4random_buf(3)` on Apple platforms). Use this for anything an attacker must not guess:
/// salts, tokens, session ids, OTP codes.
public struct SystemRandom: RandomSource, RandomNumberGenerator {
    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        // Continuing with predictable bytes would be worse than stopping.
        guard cauth_random_fill(base, buffer.count) == 0 else {
            fatalError("the operating system's secure random source failed")
        }
    }

    public mutating func next() -> UInt64 { next64() }
}

/// A DETERMINISTIC, NOT SECURE source for tests and replayable scenarios: the same seed always
/// yields the same byte stream, so anything derived from it (tokens, salts, OTP codes) can be
/// predicted by whoever knows the seed. Never use it to protect real accounts.
///
/// The stream is SplitMix64 (Steele, Lea, Flood: "Fast Splittable Pseudorandom Number
/// Generators", OOPSLA 2014): output word n is mix(seed + n * 0x9e3779b97f4a7c15). Each
/// `fill` atomically reserves the next whole words, so concurrent callers never share bytes and
/// a single-threaded run is exactly reproducible. Words are emitted little-endian; a partial
/// final word is truncated.
public final class SeededRandom: RandomSource, @unchecked Sendable {
    // @unchecked: the only mutable state is `counter`, touched solely through the C atomic.
    public let seed: UInt64
    private let counter: UnsafeMutablePointer<UInt64>

    public init(seed: UInt64) {
        self.seed = seed
        counter = .allocate(capacity: 1)
        counter.initialize(to: 0)
    }

    deinit {
        counter.deallocate()
    }

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count > 0 else { return }
        let words = UInt64((buffer.count + 7) / 8)
        var index = cauth_atomic_fetch_add_u64(counter, words)
        var offset = 0
        while offset < buffer.count {
            index &+= 1
            var z = seed &+ index &* 0x9e37_79b9_7f4a_7c15
            z = (z ^ (z &>> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z &>> 27)) &* 0x94d0_49bb_1331_11eb
            z ^= z &>> 31
            for _ in 0..<min(8, buffer.count - offset) {
                buffer[offset] = UInt8(truncatingIfNeeded: z)
                z &>>= 8
                offset += 1
            }
        }
    }
}

/// Adapts any `RandomSource` to the standard library's `RandomNumberGenerator`.
public struct RandomSourceGenerator: RandomNumberGenerator, Sendable {
    public let source: any RandomSource

    public init(_ source: any RandomSource) {
        self.source = source
    }

    public mutating func next() -> UInt64 { source.next64() }
}
