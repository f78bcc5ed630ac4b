/// The three things Postgres mode does with a database's schema:
///
/// - **create** GoTrue's `auth` schema on a database that has none (`createGoTrueSchema`), as
///   GoTrue's newest migration leaves it, with every GoTrue migration version recorded so a
///   real `gotrue migrate` later finds nothing to do;
/// - **adopt** an existing one (`inspect`): a report of every table, column and enum label
///   the emulator expects and the database lacks, with the migration and release that added it;
/// - **bootstrap** a bare Postgres (`bootstrap`, opt-in): the roles, schema grants and
///   extensions a Supabase Postgres has before GoTrue first runs.
///
/// Emulator-only state lives in its own schema, `auth_emulator` (`prepareEmulatorSchema`);
/// nothing is added to `auth`.
public enum PostgresSchema {
    /// Serialises schema changes between emulator processes starting on one database
    /// (`pg_advisory_xact_lock`; released at commit or rollback). The number is arbitrary.
    static let schemaLock = 7_361_402_118

    // MARK: Inspect / adopt

    /// What the database's `auth` schema holds compared with GoTrue's newest.
    public static func inspect(_ connection: PostgresConnection) throws(PostgresError) -> GoTrueSchemaReport {
        var present: [String: Set<String>] = [:]
        for row in try connection.query(
            "SELECT table_name::text AS t, column_name::text AS c FROM information_schema.columns WHERE table_schema = 'auth'") {
            present[row.string("t") ?? "", default: []].insert(row.string("c") ?? "")
        }
        var labels: [String: Set<String>] = [:]
        for row in try connection.query(
            """
            SELECT t.typname::text AS type, e.enumlabel::text AS label
            FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace LEFT JOIN pg_enum e ON e.enumtypid = t.oid
            WHERE n.nspname = 'auth' AND t.typtype = 'e'
            """) {
            labels[row.string("type") ?? "", default: []].formUnion(row.string("label").map { [$0] } ?? [])
        }
        var recorded: Set<String> = []
        if present["schema_migrations"]?.contains("version") == true {
            for row in try connection.query("SELECT version::text AS v FROM auth.schema_migrations") {
                recorded.insert(row.string("v") ?? "")
            }
        }

        var missing: [GoTrueSchemaReport.Missing] = []
        for table in GoTrueSchema.tables {
            guard let columns = present[table.name] else {
                missing.append(.init(kind: .table, table: table.name, name: nil, migration: table.since))
                continue
            }
            for column in table.columns where !columns.contains(column.name) {
                missing.append(.init(kind: .column, table: table.name, name: column.name, migration: column.since))
            }
        }
        for type in GoTrueSchema.enums {
            guard let existing = labels[type.name] else {
                missing.append(.init(kind: .enumType, table: type.name, name: nil, migration: type.since))
                continue
            }
            for label in type.labels where !existing.contains(label) {
                missing.append(.init(kind: .enumLabel, table: type.name, name: label,
                                     migration: GoTrueSchema.labelSince["\(type.name).\(label)"] ?? type.since))
            }
        }
        let known = Set(GoTrueSchema.migrations)
        return GoTrueSchemaReport(
            hasAuthTables: present["users"] != nil,
            missing: missing,
            unrecordedMigrations: GoTrueSchema.migrations.filter { !recorded.contains($0) },
            unknownMigrations: recorded.filter { !known.contains($0) && !GoTrueSchema.legacyMigrations.contains($0) }.sorted())
    }

    // MARK: Create

