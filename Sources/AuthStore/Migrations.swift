import CSQLite

/// One schema change. `id` sorts and names it; `sql` is a script of `;`-separated statements.
/// `formerIDs` are names it was recorded under by earlier builds (a renumbering): a database
/// holding one of them has it applied, and applying it records every name, so builds that know
/// only an old name keep opening files made by newer ones.
public struct Migration: Sendable, Hashable {
    public let id: String
    public let formerIDs: [String]
    public let sql: String

    public init(id: String, formerIDs: [String] = [], sql: String) {
        self.id = id
        self.formerIDs = formerIDs
        self.sql = sql
    }

    /// Every name the migration is recorded under.
    var names: [String] { [id] + formerIDs }
}

/// The emulator's migrations, in the order they are applied.
///
/// Append-only: a migration that has shipped is never edited, reordered or removed, because
/// databases in the field have it recorded as applied and will never run it again; change the
/// schema by appending a new one (the way GoTrue's `migrations/` directory grows). So each one's
/// SQL is frozen text written here, never built from constants the code may change later, and
/// `MigrationFingerprintTests` pins every shipped text by its SHA-256.
///
/// The schema models GoTrue's `auth.*` tables as its migrations leave them (supabase/auth
/// `migrations/*.up.sql`), mapped from Postgres:
/// - timestamptz → INTEGER unix microseconds (UTC), NULL when unset;
/// - uuid → TEXT, lowercase hyphenated; jsonb → TEXT holding JSON (CHECK json_valid, since
///   jsonb rejects invalid documents too); boolean → INTEGER 0/1;
/// - Postgres enums (aal_level, factor_type, one_time_token_type, …) → TEXT, their vocabulary
///   kept by the API layer, so widening one (GoTrue added factor_type 'phone' later) needs no
///   table rebuild.
/// Tables are STRICT (SQLite ≥ 3.37) so a wrongly typed value fails instead of being stored.
///
/// A migration that must rebuild a table (SQLite's ALTER TABLE cannot change constraints) should
/// follow https://sqlite.org/lang_altertable.html §7, using `PRAGMA defer_foreign_keys = ON`
/// since `foreign_keys` cannot be switched off inside the migration's transaction.
public enum Migrations {
    public static let all: [Migration] = [
        Migration(id: "0001_auth_schema", sql: """
            CREATE TABLE users (
                id TEXT PRIMARY KEY NOT NULL,
                instance_id TEXT,
                aud TEXT NOT NULL DEFAULT '',
                role TEXT NOT NULL DEFAULT '',
                email TEXT,
                encrypted_password TEXT,
                email_confirmed_at INTEGER,
                invited_at INTEGER,
                confirmation_token TEXT,
                confirmation_sent_at INTEGER,
                recovery_token TEXT,
                recovery_sent_at INTEGER,
                email_change_token_new TEXT,
                email_change TEXT,
                email_change_sent_at INTEGER,
                email_change_token_current TEXT,
                email_change_confirm_status INTEGER NOT NULL DEFAULT 0,
                last_sign_in_at INTEGER,
                raw_app_meta_data TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(raw_app_meta_data)),
                raw_user_meta_data TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(raw_user_meta_data)),
                is_super_admin INTEGER,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                phone TEXT,
                phone_confirmed_at INTEGER,
                phone_change TEXT,
                phone_change_token TEXT,
                phone_change_sent_at INTEGER,
                -- GoTrue: GENERATED ALWAYS AS (LEAST(email_confirmed_at, phone_confirmed_at)).
                -- Postgres LEAST skips NULLs, SQLite's min() returns NULL if any argument is NULL.
                confirmed_at INTEGER GENERATED ALWAYS AS (
                    CASE
                        WHEN email_confirmed_at IS NULL THEN phone_confirmed_at
                        WHEN phone_confirmed_at IS NULL THEN email_confirmed_at
                        ELSE min(email_confirmed_at, phone_confirmed_at)
                    END
                ) VIRTUAL,
                banned_until INTEGER,
                reauthentication_token TEXT,
                reauthentication_sent_at INTEGER,
                -- GoTrue exempts SSO accounts from email uniqueness (users_email_partial_key).
                is_sso_user INTEGER NOT NULL DEFAULT 0,
                deleted_at INTEGER,
                is_anonymous INTEGER NOT NULL DEFAULT 0
            ) STRICT;

            -- One account per email and audience; the API lowercases emails, lower() guards the rule
            -- against any caller that does not.
            CREATE UNIQUE INDEX users_email_partial_key ON users (aud, lower(email))
                WHERE email IS NOT NULL AND email <> '' AND is_sso_user = 0;
            -- SQLite uses a partial index only when the query repeats its WHERE terms
            -- (https://sqlite.org/partialindex.html §2), so lookups get plain indexes: by the stored
            -- (lowercase) value and, as GoTrue's users_instance_id_email_idx, by lower(email).
            CREATE INDEX users_email_idx ON users (email);
            CREATE INDEX users_instance_id_email_idx ON users (lower(email));
            -- GoTrue: phone ... UNIQUE (users_phone_key); empty means "no phone" here.
            CREATE UNIQUE INDEX users_phone_key ON users (phone)
                WHERE phone IS NOT NULL AND phone <> '';
            CREATE INDEX users_phone_idx ON users (phone);
            -- Token lookups by /verify and friends. GoTrue makes these unique except for numeric OTPs;
            -- plain indexes avoid refusing a colliding OTP and the API checks the owner anyway.
            -- `IS NOT NULL` is the one partial-index term that `col = ?` implies.
            CREATE INDEX confirmation_token_idx ON users (confirmation_token)
                WHERE confirmation_token IS NOT NULL;
            CREATE INDEX recovery_token_idx ON users (recovery_token)
                WHERE recovery_token IS NOT NULL;
            CREATE INDEX email_change_token_new_idx ON users (email_change_token_new)
                WHERE email_change_token_new IS NOT NULL;
            CREATE INDEX email_change_token_current_idx ON users (email_change_token_current)
                WHERE email_change_token_current IS NOT NULL;
            CREATE INDEX reauthentication_token_idx ON users (reauthentication_token)
                WHERE reauthentication_token IS NOT NULL;
            -- Admin user listing is newest first.
            CREATE INDEX users_created_at_idx ON users (created_at);
            CREATE INDEX users_is_anonymous_idx ON users (is_anonymous);

            CREATE TABLE identities (
                -- GoTrue's row id (exposed as identity_id); provider_id is the provider's subject.
                id TEXT PRIMARY KEY NOT NULL,
                provider_id TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                identity_data TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(identity_data)),
                provider TEXT NOT NULL,
                last_sign_in_at INTEGER,
                created_at INTEGER,
                updated_at INTEGER,
                -- GoTrue: email text GENERATED ALWAYS AS (lower(identity_data->>'email')) STORED.
                email TEXT GENERATED ALWAYS AS (lower(json_extract(identity_data, '$.email'))) VIRTUAL,
                UNIQUE (provider_id, provider)
            ) STRICT;
            CREATE INDEX identities_user_id_idx ON identities (user_id);
            CREATE INDEX identities_email_idx ON identities (email);

            CREATE TABLE sessions (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                created_at INTEGER,
                updated_at INTEGER,
                factor_id TEXT,
                aal TEXT,
                not_after INTEGER,
                refreshed_at INTEGER,
                user_agent TEXT,
                ip TEXT,
                tag TEXT
            ) STRICT;
            CREATE INDEX sessions_user_id_idx ON sessions (user_id);
            CREATE INDEX user_id_created_at_idx ON sessions (user_id, created_at);
            CREATE INDEX sessions_not_after_idx ON sessions (not_after);

            CREATE TABLE refresh_tokens (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                token TEXT NOT NULL UNIQUE,
                -- No foreign key, as in GoTrue: tokens reach users through their session.
                user_id TEXT NOT NULL,
                revoked INTEGER NOT NULL DEFAULT 0,
                created_at INTEGER,
                updated_at INTEGER,
                -- The token string this one was rotated from (GoTrue dropped the FK on it).
                parent TEXT,
                session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE
            ) STRICT;
            CREATE INDEX refresh_tokens_parent_idx ON refresh_tokens (parent);
            CREATE INDEX refresh_tokens_session_id_revoked_idx ON refresh_tokens (session_id, revoked);
            CREATE INDEX refresh_tokens_user_id_revoked_idx ON refresh_tokens (user_id, revoked);

            CREATE TABLE one_time_tokens (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                token_type TEXT NOT NULL,
                token_hash TEXT NOT NULL CHECK (length(token_hash) > 0),
                relates_to TEXT NOT NULL,
                created_at INTEGER,
                updated_at INTEGER
            ) STRICT;
            -- GoTrue: one outstanding token of each type per user.
            CREATE UNIQUE INDEX one_time_tokens_user_id_token_type_key ON one_time_tokens (user_id, token_type);
            CREATE INDEX one_time_tokens_token_hash_idx ON one_time_tokens (token_hash);
            CREATE INDEX one_time_tokens_relates_to_idx ON one_time_tokens (relates_to);

            CREATE TABLE mfa_factors (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                friendly_name TEXT,
                factor_type TEXT NOT NULL,
                status TEXT NOT NULL,
                created_at INTEGER,
                updated_at INTEGER,
                secret TEXT,
                phone TEXT,
                last_challenged_at INTEGER,
                web_authn_credential TEXT,
                web_authn_aaguid TEXT
            ) STRICT;
            -- GoTrue: mfa_factors_user_friendly_name_unique ... WHERE trim(friendly_name) <> ''.
            CREATE UNIQUE INDEX mfa_factors_user_friendly_name_unique ON mfa_factors (user_id, friendly_name)
                WHERE friendly_name IS NOT NULL AND trim(friendly_name) <> '';
            -- GoTrue: unique_phone_factor_per_user.
            CREATE UNIQUE INDEX unique_phone_factor_per_user ON mfa_factors (user_id, phone);
            CREATE INDEX factor_id_created_at_idx ON mfa_factors (user_id, created_at);

            CREATE TABLE mfa_challenges (
                id TEXT PRIMARY KEY NOT NULL,
                factor_id TEXT NOT NULL REFERENCES mfa_factors (id) ON DELETE CASCADE,
                created_at INTEGER,
                verified_at INTEGER,
                ip_address TEXT,
                otp_code TEXT,
                web_authn_session_data TEXT
            ) STRICT;
            CREATE INDEX mfa_challenges_factor_id_idx ON mfa_challenges (factor_id);
            CREATE INDEX mfa_challenge_created_at_idx ON mfa_challenges (created_at);

            CREATE TABLE mfa_amr_claims (
                id TEXT PRIMARY KEY NOT NULL,
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                authentication_method TEXT NOT NULL,
                created_at INTEGER,
                updated_at INTEGER,
                UNIQUE (session_id, authentication_method)
            ) STRICT;

            CREATE TABLE audit_log_entries (
                id TEXT PRIMARY KEY NOT NULL,
                instance_id TEXT,
                payload TEXT NOT NULL CHECK (json_valid(payload)),
                created_at INTEGER,
                ip_address TEXT NOT NULL DEFAULT ''
            ) STRICT;
            CREATE INDEX audit_log_entries_created_at_idx ON audit_log_entries (created_at);

            -- PKCE flow state (GoTrue's flow_state); redirect_to is the emulator's own addition.
            CREATE TABLE flow_state (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT,
                auth_code TEXT NOT NULL,
                code_challenge_method TEXT NOT NULL,
                code_challenge TEXT NOT NULL,
                provider_type TEXT NOT NULL,
                provider_access_token TEXT,
                provider_refresh_token TEXT,
                created_at INTEGER,
                updated_at INTEGER,
                authentication_method TEXT NOT NULL,
                auth_code_issued_at INTEGER,
                redirect_to TEXT
            ) STRICT;
            CREATE INDEX idx_auth_code ON flow_state (auth_code);
            CREATE INDEX idx_user_id_auth_method ON flow_state (user_id, authentication_method);
            """),
        // The captured messages (GoTrue has no such table). `seq` orders messages by capture,
        // which the wall clock cannot do when two land in the same microsecond.
        Migration(id: "0002_outbox", sql: """
            CREATE TABLE emulator_outbox (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                channel TEXT NOT NULL,
                recipient TEXT NOT NULL,
                type TEXT NOT NULL,
                subject TEXT NOT NULL DEFAULT '',
                body_html TEXT NOT NULL DEFAULT '',
                body_text TEXT NOT NULL DEFAULT '',
                otp TEXT NOT NULL DEFAULT '',
                token_hash TEXT NOT NULL DEFAULT '',
                action_link TEXT NOT NULL DEFAULT '',
                redirect_to TEXT NOT NULL DEFAULT '',
                user_id TEXT,
                sent_at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX emulator_outbox_recipient_idx ON emulator_outbox (recipient, seq);
            """),
        // Every refresh revokes one row and inserts another; these two indexes (kept from GoTrue's
        // schema) are never used by a query here and only made each rotation write more pages.
        Migration(id: "0003_drop_unused_refresh_token_indexes", sql: """
            DROP INDEX IF EXISTS refresh_tokens_parent_idx;
            DROP INDEX IF EXISTS refresh_tokens_user_id_revoked_idx;
            """),
        // The fake identity providers' RSA key (GoTrue has no such table: it talks to real ones).
        Migration(id: "0004_idp_signing_keys", sql: """
            CREATE TABLE idp_signing_keys (
                kid TEXT PRIMARY KEY NOT NULL,
                private_jwk TEXT NOT NULL CHECK (json_valid(private_jwk)),
                created_at INTEGER NOT NULL
            ) STRICT;
            """),
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
        Migration(id: "0007_project_signing_keys", sql: """
            CREATE TABLE project_signing_keys (
                algorithm TEXT PRIMARY KEY NOT NULL,
                private_jwk TEXT NOT NULL CHECK (json_valid(private_jwk)),
                created_at INTEGER NOT NULL
            ) STRICT;
            """),
        // The OAuth 2.1 server: its clients, authorization requests, consents, and the client
        // and scopes of the sessions it issues (GoTrue's oauth_* tables and sessions columns).
        Migration(id: "0008_oauth_server", sql: """
            CREATE TABLE oauth_clients (
                id TEXT PRIMARY KEY NOT NULL,
                client_secret_hash TEXT,
                registration_type TEXT NOT NULL,
                client_type TEXT NOT NULL,
                token_endpoint_auth_method TEXT NOT NULL,
                redirect_uris TEXT NOT NULL,
                grant_types TEXT NOT NULL,
                client_name TEXT,
                client_uri TEXT,
                logo_uri TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                deleted_at INTEGER
            ) STRICT;
            CREATE TABLE oauth_authorizations (
                id TEXT PRIMARY KEY NOT NULL,
                authorization_id TEXT NOT NULL UNIQUE,
                client_id TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
                user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
                redirect_uri TEXT NOT NULL,
                scope TEXT NOT NULL,
                state TEXT,
                resource TEXT,
                code_challenge TEXT,
                code_challenge_method TEXT,
                nonce TEXT,
                status TEXT NOT NULL,
                authorization_code TEXT UNIQUE,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                approved_at INTEGER
            ) STRICT;
            CREATE TABLE oauth_consents (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                client_id TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
                scopes TEXT NOT NULL,
                granted_at INTEGER NOT NULL,
                revoked_at INTEGER
            ) STRICT;
            CREATE UNIQUE INDEX oauth_consents_user_client_idx ON oauth_consents (user_id, client_id);
            ALTER TABLE sessions ADD COLUMN oauth_client_id TEXT;
            ALTER TABLE sessions ADD COLUMN scopes TEXT;
            """),
        // Passkeys (GoTrue's 20260302000000_add_passkeys) and the software authenticator's keys.
        // Shipped as a second `0008`; renumbered, its old name kept (`formerIDs`), as are the
        // names of the three after it.
        Migration(id: "0009_webauthn_credentials", formerIDs: ["0008_webauthn_credentials"], sql: """
            CREATE TABLE webauthn_credentials (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                credential_id TEXT NOT NULL,
                public_key TEXT NOT NULL,
                attestation_type TEXT NOT NULL DEFAULT '',
                aaguid TEXT,
                sign_count INTEGER NOT NULL DEFAULT 0,
                transports TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(transports)),
                backup_eligible INTEGER NOT NULL DEFAULT 0,
                backed_up INTEGER NOT NULL DEFAULT 0,
                friendly_name TEXT NOT NULL DEFAULT '',
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                last_used_at INTEGER
            ) STRICT;
            CREATE UNIQUE INDEX webauthn_credentials_credential_id_key ON webauthn_credentials (credential_id);
            CREATE INDEX webauthn_credentials_user_id_idx ON webauthn_credentials (user_id);

            CREATE TABLE webauthn_challenges (
                id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
                challenge_type TEXT NOT NULL CHECK (challenge_type IN ('signup', 'registration', 'authentication')),
                session_data TEXT NOT NULL CHECK (json_valid(session_data)),
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX webauthn_challenges_user_id_idx ON webauthn_challenges (user_id);
            CREATE INDEX webauthn_challenges_expires_at_idx ON webauthn_challenges (expires_at);

            CREATE TABLE emulator_authenticator_keys (
                credential_id TEXT PRIMARY KEY NOT NULL,
                user_id TEXT NOT NULL,
                rp_id TEXT NOT NULL,
                user_handle TEXT NOT NULL,
                private_key TEXT NOT NULL,
                sign_count INTEGER NOT NULL DEFAULT 0,
                discoverable INTEGER NOT NULL DEFAULT 1,
                created_at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX emulator_authenticator_keys_user_id_idx ON emulator_authenticator_keys (user_id);
            """),
        // GoTrue's 20251007112900_add_session_refresh_token_columns: the key that signs a
        // session's refresh tokens of the second format, and the counter of its newest one.
        Migration(id: "0010_session_refresh_token_columns", formerIDs: ["0009_session_refresh_token_columns"], sql: """
            ALTER TABLE sessions ADD COLUMN refresh_token_hmac_key TEXT;
            ALTER TABLE sessions ADD COLUMN refresh_token_counter INTEGER;
            """),
        // Every GET /user and token grant reads the user's identities, oldest first. On the
        // user_id index alone SQLite sorted them for ORDER BY created_at, rowid on each read; an
        // index on (user_id, created_at) holds its entries in that order (the rowid last), so
        // the read no longer sorts. It serves every lookup the old index did.
        Migration(id: "0011_identities_user_id_created_at_idx", formerIDs: ["0010_identities_user_id_created_at_idx"], sql: """
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
        Migration(id: "0012_refresh_tokens_rowid", formerIDs: ["0011_refresh_tokens_rowid"], sql: """
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
        // GoTrue's `custom_oauth_providers` (migration 20260219120000): one row per provider
        // managed through `/admin/custom-providers`. The Postgres `text[]` and `jsonb` columns
        // are JSON text here; `discovery_cached_at` is left out (the emulator refetches nothing).
        Migration(id: "0013_custom_oauth_providers", sql: """
            CREATE TABLE custom_oauth_providers (
                id TEXT PRIMARY KEY,
                provider_type TEXT NOT NULL CHECK (provider_type IN ('oauth2', 'oidc')),
                identifier TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                client_id TEXT NOT NULL,
                client_secret TEXT NOT NULL,
                acceptable_client_ids TEXT NOT NULL DEFAULT '[]',
                scopes TEXT NOT NULL DEFAULT '[]',
                pkce_enabled INTEGER NOT NULL DEFAULT 1,
                attribute_mapping TEXT NOT NULL DEFAULT '{}',
                custom_claims_allowlist TEXT NOT NULL DEFAULT '[]',
                authorization_params TEXT NOT NULL DEFAULT '{}',
                enabled INTEGER NOT NULL DEFAULT 1,
                email_optional INTEGER NOT NULL DEFAULT 0,
                issuer TEXT,
                discovery_url TEXT,
                skip_nonce_check INTEGER NOT NULL DEFAULT 0,
                cached_discovery TEXT,
                authorization_url TEXT,
                token_url TEXT,
                userinfo_url TEXT,
                jwks_uri TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            ) STRICT;
            CREATE INDEX custom_oauth_providers_provider_type_idx ON custom_oauth_providers (provider_type);
            """),
        // GoTrue's users_email_partial_key covers every audience: its checks look for the email
        // only within the request's audience (`IsDuplicatedEmail`), so a sign-up or admin create
        // with an email another audience holds reaches the index, and Postgres refuses it (a 500
        // that shows the unique violation). 0001 scoped the index to one audience. A database
        // holding one email in two audiences cannot take this index: the migration then fails,
        // changing nothing (Migrator), and the error names the index.
        Migration(id: "0014_users_email_unique_across_audiences", sql: """
            DROP INDEX users_email_partial_key;
            CREATE UNIQUE INDEX users_email_partial_key ON users (lower(email))
                WHERE email IS NOT NULL AND email <> '' AND is_sso_user = 0;
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
            for name in migration.names {
                precondition(seen.insert(name).inserted, "duplicate migration id \(name)")
            }
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
            // A migration recorded under one of its names is applied; one not recorded under
            // all of them gets the missing records (in `apply`, without running its SQL again).
            let pending = migrations.filter { !$0.names.allSatisfy(applied.contains) }
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
            var recorded: [String] = []
            for name in migration.names
            where !(try connection.scalar("SELECT 1 FROM schema_migrations WHERE id = ?", .text(name))).isNull {
                recorded.append(name)
            }
            if recorded.isEmpty { try connection.executeScript(migration.sql) }
            for name in migration.names where !recorded.contains(name) {
                // The store has no clock of its own (time is injected above it), so the
                // record uses SQLite's: unix microseconds from the Julian day number.
                try connection.execute(
                    """
                    INSERT INTO schema_migrations (id, applied_at)
                    VALUES (?, CAST(round((julianday('now') - 2440587.5) * 86400000000.0) AS INTEGER))
                    """,
                    .text(name))
            }
        }
    }
}
