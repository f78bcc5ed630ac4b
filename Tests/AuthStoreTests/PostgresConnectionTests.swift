import Foundation
import Testing
@testable import AuthStore
import PostgresTestSupport

/// The libpq connection against a real, throw-away Postgres (`PostgresCluster`).
@Suite(.enabled(if: PostgresCluster.canRun,
                "skipped: needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17); CI=true fails instead"))
struct PostgresConnectionTests {
    /// A connection to a fresh database that stays the login role (the shared cluster has no
    /// supabase_auth_admin), searching `public`.
    private func connect() throws -> PostgresConnection {
        let conninfo = try PostgresCluster.sharedCluster().makeDatabase()
        return try PostgresConnection(conninfo, options: PostgresSessionOptions(searchPath: ["public"]))
    }

    @Test func connectsAndSetsTheSessionUp() throws {
        let db = try connect()
        #expect(db.session.loginRole == "postgres")
        #expect(db.session.currentRole == "postgres")
        #expect(db.session.loginIsSuperuser)
        #expect(db.session.serverVersion >= 100_000)
        #expect(try db.scalar("SHOW TimeZone") == .text("UTC"))
        #expect(try db.scalar("SHOW search_path") == .text("public"))
        #expect(try db.scalar("SELECT current_setting('application_name')") == .text("auth-emulator"))
        #expect(try PostgresLibrary.version() >= 100_000)
    }

    @Test func aSuperuserWithoutGoTruesRoleIsWarnedAbout() throws {
        let conninfo = try PostgresCluster.sharedCluster().makeDatabase()
        let db = try PostgresConnection(conninfo)  // default options: SET ROLE supabase_auth_admin when it may
        #expect(db.session.currentRole == "postgres")
        #expect(db.session.warnings.count == 1)
        #expect(db.session.warnings.first?.contains("superuser postgres") == true)
        #expect(db.session.warnings.first?.contains("supabase_auth_admin does not exist") == true)
    }

    @Test func aURLConnectionStringWorksToo() throws {
        let cluster = try PostgresCluster.sharedCluster()
        let host = cluster.directory.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let db = try PostgresConnection("postgresql://postgres@/postgres?host=\(host)", options: PostgresSessionOptions(role: nil))
        #expect(try db.scalar("SELECT 1 + 1") == .integer(2))
    }

