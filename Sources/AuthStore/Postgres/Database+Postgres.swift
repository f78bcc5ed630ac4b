/// Postgres mode's options beyond `DatabaseOptions` (whose `readerCount` sets the readers;
/// the busy timeout and checkpoints are SQLite's).
public struct PostgresOptions: Sendable {
    /// The role and search path the emulator writes with (GoTrue's: `supabase_auth_admin`,
    /// `auth`).
    public var session: PostgresSessionOptions
    /// Create what a Supabase Postgres has before GoTrue first runs (roles, schema `auth`),
    /// for a bare Postgres; needs a superuser login (`PostgresSchema.bootstrap`).
    public var bootstrap: Bool

    public init(session: PostgresSessionOptions = PostgresSessionOptions(), bootstrap: Bool = false) {
        self.session = session
        self.bootstrap = bootstrap
    }
}

/// What opening a Postgres-mode database found.
public struct PostgresSetup: Sendable, Equatable {
    /// Whether the emulator created GoTrue's schema (false: it adopted an existing one).
    public let createdSchema: Bool
    /// GoTrue's schema as found after that: what an adopted schema lacks is listed in `lines`.
    public let schema: GoTrueSchemaReport
    /// The writer session's roles, server version and warnings (writing as a superuser).
    public let session: PostgresSession
    /// What to tell the developer at start-up: the session's warnings, then the schema's gaps.
    public var warnings: [String] { session.warnings + (schema.isComplete && schema.unknownMigrations.isEmpty ? [] : schema.lines) }
}

/// Where Postgres-mode connections go.
struct PostgresTarget: Sendable {
    let conninfo: String
    let session: PostgresSessionOptions
    /// `Database.path` in this mode: names the database without the connection string (which
    /// may hold a password).
    let label: String
}

extension Database {
    /// Postgres mode: GoTrue's `auth` schema in the app's own Postgres (`conninfo`: a
    /// `postgres://` URL or libpq's `key=value` pairs).
    ///
    /// Opens the writer connection (as `postgres.session` says: GoTrue's role and search path
    /// when the login may take them), bootstraps a bare server first when asked, creates
    /// GoTrue's schema when `auth.users` is absent or adopts the one there, and brings the
    /// emulator's own schema `auth_emulator` up to date. Readers (`options.readerCount`, 0 to
    /// read on the writer) connect on first use.
    ///
    /// `read` and `write` keep their SQLite semantics: writes serialized on the writer and
    /// grouped, a nested `write` is a SAVEPOINT, a throw rolls back; a `read` on a reader is one
    /// READ ONLY, REPEATABLE READ transaction (one snapshot, as SQLite's). A `read` nested in a
    /// `write` runs in the write's transaction and is not refused its writes (SQLite's is).
    /// Postgres's failures reach callers as `StoreError` carrying the `PostgresError`.
    public convenience init(postgres conninfo: String, options: DatabaseOptions = .init(),
                            postgres postgresOptions: PostgresOptions = .init()) throws(StoreError) {
        do {
            if postgresOptions.bootstrap {
                var superuser = postgresOptions.session
                superuser.role = nil
                let connection = try PostgresConnection(conninfo, options: superuser)
                defer { connection.close() }
                try PostgresSchema.bootstrap(connection)
            }
            let writer = try PostgresConnection(conninfo, options: postgresOptions.session)
            do {
                // Several emulators may start on one fresh database at once (as GoTrue replicas
                // do). Inspecting, creating and migrating happen under one session-level
                // advisory lock, so the second to get it finds the schemas the first made and
                // adopts them, instead of trying to create them again. The lock is re-entrant
                // for the steps' own transaction-level locks, and goes with the connection
                // should a step fail.
                try writer.execute("SELECT pg_advisory_lock($1)", .integer(Int64(PostgresSchema.schemaLock)))
                var schema = try PostgresSchema.inspect(writer)
                let creates = !schema.hasAuthTables
                if creates {
                    do {
                        try PostgresSchema.createGoTrueSchema(writer)
                    } catch let error as PostgresError where error.sqlstate == "42501" {
                        // The role exists (roles are the server's, not the database's) but this
                        // database was never prepared for it: what a bootstrap grants.
                        throw PostgresError(
                            sqlstate: error.sqlstate, step: "create GoTrue's schema",
                            message: "\(error.message): role \(writer.session.currentRole) may not create GoTrue's schema in this database; "
                                + "start once with --db-bootstrap (connected as a superuser), which grants it",
                            detail: error.detail, hint: error.hint, context: error.context)
                    }
                    schema = try PostgresSchema.inspect(writer)
                }
                try PostgresSchema.prepareEmulatorSchema(writer)
                try writer.execute("SELECT pg_advisory_unlock($1)", .integer(Int64(PostgresSchema.schemaLock)))
                let name = try writer.scalar("SELECT current_database()").stringValue ?? ""
                let target = PostgresTarget(conninfo: conninfo, session: postgresOptions.session, label: "postgres:\(name)")
                let setup = PostgresSetup(createdSchema: creates, schema: schema, session: writer.session)
                self.init(pool: ConnectionPool(postgres: target, writer: writer, options: options), options: options, setup: setup)
            } catch {
                writer.close()
                throw error
            }
        } catch {
            throw StoreError(postgresMode: error)
        }
    }
}
