import Foundation
import Testing
@testable import AuthStore
import PostgresTestSupport
import Synchronization

/// Creating, adopting and bootstrapping GoTrue's `auth` schema on a real, throw-away Postgres.
@Suite(.enabled(if: PostgresCluster.canRun,
                "skipped: needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17); CI=true fails instead"))
struct PostgresSchemaTests {
    /// A fresh database on the shared cluster, connected as the superuser, search_path auth.
    private func emptyDatabase() throws -> PostgresConnection {
        try PostgresConnection(try PostgresCluster.sharedCluster().makeDatabase(), options: PostgresSessionOptions(role: nil))
    }

    /// A fresh database with the whole schema created.
    private func createdDatabase() throws -> PostgresConnection {
        let db = try emptyDatabase()
        try PostgresSchema.createGoTrueSchema(db)
        return db
    }

    @Test func anEmptyDatabaseReportsNoAuthTables() throws {
        let db = try emptyDatabase()
        let report = try PostgresSchema.inspect(db)
        #expect(!report.hasAuthTables)
        #expect(!report.isComplete)
        #expect(report.lines == ["auth.users does not exist: the auth schema has not been created"])
    }

    @Test func creationMakesGoTruesTablesEnumsFunctionsAndRecordsEveryMigration() throws {
        let db = try createdDatabase()
        let tables = try db.query("SELECT tablename::text AS name FROM pg_tables WHERE schemaname = 'auth' ORDER BY 1").compactMap { $0.string("name") }
        #expect(tables.count == 23)
        #expect(tables == GoTrueSchema.tables.map(\.name).sorted())
        #expect(try db.scalar("SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'auth' AND t.typtype = 'e'") == .integer(9))
        let versions = try db.query("SELECT version FROM auth.schema_migrations ORDER BY version").compactMap { $0.string("version") }
        #expect(versions.count == 70)
        #expect(versions == GoTrueSchema.migrations.sorted())
        #expect(versions.last == "20260625000000")
        let report = try PostgresSchema.inspect(db)
        #expect(report.isComplete)
        #expect(report.unrecordedMigrations.isEmpty)
        #expect(report.unknownMigrations.isEmpty)
        #expect(report.lines.isEmpty)
    }

    /// An enum of GoTrue's that already exists (an interrupted migration) is kept, as GoTrue's
    /// migrations skip it, and the rest of the schema is created around it.
    @Test func anExistingEnumIsKeptAndTheSchemaCreated() throws {
        let db = try emptyDatabase()
        try db.executeScript("CREATE SCHEMA auth; CREATE TYPE auth.aal_level AS ENUM ('aal1', 'aal2', 'aal3');")
        try PostgresSchema.createGoTrueSchema(db)
        #expect(try PostgresSchema.inspect(db).isComplete)
    }

    @Test func creatingOverAnExistingSchemaIsRefusedAndChangesNothing() throws {
        let db = try createdDatabase()
        try db.execute("INSERT INTO auth.instances (id) VALUES ('00000000-0000-0000-0000-000000000001')")
        let error = #expect(throws: PostgresError.self) { try PostgresSchema.createGoTrueSchema(db) }
        #expect(error?.sqlstate == "42P07")
        #expect(try db.scalar("SELECT count(*) FROM auth.instances") == .integer(1))
    }

