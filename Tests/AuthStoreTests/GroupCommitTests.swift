import Foundation
import Synchronization
import Testing
@testable import AuthStore

/// Group commit in `Database.write`: concurrent writes share a transaction, yet each behaves as
/// if it had its own.
@Suite struct GroupCommitTests {

    /// A failure carrying data, to check that a closure's own error type reaches its caller.
    struct TaggedFailure: Error, Equatable {
        let index: Int
    }

    /// What one queued write saw and got.
    struct Outcome: Sendable {
        var ranOn: UInt = 0
        var error: (any Error)?
    }

    /// Holds the writer in a write of this thread and meanwhile starts `count` threads that each
    /// call `write(index)`; once all of them are queued, runs `hold` and lets the leader finish. The queued callers therefore form the next group(s), led by one
    /// of them. Returns each caller's outcome and the thread its closure ran on.
    static func lineUp(
        _ db: Database, count: Int, alone: @escaping @Sendable (Int) -> Bool = { _ in false },
        hold: @escaping @Sendable (Connection) throws -> Void = { _ in },
        write: @escaping @Sendable (Int, Connection) throws -> Void
    ) throws -> [Outcome] {
        let outcomes = Mutex<[Outcome]>(Array(repeating: Outcome(), count: count))
        let queued = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        try db.write { connection in
            for index in 0..<count {
                group.enter()
                Thread {
                    do {
                        try db.write(alone: alone(index)) { connection in
                            outcomes.withLock { $0[index].ranOn = currentThreadIdentity() }
                            try write(index, connection)
                        }
                    } catch {
                        outcomes.withLock { $0[index].error = error }
                    }
                    group.leave()
                }.start()
            }
            Thread {
                // Poll: a queued caller sleeps inside the pool, with no hook of its own to signal.
                let deadline = Date().addingTimeInterval(30)
                while db.pool.pendingWriteCount < count && Date() < deadline { usleep(500) }
                queued.signal()
            }.start()
            queued.wait()
            try hold(connection)
            // Outlast the group's time budget, so this leader takes none of the queued writes
            // and they form groups of their own.
            let budget = ConnectionPool.maxGroupDuration.components
            usleep(2 * UInt32(budget.seconds * 1_000_000 + budget.attoseconds / 1_000_000_000_000))
        }
        group.wait()
        return outcomes.withLock { $0 }
    }

    @Test(arguments: [false, true]) func manyThreadsAllCommit(inMemory: Bool) throws {
        let dir = try TemporaryDirectory()
        let path = inMemory ? ":memory:" : dir.path("auth.db")
        let db = try Database(path: path)
        defer { db.close() }
        let threads = 16, perThread = 40
        let errors = onThreads(threads) { thread in
            for n in 0..<perThread {
                try db.write { try $0.insertUser(id: "u-\(thread)-\(n)", email: "u\(thread).\(n)@example.com") }
            }
        }
        #expect(errors.isEmpty, "\(errors)")
        #expect(try db.read { try $0.count("users") } == Int64(threads * perThread))
        if !inMemory {
            let other = try Database(path: path)
            defer { other.close() }
            #expect(try other.read { try $0.count("users") } == Int64(threads * perThread))
        }
    }

