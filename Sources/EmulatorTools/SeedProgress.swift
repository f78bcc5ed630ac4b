import GoTrue
import Synchronization

/// How far a running seed has got, for a console to show while it works (`serve --seed`).
/// The seeder only stores counters (a relaxed atomic write per chunk of rows, nothing per row);
/// the reader polls them on its own schedule, so showing progress costs the seed nothing
/// measurable and a slow terminal can never hold it up.
public final class SeedProgress: Sendable {
    private let totalCount = Atomic<Int>(0)
    private let passwordCount = Atomic<Int>(0)
    private let hashedCount = Atomic<Int>(0)
    private let writtenCount = Atomic<Int>(0)
    private let cancelled = Atomic<Bool>(false)

    public init() {}

    /// Users in the fixture (0 until it has been parsed).
    public var total: Int { totalCount.load(ordering: .relaxed) }
    /// Entries with a password to hash (0 until known, and for a fixture without any).
    public var passwords: Int { passwordCount.load(ordering: .relaxed) }
    /// Passwords hashed so far (they are hashed ahead of the writer, on every core).
    public var hashed: Int { hashedCount.load(ordering: .relaxed) }
    /// Users written so far (inside the seed's one transaction: none is visible before the end).
    public var written: Int { writtenCount.load(ordering: .relaxed) }

    /// Asks the seed to stop as soon as it can (a signal while `serve --seed` runs): hashing
    /// stops after the pair of passwords in hand, the writer within 1,024 rows, and the seed's
    /// one transaction rolls back, so nothing of it is kept (`Seeder.interrupted`).
    public func cancel() { cancelled.store(true, ordering: .relaxed) }
    public var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    func begin(total: Int) { totalCount.store(total, ordering: .relaxed) }
    func beginHashing(_ count: Int) { passwordCount.store(count, ordering: .relaxed) }
    func addHashed(_ count: Int) { hashedCount.add(count, ordering: .relaxed) }
    func setWritten(_ count: Int) { writtenCount.store(count, ordering: .relaxed) }
}