    @Test func rowsBehaveAsGoTruesDo() throws {
        let db = try createdDatabase()
        let id = "00000000-0000-4000-8000-0000000000aa"
        try db.execute(
            "INSERT INTO auth.users (id, aud, role, email, email_confirmed_at, raw_user_meta_data, created_at, updated_at) VALUES ($1, 'authenticated', 'authenticated', $2, $3, $4, $3, $3)",
            .text(id), .text("ada@example.com"), .postgresTimestamp(1_700_000_000_000_000), .text(#"{"first_name":"Ada"}"#))
        let user = try #require(try db.queryFirst("SELECT * FROM auth.users WHERE id = $1", .text(id)))
        #expect(user["confirmed_at"] == .integer(1_700_000_000_000_000), "generated from the email confirmation")
        #expect(user["phone_change"] == .text(""), "GoTrue's '' defaults")
        #expect(user["email_change_token_current"] == .text(""))
        #expect(user["confirmation_token"] == .null, "no default: GoTrue itself writes ''")
        #expect(user.bool("is_anonymous") == false)
        #expect(user.columns.count == 35)
        // Identities' generated email, and the cascade from users.
        try db.execute("INSERT INTO auth.identities (provider_id, user_id, identity_data, provider) VALUES ($1, $2, $3, 'email')",
                       .text(id), .text(id), .text(#"{"email":"ADA@Example.com"}"#))
        #expect(try db.scalar("SELECT email FROM auth.identities") == .text("ada@example.com"))
        // The refresh token id comes from its sequence; sessions.refreshed_at is a timestamp.
        try db.execute("INSERT INTO auth.sessions (id, user_id, refreshed_at, aal) VALUES ($1, $2, $3, 'aal1')",
                       .text("00000000-0000-4000-8000-0000000000bb"), .text(id), .postgresTimestamp(1_700_000_000_500_000))
        let token = try db.queryFirst("INSERT INTO auth.refresh_tokens (token, user_id, session_id, revoked) VALUES ('t1', $1, $2, false) RETURNING id",
                                      .text(id), .text("00000000-0000-4000-8000-0000000000bb"))
        #expect(token?["id"] == .integer(1))
        #expect(try db.scalar("SELECT refreshed_at FROM auth.sessions") == .integer(1_700_000_000_500_000))
        let badEnum = #expect(throws: PostgresError.self) {
            try db.execute("UPDATE auth.sessions SET aal = 'AAL1'")
        }
        #expect(badEnum?.sqlstate == "22P02")
        try db.execute("DELETE FROM auth.users WHERE id = $1", .text(id))
        #expect(try db.scalar("SELECT count(*) FROM auth.identities") == .integer(0))
        #expect(try db.scalar("SELECT count(*) FROM auth.refresh_tokens") == .integer(0))
    }

    @Test func adoptingACompleteSchemaFindsNothingMissing() throws {
        let created = try createdDatabase()
        // A second connection, as a later start of the emulator on the same database.
        let conninfo = try PostgresCluster.sharedCluster().connectionString(database: #require(created.scalar("SELECT current_database()").stringValue))
        let db = try PostgresConnection(conninfo, options: PostgresSessionOptions(role: nil))
        let report = try PostgresSchema.inspect(db)
        #expect(report.hasAuthTables)
        #expect(report.isComplete)
        #expect(report.missing.isEmpty)
    }

    @Test func adoptingASchemaOneMigrationBehindNamesWhatIsMissing() throws {
        let db = try createdDatabase()
        // As a database that GoTrue v2.189 (the CLI's pinned image) migrated.
        try db.executeScript("""
            ALTER TABLE auth.custom_oauth_providers DROP COLUMN custom_claims_allowlist;
            DELETE FROM auth.schema_migrations WHERE version = '20260625000000';
            """)
        let report = try PostgresSchema.inspect(db)
        #expect(report.hasAuthTables)
        #expect(!report.isComplete)
        #expect(report.missing.map(\.description) == [
            "auth.custom_oauth_providers.custom_claims_allowlist (migration 20260625000000, GoTrue v2.192.0)",
        ])
        #expect(report.lines == ["missing auth.custom_oauth_providers.custom_claims_allowlist (migration 20260625000000, GoTrue v2.192.0)"])
        #expect(report.unrecordedMigrations == ["20260625000000"])
    }

    @Test func adoptingAnOlderSchemaReportsTablesLabelsAndNewerVersions() throws {
        let db = try createdDatabase()
        try db.executeScript("""
            DROP TABLE auth.webauthn_challenges;
            ALTER TABLE auth.sessions DROP COLUMN scopes;
            DROP TYPE auth.oauth_client_type CASCADE;
            INSERT INTO auth.schema_migrations (version) VALUES ('20990101000000');
            """)
        let report = try PostgresSchema.inspect(db)
        let lines = report.missing.map(\.description)
        #expect(lines.contains("table auth.webauthn_challenges (migration 20260302000000, GoTrue v2.188.0)"))
        #expect(lines.contains("auth.sessions.scopes (migration 20251111201300, GoTrue v2.183.0)"))
        #expect(lines.contains("type auth.oauth_client_type (migration 20250901200500, GoTrue v2.180.0)"))
        #expect(lines.contains("auth.oauth_clients.client_type (migration 20250901200500, GoTrue v2.180.0)"), "dropped with its type")
        #expect(report.unknownMigrations == ["20990101000000"])
    }

    @Test func theEmulatorsOwnStateLivesInItsOwnSchema() throws {
        let db = try createdDatabase()
        let before = try db.query("SELECT tablename::text AS name FROM pg_tables WHERE schemaname = 'auth' ORDER BY 1")
        try PostgresSchema.prepareEmulatorSchema(db)
        try PostgresSchema.prepareEmulatorSchema(db)  // a second start finds it ready
        let after = try db.query("SELECT tablename::text AS name FROM pg_tables WHERE schemaname = 'auth' ORDER BY 1")
        #expect(before == after, "nothing is added to auth")
        let own = try db.query("SELECT tablename::text AS name FROM pg_tables WHERE schemaname = 'auth_emulator' ORDER BY 1").compactMap { $0.string("name") }
        #expect(own == ["authenticator_keys", "custom_oauth_provider_urls", "flow_state_redirects", "idp_signing_keys", "migrations", "outbox",
                        "project_signing_keys"])
        #expect(try db.scalar("SELECT count(*) FROM auth_emulator.migrations") == .integer(Int64(PostgresSchema.emulatorMigrations.count)))
        let badKey = #expect(throws: PostgresError.self) {
            try db.execute("INSERT INTO auth_emulator.idp_signing_keys VALUES ('k', 'not json', now())")
        }
        #expect(badKey?.sqlstate == "22P02")
    }
}

