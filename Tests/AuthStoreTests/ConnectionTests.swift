import Testing
@testable import AuthStore

@Suite struct ConnectionTests {
    @Test func valuesRoundTrip() throws {
        let db = try Database(path: ":memory:", migrations: [])
        let row = try db.write { c -> Row? in
            try c.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT, e TEXT, z BLOB, nul TEXT)")
            try c.execute(
                "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                .integer(Int64.min), 0.5, "héllo ✓", .blob([0, 1, 255]), nil, "", .blob([]), .text("a\u{0}b"))
            return try c.queryFirst("SELECT * FROM t")
        }
        let r = try #require(row)
        #expect(r.columns == ["i", "r", "s", "b", "n", "e", "z", "nul"])
        #expect(r.int64("i") == Int64.min)
        #expect(r.double("r") == 0.5)
        #expect(r.string("s") == "héllo ✓")
        #expect(r.blob("b") == [0, 1, 255])
        #expect(r["n"] == .null)
        // '' stays '' (not NULL), an empty blob stays a blob, embedded NUL survives.
        #expect(r["e"] == .text(""))
        #expect(r["z"] == .blob([]))
        #expect(r.string("nul") == "a\u{0}b")
        #expect(r["no_such_column"] == .null)
    }

    @Test func sqlValueInitializers() {
        #expect(SQLValue(nil as String?) == .null)
        #expect(SQLValue("x") == .text("x"))
        #expect(SQLValue(7 as Int?) == .integer(7))
        #expect(SQLValue(Int64(7)) == .integer(7))
        #expect(SQLValue(true) == .integer(1))
        #expect(SQLValue(false as Bool?) == .integer(0))
        #expect(SQLValue(2.5) == .real(2.5))
        #expect(SQLValue([1, 2] as [UInt8]?) == .blob([1, 2]))
        let literals: [SQLValue] = ["a", 1, nil, true, 1.5]
        #expect(literals == [.text("a"), .integer(1), .null, .integer(1), .real(1.5)])
        let row = Row(columns: ["flag", "n", "x"], values: [.integer(2), .real(3.0), .real(3.5)])
        #expect(row.bool("flag") == true)
        #expect(row.int("n") == 3)
        #expect(row.int("x") == nil)
    }

    @Test func scalarQueryFirstChangesAndRowID() throws {
        let db = try Database(path: ":memory:", migrations: [])
        try db.write { c in
            try c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            #expect(try c.scalar("SELECT v FROM t") == .null)
            #expect(try c.queryFirst("SELECT v FROM t") == nil)
            try c.execute("INSERT INTO t (v) VALUES (?)", "a")
            #expect(c.lastInsertRowID == 1)
            try c.execute("INSERT INTO t (v) VALUES (?), (?)", ["b", "c"])
            #expect(c.changes == 2)
            try c.execute("UPDATE t SET v = upper(v)")
            #expect(c.changes == 3)
            let returned = try c.queryFirst("INSERT INTO t (v) VALUES ('d') RETURNING id, v")
            #expect(returned?.int("id") == 4)
            #expect(try c.count("t") == 4)  // stopping after the first RETURNING row kept the insert
            #expect(try c.query("SELECT v FROM t ORDER BY id").compactMap { $0.string("v") } == ["A", "B", "C", "d"])
        }
    }

    @Test func argumentCountMismatchAndMultipleStatementsAreRefused() throws {
        let db = try Database(path: ":memory:", migrations: [])
        try db.write { c in
            try c.execute("CREATE TABLE t (v TEXT)")
            do {
                try c.execute("INSERT INTO t VALUES (?)")
                Issue.record("missing argument must fail")
            } catch let error as StoreError {
                #expect(error.code == 25)  // SQLITE_RANGE
            }
            do {
                try c.execute("INSERT INTO t VALUES ('a'); DROP TABLE t")
                Issue.record("a second statement must not be silently ignored")
            } catch let error as StoreError {
                #expect(error.code == 21)  // SQLITE_MISUSE
            }
            // A trailing comment is not a statement.
            try c.execute("INSERT INTO t VALUES ('b'); -- done")
            do {
                try c.execute("SELEC 1")
                Issue.record("syntax error must fail")
            } catch let error as StoreError {
                #expect(error.code == 1)
                #expect(error.message.hasPrefix("prepare"))
            }
            try c.executeScript("INSERT INTO t VALUES ('c'); INSERT INTO t VALUES ('d');")
            #expect(try c.count("t") == 3)
        }
    }

    @Test func statementCacheSurvivesSchemaChange() throws {
        let db = try Database(path: ":memory:", migrations: [])
        try db.write { c in
            try c.execute("CREATE TABLE t (a INTEGER)")
            try c.execute("INSERT INTO t VALUES (1)")
            #expect(try c.queryFirst("SELECT * FROM t")?.columns == ["a"])
            try c.execute("ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'")
            // The same (cached) statement now returns the new column.
            let row = try c.queryFirst("SELECT * FROM t")
            #expect(row?.columns == ["a", "b"])
            #expect(row?.string("b") == "x")
            try c.execute("DROP TABLE t")
            #expect(throws: StoreError.self) { try c.queryFirst("SELECT * FROM t") }
            try c.execute("CREATE TABLE t (c TEXT)")
            try c.execute("INSERT INTO t VALUES ('new')")
            #expect(try c.queryFirst("SELECT * FROM t")?.columns == ["c"])
        }
    }

    @Test func statementCacheSurvivesSchemaChangeByAnotherInstance() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let a = try Database(path: path)
        let b = try Database(path: path)
        defer { a.close(); b.close() }
        try a.write { try $0.insertUser(id: "u1") }
        #expect(try a.read { try $0.queryFirst("SELECT * FROM sessions") } == nil)
        let before = try a.read { try $0.query("SELECT * FROM users") }.first?.columns.count ?? 0
        try b.write { try $0.execute("ALTER TABLE users ADD COLUMN extra TEXT DEFAULT 'added'") }
        let row = try a.read { try $0.queryFirst("SELECT * FROM users") }
        #expect(row?.columns.count == before + 1)
        #expect(row?.string("extra") == "added")
    }
}