    @Test func aServerThatIsNotThereIsOneConnectError() throws {
        let error = #expect(throws: PostgresError.self) {
            _ = try PostgresConnection("host=/tmp/ae-pg-no-such-folder dbname=postgres user=postgres connect_timeout=5")
        }
        #expect(error?.sqlstate == PostgresError.connectionFailure)
        #expect(error?.step == "connect")
        #expect(error?.message.contains("/tmp/ae-pg-no-such-folder") == true)
    }

    @Test func valuesRoundTripByColumnType() throws {
        let db = try connect()
        try db.executeScript("""
            CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
            CREATE TABLE kinds (
              id int PRIMARY KEY, b boolean, i2 smallint, i4 integer, i8 bigint, f8 double precision, n numeric,
              t text, v varchar(255), u uuid, j json, jb jsonb, tz timestamptz, ts timestamp, by bytea,
              arr text[], ip inet, m mood
            );
            """)
        let unicode = "Ada Lovelace — 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ✓ 日本語 \"quoted\" back\\slash"
        let allBytes = (0...255).map { UInt8($0) }
        let micros: Int64 = 1_715_000_000_123_456
        try db.execute(
            "INSERT INTO kinds VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
            .integer(1), .integer(1), .integer(-32768), .integer(2_147_483_647), .integer(.min), .real(0.1), .text("12.50"),
            .text(unicode), .text("ünïcödé"), .text("00000000-0000-4000-8000-000000000001"), .text(#"{"b": 1,  "a": [true]}"#),
            .text(#"{"b": 1,  "a": [true]}"#), .postgresTimestamp(micros), .postgresTimestamp(micros), .blob(allBytes),
            .postgresTextArray(["plain", "with, comma", "with \"quote\"", "", "NULL", "日本"]), .text("192.0.2.1"), .text("happy"))
        try db.execute("INSERT INTO kinds (id, b, by, arr) VALUES (2, false, ''::bytea, '{}')")
        try db.execute("INSERT INTO kinds (id) VALUES (3)")

        let rows = try db.query("SELECT * FROM kinds ORDER BY id")
        #expect(rows.count == 3)
        let full = rows[0]
        #expect(full["b"] == .integer(1))
        #expect(full.bool("b") == true)
        #expect(full["i2"] == .integer(-32768))
        #expect(full["i4"] == .integer(2_147_483_647))
        #expect(full["i8"] == .integer(.min))
        #expect(full["f8"] == .real(0.1))
        #expect(full["n"] == .real(12.5))
        #expect(full["t"] == .text(unicode))
        #expect(full["v"] == .text("ünïcödé"))
        #expect(full["u"] == .text("00000000-0000-4000-8000-000000000001"))
        #expect(full["j"] == .text(#"{"b": 1,  "a": [true]}"#), "json keeps its text")
        #expect(full["jb"] == .text(#"{"a": [true], "b": 1}"#), "jsonb normalises key order and spacing")
        #expect(full["tz"] == .integer(micros))
        #expect(full["ts"] == .integer(micros), "a timestamp without time zone holds the UTC wall time")
        #expect(full["by"] == .blob(allBytes))
        #expect(full["arr"] == .text(#"["plain","with, comma","with \"quote\"","","NULL","日本"]"#))
        #expect(full["ip"] == .text("192.0.2.1"))
        #expect(full["m"] == .text("happy"))

        #expect(rows[1]["b"] == .integer(0))
        #expect(rows[1]["by"] == .blob([]))
        #expect(rows[1]["arr"] == .text("[]"))
        for column in rows[2].columns where column != "id" {
            #expect(rows[2][column] == .null, "\(column) is NULL")
        }
        // A NULL argument, and an array with a NULL element.
        #expect(try db.scalar("SELECT $1::text IS NULL", .null) == .integer(1))
        #expect(try db.scalar("SELECT ARRAY['a', NULL]::text[]") == .text(#"["a",null]"#))
        #expect(try db.scalar("SELECT ARRAY[1, 2]::bigint[]") == .text("[1,2]"))
        #expect(db.changes == 1)
    }

    @Test func timestampsRoundTripExactlyAcrossTheRange() throws {
        let db = try connect()
        let samples: [Int64] = [0, 1, -1, 999_999, 1_700_000_000_000_000, -62_135_596_800_000_000, -62_135_596_800_000_001,
                                253_402_300_799_999_999, 4_102_444_800_000_000, -2_208_988_800_000_000, .max, .min]
        for micros in samples {
            let back = try db.scalar("SELECT $1::timestamptz", .postgresTimestamp(micros))
            #expect(back == .integer(micros), "\(micros) as \(PostgresText.timestampText(micros))")
            let viaText = try db.scalar("SELECT $1::timestamptz::text", .postgresTimestamp(micros))
            #expect(viaText.stringValue.map { PostgresText.timestampText(micros) == $0 || micros == .max || micros == .min } == true)
        }
        // The server's own clock and time zone offsets parse too.
        #expect(try db.scalar("SELECT now()").int64Value != nil)
        let offset = try db.scalar("SELECT '2024-01-01 12:00:00+05:30'::timestamptz")
        #expect(offset == .integer(1_704_090_600_000_000))
    }

    @Test func aTriggerThatRaisesGivesSQLSTATEMessageDetailHintAndContext() throws {
        let db = try connect()
        try db.executeScript("""
            CREATE TABLE profiles (id int PRIMARY KEY, name text);
            CREATE FUNCTION refuse_profile() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              RAISE EXCEPTION 'profiles are closed' USING ERRCODE = 'P0042', DETAIL = 'name was ' || NEW.name, HINT = 'try later';
            END $$;
            CREATE TRIGGER refuse BEFORE INSERT ON profiles FOR EACH ROW EXECUTE FUNCTION refuse_profile();
            """)
        let error = #expect(throws: PostgresError.self) {
            try db.execute("INSERT INTO profiles VALUES ($1, $2)", .integer(1), .text("secret-name"))
        }
        #expect(error?.sqlstate == "P0042")
        #expect(error?.message == "profiles are closed")
        #expect(error?.detail == "name was secret-name")
        #expect(error?.hint == "try later")
        #expect(error?.context?.contains("PL/pgSQL function refuse_profile()") == true)
        #expect(error?.severity == "ERROR")
        #expect(error?.description.contains("secret-name") == false, "the description leaves DETAIL out")
        #expect(error?.description.contains("CONTEXT: PL/pgSQL function refuse_profile()") == true)
        #expect(error?.diagnostics.contains("DETAIL: name was secret-name") == true)
        // The connection is usable afterwards (no transaction was left open).
        #expect(try db.scalar("SELECT count(*) FROM profiles") == .integer(0))
    }

    @Test func descriptionsNeverContainBoundValues() throws {
        let db = try connect()
        try db.execute("CREATE TABLE people (email text UNIQUE, id uuid)")
        try db.execute("INSERT INTO people (email) VALUES ($1)", .text("ada@example.com"))
        let duplicate = #expect(throws: PostgresError.self) {
            try db.execute("INSERT INTO people (email) VALUES ($1)", .text("ada@example.com"))
        }
        #expect(duplicate?.isUniqueViolation == true)
        #expect(duplicate?.constraint == "people_email_key")
        #expect(duplicate?.table == "people")
        #expect(duplicate?.detail?.contains("ada@example.com") == true)
        #expect(duplicate?.description.contains("ada@example.com") == false)

        let badInput = #expect(throws: PostgresError.self) {
            try db.execute("INSERT INTO people (id) VALUES ($1)", .text("not-a-uuid-but-a-secret"))
        }
        #expect(badInput?.sqlstate == "22P02")
        #expect(badInput?.message.contains("not-a-uuid-but-a-secret") == true)
        #expect(badInput?.description.contains("not-a-uuid-but-a-secret") == false)
        #expect(badInput?.description.contains("invalid input syntax for type uuid") == true)

        let nul = #expect(throws: PostgresError.self) { try db.execute("SELECT $1::text", .text("a\u{0}b")) }
        #expect(nul?.sqlstate == "22021")
    }

    @Test func savepointsNestAndRollBackOnlyTheirPart() throws {
        let db = try connect()
        try db.execute("CREATE TABLE items (name text PRIMARY KEY)")
        struct Undo: Error {}

        try db.transaction { db in
            try db.execute("INSERT INTO items VALUES ('outer')")
            #expect(throws: Undo.self) {
                try db.transaction { db in
                    try db.execute("INSERT INTO items VALUES ('inner')")
                    throw Undo()
                }
            }
            // A failed statement aborts a Postgres transaction; inside a nested transaction
            // only the savepoint is lost and the outer one carries on.
            #expect(throws: PostgresError.self) {
                try db.transaction { db in try db.execute("INSERT INTO items VALUES ('outer')") }
            }
            try db.transaction { db in try db.execute("INSERT INTO items VALUES ('nested kept')") }
        }
        #expect(try db.query("SELECT name FROM items ORDER BY name").map { $0.string("name") } == ["nested kept", "outer"])
        #expect(!db.isInTransaction)

        #expect(throws: Undo.self) {
            try db.transaction { db in
                try db.execute("INSERT INTO items VALUES ('rolled back')")
                throw Undo()
            }
        }
        #expect(try db.scalar("SELECT count(*) FROM items") == .integer(2))

        // A statement that failed outside any savepoint dooms the transaction: COMMIT would
        // answer ROLLBACK, so the caller hears it.
        let doomed = #expect(throws: PostgresError.self) {
            try db.transaction { db in
                try db.execute("INSERT INTO items VALUES ('lost')")
                _ = try? db.execute("INSERT INTO items VALUES ('outer')")
            }
        }
        #expect(doomed?.sqlstate == "25P02")
        #expect(try db.scalar("SELECT count(*) FROM items WHERE name = 'lost'") == .integer(0))
        #expect(!db.isInTransaction)
    }

    @Test func readOnlyTransactionsRefuseWrites() throws {
        let db = try connect()
        try db.execute("CREATE TABLE items (name text)")
        let error = #expect(throws: PostgresError.self) {
            try db.transaction(readOnly: true) { db in try db.execute("INSERT INTO items VALUES ('x')") }
        }
        #expect(error?.sqlstate == "25006")
        #expect(try db.transaction(readOnly: true) { db in try db.scalar("SELECT count(*) FROM items") } == .integer(0))
    }

    @Test func statementsArePreparedOnceAndReprepareWhenATableChanges() throws {
        let db = try connect()
        try db.execute("CREATE TABLE things (a int)")
        try db.execute("INSERT INTO things VALUES ($1)", .integer(1))
        try db.execute("INSERT INTO things VALUES ($1)", .integer(2))
        let prepared = try db.scalar("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO things%'")
        #expect(prepared == .integer(1))

        #expect(try db.query("SELECT * FROM things ORDER BY a").first?.columns == ["a"])
        try db.execute("ALTER TABLE things ADD COLUMN b text DEFAULT 'x'")
        let rows = try db.query("SELECT * FROM things ORDER BY a")
        #expect(rows.first?.columns == ["a", "b"])
        #expect(rows.first?["b"] == .text("x"))

        // A statement a schema cannot serve names itself (the program's SQL, never values).
        let missing = #expect(throws: PostgresError.self) { try db.query("SELECT c FROM things WHERE a = $1", .integer(7)) }
        #expect(missing?.sqlstate == "42703")
        #expect(missing?.step == "prepare \"SELECT c FROM things WHERE a = $1\"")
        #expect(missing?.description.contains("column \"c\" does not exist") == true)
    }

    @Test func noticesAreCollected() throws {
        let db = try connect()
        try db.execute("DO $$ BEGIN RAISE NOTICE 'hello from %', 'plpgsql'; END $$")
        let notices = db.takeNotices()
        #expect(notices.map(\.message) == ["hello from plpgsql"])
        #expect(notices.first?.severity == "NOTICE")
        #expect(db.takeNotices().isEmpty)
    }

    @Test func aLostConnectionIsReportedAndReconnects() throws {
        let cluster = try PostgresCluster.sharedCluster()
        let conninfo = try cluster.makeDatabase()
        let db = try PostgresConnection(conninfo, options: PostgresSessionOptions(searchPath: ["public"]))
        #expect(try db.scalar("SELECT $1::int + 1", .integer(1)) == .integer(2))
        let pid = try #require(db.scalar("SELECT pg_backend_pid()").int64Value)
        let other = try PostgresConnection(conninfo, options: PostgresSessionOptions(role: nil))
        #expect(try other.scalar("SELECT pg_terminate_backend($1::int)", .integer(pid)) == .integer(1))
        let lost = #expect(throws: PostgresError.self) { try db.scalar("SELECT $1::int + 1", .integer(1)) }
        #expect(lost?.isConnectionFailure == true, "\(String(describing: lost))")
        #expect(!db.isConnected)
        try db.reconnect()
        #expect(db.isConnected)
        // The prepared statements went with the old server process and are made again.
        #expect(try db.scalar("SELECT $1::int + 1", .integer(1)) == .integer(2))
        #expect(try db.scalar("SHOW search_path") == .text("public"))
    }

    @Test func aClosedConnectionSaysSo() throws {
        let db = try connect()
        db.close()
        let error = #expect(throws: PostgresError.self) { try db.execute("SELECT 1") }
        #expect(error?.sqlstate == PostgresError.closed)
    }
}