/// The schema the emulator creates, listed from the catalogs and compared line by line with
/// the listing of GoTrue's own migrations' result (PostgresGoldenSchemaFixture.swift).
@Suite(.enabled(if: PostgresCluster.canRun,
                "skipped: needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17); CI=true fails instead"))
struct PostgresGoldenSchemaTests {
    /// One line per table (with its RLS flag), column, constraint, index, enum and function of
    /// schema `auth`, in a stable order; the fixture was made with this same query.
    static let listing = """
        SELECT line FROM (
          SELECT 1 AS k, c.relname::text AS t, 0 AS s, '' AS n,
                 'table ' || c.relname || CASE WHEN c.relrowsecurity THEN ' rls' ELSE '' END AS line
          FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
          WHERE ns.nspname = 'auth' AND c.relkind = 'r'
          UNION ALL
          SELECT 1, c.relname::text, 1, lpad(a.attnum::text, 4, '0'),
                 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                 || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                 || CASE WHEN a.attgenerated = 's' THEN ' generated ' || pg_get_expr(d.adbin, d.adrelid)
                         WHEN d.adbin IS NOT NULL THEN ' default ' || pg_get_expr(d.adbin, d.adrelid) ELSE '' END
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace ns ON ns.oid = c.relnamespace
          LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE ns.nspname = 'auth' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
          UNION ALL
          SELECT 1, c.relname::text, 2, co.conname::text,
                 'constraint ' || c.relname || '.' || co.conname || ' ' || pg_get_constraintdef(co.oid)
          FROM pg_constraint co JOIN pg_class c ON c.oid = co.conrelid JOIN pg_namespace ns ON ns.oid = c.relnamespace
          WHERE ns.nspname = 'auth'
          UNION ALL
          SELECT 1, c.relname::text, 3, i.relname::text,
                 'index ' || c.relname || '.' || i.relname || ' '
                 || regexp_replace(pg_get_indexdef(i.oid), '^CREATE (UNIQUE )?INDEX \\S+ ON \\S+ ', '\\1')
          FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
          JOIN pg_namespace ns ON ns.oid = c.relnamespace
          WHERE ns.nspname = 'auth'
          UNION ALL
          SELECT 2, t.typname::text, 0, '', 'enum ' || t.typname || ' ' || string_agg(e.enumlabel::text, ', ' ORDER BY e.enumsortorder)
          FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace ns ON ns.oid = t.typnamespace
          WHERE ns.nspname = 'auth' GROUP BY t.typname
          UNION ALL
          SELECT 3, p.proname::text, 0, '', 'function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') returns '
                 || pg_get_function_result(p.oid) || ' ' || l.lanname
                 || CASE p.provolatile WHEN 's' THEN ' stable' WHEN 'i' THEN ' immutable' ELSE ' volatile' END
          FROM pg_proc p JOIN pg_namespace ns ON ns.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
          WHERE ns.nspname = 'auth'
        ) lines ORDER BY k, t, s, n
        """

