import Testing
@testable import AuthStore

/// Cached statements keep their result column names between executions; a schema change that
/// re-prepares a statement must show up in the names (https://sqlite.org/c3ref/prepare.html).
@Suite struct StatementCacheTests {
    @Test func columnNamesFollowASchemaChange() throws {
        let db = try Database(path: ":memory:", migrations: [])
        try db.write { c in
            try c.execute("CREATE TABLE t (a INTEGER, b TEXT)")
            try c.execute("INSERT INTO t VALUES (1, 'x')")
        }
        let before = try #require(try db.read { try $0.queryFirst("SELECT * FROM t") })
        #expect(before.columns == ["a", "b"])
        let again = try #require(try db.read { try $0.queryFirst("SELECT * FROM t") })
        #expect(again.columns == ["a", "b"])
        #expect(again.int64("a") == 1)

        try db.write { c in try c.execute("ALTER TABLE t ADD COLUMN c TEXT DEFAULT 'new'") }
        let after = try #require(try db.read { try $0.queryFirst("SELECT * FROM t") })
        #expect(after.columns == ["a", "b", "c"])
        #expect(after.string("c") == "new")
        #expect(after.string("b") == "x")
    }

    @Test func schemaChangeFromAnotherConnection() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let first = try Database(path: path, migrations: [])
        defer { first.close() }
        try first.write { c in
            try c.execute("CREATE TABLE t (a INTEGER)")
            try c.execute("INSERT INTO t VALUES (7)")
        }
        #expect(try first.read { try $0.queryFirst("SELECT * FROM t")?.columns } == ["a"])
        #expect(try first.write { try $0.queryFirst("SELECT * FROM t")?.columns } == ["a"])

        // Another instance (as another process would) renames the column and adds one.
        let second = try Database(path: path, migrations: [])
        try second.write { c in
            try c.execute("ALTER TABLE t RENAME COLUMN a TO z")
            try c.execute("ALTER TABLE t ADD COLUMN y INTEGER DEFAULT 3")
        }
        second.close()

        let read = try #require(try first.read { try $0.queryFirst("SELECT * FROM t") })
        #expect(read.columns == ["z", "y"])
        #expect(read.int64("z") == 7 && read.int64("y") == 3)
        #expect(read["a"] == .null)
        let written = try #require(try first.write { try $0.queryFirst("SELECT * FROM t") })
        #expect(written.columns == ["z", "y"])
    }

    @Test func duplicateNamesResolveToTheFirstOnEveryExecution() throws {
        let db = try Database(path: ":memory:", migrations: [])
        for _ in 0..<3 {
            let row = try #require(try db.read { try $0.queryFirst("SELECT 1 AS v, 2 AS v, 3 AS w") })
            #expect(row.columns == ["v", "v", "w"])
            #expect(row.int64("v") == 1)
            #expect(row.int64("w") == 3)
        }
    }

    @Test func refreshUpdateLeavesOtherSessionColumnsAlone() throws {
        let db = try Database(path: ":memory:")
        let stored = try db.write { c -> SessionRecord? in
            try c.execute("INSERT INTO users (id, created_at, updated_at) VALUES ('u1', 1, 1)")
            var s = SessionRecord(id: "s1", userID: "u1", at: 10)
            s.factorID = "f1"
            s.aal = "aal2"
            s.notAfter = 99
            s.tag = "t"
            s.userAgent = "old"
            s.ip = "1.1.1.1"
            try c.insertSession(s)
            try c.updateSessionRefresh(id: "s1", refreshedAt: 50, updatedAt: 51, userAgent: nil, ip: "2.2.2.2")
            return try c.session(id: "s1")
        }
        let s = try #require(stored)
        #expect(s.refreshedAt == 50 && s.updatedAt == 51)
        #expect(s.userAgent == nil && s.ip == "2.2.2.2")
        #expect(s.createdAt == 10 && s.factorID == "f1" && s.aal == "aal2" && s.notAfter == 99 && s.tag == "t")
    }
}
