import AuthPlatform
import AuthStore
import Synchronization

/// Hook calls kept out of the SQLite writer (design §4: no network I/O while it is held).
///
/// GoTrue calls the custom-access-token, send-email and send-SMS hooks inside its database
/// transaction, so a hook's refusal rolls the whole change back, and Postgres lets every other
/// transaction go on meanwhile. Here all writes share one writer: a hook called inside a write
/// would stall every other write for up to the hook's 5 s deadline. So a write whose closure
/// reaches a hook runs in rounds (`Core.write`):
/// 1. the closure runs in a transaction up to the hook call; the call's payload is kept and the
///    transaction rolled back;
/// 2. the hook is called with no lock held;
/// 3. the closure runs again in a new transaction, where the hook call returns the recorded
///    answer (or throws the recorded error, rolling everything back as GoTrue's transaction
///    would) provided the payload it builds is byte for byte the one sent. That is the re-check:
///    a different payload means another write changed what the hook saw, and the hook is called
///    again with the new one.
///
/// The closure's clock readings and random draws (an OTP, a session id, the payload's metadata
/// id) are recorded in the first round and replayed in the next, so the payload, and what gets
/// committed, is what the hook was shown. A closure keeps no state across rounds by
/// construction: it is `@Sendable`, so it cannot assign a variable it captured, and returns
/// everything its response needs; what it produces outside the database goes on its round's
/// `WriteRound`, which starts empty each round and is published only for the round that commits.
///
/// `AUTH_EMULATOR_WRITES_TWICE=1` (a test switch, docs/tests.md) runs every write in rounds and
/// throws the first round that reaches its end away (rolled back, its `WriteRound` dropped), as
/// if it had stopped at a hook call, so a write that would leak state into the next round
/// fails the test suite with no hook configured.
///
/// Two limits keep this GoTrue's single snapshot:
/// - A hook with an effect outside the database (send-email, send-SMS: the app's mailer) is called
///   at most once per write, and only for the round that commits. Its write runs its rounds under
///   the project's `hookEffects` lock and the round before the call is run again under it, so
///   the send limits are checked again first (a write that would answer 429 calls nothing), and
///   no other mail-sending write can change them before the commit. Its answer then stands even if
///   a write of another kind changed the payload meanwhile: GoTrue's transaction also showed its
///   hook the user as read once.
/// - A hook without such an effect is asked again when what it is shown changed, up to
///   `maxCalls`; past that its last answer stands (the snapshot it saw), instead of failing a
///   sign-in because the user's metadata keeps changing.
package final class WriteRounds: @unchecked Sendable {
    // @unchecked: one write's rounds run one after another; the closure may run on the group
    // commit leader's thread while the caller's thread sleeps, never on both at once.

    /// The rounds whose closure is running on this thread, if any.
    private static let running = ThreadLocal<WriteRounds?> { nil }

    /// Rounds running on any thread: without hooks, the clock and the random source skip the
    /// thread-local lookup with one relaxed load.
    private static let runningAnywhere = Atomic<Int>(0)

    static var current: WriteRounds? {
        if runningAnywhere.load(ordering: .relaxed) == 0 { return nil }
        return running.withValue { $0 }
    }

    /// A hook call the closure needs before it can finish.
    struct Pending {
        let name: String
        let payload: [UInt8]
        let call: () -> Result<[UInt8]?, AuthError>
    }

    private enum Draw {
        case time(Timestamp)
        case bytes([UInt8])
        case flag(Bool)
    }

    private struct Exchange {
        let name: String
        let payload: [UInt8]
        var outcome: Result<[UInt8]?, AuthError>
    }

    private var tape: [Draw] = []
    private var position = 0
    private var exchanges: [Exchange] = []
    private var exchangeIndex = 0
    private var pendingCall: Pending?
    /// Hook calls made for this write so far.
    private(set) var calls = 0
    /// The next round to reach its end is thrown away (`writesTwice`).
    private var rehearsing: Bool
    /// The last round reached its end and was thrown away.
    private var rehearsed = false

    init(rehearsing: Bool) {
        self.rehearsing = rehearsing
    }

    /// `AUTH_EMULATOR_WRITES_TWICE`: every write runs one thrown-away round before the one that
    /// commits. True values as Go's strconv.ParseBool reads them, the syntax of the emulator's
    /// other boolean variables. Read once, the first time a write asks.
    static let writesTwice: Bool = {
        switch environmentValue(writesTwiceVariable) {
        case "1", "t", "T", "TRUE", "true", "True": return true
        default: return false
        }
    }()

    package static let writesTwiceVariable = "AUTH_EMULATOR_WRITES_TWICE"

    /// The most hook calls one write may make: each hook point at most once per write, plus a
    /// few re-calls when concurrent writes keep changing what a hook is shown.
    static let maxCalls = 8

    /// The hooks whose call has an effect outside the database (`Hooks.Name` raw values).
    static let outsideEffects: Set<String> = ["send-email", "send-sms"]

    /// What a closure throws to end a round early (its transaction rolls back); `Core.write`
    /// recognises it by `pendingCall`, whatever error reached it.
    static let deferred = AuthError(500, .unexpectedFailure, "hook call deferred until the writer is free")

    /// Runs one round of the closure on this thread.
    func round<T>(_ body: () throws -> T) throws -> T {
        position = 0
        exchangeIndex = 0
        pendingCall = nil
        let previous = WriteRounds.running.withValue { slot -> WriteRounds? in
            let previous = slot
            slot = self
            return previous
        }
        WriteRounds.runningAnywhere.add(1, ordering: .relaxed)
        defer {
            WriteRounds.running.withValue { $0 = previous }
            WriteRounds.runningAnywhere.subtract(1, ordering: .relaxed)
        }
        let value = try body()
        // A closure that swallowed the deferral (`try?`) must not commit a half-run write.
        if pendingCall != nil { throw WriteRounds.deferred }
        if rehearsing {
            rehearsing = false
            rehearsed = true
            throw WriteRounds.deferred
        }
        return value
    }

    /// Takes the hook call the last round stopped at, if it stopped at one.
    func takePending() -> Pending? {
        defer { pendingCall = nil }
        return pendingCall
    }

    /// Whether the last round was the thrown-away one of `writesTwice` (asked once).
    func takeRehearsal() -> Bool {
        defer { rehearsed = false }
        return rehearsed
    }

    /// Whether the running round has stopped at a hook call: the error a closure catches then is
    /// that deferral, which one that logs and swallows failures (the account-change notices)
    /// must not report, as the round ends there anyway.
    static var deferring: Bool {
        current?.pendingCall != nil
    }

    /// Records a hook's answer for the next round.
    func record(_ call: Pending, outcome: Result<[UInt8]?, AuthError>) {
        calls += 1
        exchanges.append(Exchange(name: call.name, payload: call.payload, outcome: outcome))
    }

    /// The hook call the closure makes now: the recorded outcome when the hook already answered
    /// this very payload, else the round ends here (`deferred`) and `call` runs after it.
    func answer(name: String, payload: [UInt8],
                call: @escaping () -> Result<[UInt8]?, AuthError>) throws(AuthError) -> [UInt8]? {
        if exchangeIndex < exchanges.count {
            let recorded = exchanges[exchangeIndex]
            let standing = WriteRounds.outsideEffects.contains(name) || calls >= WriteRounds.maxCalls
            if recorded.name == name && (recorded.payload == payload || standing) {
                exchangeIndex += 1
                return try recorded.outcome.get()
            }
            // The re-check failed: what the hook saw has changed. Forget this answer and those
            // after it, and ask again.
            exchanges.removeSubrange(exchangeIndex...)
        }
        pendingCall = Pending(name: name, payload: payload, call: call)
        throw WriteRounds.deferred
    }

    // MARK: the tape

    func time(_ live: () -> Timestamp) -> Timestamp {
        replay(live, as: Draw.time) { if case .time(let t) = $0 { t } else { nil } }
    }

    func bytes(_ count: Int, _ live: () -> [UInt8]) -> [UInt8] {
        replay(live, as: Draw.bytes) { if case .bytes(let b) = $0, b.count == count { b } else { nil } }
    }

    /// `flag` inside a write's rounds, else `live()`.
    static func once(_ live: () -> Bool) -> Bool {
        if let rounds = current { return rounds.flag(live) }
        return live()
    }

    /// A decision with a side effect outside the database (the in-memory send limiters), taken
    /// once per write however many rounds it takes.
    func flag(_ live: () -> Bool) -> Bool {
        replay(live, as: Draw.flag) { if case .flag(let f) = $0 { f } else { nil } }
    }

    /// The draw recorded at `position` when it is of the kind asked for; else a live one, which
    /// replaces what was recorded from here on (the closure took another path than last round).
    private func replay<T>(_ live: () -> T, as draw: (T) -> Draw, _ recorded: (Draw) -> T?) -> T {
        if position < tape.count, let value = recorded(tape[position]) {
            position += 1
            return value
        }
        let value = live()
        if position < tape.count { tape.removeSubrange(position...) }
        tape.append(draw(value))
        position += 1
        return value
    }
}

/// What one round of a write produces outside the database: the mechanism (`Core.write`) hands
/// each round a fresh one and, once that round's transaction has committed, publishes it; a
/// round that is rolled back (a hook call to make first, a `writesTwice` rehearsal, an error)
/// is dropped with its scope. So a closure queues its effects here instead of applying them.
package struct WriteRound {
    /// Messages the round captured into the outbox table (`Mailer`).
    private(set) var messages: [OutboxRecord] = []

    /// Queues a captured message; the outbox observer hears of it once its row has committed.
    package mutating func send(_ message: OutboxRecord) {
        messages.append(message)
    }

    /// After the commit: what the round queued takes effect.
    func publish(to project: Project) {
        project.outbox.delivered(messages)
    }
}
