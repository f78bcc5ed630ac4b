import CSQLite

/// One schema change. `id` sorts and names it; `sql` is a script of `;`-separated statements.
public struct Migration: Sendable, Hashable {
    public let id: String
    public let sql: String

    public init(id: String, sql: String) {
        self.id = id
        self.sql = sql
    }
}

/// The emulator's migrations, in the order they are applied.
///
/// Append-only: a migration that has shipped is never edited, reordered or removed, because
/// databases in the field have it recorded as applied and will never run it again; change the
/// schema by appending a new one (the way GoTrue's `migrations/` directory grows).
///
/// A migration that must rebuild a table (SQLite's ALTER TABLE cannot change constraints) should
/// follow https://sqlite.org/lang_altertable.html §7, using `PRAGMA defer_foreign_keys = ON`
/// since `foreign_keys` cannot be switched off inside the migration's transaction.
public enum Migrations {
    public static let all: [Migration] = [
        Migration(id: "0001_auth_schema", sql: Schema.authSchema),
        Migration(id: "0002_outbox", sql: OutboxSchema.sql),
        // Every refresh revokes one row and inserts another; these two indexes (kept from GoTrue's
        // schema) are never used by a query here and only made each rotation write more pages.
        Migration(id: "0003_drop_unused_refresh_token_indexes", sql: """
            DROP INDEX IF EXISTS refresh_tokens_parent_idx;
            DROP INDEX IF EXISTS refresh_tokens_user_id_revoked_idx;
            """),
        // The fake identity providers' RSA key (GoTrue has no such table: it talks to real ones).
        Migration(id: "0004_idp_signing_keys", sql: IdPKeysSchema.sql),
        // Audit entries are only ever listed (by time), never looked up by id, yet the id's
        // primary key gave every insert (each sign-in, refresh, sign-up, ...) a write at a random
        // place of a unique index. The table keeps its ids, rows and row order; only that index
        // goes (SQLite cannot drop a constraint in place: https://sqlite.org/lang_altertable.html §7).
        Migration(id: "0005_audit_log_entries_without_id_index", sql: """
            CREATE TABLE audit_log_entries_new (
                id TEXT NOT NULL,
                instance_id TEXT,
                payload TEXT NOT NULL CHECK (json_valid(payload)),
                created_at INTEGER,
                ip_address TEXT NOT NULL DEFAULT ''
            ) STRICT;
            INSERT INTO audit_log_entries_new (rowid, id, instance_id, payload, created_at, ip_address)
                SELECT rowid, id, instance_id, payload, created_at, ip_address FROM audit_log_entries ORDER BY rowid;
            DROP TABLE audit_log_entries;
            ALTER TABLE audit_log_entries_new RENAME TO audit_log_entries;
            CREATE INDEX audit_log_entries_created_at_idx ON audit_log_entries (created_at);
            """),
        // GoTrue's flow_state columns for OAuth flows: the invite being accepted, the user a
        // manual link targets, and whether the provider may omit the email.
        Migration(id: "0006_flow_state_oauth_columns", sql: """
            ALTER TABLE flow_state ADD COLUMN invite_token TEXT;
            ALTER TABLE flow_state ADD COLUMN linking_target_id TEXT;
            ALTER TABLE flow_state ADD COLUMN email_optional INTEGER NOT NULL DEFAULT 0;
            """),
        // Keys made by `serve --signing-key` (GoTrue reads its keys from the environment).
        Migration(id: "0007_project_signing_keys", sql: ProjectSigningKeysSchema.sql),
        // The OAuth 2.1 server: its clients, authorization requests, consents, and the client
        // and scopes of the sessions it issues (GoTrue's oauth_* tables and sessions columns).
        Migration(id: "0008_oauth_server", sql: OAuthServerSchema.sql),
        // Passkeys (GoTrue's 20260302000000_add_passkeys) and the software authenticator's keys.
        Migration(id: "0008_webauthn_credentials", sql: WebAuthnSchema.sql),
        // GoTrue's 20251007112900_add_session_refresh_token_columns: the key that signs a
        // session's refresh tokens of the second format, and the counter of its newest one.
        Migration(id: "0009_session_refresh_token_columns", sql: """
            ALTER TABLE sessions ADD COLUMN refresh_token_hmac_key TEXT;
            ALTER TABLE sessions ADD COLUMN refresh_token_counter INTEGER;
            """),
        // Every GET /user and token grant reads the user's identities, oldest first. On the
        // user_id index alone SQLite sorted them for ORDER BY created_at, rowid on each read; an
        // index on (user_id, created_at) holds its entries in that order (the rowid last), so
        // the read no longer sorts. It serves every lookup the old index did.
        Migration(id: "0010_identities_user_id_created_at_idx", sql: """
            CREATE INDEX identities_user_id_created_at_idx ON identities (user_id, created_at);
            DROP INDEX identities_user_id_idx;
            """),
        // Fewer pages written per refresh (and per sign-in, sign-up, sign-out: every audited
        // write). A 12-character refresh wrote ~8.3 pages to the WAL; two of them are dropped:
        // - AUTOINCREMENT kept `refresh_tokens`' counter in `sqlite_sequence`, a page rewritten
        //   by every insert. A plain INTEGER PRIMARY KEY still numbers new rows above every row
        //   present (https://sqlite.org/autoinc.html); an id freed by deleting the newest row may
        //   come back, which nothing observes: ids stay inside the store, and "newest token of a
        //   session" (ORDER BY id DESC) stays right since a new row is above all present ones.
        //   SQLite cannot drop AUTOINCREMENT in place, so the table is rebuilt
        //   (https://sqlite.org/lang_altertable.html §7), keeping ids and rows; nothing refers
        //   to it by foreign key, and DROP TABLE removes its `sqlite_sequence` row. A row whose
        //   session is gone (only a tool writing with foreign keys off can leave one) is not
        //   carried over: the new table's foreign key would refuse it and fail the migration,
        //   and such a token is dead anyway (a refresh deletes it: "No Valid Session Found").
        // - The index on `audit_log_entries (created_at)`, whose newest leaf every audited write
        //   rewrote. GoTrue's table has none (only `instance_id`); as there, `GET /admin/audit`
        //   sorts what it lists, and the dashboard's change stamp reads the newest rowid instead.
        Migration(id: "0011_refresh_tokens_rowid", sql: """
            CREATE TABLE refresh_tokens_new (
                id INTEGER PRIMARY KEY,
                token TEXT NOT NULL UNIQUE,
                user_id TEXT NOT NULL,
                revoked INTEGER NOT NULL DEFAULT 0,
                created_at INTEGER,
                updated_at INTEGER,
                parent TEXT,
                session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE
            ) STRICT;
            INSERT INTO refresh_tokens_new (id, token, user_id, revoked, created_at, updated_at, parent, session_id)
                SELECT id, token, user_id, revoked, created_at, updated_at, parent, session_id FROM refresh_tokens
                WHERE session_id IS NULL OR session_id IN (SELECT id FROM sessions) ORDER BY id;
            DROP TABLE refresh_tokens;
            ALTER TABLE refresh_tokens_new RENAME TO refresh_tokens;
            CREATE INDEX refresh_tokens_session_id_revoked_idx ON refresh_tokens (session_id, revoked);
            DROP INDEX audit_log_entries_created_at_idx;
            """),
    ]
}

