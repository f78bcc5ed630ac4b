import Foundation
import Testing
import CSQLite
@testable import AuthStore

@Suite struct CheckpointerTests {
    private static func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    @Test func sustainedWritesCheckpointInTheBackgroundAndTheWALRewinds() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let db = try Database(path: path)
        try db.write { try $0.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)") }
        // Each commit appends a leaf and three overflow pages (16,000 bytes: ~3,700 in the
        // cell, the rest on overflow pages of 4,092): ~16,000 frames in all, four times what
        // the WAL holds before the writer finishes a checkpoint.
        let commits = 4000
        var largestWAL = 0
        for index in 0..<commits {
            try db.write { try $0.execute("INSERT INTO blobs (data) VALUES (randomblob(16000))") }
            if index % 20 == 0 { largestWAL = max(largestWAL, Self.fileSize(path + "-wal")) }
        }
        let pages = try db.read { try $0.scalar("PRAGMA page_count").int64Value ?? 0 }
        let counts = try #require(db.pool.checkpointPasses)
        db.close()

        // The WAL rewound again and again: checkpoints ran (in the background, and by the writer
        // past twice the threshold) and the WAL started over after them, so it never held
        // every commit. Its file keeps its largest extent after a rewind, so this is the longest
        // the WAL ever was. How long depends on how soon the background pass gets the CPU on
        // a busy machine (the writer's own attempt waits while a pass holds the checkpoint
        // lock), so no tighter bound is asserted here; bench/ measures it.
        let frameBytes = 4096 + 24
        let written = Int(pages) * frameBytes
        #expect(written > 3 * Int(Checkpointer.threshold) * frameBytes, "the test must write more than the WAL may hold")
        #expect(counts.rewinds >= 2)
        #expect(largestWAL > 0)
        #expect(largestWAL < written)
        #expect(counts.background >= 1)
        #expect(counts.writer >= 1)

