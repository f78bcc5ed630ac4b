import Foundation
import Testing
@testable import AuthStore

@Suite struct MigrationTests {
    @Test func recordedOnceAndReopenIsNoOp() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let first = try Database(path: path)
        #expect(try first.appliedMigrations == Migrations.all.flatMap(\.names))
        let appliedAt = try first.read { try $0.scalar("SELECT applied_at FROM schema_migrations WHERE id = '0001_auth_schema'") }
        // Unix microseconds, within a day of the test machine's clock.
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        #expect(abs((appliedAt.int64Value ?? 0) - now) < 86_400_000_000)
        try first.write { try $0.insertUser(id: "u1") }
        first.close()

        let second = try Database(path: path)
        defer { second.close() }
        #expect(try second.appliedMigrations == Migrations.all.flatMap(\.names))
        #expect(try second.read { try $0.scalar("SELECT applied_at FROM schema_migrations WHERE id = '0001_auth_schema'") } == appliedAt)
        #expect(try second.read { try $0.count("users") } == 1)
    }

    /// A database in memory after the first starts as a copy of the migrated image: the same
    /// schema and records, foreign keys enforced, and nothing shared with the others.
    @Test func memoryDatabasesStartFromTheMigratedImage() throws {
        let migrations = Migrations.all + [Migration(id: "9000_image_test", sql: "CREATE TABLE image_probe (x INTEGER) STRICT;")]
        let first = try Database(path: ":memory:", migrations: migrations)
        defer { first.close() }
        let second = try Database(path: ":memory:", migrations: migrations)
        defer { second.close() }
        #expect(!first.startedFromImage)
        #expect(second.startedFromImage)
        let schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
        func rows(_ database: Database, _ sql: String) throws -> [String] {
            try database.read { try $0.query(sql).map { row in "\(row.string("type") ?? "") \(row.string("name") ?? "") \(row.string("sql") ?? "")" } }
        }
        #expect(try rows(second, schema) == rows(first, schema))
        #expect(try second.appliedMigrations == migrations.flatMap(\.names))
        #expect(try second.read { try $0.scalar("PRAGMA foreign_keys") }.int64Value == 1)
        // Each is its own database.
        try first.write { try $0.execute("INSERT INTO image_probe (x) VALUES (1)") }
        try second.write { try $0.insertUser(id: "u2") }
        #expect(try second.read { try $0.count("image_probe") } == 0)
        #expect(try first.read { try $0.count("users") } == 0)
        #expect(try second.read { try $0.count("users") } == 1)
        // A session for a user that does not exist is refused, as in a migrated database.
        #expect(throws: StoreError.self) {
            try second.write { try $0.execute("INSERT INTO sessions (id, user_id, created_at, updated_at) VALUES ('s', 'nobody', 0, 0)") }
        }
    }

    @Test func appliesOnlyPendingMigrationsInOrder() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let base = [Migration(id: "0001", sql: "CREATE TABLE a (x INTEGER) STRICT;")]
        try Database(path: path, migrations: base).close()
        let extended = base + [
            Migration(id: "0002", sql: "CREATE TABLE b (y INTEGER) STRICT; INSERT INTO b VALUES (1);"),
            Migration(id: "0003", sql: "ALTER TABLE a ADD COLUMN z TEXT;"),
        ]
        let db = try Database(path: path, migrations: extended)
        defer { db.close() }
        #expect(try db.appliedMigrations == ["0001", "0002", "0003"])
        #expect(try db.read { try $0.count("b") } == 1)
    }

    /// A database at `path` with every migration but `id` applied: what a build before it left.
    private static func database(without id: String, at path: String) throws -> Database {
        try Database(path: path, migrations: Migrations.all.filter { $0.id != id })
    }

    /// 0005 rebuilds `audit_log_entries` without the index on `id`: a database written before
    /// it keeps every entry, its ids and its order.
    @Test func auditRebuildKeepsEntriesAndOrder() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let old = try Self.database(without: "0005_audit_log_entries_without_id_index", at: path)
        try old.write { conn in
            for (i, id) in ["c", "a", "b"].enumerated() {
                try conn.insertAuditLogEntry(id: id, payload: #"{"action":"login"}"#, ipAddress: "", at: Int64(10 - i))
            }
        }
        old.close()
        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.appliedMigrations.contains("0005_audit_log_entries_without_id_index"))
        let ids = try db.read { try $0.query("SELECT id FROM audit_log_entries ORDER BY rowid").compactMap { $0.string("id") } }
        #expect(ids == ["c", "a", "b"])
        let indexes = try db.read {
            try $0.query("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'audit_log_entries'")
                .compactMap { $0.string("name") }
        }
        // 0012 later dropped the index on created_at too (GoTrue's table has none).
        #expect(!indexes.contains { $0.hasPrefix("sqlite_autoindex") })
        // New entries still go in.
        try db.write { try $0.insertAuditLogEntry(id: "d", payload: "{}", ipAddress: "", at: 11) }
        #expect(try db.read { try $0.count("audit_log_entries") } == 4)
    }

    /// 0012 rebuilds `refresh_tokens` without AUTOINCREMENT and drops the audit log's index on
    /// created_at: a database written before it keeps every token with its id, new tokens are
    /// numbered above them without touching `sqlite_sequence`, the session cascade still holds,
    /// and the audit listing still runs newest first by time, not by insertion.
    @Test func refreshTokensRebuildKeepsRowsAndIDs() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let old = try Self.database(without: "0012_refresh_tokens_rowid", at: path)
        try old.write { conn in
            try conn.insertUser(id: "u1")
            try conn.insertSession(SessionRecord(id: "s1", userID: "u1", at: 1))
            try conn.insertSession(SessionRecord(id: "s2", userID: "u1", at: 1))
            for (index, session) in ["s1", "s1", "s2", "s1"].enumerated() {
                try conn.insertRefreshToken(token: "tok\(index)", userID: "u1", sessionID: session,
                                            parent: index == 1 ? "tok0" : nil, at: Int64(10 + index))
            }
            try conn.revokeRefreshToken(id: 1, at: 20)
            // The newest row goes: AUTOINCREMENT would never hand id 4 out again.
            try conn.deleteRefreshToken(id: 4)
            // Time moved back between the second and the third entry (a virtual clock can).
            for (id, at) in [("a1", 50), ("a2", 70), ("a3", 60)] {
                try conn.insertAuditLogEntry(id: id, payload: #"{"action":"token_refreshed"}"#, ipAddress: "", at: Int64(at))
            }
        }
        let tokensBefore = try old.read { try $0.query("SELECT * FROM refresh_tokens ORDER BY id") }
        #expect(try old.read { try $0.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'refresh_tokens'").int64Value } == 4)
        old.close()

        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.appliedMigrations.contains("0012_refresh_tokens_rowid"))
        #expect(try db.read { try $0.query("SELECT * FROM refresh_tokens ORDER BY id") } == tokensBefore)
        let schema = try db.read { try $0.scalar("SELECT sql FROM sqlite_schema WHERE name = 'refresh_tokens'").stringValue ?? "" }
        #expect(!schema.uppercased().contains("AUTOINCREMENT"))
        let indexes = try db.read {
            try $0.query("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('refresh_tokens', 'audit_log_entries') ORDER BY name")
                .compactMap { $0.string("name") }
        }
        #expect(indexes == ["refresh_tokens_session_id_revoked_idx", "sqlite_autoindex_refresh_tokens_1"])
        #expect(try db.read { try $0.count("sqlite_sequence WHERE name IN ('refresh_tokens', 'refresh_tokens_new')") } == 0)

        // Lookups as before: by token, and the newest live token of a session.
        #expect(try db.read { try $0.refreshToken("tok1") }?.parent == "tok0")
        #expect(try db.read { try $0.refreshToken("tok0") }?.revoked == true)
        #expect(try db.read { try $0.activeRefreshToken(sessionID: "s1") }?.token == "tok1")
        // A new token is numbered above every present row; the counter table stays untouched.
        let newID = try db.write { try $0.insertRefreshToken(token: "tok9", userID: "u1", sessionID: "s1", parent: "tok1", at: 30) }
        #expect(newID == 4)
        #expect(try db.read { try $0.activeRefreshToken(sessionID: "s1") }?.token == "tok9")
        #expect(try db.read { try $0.count("sqlite_sequence WHERE name = 'refresh_tokens'") } == 0)
        // Still one token per string, and the session's tokens go with it.
        #expect(throws: StoreError.self) {
            try db.write { try $0.insertRefreshToken(token: "tok9", userID: "u1", sessionID: "s2", parent: nil, at: 31) }
        }
        try db.write { try $0.execute("DELETE FROM sessions WHERE id = ?", .text("s1")) }
        #expect(try db.read { try $0.query("SELECT token FROM refresh_tokens").compactMap { $0.string("token") } } == ["tok2"])

        let audit = try db.read { try $0.auditLogEntries(columns: [], value: "", paging: Paging(page: 1, perPage: 2)) }
        #expect(audit.items.map(\.id) == ["a2", "a3"])
        #expect(audit.total == 3)
        #expect(try db.read { try $0.newestAuditLogEntry() }?.id == "a3")
        #expect(try db.read { try $0.scalar("PRAGMA integrity_check").stringValue } == "ok")
        #expect(try db.read { try $0.query("PRAGMA foreign_key_check") }.isEmpty)
    }

    /// A token row whose session is gone (written by a tool with foreign keys off) would fail
    /// the rebuild's foreign key and keep the server from starting; it is dead, and left behind.
    @Test(.enabled(if: sqliteShell != nil, "needs the sqlite3 shell"))
    func refreshTokensRebuildLeavesOrphansBehind() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let old = try Self.database(without: "0012_refresh_tokens_rowid", at: path)
        try old.write { conn in
            try conn.insertUser(id: "u1")
            try conn.insertSession(SessionRecord(id: "s1", userID: "u1", at: 1))
            try conn.insertRefreshToken(token: "live", userID: "u1", sessionID: "s1", parent: nil, at: 10)
        }
        old.close()
        // The shell opens the file with foreign keys off, as SQLite does by default.
        _ = try CrossProcessTests.shell(path, """
            INSERT INTO refresh_tokens (token, user_id, created_at, updated_at, session_id) VALUES ('orphan', 'u1', 11, 11, 'gone');
            INSERT INTO refresh_tokens (token, user_id, created_at, updated_at, session_id) VALUES ('sessionless', 'u1', 12, 12, NULL);
            """)

        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.appliedMigrations.contains("0012_refresh_tokens_rowid"))
        let tokens = try db.read { try $0.query("SELECT token FROM refresh_tokens ORDER BY id").compactMap { $0.string("token") } }
        #expect(tokens == ["live", "sessionless"])
        #expect(try db.read { try $0.query("PRAGMA foreign_key_check") }.isEmpty)
    }

    /// 0011 replaces the user_id index of `identities` with one on (user_id, created_at): a
    /// database written before it reads the same identities in the same order (ties on
    /// created_at by rowid), now without sorting, and the lookups and cascades still work.
    @Test func identitiesIndexKeepsTheirOrder() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let old = try Self.database(without: "0011_identities_user_id_created_at_idx", at: path)
        try old.write { conn in
            try conn.insertUser(id: "u1")
            try conn.insertUser(id: "u2")
            // Inserted out of id order, two of them in the same microsecond.
            for (index, (id, at)) in [("i3", 5), ("i1", 7), ("i2", 5), ("i9", 6)].enumerated() {
                try conn.insertIdentity(IdentityRecord(id: id, providerID: "p\(index)", userID: id == "i9" ? "u2" : "u1",
                                                       identityData: #"{"email":"A\#(index)@Example.com"}"#, provider: "email",
                                                       at: Int64(at)))
            }
        }
        let expected = try old.read { try $0.identities(userID: "u1") + $0.identities(userID: "u2") }
        old.close()
        #expect(expected.map(\.id) == ["i3", "i2", "i1", "i9"])

        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.appliedMigrations.contains("0011_identities_user_id_created_at_idx"))
        #expect(try db.read { try $0.identities(userID: "u1") + $0.identities(userID: "u2") } == expected)
        let plan = try db.read {
            try $0.query("EXPLAIN QUERY PLAN \(IdentityRecord.select) WHERE user_id = ? ORDER BY created_at, rowid", .text("u1"))
                .compactMap { $0.string("detail") }
        }
        #expect(plan == ["SEARCH identities USING INDEX identities_user_id_created_at_idx (user_id=?)"])
        #expect(try db.read { try $0.identity(providerID: "p3", provider: "email")?.email } == "a3@example.com")
        try db.write { try $0.execute("DELETE FROM users WHERE id = ?", .text("u1")) }
        #expect(try db.read { try $0.count("identities") } == 1)
        #expect(try db.read { try $0.scalar("PRAGMA integrity_check").stringValue } == "ok")
    }

    @Test func failingMigrationLeavesNoTrace() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let migrations = [
            Migration(id: "0001", sql: "CREATE TABLE a (x INTEGER);"),
            Migration(id: "0002", sql: "CREATE TABLE b (y INTEGER); CREATE TABLE a (x INTEGER);"),
        ]
        do {
            _ = try Database(path: path, migrations: migrations)
            Issue.record("a broken migration must fail the open")
        } catch {
            #expect(error.message.contains("0002"))
        }
        let db = try Database(path: path, migrations: Array(migrations.prefix(1)))
        defer { db.close() }
        #expect(try db.appliedMigrations == ["0001"])
        // 0002 ran in one transaction with its record: its first table was rolled back too.
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'b'") } == .integer(0))
    }

    /// 0014 widens users_email_partial_key to every audience. A database written before it
    /// upgrades, and then refuses an email another audience holds; one that already holds an
    /// email in two audiences cannot take the index: the open fails naming the migration and the
    /// index, and the file is as it was (an older build still opens it, with both accounts).
    @Test func emailIndexAcrossAudiences() throws {
        let dir = try TemporaryDirectory()
        let id = "0014_users_email_unique_across_audiences"
        let before = Migrations.all.filter { $0.id != id }
        // A file as a build before 0014 left it: alice, and `other` in another audience.
        func written(_ name: String, other: String) throws -> String {
            let path = dir.path(name)
            let old = try Database(path: path, migrations: before)
            try old.write { c in
                try c.insertUser(id: "u1", email: "alice@example.com")
                try c.insertUser(id: "u2", email: other, aud: "other-aud")
            }
            old.close()
            return path
        }

        let upgraded = try Database(path: try written("upgrading.db", other: "bob@example.com"))
        defer { upgraded.close() }
        #expect(try upgraded.appliedMigrations.contains(id))
        #expect(try upgraded.read { try $0.count("users") } == 2)
        #expect(throws: StoreError.self) { try upgraded.write { try $0.insertUser(id: "u3", email: "Alice@example.com", aud: "other-aud") } }

        let holding = try written("holding.db", other: "alice@example.com")
        do {
            _ = try Database(path: holding)
            Issue.record("an email in two audiences must fail the open")
        } catch {
            #expect(error.message.contains(id))
            #expect(error.message.contains("users_email_partial_key"))
        }
        let reopened = try Database(path: holding, migrations: before)
        defer { reopened.close() }
        #expect(try !reopened.appliedMigrations.contains(id))
        #expect(try reopened.read { try $0.count("users") } == 2)
    }

    @Test func unknownRecordedMigrationIsIgnored() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let db = try Database(path: path)
        // As if a newer build had applied a migration this build does not know.
        try db.write { try $0.execute("INSERT INTO schema_migrations (id, applied_at) VALUES ('9999_future', 0)") }
        db.close()
        let reopened = try Database(path: path)
        defer { reopened.close() }
        #expect(try reopened.appliedMigrations == Migrations.all.flatMap(\.names) + ["9999_future"])
    }

    @Test func instancesRacingOnNewFileBothSucceed() throws {
        for round in 0..<5 {
            let dir = try TemporaryDirectory()
            let path = dir.path("race-\(round).db")
            let errors = onThreads(4) { _ in
                let db = try Database(path: path)
                try db.write { try $0.insertUser(id: UUID().uuidString.lowercased()) }
                db.close()
            }
            #expect(errors.isEmpty, "\(errors)")
            let db = try Database(path: path)
            defer { db.close() }
            #expect(try db.appliedMigrations == Migrations.all.flatMap(\.names))
            #expect(try db.read { try $0.count("users") } == 4)
        }
    }
}