    @Test func theCreatedSchemaMatchesGoTruesLineByLine() throws {
        // search_path public, as the fixture was listed: names in schema auth print qualified.
        let db = try PostgresConnection(try PostgresCluster.sharedCluster().makeDatabase(),
                                        options: PostgresSessionOptions(searchPath: ["public"], role: nil))
        try PostgresSchema.createGoTrueSchema(db)
        let actual = try db.query(Self.listing).compactMap { $0.string("line") }
        let expected = goTrueGoldenSchema.split(separator: "\n").map(String.init)
        let missing = expected.filter { !actual.contains($0) }
        let extra = actual.filter { !expected.contains($0) }
        #expect(missing.isEmpty, "in GoTrue's schema, not in the emulator's:\n\(missing.joined(separator: "\n"))")
        #expect(extra.isEmpty, "in the emulator's schema, not in GoTrue's:\n\(extra.joined(separator: "\n"))")
        // The same lines in the same order (column order included): the first that differs.
        let firstDifference = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstDifference == nil, "line \((firstDifference?.offset ?? 0) + 1): \(firstDifference?.element.0 ?? "") instead of \(firstDifference?.element.1 ?? "")")
        #expect(actual.count == expected.count)
    }
}

/// Bootstrap on a bare cluster of its own: roles are cluster-wide, and the other suites'
/// cluster must stay without them (they check what happens when supabase_auth_admin is absent).
@Suite(.enabled(if: PostgresCluster.canRun,
                "skipped: needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17); CI=true fails instead"))
struct PostgresBootstrapTests {
    @Test func bootstrapGivesABarePostgresSupabasesRolesAndAuthUIDWorksAsUnderPostgREST() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let admin = try PostgresConnection(cluster.connectionString(), options: PostgresSessionOptions(role: nil))
        try PostgresSchema.bootstrap(admin)
        try PostgresSchema.bootstrap(admin)  // idempotent
        let roles = try admin.query("""
            SELECT rolname::text AS name, rolcanlogin AS login, rolinherit AS inherit, rolbypassrls AS bypass, rolcreaterole AS createrole
            FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role', 'authenticator', 'supabase_auth_admin') ORDER BY 1
            """)
        #expect(roles.map { $0.string("name") } == ["anon", "authenticated", "authenticator", "service_role", "supabase_auth_admin"])
        let byName = Dictionary(uniqueKeysWithValues: roles.map { ($0.string("name") ?? "", $0) })
        #expect(byName["anon"]?.bool("login") == false)
        #expect(byName["authenticated"]?.bool("inherit") == false)
        #expect(byName["service_role"]?.bool("bypass") == true)
        #expect(byName["authenticator"]?.bool("login") == true)
        #expect(byName["supabase_auth_admin"]?.bool("createrole") == true)
        #expect(try admin.scalar("SELECT pg_has_role('authenticator', 'authenticated', 'MEMBER')") == .integer(1))
        #expect(try admin.scalar("SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'auth'") == .text("supabase_auth_admin"))
        admin.close()

        // With the role there, a superuser's connection writes as GoTrue does, and the schema
        // it creates belongs to GoTrue's role.
        let db = try PostgresConnection(cluster.connectionString())
        #expect(db.session.currentRole == "supabase_auth_admin")
        #expect(db.session.warnings.isEmpty)
        try PostgresSchema.createGoTrueSchema(db)
        try PostgresSchema.prepareEmulatorSchema(db)
        #expect(try db.scalar("SELECT tableowner::text FROM pg_tables WHERE schemaname = 'auth' AND tablename = 'users'") == .text("supabase_auth_admin"))
        #expect(try PostgresSchema.inspect(db).isComplete)