    /// Creates GoTrue's `auth` schema on a database without `auth.users`, in one transaction:
    /// nothing is left half-made. Throws (SQLSTATE 42P07, duplicate_table) when the tables
    /// exist: adopt those instead. Tables belong to the session's role (GoTrue's migrations run
    /// as `supabase_auth_admin`; `PostgresConnection` sets that role when it may).
    public static func createGoTrueSchema(_ connection: PostgresConnection) throws {
        try connection.transaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", .integer(Int64(schemaLock)))
            let exists = try connection.scalar("SELECT to_regclass('auth.users') IS NOT NULL").int64Value == 1
            if exists {
                throw PostgresError(sqlstate: "42P07", step: "create auth schema",
                                    message: "auth.users already exists: adopt the existing schema instead of creating one")
            }
            try connection.executeScript(GoTrueSchema.creationScript)
        }
    }

    // MARK: Emulator schema

    /// The emulator's own tables (captured messages, signing keys, software authenticator
    /// keys, what GoTrue's tables have no column for), in schema `auth_emulator`, created or
    /// brought up to date. Append-only: a shipped step never changes, later ones alter.
    static let emulatorMigrations: [(id: String, sql: String)] = [
        ("0001_initial", """
            CREATE TABLE auth_emulator.outbox (
              seq bigserial PRIMARY KEY,
              id text NOT NULL UNIQUE,
              channel text NOT NULL,
              recipient text NOT NULL,
              type text NOT NULL,
              subject text NOT NULL DEFAULT '',
              body_html text NOT NULL DEFAULT '',
              body_text text NOT NULL DEFAULT '',
              otp text NOT NULL DEFAULT '',
              token_hash text NOT NULL DEFAULT '',
              action_link text NOT NULL DEFAULT '',
              redirect_to text NOT NULL DEFAULT '',
              user_id uuid,
              sent_at timestamptz NOT NULL
            );
            CREATE INDEX outbox_recipient_idx ON auth_emulator.outbox (recipient, seq);
            -- JWKs stay text (jsonb would reorder their members); the cast checks they parse.
            CREATE TABLE auth_emulator.idp_signing_keys (
              kid text PRIMARY KEY,
              private_jwk text NOT NULL CHECK (private_jwk::jsonb IS NOT NULL),
              created_at timestamptz NOT NULL
            );
            CREATE TABLE auth_emulator.project_signing_keys (
              algorithm text PRIMARY KEY,
              private_jwk text NOT NULL CHECK (private_jwk::jsonb IS NOT NULL),
              created_at timestamptz NOT NULL
            );
            CREATE TABLE auth_emulator.authenticator_keys (
              credential_id text PRIMARY KEY,
              user_id uuid NOT NULL,
              rp_id text NOT NULL,
              user_handle text NOT NULL,
              private_key text NOT NULL,
              sign_count bigint NOT NULL DEFAULT 0,
              discoverable boolean NOT NULL DEFAULT true,
              created_at timestamptz NOT NULL
            );
            CREATE INDEX authenticator_keys_user_id_idx ON auth_emulator.authenticator_keys (user_id);
            -- GoTrue's flow_state has no redirect_to; the emulator keeps it beside the row.
            CREATE TABLE auth_emulator.flow_state_redirects (
              flow_state_id uuid PRIMARY KEY REFERENCES auth.flow_state (id) ON DELETE CASCADE,
              redirect_to text NOT NULL
            );
            """),
        // GoTrue's custom_oauth_providers takes https URLs only (CHECK constraints); the
        // emulator's own fake issuers are served over http on loopback. Their http URLs are
        // kept here, the https form in auth. The foreign key only where the table exists
        // (GoTrue v2.187.0 added it).
        ("0002_custom_oauth_provider_urls", """
            CREATE TABLE auth_emulator.custom_oauth_provider_urls (
              provider_id uuid PRIMARY KEY,
              issuer text,
              discovery_url text,
              authorization_url text,
              token_url text,
              userinfo_url text,
              jwks_uri text
            );
            DO $$
            BEGIN
              IF to_regclass('auth.custom_oauth_providers') IS NOT NULL THEN
                ALTER TABLE auth_emulator.custom_oauth_provider_urls ADD CONSTRAINT custom_oauth_provider_urls_provider_id_fkey
                  FOREIGN KEY (provider_id) REFERENCES auth.custom_oauth_providers (id) ON DELETE CASCADE;
              END IF;
            END
            $$;
            """),
    ]

    /// Creates `auth_emulator` and applies the steps it lacks, in one transaction. Needs
    /// GoTrue's tables first (a foreign key refers to `auth.flow_state`).
    public static func prepareEmulatorSchema(_ connection: PostgresConnection) throws {
        try connection.transaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", .integer(Int64(schemaLock)))
            try connection.executeScript("""
                CREATE SCHEMA IF NOT EXISTS auth_emulator;
                CREATE TABLE IF NOT EXISTS auth_emulator.migrations (
                  id text PRIMARY KEY,
                  applied_at timestamptz NOT NULL DEFAULT now()
                );
                """)
            let applied = Set(try connection.query("SELECT id FROM auth_emulator.migrations").compactMap { $0.string("id") })
            for migration in emulatorMigrations where !applied.contains(migration.id) {
                try connection.executeScript(migration.sql)
                try connection.execute("INSERT INTO auth_emulator.migrations (id) VALUES ($1)", .text(migration.id))
            }
        }
    }

    // MARK: Bootstrap

    /// What a Supabase Postgres has before GoTrue first runs (the `supabase/postgres` image's
    /// initial scripts), for a bare Debian or Homebrew Postgres: the API roles `anon`,
    /// `authenticated` (no login, no inherit) and `service_role` (also BYPASSRLS),
    /// `authenticator` (login, granted the three), `supabase_auth_admin` (login, CREATEROLE,
    /// `search_path = auth`, allowed to create schemas in this database), schema `auth` owned by
    /// it with USAGE for the API roles, the API roles' access to `public` (and their default
    /// privileges there), the `extensions` schema with pgcrypto and uuid-ossp when the server has
    /// them, and the API roles' statement timeouts. Idempotent: what exists is left alone.
    /// Needs a superuser (or a role with CREATEROLE that may grant these).
    ///
    /// No passwords are set: `authenticator` and `supabase_auth_admin` log in only once someone
    /// gives them one. Run it before `createGoTrueSchema`, on a connection that stays the login
    /// role (`PostgresSessionOptions(role: nil)`), so the schema can be given away.
    ///
    /// Several processes may bootstrap at once, on one database or on different databases of one
    /// server (test workers that each start an emulator on a fresh database). The advisory lock
    /// serializes them only within a database, and roles, their settings and their memberships
    /// are the whole server's: Postgres refuses the second of two concurrent changes to one role
    /// ("tuple concurrently updated"), or a `CREATE ROLE` whose name another transaction took
    /// after the check. The script being idempotent, it then runs again (`bootstrapAttempts`).
    public static func bootstrap(_ connection: PostgresConnection) throws {
        var attempt = 1
        while true {
            do {
                return try bootstrapOnce(connection)
            } catch let error as PostgresError where attempt < bootstrapAttempts && isConcurrentRoleChange(error) {
                attempt += 1
                // A few milliseconds apart, so that processes started together stop meeting.
                sleepCurrentThread(milliseconds: Int.random(in: 2...20))
            }
        }
    }

    static let bootstrapAttempts = 8

    /// 23505 and 42710: a role's name taken between the check and `CREATE ROLE`; XX000: "tuple
    /// concurrently updated" (a role, its settings or a membership changed by two transactions);
    /// 40001 and 40P01: the same meeting reported as a conflict.
    static func isConcurrentRoleChange(_ error: PostgresError) -> Bool {
        ["23505", "42710", "XX000", "40001", "40P01"].contains(error.sqlstate)
    }

    private static func bootstrapOnce(_ connection: PostgresConnection) throws {
        try connection.transaction { connection in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", .integer(Int64(schemaLock)))
            try connection.executeScript(bootstrapScript)
            // Extensions exist only where the server ships them (Debian: postgresql-contrib,
            // part of postgresql-15); their absence is no reason to fail.
            let available = Set(try connection.query(
                "SELECT name::text AS name FROM pg_available_extensions WHERE name IN ('pgcrypto', 'uuid-ossp')").compactMap { $0.string("name") })
            for name in ["uuid-ossp", "pgcrypto"] where available.contains(name) {
                try connection.execute("CREATE EXTENSION IF NOT EXISTS \(PostgresConnection.quoteIdentifier(name)) WITH SCHEMA extensions")
            }
        }
    }

    static let bootstrapScript = """
        DO $$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'anon') THEN
            CREATE ROLE anon NOLOGIN NOINHERIT;
          END IF;
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'authenticated') THEN
            CREATE ROLE authenticated NOLOGIN NOINHERIT;
          END IF;
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'service_role') THEN
            CREATE ROLE service_role NOLOGIN NOINHERIT BYPASSRLS;
          END IF;
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'authenticator') THEN
            CREATE ROLE authenticator LOGIN NOINHERIT;
          END IF;
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'supabase_auth_admin') THEN
            CREATE ROLE supabase_auth_admin LOGIN NOINHERIT CREATEROLE NOREPLICATION;
          END IF;
          EXECUTE format('GRANT CREATE ON DATABASE %I TO supabase_auth_admin', current_database());
        END
        $$;
        GRANT anon, authenticated, service_role TO authenticator;
        ALTER ROLE supabase_auth_admin SET search_path = auth;
        ALTER ROLE anon SET statement_timeout = '3s';
        ALTER ROLE authenticated SET statement_timeout = '8s';
        CREATE SCHEMA IF NOT EXISTS auth AUTHORIZATION supabase_auth_admin;
        GRANT USAGE ON SCHEMA auth TO anon, authenticated, service_role;
        GRANT USAGE ON SCHEMA public TO anon, authenticated, service_role;
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON TABLES TO anon, authenticated, service_role;
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON FUNCTIONS TO anon, authenticated, service_role;
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT ALL ON SEQUENCES TO anon, authenticated, service_role;
        CREATE SCHEMA IF NOT EXISTS extensions;
        GRANT USAGE ON SCHEMA extensions TO anon, authenticated, service_role;
        """
}

