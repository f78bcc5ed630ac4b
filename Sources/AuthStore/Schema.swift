/// SQL of the emulator's schema, modelled on GoTrue's `auth.*` tables as its migrations leave
/// them (supabase/auth `migrations/*.up.sql`).
///
/// Mapping from Postgres:
/// - timestamptz → INTEGER unix microseconds (UTC), NULL when unset;
/// - uuid → TEXT, lowercase hyphenated; jsonb → TEXT holding JSON (CHECK json_valid, since
///   jsonb rejects invalid documents too); boolean → INTEGER 0/1;
/// - Postgres enums (aal_level, factor_type, one_time_token_type, …) → TEXT, their vocabulary
///   kept by the API layer, so widening one (GoTrue added factor_type 'phone' later) needs no
///   table rebuild.
/// Tables are STRICT (SQLite ≥ 3.37) so a wrongly typed value fails instead of being stored.
enum Schema {
    static let authSchema = """
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
        """
}