        // PostgREST's way: the API role, and the token's claims as a transaction setting.
        let sub = "8f7b2a3c-0000-4000-8000-000000000042"
        let claims = #"{"sub":"\#(sub)","role":"authenticated","email":"ada@example.com"}"#
        let seen = try db.transaction { db in
            try db.execute("SET LOCAL ROLE authenticated")
            try db.execute("SELECT set_config('request.jwt.claims', $1, true)", .text(claims))
            return try db.queryFirst("SELECT auth.uid()::text AS uid, auth.role() AS role, auth.email() AS email, auth.jwt() ->> 'sub' AS jwt_sub")
        }
        #expect(seen?["uid"] == .text(sub))
        #expect(seen?["role"] == .text("authenticated"))
        #expect(seen?["email"] == .text("ada@example.com"))
        #expect(seen?["jwt_sub"] == .text(sub))
        // The older per-claim setting is read too; no claims at all is NULL.
        #expect(try db.transaction { db in
            try db.execute("SELECT set_config('request.jwt.claim.sub', $1, true)", .text(sub))
            return try db.scalar("SELECT auth.uid()::text")
        } == .text(sub))
        #expect(try db.scalar("SELECT auth.uid()") == .null)
    }
}

extension PostgresBootstrapTests {
    /// Test workers that each start an emulator with `--db-bootstrap` on a fresh database of one
    /// bare server: the roles are the server's, so the bootstraps meet on them (the advisory lock
    /// is per database). Every store opens, on a cluster of its own, three rounds over.
    @Test func storesBootstrappingDatabasesOfOneServerAtOnceAllOpen() throws {
        let cluster = try PostgresCluster()
        defer { cluster.stop() }
        let workers = 6
        for round in 1...3 {
            let databases = try (0..<workers).map { _ in try cluster.makeDatabase() }
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: workers) { index in
                do {
                    let store = try Database(postgres: databases[index], postgres: PostgresOptions(bootstrap: true))
                    defer { store.close() }
                    _ = try store.write { try $0.insertUser(UserRecord(id: newID(), createdAt: t0)) }
                } catch {
                    failures.withLock { $0.append("round \(round), database \(index): \(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            // Back to a bare server for the next round: the roles go with what they own.
            let admin = try PostgresConnection(cluster.connectionString(), options: PostgresSessionOptions(role: nil))
            defer { admin.close() }
            for conninfo in databases {
                let name = try #require(conninfo.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst("dbname=".count))
                try admin.execute("DROP DATABASE \(name)")
            }
            try admin.execute("DROP ROLE authenticator, anon, authenticated, service_role, supabase_auth_admin")
        }
    }
}

/// `GoTrueSchema.tablesText`'s line forms, read without a database.
struct GoTrueSchemaTextTests {
    @Test func eachLineFormLandsInItsField() {
        let tables = GoTrueSchema.parse("""
            TABLE things SINCE 20200101000000 RLS
              id uuid NOT NULL
              -- a note is skipped
            SINCE 20210101000000
              label text DEFAULT ''::text
              CONSTRAINT things_pkey PRIMARY KEY (id)
              CONSTRAINT things_owner_fkey FOREIGN KEY (id) REFERENCES auth.users (id) ON DELETE CASCADE
            TABLE others SINCE 20220101000000
              id uuid
            """)
        #expect(tables.map(\.name) == ["things", "others"])
        #expect(tables.map(\.rowLevelSecurity) == [true, false])
        #expect(tables[0].since == "20200101000000")
        #expect(tables[0].columns.map(\.name) == ["id", "label"])
        #expect(tables[0].columns.map(\.definition) == ["uuid NOT NULL", "text DEFAULT ''::text"])
        #expect(tables[0].columns.map(\.since) == ["20200101000000", "20210101000000"])
        #expect(tables[0].constraints == ["CONSTRAINT things_pkey PRIMARY KEY (id)"])
        #expect(tables[0].foreignKeys == ["CONSTRAINT things_owner_fkey FOREIGN KEY (id) REFERENCES auth.users (id) ON DELETE CASCADE"])
        #expect(tables[1].columns.map(\.since) == ["20220101000000"], "a table's SINCE starts its columns over")
    }

    @Test func theSchemasTextHoldsEveryTableGoTrueCreates() {
        let tables = GoTrueSchema.tables
        #expect(tables.count == 23)
        #expect(tables.first?.name == "users")
        #expect(tables.first?.columns.count == 35)
        #expect(tables.filter(\.rowLevelSecurity).count == 16)
    }
}