/// How an existing `auth` schema compares with GoTrue's newest (`PostgresSchema.inspect`).
public struct GoTrueSchemaReport: Sendable, Equatable {
    public struct Missing: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: Sendable, Equatable { case table, column, enumType, enumLabel }
        public let kind: Kind
        /// The table (or, for enums, the type) it belongs to.
        public let table: String
        /// The column or enum label; nil for a whole table or type.
        public let name: String?
        /// The GoTrue migration version that added it.
        public let migration: String

        /// The first GoTrue release that shipped that migration, when known.
        public var release: String? { GoTrueSchema.firstRelease[migration] }

        /// `auth.sessions.scopes (migration 20251111201300, GoTrue v2.183.0)`.
        public var description: String {
            let what: String
            switch kind {
            case .table: what = "table auth.\(table)"
            case .column: what = "auth.\(table).\(name ?? "")"
            case .enumType: what = "type auth.\(table)"
            case .enumLabel: what = "label '\(name ?? "")' of type auth.\(table)"
            }
            return "\(what) (migration \(migration)" + (release.map { ", GoTrue \($0)" } ?? "") + ")"
        }
    }

    /// Whether `auth.users` exists: adopt when it does, create when it does not.
    public let hasAuthTables: Bool
    public let missing: [Missing]
    /// GoTrue migration versions without a row in `auth.schema_migrations`.
    public let unrecordedMigrations: [String]
    /// Rows in `auth.schema_migrations` this emulator does not know: a newer GoTrue migrated
    /// the database, and its newer columns are not written by the emulator.
    public let unknownMigrations: [String]

    /// Everything the emulator expects is there.
    public var isComplete: Bool { hasAuthTables && missing.isEmpty }

    /// One line per finding, for a start-up message.
    public var lines: [String] {
        guard hasAuthTables else { return ["auth.users does not exist: the auth schema has not been created"] }
        var lines = missing.map { "missing \($0)" }
        if !unknownMigrations.isEmpty {
            lines.append("auth.schema_migrations records versions newer than this emulator knows: " + unknownMigrations.joined(separator: ", "))
        }
        return lines
    }
}

extension GoTrueSchema {
    /// Enum labels added after their type.
    static let labelSince: [String: String] = ["factor_type.phone": "20240729123726"]

    /// Versions the `supabase/postgres` image records for the pre-GoTrue tables it creates.
    static let legacyMigrations: Set<String> = [
        "20171026211738", "20171026211808", "20171026211834", "20180103212743", "20180108183307", "20180119214651", "20180125194653",
    ]
}
