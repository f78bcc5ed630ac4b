import Foundation
import Synchronization
import Testing
@testable import AuthStore

@Suite struct DatabaseTests {
    @Test func opensInMemory() throws {
        let db = try Database(path: ":memory:")
        #expect(db.isInMemory)
        #expect(db.path == ":memory:")
        let tables = try db.read { try $0.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") }
            .compactMap { $0.string("name") }
        #expect(tables.contains("users"))
        #expect(tables.contains("flow_state"))
        #expect(try db.read { try $0.scalar("PRAGMA foreign_keys") } == .integer(1))
    }

    @Test func eachInMemoryInstanceIsIsolated() throws {
        let a = try Database(path: ":memory:")
        let b = try Database(path: ":memory:")
        try a.write { try $0.insertUser(id: "u1") }
        #expect(try a.read { try $0.count("users") } == 1)
        #expect(try b.read { try $0.count("users") } == 0)
    }

    @Test func fileDatabasePragmasOnEveryConnection() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"), options: .init(readerCount: 3))
        defer { db.close() }
        #expect(!db.isInMemory)
        let writer = try db.write { c in
            [try c.scalar("PRAGMA journal_mode"), try c.scalar("PRAGMA foreign_keys"),
             try c.scalar("PRAGMA synchronous"), try c.scalar("PRAGMA busy_timeout")]
        }
        // synchronous: NORMAL = 1 (https://sqlite.org/pragma.html#pragma_synchronous).
        #expect(writer == [.text("wal"), .integer(1), .integer(1), .integer(5000)])

        // Hold three readers at once so each pooled connection is checked, not one reused.
        let seen = Mutex<[[SQLValue]]>([])
        let gate = DispatchSemaphore(value: 0)
        let errors = onThreads(3) { _ in
            try db.read { c in
                let values = [try c.scalar("PRAGMA journal_mode"), try c.scalar("PRAGMA foreign_keys"),
                              try c.scalar("PRAGMA synchronous"), try c.scalar("PRAGMA query_only"),
                              try c.scalar("PRAGMA mmap_size")]
                let total = seen.withLock { $0.append(values); return $0.count }
                if total == 3 { for _ in 0..<3 { gate.signal() } }
                gate.wait()  // keep this reader checked out until all three ran
            }
        }
        #expect(errors.isEmpty)
        let readers = seen.withLock { $0 }
        #expect(readers.count == 3)
        for values in readers {
            // mmap_size: SQLite caps it at its compile-time SQLITE_MAX_MMAP_SIZE (2 GiB on Linux
            // builds), so the full 1 GiB is what a reader reports there.
            #if os(Linux)
            #expect(values == [.text("wal"), .integer(1), .integer(1), .integer(1), .integer(Int64(1 << 30))])
            #else
            #expect(Array(values.prefix(4)) == [.text("wal"), .integer(1), .integer(1), .integer(1)])
            #endif
        }
    }

