import AuthCrypto
import AuthPlatform
import GoFormats

/// Where GoTrue reads the time. Nothing in GoTrue calls the system clock directly, so a virtual
/// clock can move every expiry (tokens, OTPs, sessions, bans, rate limits) together.
public protocol AuthClock: Sendable {
    func now() -> Timestamp
}

/// The host's wall clock.
public struct SystemClock: AuthClock {
    public init() {}
    public func now() -> Timestamp { Timestamp(microseconds: wallClockMicroseconds()) }
}

/// The injected sources of time and randomness of one emulated project.
public struct Environment: Sendable {
    public var clock: any AuthClock
    public var random: any RandomSource

    public init(clock: any AuthClock = SystemClock(), random: any RandomSource = SystemRandom()) {
        self.clock = clock
        self.random = random
    }

    /// Inside a write that calls hooks, readings and draws replay those of the write's earlier
    /// rounds (`WriteRounds`).
    public func now() -> Timestamp {
        if let rounds = WriteRounds.current { return rounds.time { clock.now() } }
        return clock.now()
    }

    public func randomBytes(_ count: Int) -> [UInt8] {
        if let rounds = WriteRounds.current { return rounds.bytes(count) { drawBytes(count) } }
        return drawBytes(count)
    }

    private func drawBytes(_ count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        random.fill(&buffer)
        return buffer
    }

    /// A random (version 4, RFC 9562 §5.4) UUID in the lowercase hyphenated form GoTrue emits.
    public func uuid() -> String {
        versionFourUUID(randomBytes(16)[...])
    }
}

/// Version 4 UUIDs for bulk inserts (fixtures), drawn from the environment's source 256 at a
/// time: one read instead of one per id, which with the system source is a getrandom(2) call.
package struct UUIDBatch {
    let environment: Environment
    private var bytes: [UInt8] = []
    private var offset = 0

    package init(environment: Environment) { self.environment = environment }

    package mutating func next() -> String {
        if offset == bytes.count {
            bytes = environment.randomBytes(16 * 256)
            offset = 0
        }
        defer { offset += 16 }
        return versionFourUUID(bytes[offset..<offset + 16])
    }
}

/// 16 random bytes with the version and variant bits of RFC 9562 §5.4 set, formatted.
private func versionFourUUID(_ random: ArraySlice<UInt8>) -> String {
    UUIDText.format(random, versionFour: true)
}
