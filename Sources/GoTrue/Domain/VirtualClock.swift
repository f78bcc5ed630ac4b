import Synchronization

/// The emulator's adjustable clock: the wall clock plus an offset, optionally frozen at one
/// instant. Every expiry GoTrue computes (JWT `iat`/`exp` and their verification, the refresh
/// token reuse interval, session timebox and inactivity, OTP and link expiry, bans, frequency
/// and rate limits) reads `Environment.now()`, so moving this clock moves them all together:
/// a test checks "token expired → refresh" or "session timed out" without waiting.
///
/// A class because the state is shared by every copy of the project. `now()`, read several
/// times by every request, takes no lock: behind one, it took 11 % of `GET /user` with 8
/// workers on 2 cores (perf).
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
    /// Serializes changes. The state itself lives in the two atomics, which readers load
    /// without the lock: a change stores the offset first, then the frozen instant
    /// (`notFrozen` when running) with release ordering, so a reader that acquires the instant
    /// also sees the offset that goes with it.
    private let changes = Mutex(())
    private let offset = Atomic<Int64>(0)
    private let frozenAt = Atomic<Int64>(VirtualClock.notFrozen)
    private static let notFrozen = Int64.min

    /// - Parameter base: the clock the offset applies to (the host's wall clock by default; a
    ///   test may pass its own).
    public init(base: any AuthClock = SystemClock()) {
        self.base = base
    }

    public func now() -> Timestamp {
        let state = load()
        if let frozenAt = state.frozenAt { return Timestamp(microseconds: frozenAt) }
        return base.now().adding(microseconds: state.offset)
    }

    private func load() -> State {
        let frozen = frozenAt.load(ordering: .acquiring)
        return State(offset: offset.load(ordering: .relaxed), frozenAt: frozen == Self.notFrozen ? nil : frozen)
    }

    /// Every change goes through here.
    private func change(_ body: (inout State) -> Void) {
        changes.withLock { _ in
            var state = load()
            body(&state)
            offset.store(state.offset, ordering: .relaxed)
            frozenAt.store(state.frozenAt ?? Self.notFrozen, ordering: .releasing)
        }
    }

    public var reading: Reading {
        let state = load()
        let wall = base.now().microseconds
        let now = state.frozenAt ?? wall + state.offset
        return Reading(now: Timestamp(microseconds: now), offsetMicroseconds: now - wall, frozen: state.frozenAt != nil)
    }

    public var isFrozen: Bool { load().frozenAt != nil }

    /// Moves the clock by `microseconds` (negative moves it back), frozen or not.
    public func advance(microseconds delta: Int64) {
        change { s in
            s.offset += delta
            if let frozenAt = s.frozenAt { s.frozenAt = frozenAt + delta }
        }
    }

    /// Jumps to `instant`; a frozen clock stays frozen there, a running one runs on from it.
    public func set(_ instant: Timestamp) {
        change { s in
            s.offset = instant.microseconds - base.now().microseconds
            if s.frozenAt != nil { s.frozenAt = instant.microseconds }
        }
    }

    /// Stops time at the current instant. Idempotent.
    public func freeze() {
        change { s in
            guard s.frozenAt == nil else { return }
            s.frozenAt = base.now().microseconds + s.offset
        }
    }

    /// Lets time run again from the instant it was frozen at (no jump forward). Idempotent.
    public func unfreeze() {
        change { s in
            guard let frozenAt = s.frozenAt else { return }
            s.offset = frozenAt - base.now().microseconds
            s.frozenAt = nil
        }
    }

    /// Back to the wall clock, running.
    public func reset() {
        change { $0 = State() }
    }
}
