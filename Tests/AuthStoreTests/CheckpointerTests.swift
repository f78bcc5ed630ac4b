import Foundation
import Testing
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

        // The WAL rewound again and again. Its file keeps its largest extent after a rewind, so
        // this is the longest the WAL ever was: past twice the threshold the writer checkpoints
        // itself, as soon as no background pass holds the checkpoint lock; a busy machine may
        // write some more frames during that pass, hence three times as the bound.
        let frameBytes = 4096 + 24
        let bound = 3 * Int(Checkpointer.threshold) * frameBytes + 32
        #expect(Int(pages) * frameBytes > bound, "the test must write more than the WAL may hold")
        #expect(counts.rewinds >= 2)
        #expect(largestWAL > 0)
        #expect(largestWAL <= bound)
        #expect(counts.background >= 1)
        #expect(counts.writer >= 1)

        // Nothing was lost, and close() still truncated the WAL.
        #expect(Self.fileSize(path + "-wal") == 0)
        let reopened = try Database(path: path)
        defer { reopened.close() }
        #expect(try reopened.read { try $0.scalar("SELECT count(*) FROM blobs").int64Value } == Int64(commits))
        #expect(try reopened.read { try $0.scalar("PRAGMA integrity_check").stringValue } == "ok")
    }

    @Test func aBarelyWrittenDatabaseRunsNoPass() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"))
        defer { db.close() }
        for index in 0..<20 {
            try db.write { try $0.insertUser(id: "u\(index)") }
        }
        #expect(db.pool.checkpointPasses.map { [$0.background, $0.writer] } == [0, 0])
        #expect(try Database(path: ":memory:").pool.checkpointPasses == nil)
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
