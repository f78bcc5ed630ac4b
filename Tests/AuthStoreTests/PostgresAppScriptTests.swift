import Testing
@testable import AuthStore
import PostgresTestSupport

/// `Connection.runAppScript`: the app's SQL (a fixture's `sql` step) inside the emulator's write
/// transaction, as the login role with its own search path.
@Suite(.enabled(if: PostgresCluster.canRun,
                "skipped: needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17); CI=true fails instead"))
struct PostgresAppScriptTests {
    /// The shared cluster has no supabase_auth_admin (other suites check its absence), so the
    /// writer is the superuser login; a built-in role stands in for GoTrue's, as the writer's
    /// session role, to see the script run as the login and the writer's role come back.
    private func open() throws -> Database {
        let db = try StoreBackend.postgres.open()
        try db.write { c in try c.postgres!.store { try $0.executeScript("SET ROLE pg_monitor") } }
        return db
    }

    private func scalar(_ c: Connection, _ sql: String) throws -> String? {
        try c.postgres!.store { try $0.scalar(sql).stringValue }
    }

    @Test func runsAsTheLoginWithItsSearchPathThenRestoresTheWriters() throws {
        let db = try open()
        try db.write { (c: Connection) throws in
            #expect(try scalar(c, "SELECT current_user::text") == "pg_monitor")
            #expect(try scalar(c, "SELECT current_setting('search_path')") == "auth")
            // Unqualified: lands in the login's own search path (public), as psql would put it.
            try c.runAppScript("""
                CREATE TABLE seen AS SELECT current_user::text AS role, current_setting('search_path') AS path;
                SET search_path = pg_catalog;
                """)
            #expect(try scalar(c, "SELECT current_user::text") == "pg_monitor")
            #expect(try scalar(c, "SELECT current_setting('search_path')") == "auth")
        }
        #expect(try rows(db, "SELECT role, path FROM public.seen") == [["postgres", "\"$user\", public"]])
        // After the commit too: the writer's session is as it was.
        try db.write { (c: Connection) throws in
            #expect(try scalar(c, "SELECT current_user::text") == "pg_monitor")
            #expect(try scalar(c, "SELECT current_setting('search_path')") == "auth")
        }
    }

    @Test func whatTheScriptWroteGoesWithTheTransaction() throws {
        let db = try open()
        try db.write { c in try c.runAppScript("CREATE TABLE public.notes (body text); INSERT INTO public.notes VALUES ('kept')") }
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try db.write { (c: Connection) throws in
                try c.runAppScript("INSERT INTO public.notes VALUES ('rolled back')")
                throw Refused()
            }
        }
        #expect(try rows(db, "SELECT body FROM public.notes") == [["kept"]])
        // A failing statement fails the call with Postgres's own error.
        let error = try #require(throws: StoreError.self) {
            try db.write { c in try c.runAppScript("INSERT INTO public.notes VALUES ('a'); INSERT INTO public.missing VALUES (1)") }
        }
        #expect(error.postgres?.sqlstate == "42P01")
        #expect(try rows(db, "SELECT body FROM public.notes") == [["kept"]])
    }

    @Test func aScriptThatEndsTheTransactionIsRefused() throws {
        let db = try open()
        for ending in ["ROLLBACK", "COMMIT"] {
            let error = try #require(throws: StoreError.self) {
                try db.write { c in try c.runAppScript("CREATE TABLE IF NOT EXISTS public.t (n int); \(ending)") }
            }
            #expect(error.postgres?.sqlstate == "25000")
            #expect(error.message.contains("COMMIT or ROLLBACK"))
        }
        // ROLLBACK undid its table; COMMIT kept it: that is why it is refused, and documented.
        #expect(try rows(db, "SELECT count(*)::text FROM pg_tables WHERE tablename = 't' AND schemaname = 'public'") == [["1"]])
    }

    @Test func sqliteHasNoAppDatabaseToRunItIn() throws {
        let db = try StoreBackend.sqlite.open()
        let error = try #require(throws: StoreError.self) { try db.write { c in try c.runAppScript("SELECT 1") } }
        #expect(error.message.contains("only in Postgres mode"))
    }
}