/// libpq's loading needs no server: these run wherever the suite builds.
struct PostgresLibraryTests {
    @Test func aMissingLibraryIsOneErrorNamingThePathAndWhatToInstall() {
        let path = "/nonexistent/auth-emulator-test/libpq.so.5"
        let error = #expect(throws: PostgresError.self) {
            try PostgresLibrary.probe(environment: ["AUTH_EMULATOR_LIBPQ": path])
        }
        #expect(error?.sqlstate == PostgresError.libraryMissing)
        #expect(error?.message.contains("tried \(path)") == true)
        #expect(error?.message.contains("AUTH_EMULATOR_LIBPQ") == true)
        #if os(macOS)
        #expect(error?.message.contains("brew install libpq") == true)
        #else
        #expect(error?.message.contains("apt install libpq5") == true)
        #endif
    }

    @Test func aFileThatIsNotLibpqIsRefused() throws {
        // The C library loads but has no PQconnectdb.
        #if os(macOS)
        let other = "/usr/lib/libSystem.B.dylib"
        #else
        let other = "libc.so.6"
        #endif
        let error = #expect(throws: PostgresError.self) {
            try PostgresLibrary.probe(environment: ["AUTH_EMULATOR_LIBPQ": other])
        }
        #expect(error?.message.contains("lacks PQlibVersion") == true)
    }

    @Test(.enabled(if: PostgresCluster.canRun, "skipped: needs libpq (apt install libpq5; macOS: brew install libpq)"))
    func theUsualPlacesFindLibpq() throws {
        try PostgresLibrary.probe(environment: [:])
    }

    @Test func timestampTextIsTheInverseOfParsing() {
        for micros: Int64 in [0, 1, -1, 1_700_000_000_123_456, -62_135_596_800_000_001, 253_402_300_799_999_999] {
            let text = PostgresText.timestampText(micros)
            let parsed = Array(text.utf8).withUnsafeBufferPointer { PostgresText.timestampMicroseconds($0) }
            #expect(parsed == micros, "\(text)")
        }
        #expect(PostgresText.timestampText(0) == "1970-01-01 00:00:00+00")
        #expect(PostgresText.timestampText(-62_135_596_800_000_001) == "0001-12-31 23:59:59.999999+00 BC")
        let garbage = Array("yesterday".utf8).withUnsafeBufferPointer { PostgresText.timestampMicroseconds($0) }
        #expect(garbage == nil)
    }
}
