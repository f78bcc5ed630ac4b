import CSQLite
import Foundation
import Testing
@testable import AuthStore

/// Another OS process on the same file, via the sqlite3 command-line shell, the way a second
/// emulator (or an inspecting developer) would share the database.
let sqliteShell: String? = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/opt/homebrew/bin/sqlite3"]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

@Suite(.enabled(if: sqliteShell != nil, "needs the sqlite3 shell"))
struct CrossProcessTests {

    static func shell(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqliteShell!)
        process.arguments = ["-batch", "-cmd", ".timeout 5000", path, sql]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anotherProcessSeesCommitsAndWeSeeItsCommits() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        let db = try Database(path: path)
        defer { db.close() }
        try db.write { try $0.insertUser(id: "from-swift", email: "s@example.com") }
        #expect(try Self.shell(path, "SELECT id FROM users;") == "from-swift")
        #expect(try Self.shell(path, "PRAGMA journal_mode;") == "wal")

        // Warm the reader (snapshot + cached statement), then let the other process write.
        #expect(try db.read { try $0.count("users") } == 1)
        _ = try Self.shell(path, "INSERT INTO users (id, aud, email, created_at, updated_at) VALUES ('from-shell', 'authenticated', 'c@example.com', 1, 1);")
        #expect(try db.read { try $0.count("users") } == 2)
        // Its write went through our unique index too.
        let duplicate = try Self.shell(path, "INSERT INTO users (id, aud, email, created_at, updated_at) VALUES ('dup', 'authenticated', 'S@example.com', 1, 1);")
        #expect(duplicate.contains("UNIQUE constraint failed"))
        #expect(try db.read { try $0.count("users") } == 2)
    }

    @Test func openingWhileAnotherProcessHoldsTheWriteLockWaits() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("auth.db")
        // The other process makes the new file WAL, takes the write lock and keeps it for a few
        // hundred milliseconds with a slow query before committing. Its own lock waits are long
        // too: the probe below may hold the lock for an instant before it does.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sqliteShell!)
        process.arguments = ["-batch", "-cmd", ".timeout 60000", path, """
            PRAGMA journal_mode = WAL;
            BEGIN IMMEDIATE;
            CREATE TABLE held (x INTEGER);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) SELECT count(*) FROM c;
            COMMIT;
            """]
        process.standardOutput = Pipe()
        try process.run()
        // Until the other process surely holds the write lock: a probe's own attempt to take
        // it finds it busy (one that gets it lets go at once and tries again).
        let lockedElsewhere = waitUntil {
            guard access(path + "-wal", F_OK) == 0,
                  let probe = try? Connection(path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX) else { return false }
            defer { probe.close() }
            do {
                try probe.execute("BEGIN IMMEDIATE")
                try? probe.execute("ROLLBACK")
                return false
            } catch let error as StoreError {
                return error.isBusy
            } catch {
                return false
            }
        }
        #expect(lockedElsewhere)
        // Waits for the lock, then migrates. The wait allowed is long: on a loaded machine the
        // other process's query takes seconds (the default 5 s ran out in CI), and the test is
        // about waiting at all, not about how long.
        let db = try Database(path: path, options: DatabaseOptions(busyTimeoutMilliseconds: 60_000))
        defer { db.close() }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try db.appliedMigrations == Migrations.all.flatMap(\.names))
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'held'") } == .integer(1))
    }
}
