import Synchronization

/// The emulator's adjustable clock: the wall clock plus an offset, optionally frozen at one
/// instant. Every expiry GoTrue computes (JWT `iat`/`exp` and their verification, the refresh
/// token reuse interval, session timebox and inactivity, OTP and link expiry, bans, frequency
/// and rate limits) reads `Environment.now()`, so moving this clock moves them all together:
/// a test checks "token expired → refresh" or "session timed out" without waiting.
///
/// A class because the state is shared by every copy of the project and guarded by a `Mutex`.
public final class VirtualClock: AuthClock {
    /// What `GET /emulator/v1/clock` reports.
    public struct Reading: Sendable, Equatable {
        public var now: Timestamp
        /// `now` minus the wall clock, in microseconds (negative when set into the past, and
        /// drifting while frozen, since the wall clock keeps going).
        public var offsetMicroseconds: Int64
        public var frozen: Bool
    }

    private struct State {
        /// Added to the wall clock while running.
        var offset: Int64 = 0
        /// The instant time stands still at, when frozen.
        var frozenAt: Int64?
    }

    private let base: any AuthClock
    private let state = Mutex(State())

    /// - Parameter base: the clock the offset applies to (the host's wall clock by default; a
    ///   test may pass its own).
    public init(base: any AuthClock = SystemClock()) {
        self.base = base
    }

    public func now() -> Timestamp {
        state.withLock { s in
            if let frozenAt = s.frozenAt { return Timestamp(microseconds: frozenAt) }
            return base.now().adding(microseconds: s.offset)
        }
    }

    public var reading: Reading {
        state.withLock { s in
            let wall = base.now().microseconds
            let now = s.frozenAt ?? wall + s.offset
            return Reading(now: Timestamp(microseconds: now), offsetMicroseconds: now - wall, frozen: s.frozenAt != nil)
        }
    }

    public var isFrozen: Bool { state.withLock { $0.frozenAt != nil } }

    /// Moves the clock by `microseconds` (negative moves it back), frozen or not.
    public func advance(microseconds delta: Int64) {
        state.withLock { s in
            s.offset += delta
            if let frozenAt = s.frozenAt { s.frozenAt = frozenAt + delta }
        }
    }

    /// Jumps to `instant`; a frozen clock stays frozen there, a running one runs on from it.
    public func set(_ instant: Timestamp) {
        state.withLock { s in
            s.offset = instant.microseconds - base.now().microseconds
            if s.frozenAt != nil { s.frozenAt = instant.microseconds }
        }
    }

    /// Stops time at the current instant. Idempotent.
    public func freeze() {
        state.withLock { s in
            guard s.frozenAt == nil else { return }
            s.frozenAt = base.now().microseconds + s.offset
        }
    }

    /// Lets time run again from the instant it was frozen at (no jump forward). Idempotent.
    public func unfreeze() {
        state.withLock { s in
            guard let frozenAt = s.frozenAt else { return }
            s.offset = frozenAt - base.now().microseconds
            s.frozenAt = nil
        }
    }

    /// Back to the wall clock, running.
    public func reset() {
        state.withLock { $0 = State() }
    }
}