        // Nothing was lost, and close() still truncated the WAL.
        #expect(Self.fileSize(path + "-wal") == 0)
        let reopened = try Database(path: path)
        defer { reopened.close() }
        #expect(try reopened.read { try $0.scalar("SELECT count(*) FROM blobs").int64Value } == Int64(commits))
        #expect(try reopened.read { try $0.scalar("PRAGMA integrity_check").stringValue } == "ok")
    }

    /// Waits until `condition` holds and says whether it did (the deadline only guards against
    /// a hang).
    private static func eventually(_ condition: () -> Bool) -> Bool {
        waitUntil(condition)
    }

    @Test func theWriterTakesOverWhenPassesFail() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let db = try Database(path: path)
        defer { db.close() }
        // Every pass fails: a connection inside a transaction cannot checkpoint (SQLITE_LOCKED).
        let checkpointer = Checkpointer { () throws(StoreError) -> Connection in
            let connection = try Connection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
            try connection.execute("BEGIN")
            _ = try connection.scalar("SELECT count(*) FROM sqlite_master")
            return connection
        }
        defer { checkpointer.stop() }
        let threshold = Checkpointer.threshold
        #expect(!checkpointer.committed(frames: Checkpointer.step))  // asks for a pass
        #expect(Self.eventually { checkpointer.passCounts.background == 1 })
        // Past the threshold with no pass finished: one more pass, not the writer…
        #expect(!checkpointer.committed(frames: threshold))
        #expect(Self.eventually { checkpointer.passCounts.background == 2 })
        #expect(!checkpointer.committed(frames: 2 * threshold - 1))
        // …until twice the threshold, where it checkpoints as SQLite's automatic one would.
        #expect(checkpointer.committed(frames: 2 * threshold))
        #expect(checkpointer.passCounts.writer == 1)
    }

    @Test func theWriterCheckpointsAloneWhenTheThreadCannotOpenItsConnection() throws {
        let release = DispatchSemaphore(value: 0)
        let checkpointer = Checkpointer { () throws(StoreError) -> Connection in
            release.wait()
            throw StoreError(code: SQLITE_CANTOPEN, message: "unable to open database file")
        }
        let threshold = Checkpointer.threshold
        #expect(!checkpointer.committed(frames: Checkpointer.step))  // starts the thread
        // While the pass counts as asked for, the writer leaves it be below twice the threshold.
        #expect(!checkpointer.committed(frames: threshold))
        release.signal()
        // Once the thread gave up: the writer's own checkpoint at the threshold, as in SQLite.
        #expect(Self.eventually { checkpointer.committed(frames: threshold) })
        #expect(!checkpointer.committed(frames: threshold - 1))
        #expect(checkpointer.committed(frames: threshold))
        checkpointer.stop()
        #expect(checkpointer.passCounts.background == 0)
    }

    @Test func aBarelyWrittenDatabaseRunsNoPass() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"))
        defer { db.close() }
        for index in 0..<20 {
            try db.write { try $0.insertUser(id: "u\(index)") }
        }
        #expect(db.pool.checkpointPasses.map { [$0.background, $0.writer, $0.idle] } == [0, 0, 0])
        #expect(try Database(path: ":memory:").pool.checkpointPasses == nil)
    }

    /// Writes ~4 frames per commit until the checkpoint thread ran a pass (1,000 frames).
    private static func burst(_ db: Database) throws -> Int {
        try db.write { try $0.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)") }
        var commits = 0
        while (db.pool.checkpointPasses?.background ?? 0) < 1 && commits < 5000 {
            try db.write { try $0.execute("INSERT INTO blobs (data) VALUES (randomblob(12000))") }
            commits += 1
        }
        #expect(commits < 5000)
        return commits
    }

    private static func allCopied(_ db: Database) -> Bool {
        db.pool.copyProgress.map { $0.commits == $0.copiedThrough } ?? false
    }

    /// A write small enough that it cannot ask for a pass right after a rewind, nor (checked
    /// by the callers through the WAL's progress) leave one running.
    private static func small(_ db: Database) throws {
        try db.write { try $0.execute("INSERT INTO blobs (data) VALUES (randomblob(100))") }
    }

    /// After a burst of writes, a pause lets the thread copy what is left in the WAL: one idle
    /// pass per pause. The next write then rewinds the WAL, which SQLite does only when every
    /// frame was copied.
    @Test func aPauseAfterABurstCopiesTheRestOfTheWAL() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"), options: DatabaseOptions(idleCheckpointMilliseconds: 100))
        defer { db.close() }
        let commits = try Self.burst(db)
        // Whatever the burst's passes left, the pause after it copies.
        #expect(Self.eventually { Self.allCopied(db) })
        // So this write starts a new WAL, with frames no pass copied and none asked for.
        var counts = try #require(db.pool.checkpointPasses)
        try Self.small(db)
        #expect(db.pool.checkpointPasses?.rewinds == counts.rewinds + 1)
        counts = try #require(db.pool.checkpointPasses)
        #expect(!Self.allCopied(db))

        #expect(Self.eventually { db.pool.checkpointPasses?.idle == counts.idle + 1 })
        #expect(Self.allCopied(db))
        // One pass per pause: nothing new to copy, so no second one.
        Thread.sleep(forTimeInterval: 0.35)
        #expect(db.pool.checkpointPasses?.idle == counts.idle + 1)
        try Self.small(db)
        #expect(!Self.allCopied(db))
        #expect(Self.eventually { db.pool.checkpointPasses?.idle == counts.idle + 2 && Self.allCopied(db) })
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM blobs").int64Value } == Int64(commits + 2))
        #expect(try db.read { try $0.scalar("PRAGMA integrity_check").stringValue } == "ok")
    }

    /// Without idle passes (nil), a pause leaves the frames in the WAL: the next write appends.
    @Test func withoutIdlePassesAPauseLeavesTheWAL() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"), options: DatabaseOptions(idleCheckpointMilliseconds: nil))
        defer { db.close() }
        _ = try Self.burst(db)
        Thread.sleep(forTimeInterval: 0.3)
        try Self.small(db)
        Thread.sleep(forTimeInterval: 0.3)
        if Self.allCopied(db) {
            // A pass asked for during the burst copied everything: start a new WAL.
            try Self.small(db)
            Thread.sleep(forTimeInterval: 0.3)
        }
        #expect(!Self.allCopied(db))
        let counts = try #require(db.pool.checkpointPasses)
        try Self.small(db)
        #expect(db.pool.checkpointPasses?.rewinds == counts.rewinds)
        #expect(db.pool.checkpointPasses?.idle == 0)
    }

    @Test func closeDuringBackgroundPassesLosesNothing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let db = try Database(path: path)
        try db.write { try $0.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)") }
        // Writers on several threads until a background pass has run, then close at once:
        // close() waits for the pass under way, stops the thread and truncates the WAL.
        let errors = onThreads(4) { _ in
            for _ in 0..<400 {
                try db.write { try $0.execute("INSERT INTO blobs (data) VALUES (randomblob(12000))") }
            }
        }
        #expect(errors.isEmpty)
        #expect((db.pool.checkpointPasses?.background ?? 0) >= 1)
        db.close()
        #expect(Self.fileSize(path + "-wal") == 0)
        let reopened = try Database(path: path)
        defer { reopened.close() }
        #expect(try reopened.read { try $0.scalar("SELECT count(*) FROM blobs").int64Value } == 1600)
    }
}