/// Applies pending migrations, safely when several processes open the same new file at once.
///
/// Each migration runs in its own BEGIN IMMEDIATE transaction together with its record in
/// `schema_migrations`, and the record is re-checked after the write lock is held: whoever takes
/// the lock first applies it, the others find it recorded and skip it.
///
/// Recorded ids missing from the list (a newer build wrote the file) are ignored, so an older
/// build keeps working on tables it knows; that newer schema must therefore stay compatible
/// with older builds, as additive migrations are.
struct Migrator {
    let migrations: [Migration]

    init(_ migrations: [Migration]) {
        var seen = Set<String>()
        for migration in migrations {
            precondition(seen.insert(migration.id).inserted, "duplicate migration id \(migration.id)")
        }
        self.migrations = migrations
    }

    static let createTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            id TEXT PRIMARY KEY,
            applied_at INTEGER NOT NULL
        ) STRICT
        """

    func migrate(_ pool: ConnectionPool) throws(StoreError) {
        do {
            // Fast path for an up-to-date file: one read, no write lock.
            let applied = try pool.read { connection in
                let exists = try connection.scalar(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'")
                guard exists.int64Value == 1 else { return Set<String>() }
                return Set(try connection.query("SELECT id FROM schema_migrations").compactMap { $0.string("id") })
            }
            let pending = migrations.filter { !applied.contains($0.id) }
            guard !pending.isEmpty else { return }

            try pool.write { connection in try connection.execute(Self.createTable) }
            for migration in pending {
                do {
                    try apply(migration, pool)
                } catch let error as StoreError {
                    throw StoreError(code: error.code, message: "migration \(migration.id): \(error.message)")
                }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: SQLITE_ERROR, message: "migrate: \(error)")
        }
    }

    private func apply(_ migration: Migration, _ pool: ConnectionPool) throws {
        try pool.write { connection in
            let recorded = try connection.scalar("SELECT 1 FROM schema_migrations WHERE id = ?", .text(migration.id))
            guard recorded.isNull else { return }
            try connection.executeScript(migration.sql)
            // The store has no clock of its own (time is injected above it), so the
            // record uses SQLite's: unix microseconds from the Julian day number.
            try connection.execute(
                """
                INSERT INTO schema_migrations (id, applied_at)
                VALUES (?, CAST(round((julianday('now') - 2440587.5) * 86400000000.0) AS INTEGER))
                """,
                .text(migration.id))
        }
    }
}