    /// A bulk write's larger page cache holds for its body only, even when the body throws.
    @Test func pageCacheIsRaisedForTheBodyOnly() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"))
        defer { db.close() }
        let inside = try db.write { c in
            try c.withPageCache(kibibytes: 65536) { () throws(StoreError) -> SQLValue in try c.scalar("PRAGMA cache_size") }
        }
        #expect(inside == .integer(-65536))
        #expect(try db.write { c in try c.scalar("PRAGMA cache_size") } == .integer(-1024))
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try db.write { c in try c.withPageCache(kibibytes: 4096) { () throws -> Void in throw Boom() } }
        }
        #expect(try db.write { c in try c.scalar("PRAGMA cache_size") } == .integer(-1024))
        // Never below the default.
        #expect(try db.write { c in try c.withPageCache(kibibytes: 16) { () throws(StoreError) -> SQLValue in try c.scalar("PRAGMA cache_size") } }
            == .integer(-1024))
    }

    @Test func openFailsClearlyWhenDirectoryIsMissing() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("missing/sub/auth.db")
        do {
            _ = try Database(path: path)
            Issue.record("expected the open to fail")
        } catch {
            #expect(error.primaryCode == 14)  // SQLITE_CANTOPEN
            #expect(error.message.contains(path))
        }
        #expect(throws: StoreError.self) { try Database(path: "") }
    }

    @Test func writeCommits() throws {
        let db = try Database(path: ":memory:")
        let changed = try db.write { c in
            try c.insertUser(id: "u1", email: "a@example.com")
            return c.changes
        }
        #expect(changed == 1)
        #expect(try db.read { try $0.scalar("SELECT email FROM users WHERE id = 'u1'") } == .text("a@example.com"))
    }

    @Test(arguments: [true, false]) func writeRollsBackOnThrowAndStaysUsable(inMemory: Bool) throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: inMemory ? ":memory:" : dir.path("auth.db"))
        defer { db.close() }
        #expect(throws: ExpectedFailure.self) {
            try db.write { c in
                try c.insertUser(id: "u1")
                #expect(try c.count("users") == 1)
                throw ExpectedFailure()
            }
        }
        #expect(try db.read { try $0.count("users") } == 0)
        // A failing statement also rolls back the statements before it.
        #expect(throws: StoreError.self) {
            try db.write { c in
                try c.insertUser(id: "u2")
                try c.insertUser(id: "u2")
            }
        }
        #expect(try db.read { try $0.count("users") } == 0)
        try db.write { try $0.insertUser(id: "u3") }
        #expect(try db.read { try $0.count("users") } == 1)
        #expect(try db.write { $0.isInTransaction })
    }

    @Test func readRefusesWrites() throws {
        for path in [":memory:", nil] as [String?] {
            let dir = try TemporaryDirectory()
            let db = try Database(path: path ?? dir.path("auth.db"))
            defer { db.close() }
            do {
                try db.read { try $0.insertUser(id: "u1") }
                Issue.record("a write inside read must fail")
            } catch let error as StoreError {
                #expect(error.primaryCode == 8)  // SQLITE_READONLY
            }
            #expect(try db.read { try $0.count("users") } == 0)
            try db.write { try $0.insertUser(id: "u1") }  // the writer still writes afterwards
        }
    }

    @Test func nestedWriteUsesSavepoint() throws {
        let db = try Database(path: ":memory:")
        try db.write { c in
            try c.insertUser(id: "outer")
            try db.write { try $0.insertUser(id: "inner-kept") }
            #expect(throws: ExpectedFailure.self) {
                try db.write { c in
                    try c.insertUser(id: "inner-undone")
                    throw ExpectedFailure()
                }
            }
            // A read nested in a write sees the transaction's own changes.
            #expect(try db.read { try $0.count("users") } == 2)
        }
        let ids = try db.read { try $0.query("SELECT id FROM users ORDER BY id") }.compactMap { $0.string("id") }
        #expect(ids == ["inner-kept", "outer"])
        // With the single :memory: connection, a write nested in a read is a savepoint that the
        // read's transaction commits.
        try db.read { c in
            try db.write { try $0.insertUser(id: "from-read") }
            #expect(try c.count("users") == 3)
            #expect(throws: StoreError.self) { try c.insertUser(id: "still-read-only") }
        }
        #expect(try db.read { try $0.count("users") } == 3)
    }

    @Test func nestingOnFileDatabase() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"), options: .init(readerCount: 1))
        defer { db.close() }
        try db.write { c in
            try c.insertUser(id: "u1")
            #expect(try db.read { try $0.count("users") } == 1)  // the writer's own view
        }
        try db.read { outer in
            #expect(try outer.count("users") == 1)
            // With one reader, a nested read must reuse it rather than wait for itself.
            #expect(try db.read { try $0.count("users") } == 1)
            // A write from inside a read commits on the writer; the read keeps its snapshot.
            try db.write { try $0.insertUser(id: "u2") }
            #expect(try outer.count("users") == 1)
        }
        #expect(try db.read { try $0.count("users") } == 2)
    }

    @Test func inMemorySharedByConcurrentThreads() throws {
        let db = try Database(path: ":memory:")
        let threads = 8, writesPerThread = 200
        let errors = onThreads(threads) { thread in
            for n in 0..<writesPerThread {
                try db.write { try $0.insertUser(id: "t\(thread)-\(n)") }
                if n % 50 == 0 { _ = try db.read { try $0.count("users") } }
            }
        }
        #expect(errors.isEmpty)
        #expect(try db.read { try $0.count("users") } == Int64(threads * writesPerThread))
    }

    @Test func fileDatabaseConcurrentReadersAndWriters() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("auth.db"), options: .init(readerCount: 2))
        defer { db.close() }
        let errors = onThreads(6) { thread in
            for n in 0..<50 {
                if thread % 2 == 0 {
                    try db.write { try $0.insertUser(id: "t\(thread)-\(n)") }
                } else {
                    try db.read { c in
                        // One snapshot: two counts in the same read agree even while writers run.
                        let first = try c.count("users")
                        let second = try c.count("users")
                        if first != second { throw ExpectedFailure() }
                    }
                }
            }
        }
        #expect(errors.isEmpty)
        #expect(try db.read { try $0.count("users") } == 150)
    }

    @Test func twoInstancesOnOneFileSeeEachOthersCommits() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let a = try Database(path: path)
        let b = try Database(path: path)
        defer { a.close(); b.close() }
        // Warm b's reader and its cached statement first, so a stale cache would show.
        #expect(try b.read { try $0.count("users") } == 0)
        try a.write { try $0.insertUser(id: "u1", email: "x@example.com") }
        #expect(try b.read { try $0.count("users") } == 1)
        try b.write { try $0.execute("UPDATE users SET email = ? WHERE id = ?", "y@example.com", "u1") }
        #expect(try a.read { try $0.scalar("SELECT email FROM users WHERE id = 'u1'") } == .text("y@example.com"))
    }

    @Test func closeThenUseThrows() throws {
        let dir = try TemporaryDirectory()
        for path in [":memory:", dir.path("auth.db")] {
            let db = try Database(path: path)
            try db.write { try $0.insertUser(id: "u1") }
            _ = try db.read { try $0.count("users") }
            // The close says what became of the WAL (`serve` prints it when it stops).
            #expect(db.close() == (path == ":memory:" ? .inMemory : .checkpointed))
            #expect(db.close() == .alreadyClosed)  // idempotent
            do {
                try db.write { try $0.insertUser(id: "u2") }
                Issue.record("write after close must throw")
            } catch let error as StoreError {
                #expect(error.isClosed)
            }
            #expect(throws: StoreError.self) { try db.read { try $0.count("users") } }
            #expect(throws: StoreError.self) { try db.appliedMigrations }
        }
    }

    @Test func closeWaitsForInFlightWorkAndTruncatesWAL() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let db = try Database(path: path)
        let started = DispatchSemaphore(value: 0)
        let finished = Mutex(false)
        let thread = Thread {
            try? db.write { c in
                started.signal()
                Thread.sleep(forTimeInterval: 0.2)
                try c.insertUser(id: "late")
                finished.withLock { $0 = true }
            }
        }
        thread.start()
        started.wait()
        db.close()
        #expect(finished.withLock { $0 })
        // The in-flight write committed before close, and the WAL was checkpointed into the file.
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)
        let reopened = try Database(path: path)
        defer { reopened.close() }
        #expect(try reopened.read { try $0.count("users") } == 1)
    }

    @Test func busyTimeoutCoversBeginImmediate() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let holder = try Database(path: path)
        let impatient = try Database(path: path, options: .init(busyTimeoutMilliseconds: 50))
        let patient = try Database(path: path, options: .init(busyTimeoutMilliseconds: 60_000))
        defer { holder.close(); impatient.close(); patient.close() }
        // The holder keeps the write lock until the test lets it go, so the impatient write
        // meets it held however slowly this thread gets there.
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? holder.write { c in
                try c.insertUser(id: "holder")
                locked.signal()
                _ = release.wait(timeout: .now() + 60)
            }
        }
        thread.start()
        locked.wait()
        do {
            try impatient.write { try $0.insertUser(id: "impatient") }
            Issue.record("the write lock is held elsewhere; a 50 ms timeout must give up")
        } catch let error as StoreError {
            #expect(error.isBusy)
            #expect(error.code == 5)  // SQLITE_BUSY from BEGIN IMMEDIATE
        }
        // Readers are not blocked by the writer in WAL mode (they see the last commit).
        #expect(try impatient.read { try $0.count("users") } == 0)
        // A longer timeout waits for the holder to commit, then writes. The holder lets go a
        // moment after the patient write began waiting (this pause is the scenario; the
        // outcome does not depend on it).
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.3)
            release.signal()
        }
        try patient.write { try $0.insertUser(id: "patient") }
        #expect(try patient.read { try $0.count("users") } == 2)
    }
}