    @Test func queuedWritesShareOneLeaderThread() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"))
        defer { db.close() }
        let outcomes = try Self.lineUp(db, count: 8) { index, connection in
            try connection.insertUser(id: "u\(index)")
        }
        #expect(outcomes.allSatisfy { $0.error == nil })
        // Eight callers, each on its own thread; their closures ran on fewer threads than that,
        // because a leader ran its batch-mates' closures.
        #expect(Set(outcomes.map(\.ranOn)).count < 8)
        #expect(try db.read { try $0.count("users") } == 8)
    }

    @Test func aWriteAloneSharesNoTransaction() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"))
        defer { db.close() }
        // Every third caller asks to be alone: it leads a transaction of its own on its own
        // thread, and no batch-mate's closure runs on that thread; the others still share.
        let count = 12
        let alone: @Sendable (Int) -> Bool = { $0 % 3 == 0 }
        let outcomes = try Self.lineUp(db, count: count, alone: alone) { index, connection in
            try connection.insertUser(id: "u\(index)")
        }
        #expect(outcomes.allSatisfy { $0.error == nil })
        for index in 0..<count where alone(index) {
            #expect(outcomes.filter { $0.ranOn == outcomes[index].ranOn }.count == 1)
        }
        let shared = (0..<count).filter { !alone($0) }.map { outcomes[$0].ranOn }
        #expect(Set(shared).count < shared.count)
        #expect(try db.read { try $0.count("users") } == Int64(count))
    }

    @Test(arguments: [false, true]) func aThrowingClosureDoesNotUndoItsBatchMates(inMemory: Bool) throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: inMemory ? ":memory:" : dir.path("auth.db"))
        defer { db.close() }
        // Every third caller writes a row and then throws: its row must vanish, the others stay.
        // Which caller opens the group varies, so both the opener's path (roll back the whole
        // transaction, carry on in a new one) and a member's (ROLLBACK TO its savepoint) run.
        let count = 12
        let outcomes = try Self.lineUp(db, count: count) { index, connection in
            try connection.insertUser(id: "u\(index)")
            #expect(try connection.scalar("SELECT count(*) FROM users WHERE id = ?", .text("u\(index)")) == .integer(1))
            if index % 3 == 0 { throw TaggedFailure(index: index) }
        }
        #expect(Set(outcomes.map(\.ranOn)).count < count)
        for (index, outcome) in outcomes.enumerated() {
            if index % 3 == 0 {
                #expect((outcome.error as? TaggedFailure) == TaggedFailure(index: index))
            } else {
                #expect(outcome.error == nil)
            }
        }
        let ids = try db.read { try $0.query("SELECT id FROM users ORDER BY id") }.compactMap { $0.string("id") }
        let expected = (0..<count).filter { $0 % 3 != 0 }.map { "u\($0)" }.sorted()
        #expect(ids == expected)
        // The connection is left clean: a plain write afterwards commits.
        try db.write { try $0.insertUser(id: "after") }
        #expect(try db.read { try $0.count("users") } == Int64(expected.count + 1))
    }

    @Test func errorTypesReachTheirOwnCallerOnly() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"))
        defer { db.close() }
        try db.write { try $0.insertUser(id: "taken") }
        let outcomes = try Self.lineUp(db, count: 6) { index, connection in
            switch index {
            case 1: try connection.insertUser(id: "taken")  // StoreError: UNIQUE
            case 4: throw TaggedFailure(index: 4)
            default: try connection.insertUser(id: "u\(index)")
            }
        }
        #expect((outcomes[1].error as? StoreError)?.isUniqueViolation == true)
        #expect((outcomes[4].error as? TaggedFailure) == TaggedFailure(index: 4))
        for index in [0, 2, 3, 5] {
            #expect(outcomes[index].error == nil)
        }
        #expect(try db.read { try $0.count("users") } == 5)
    }

    @Test func nestedWritesAndReadsInsideQueuedClosures() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"))
        defer { db.close() }
        let outcomes = try Self.lineUp(db, count: 6) { index, connection in
            try connection.insertUser(id: "outer\(index)")
            // A nested write that throws undoes only itself.
            #expect(throws: TaggedFailure.self) {
                try db.write { inner in
                    try inner.insertUser(id: "discarded\(index)")
                    throw TaggedFailure(index: index)
                }
            }
            // A nested write that succeeds joins the caller's changes.
            try db.write { try $0.insertUser(id: "inner\(index)") }
            // A nested read sees the uncommitted rows of this write.
            let mine = try db.read { try $0.scalar("SELECT count(*) FROM users WHERE id IN (?, ?)", .text("outer\(index)"), .text("inner\(index)")) }
            #expect(mine == .integer(2))
            if index == 2 { throw TaggedFailure(index: 2) }  // and takes its nested write with it
        }
        #expect((outcomes[2].error as? TaggedFailure) == TaggedFailure(index: 2))
        let ids = Set(try db.read { try $0.query("SELECT id FROM users") }.compactMap { $0.string("id") })
        let expected = Set([0, 1, 3, 4, 5].flatMap { ["outer\($0)", "inner\($0)"] })
        #expect(ids == expected)
    }

    @Test func aCallerReturnsOnlyOnceANewReaderSeesItsRow() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let db = try Database(path: path)
        defer { db.close() }
        // Another instance on the same file stands in for any new reader (another server).
        let observer = try Database(path: path, options: .init(readerCount: 2))
        defer { observer.close() }
        let misses = Mutex(0)
        let errors = onThreads(8) { thread in
            for n in 0..<25 {
                let id = "u-\(thread)-\(n)"
                try db.write { try $0.insertUser(id: id) }
                // Both a fresh read transaction of another instance and one of this instance.
                let there = try observer.read { try $0.scalar("SELECT count(*) FROM users WHERE id = ?", .text(id)) }
                let here = try db.read { try $0.scalar("SELECT count(*) FROM users WHERE id = ?", .text(id)) }
                if there != .integer(1) || here != .integer(1) { misses.withLock { $0 += 1 } }
            }
        }
        #expect(errors.isEmpty, "\(errors)")
        #expect(misses.withLock { $0 } == 0)
    }

    @Test func aFailedCommitFailsEveryMemberOfItsGroup() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"))
        defer { db.close() }
        // Caller 3 leaves a deferred foreign-key violation, which SQLite reports only at COMMIT
        // (https://sqlite.org/foreignkeys.html §4.2): everyone sharing that COMMIT must fail.
        // Closures that ran on the same leader thread shared its transaction(s).
        var grouped = false
        for attempt in 0..<3 where !grouped {
            let outcomes = try Self.lineUp(db, count: 6) { index, connection in
                if index == 3 {
                    try connection.execute("PRAGMA defer_foreign_keys = ON")
                    try connection.execute(
                        "INSERT INTO sessions (id, user_id, created_at, updated_at) VALUES (?, 'nobody', 1, 1)",
                        .text("s\(attempt)"))
                } else {
                    try connection.insertUser(id: "a\(attempt)-\(index)")
                }
            }
            let failedGroup = outcomes[3].ranOn
            #expect((outcomes[3].error as? StoreError)?.isForeignKeyViolation == true)
            let present = Set(try db.read { try $0.query("SELECT id FROM users") }.compactMap { $0.string("id") })
            for (index, outcome) in outcomes.enumerated() where index != 3 {
                let committed = present.contains("a\(attempt)-\(index)")
                if outcome.ranOn == failedGroup {
                    grouped = true
                    #expect((outcome.error as? StoreError)?.isForeignKeyViolation == true)
                    #expect(!committed)
                } else {
                    #expect(outcome.error == nil)
                    #expect(committed)
                }
            }
            #expect(try db.read { try $0.count("sessions") } == 0)
        }
        #expect(grouped, "the failing write never shared a transaction in three attempts")
        // The writer is usable afterwards, with foreign keys enforced immediately again.
        #expect(throws: StoreError.self) {
            try db.write { try $0.execute("INSERT INTO sessions (id, user_id, created_at, updated_at) VALUES ('x', 'nobody', 1, 1)") }
        }
        try db.write { try $0.insertUser(id: "after") }
    }

    @Test func closeWhileWritesAreQueuedNeitherHangsNorLies() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let db = try Database(path: path)
        let closed = DispatchGroup()
        let outcomes = try Self.lineUp(db, count: 6, hold: { _ in
            closed.enter()
            Thread {
                db.close()  // waits for this leader, then refuses the queued writes
                closed.leave()
            }.start()
            // Give close() the time to mark the pool closed while this leader still runs.
            usleep(50_000)
        }) { index, connection in
            try connection.insertUser(id: "u\(index)")
        }
        closed.wait()
        let reopened = try Database(path: path)
        defer { reopened.close() }
        let ids = Set(try reopened.read { try $0.query("SELECT id FROM users") }.compactMap { $0.string("id") })
        for (index, outcome) in outcomes.enumerated() {
            if let error = outcome.error {
                #expect((error as? StoreError)?.isClosed == true)
                #expect(!ids.contains("u\(index)"))
            } else {
                #expect(ids.contains("u\(index)"))
            }
        }
    }

    @Test func writerPragmasForTheWritePath() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"))
        defer { db.close() }
        // temp_store: MEMORY = 2 (https://sqlite.org/pragma.html#pragma_temp_store), so
        // savepoint journals never spill to temporary files.
        // wal_autocheckpoint: 0, since the `Checkpointer`'s WAL hook replaced SQLite's automatic
        // checkpoint (which the pragma reports only while its own hook is installed).
        let values = try db.write { c in [try c.scalar("PRAGMA temp_store"), try c.scalar("PRAGMA wal_autocheckpoint")] }
        #expect(values == [.integer(2), .integer(0)])
        let memory = try Database(path: ":memory:")
        #expect(try memory.write { try $0.scalar("PRAGMA temp_store") } == .integer(2))
    }

    @Test func uncontendedWriteIsAPlainTransaction() throws {
        // A lone write runs directly in BEGIN IMMEDIATE … COMMIT, on the caller's own thread.
        let db = try Database(path: ":memory:")
        let me = currentThreadIdentity()
        let (ranOn, inTransaction) = try db.write { (currentThreadIdentity(), $0.isInTransaction) }
        #expect(ranOn == me)
        #expect(inTransaction)
        #expect(throws: TaggedFailure.self) {
            try db.write { c in
                try c.insertUser(id: "u1")
                throw TaggedFailure(index: 0)
            }
        }
        #expect(try db.read { try $0.count("users") } == 0)
    }
}
