/// GoTrue's `auth` schema as its newest migration leaves it (supabase/auth `migrations/`, up
/// to 20260625000000, first released in v2.192.0; the emulator answers as v2.196.0, which
/// added none). Written here from the migrations' facts — tables, columns in the order the
/// migrations leave them, types, defaults, constraints and index names, enum labels — as one
/// creation script, not a replay of the 70 files. `PostgresGoldenSchemaTests` compares what
/// it creates with a catalog listing of GoTrue's own result.
///
/// Each column carries the migration that gave it its current name: an adopted database
/// lacking it is reported as "table.column (migration, release)".
enum GoTrueSchema {
    struct Column {
        let name: String
        /// Type, nullability, default or generation expression, as in CREATE TABLE.
        let definition: String
        /// The migration version that added (or renamed to) this column.
        let since: String
    }

    struct Table {
        let name: String
        var columns: [Column]
        /// Table constraints other than foreign keys (added after every table exists).
        var constraints: [String]
        var foreignKeys: [String]
        /// Migration 20240612123726 enables row-level security on the tables that existed then.
        let rowLevelSecurity: Bool
        let since: String
    }

    /// GoTrue's tables in creation order, read once from `tablesText`.
    static let tables: [Table] = parse(tablesText)

    /// The tables as text, one line each:
    /// - `TABLE name SINCE version [RLS]` starts a table that migration `version` created;
    ///   `RLS`: migration 20240612123726 enabled row-level security on it (the tables that existed then);
    /// - `SINCE version` gives the columns below it the migration that added (or renamed) them;
    /// - `  name definition`: a column, its type, nullability, default or generation expression as
    ///   in CREATE TABLE, in the order the migrations leave them;
    /// - `  CONSTRAINT ...`: a table constraint; one with FOREIGN KEY is added after every table
    ///   exists;
    /// - `  -- ...`: a note.
    /// Text rather than Swift values: as a literal of some 330 values this table was the
    /// costliest thing in AuthStore's optimized compile (bench/results/HISTORY.md).
    static let tablesText = """
        TABLE users SINCE 00 RLS
          instance_id uuid
          id uuid NOT NULL
          aud character varying(255)
          role character varying(255)
          email character varying(255)
          encrypted_password character varying(255)
        SINCE 20210710035447
          email_confirmed_at timestamptz
        SINCE 00
          invited_at timestamptz
          confirmation_token character varying(255)
          confirmation_sent_at timestamptz
          recovery_token character varying(255)
          recovery_sent_at timestamptz
        SINCE 20210730183235
          email_change_token_new character varying(255)
        SINCE 00
          email_change character varying(255)
          email_change_sent_at timestamptz
          last_sign_in_at timestamptz
          raw_app_meta_data jsonb
          raw_user_meta_data jsonb
          is_super_admin boolean
          created_at timestamptz
          updated_at timestamptz
        SINCE 20210710035447
          -- phone: added as varchar(15) and widened to text by 20230116124310; the defaults keep
          -- the varchar cast they were written with.
          phone text DEFAULT NULL::character varying
          phone_confirmed_at timestamptz
          phone_change text DEFAULT ''::character varying
          phone_change_token character varying(255) DEFAULT ''::character varying
          phone_change_sent_at timestamptz
        SINCE 20210722035447
          confirmed_at timestamptz GENERATED ALWAYS AS (LEAST(email_confirmed_at, phone_confirmed_at)) STORED
        SINCE 20210730183235
          email_change_token_current character varying(255) DEFAULT ''::character varying
          email_change_confirm_status smallint DEFAULT 0
        SINCE 20220114185340
          banned_until timestamptz
        SINCE 20220323170000
          reauthentication_token character varying(255) DEFAULT ''::character varying
          reauthentication_sent_at timestamptz
        SINCE 20221215195500
          is_sso_user boolean NOT NULL DEFAULT false
        SINCE 20230116124412
          deleted_at timestamptz
        SINCE 20240214120130
          is_anonymous boolean NOT NULL DEFAULT false
          CONSTRAINT users_pkey PRIMARY KEY (id)
          CONSTRAINT users_phone_key UNIQUE (phone)
          CONSTRAINT users_email_change_confirm_status_check CHECK (email_change_confirm_status >= 0 AND email_change_confirm_status <= 2)
        TABLE refresh_tokens SINCE 00 RLS
          instance_id uuid
          id bigserial NOT NULL
          token character varying(255)
          user_id character varying(255)
          revoked boolean
          created_at timestamptz
          updated_at timestamptz
        SINCE 20210927181326
          parent character varying(255)
        SINCE 20220811173540
          session_id uuid
          CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id)
          CONSTRAINT refresh_tokens_token_unique UNIQUE (token)
          CONSTRAINT refresh_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES auth.sessions (id) ON DELETE CASCADE
        TABLE instances SINCE 00 RLS
          id uuid NOT NULL
          uuid uuid
          raw_base_config text
          created_at timestamptz
          updated_at timestamptz
          CONSTRAINT instances_pkey PRIMARY KEY (id)
        TABLE audit_log_entries SINCE 00 RLS
          instance_id uuid
          id uuid NOT NULL
          payload json
          created_at timestamptz
        SINCE 20220614074223
          ip_address character varying(64) NOT NULL DEFAULT ''::character varying
          CONSTRAINT audit_log_entries_pkey PRIMARY KEY (id)
        TABLE schema_migrations SINCE 00 RLS
          version character varying(255) NOT NULL
          CONSTRAINT schema_migrations_pkey PRIMARY KEY (version)
        TABLE identities SINCE 20210909172000 RLS
        SINCE 20231117164230
          provider_id text NOT NULL
        SINCE 20210909172000
          user_id uuid NOT NULL
          identity_data jsonb NOT NULL
          provider text NOT NULL
          last_sign_in_at timestamptz
          created_at timestamptz
          updated_at timestamptz
        SINCE 20221215195800
          email text GENERATED ALWAYS AS (lower(identity_data ->> 'email')) STORED
        SINCE 20231117164230
          id uuid NOT NULL DEFAULT gen_random_uuid()
          CONSTRAINT identities_pkey PRIMARY KEY (id)
          CONSTRAINT identities_provider_id_provider_unique UNIQUE (provider_id, provider)
          CONSTRAINT identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users (id) ON DELETE CASCADE
        TABLE sessions SINCE 20220811173540 RLS
          id uuid NOT NULL
          user_id uuid NOT NULL
          created_at timestamptz
          updated_at timestamptz
        SINCE 20221003041400
          factor_id uuid
          aal auth.aal_level
        SINCE 20221114143122
          not_after timestamptz
        SINCE 20231027141322
          refreshed_at timestamp without time zone
          user_agent text
          ip inet
        SINCE 20231114161723
          tag text
        SINCE 20250904133000
          oauth_client_id uuid
        SINCE 20251007112900
          refresh_token_hmac_key text
          refresh_token_counter bigint
        SINCE 20251111201300
          scopes text
          CONSTRAINT sessions_pkey PRIMARY KEY (id)
          CONSTRAINT sessions_scopes_length CHECK (char_length(scopes) <= 4096)
          CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users (id) ON DELETE CASCADE
          CONSTRAINT sessions_oauth_client_id_fkey FOREIGN KEY (oauth_client_id) REFERENCES auth.oauth_clients (id) ON DELETE CASCADE
        TABLE mfa_factors SINCE 20221003041349 RLS
          id uuid NOT NULL
          user_id uuid NOT NULL
          friendly_name text
          factor_type auth.factor_type NOT NULL
          status auth.factor_status NOT NULL
          created_at timestamptz NOT NULL
          updated_at timestamptz NOT NULL
          secret text
        SINCE 20240729123726
          phone text
        SINCE 20240802193726
          last_challenged_at timestamptz
        SINCE 20241009103726
          web_authn_credential jsonb
          web_authn_aaguid uuid
        SINCE 20250925093508
          last_webauthn_challenge_data jsonb
          CONSTRAINT mfa_factors_pkey PRIMARY KEY (id)
          -- Two challenges of one instant collide here, as on the real server.
          CONSTRAINT mfa_factors_last_challenged_at_key UNIQUE (last_challenged_at)
          CONSTRAINT mfa_factors_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users (id) ON DELETE CASCADE
        TABLE mfa_challenges SINCE 20221003041349 RLS
          id uuid NOT NULL
          factor_id uuid NOT NULL
          created_at timestamptz NOT NULL
          verified_at timestamptz
          ip_address inet NOT NULL
        SINCE 20240729123726
          otp_code text
        SINCE 20241009103726
          web_authn_session_data jsonb
          CONSTRAINT mfa_challenges_pkey PRIMARY KEY (id)
          CONSTRAINT mfa_challenges_auth_factor_id_fkey FOREIGN KEY (factor_id) REFERENCES auth.mfa_factors (id) ON DELETE CASCADE
        TABLE mfa_amr_claims SINCE 20221003041349 RLS
          session_id uuid NOT NULL
          created_at timestamptz NOT NULL
          updated_at timestamptz NOT NULL
          authentication_method text NOT NULL
        SINCE 20221011041400
          id uuid NOT NULL
          CONSTRAINT amr_id_pk PRIMARY KEY (id)
          CONSTRAINT mfa_amr_claims_session_id_authentication_method_pkey UNIQUE (session_id, authentication_method)
          CONSTRAINT mfa_amr_claims_session_id_fkey FOREIGN KEY (session_id) REFERENCES auth.sessions (id) ON DELETE CASCADE
        TABLE sso_providers SINCE 20221021082433 RLS
          id uuid NOT NULL
          resource_id text
          created_at timestamptz
          updated_at timestamptz
        SINCE 20250717082212
          disabled boolean
          CONSTRAINT sso_providers_pkey PRIMARY KEY (id)
          -- `= null` (never true) is GoTrue's own condition, kept so the catalogs match.
          CONSTRAINT "resource_id not empty" CHECK (resource_id = NULL::text OR char_length(resource_id) > 0)
        TABLE sso_domains SINCE 20221021082433 RLS
          id uuid NOT NULL
          sso_provider_id uuid NOT NULL
          domain text NOT NULL
          created_at timestamptz
          updated_at timestamptz
          CONSTRAINT sso_domains_pkey PRIMARY KEY (id)
          CONSTRAINT "domain not empty" CHECK (char_length(domain) > 0)
          CONSTRAINT sso_domains_sso_provider_id_fkey FOREIGN KEY (sso_provider_id) REFERENCES auth.sso_providers (id) ON DELETE CASCADE
        TABLE saml_providers SINCE 20221021082433 RLS
          id uuid NOT NULL
          sso_provider_id uuid NOT NULL
          entity_id text NOT NULL
          metadata_xml text NOT NULL
          metadata_url text
          attribute_mapping jsonb
          created_at timestamptz
          updated_at timestamptz
        SINCE 20240314092811
          name_id_format text
          CONSTRAINT saml_providers_pkey PRIMARY KEY (id)
          CONSTRAINT saml_providers_entity_id_key UNIQUE (entity_id)
          CONSTRAINT "metadata_xml not empty" CHECK (char_length(metadata_xml) > 0)
          CONSTRAINT "metadata_url not empty" CHECK (metadata_url = NULL::text OR char_length(metadata_url) > 0)
          CONSTRAINT "entity_id not empty" CHECK (char_length(entity_id) > 0)
          CONSTRAINT saml_providers_sso_provider_id_fkey FOREIGN KEY (sso_provider_id) REFERENCES auth.sso_providers (id) ON DELETE CASCADE
        TABLE saml_relay_states SINCE 20221021082433 RLS
          id uuid NOT NULL
          sso_provider_id uuid NOT NULL
          request_id text NOT NULL
          for_email text
          redirect_to text
          created_at timestamptz
          updated_at timestamptz
        SINCE 20230818113222
          flow_state_id uuid
          CONSTRAINT saml_relay_states_pkey PRIMARY KEY (id)
          CONSTRAINT "request_id not empty" CHECK (char_length(request_id) > 0)
          CONSTRAINT saml_relay_states_sso_provider_id_fkey FOREIGN KEY (sso_provider_id) REFERENCES auth.sso_providers (id) ON DELETE CASCADE
          CONSTRAINT saml_relay_states_flow_state_id_fkey FOREIGN KEY (flow_state_id) REFERENCES auth.flow_state (id) ON DELETE CASCADE
        TABLE flow_state SINCE 20230322519590 RLS
          id uuid NOT NULL
          user_id uuid
          -- auth_code, code_challenge_method, code_challenge: nullable since 20260115000000.
          auth_code text
          code_challenge_method auth.code_challenge_method
          code_challenge text
          provider_type text NOT NULL
          provider_access_token text
          provider_refresh_token text
          created_at timestamptz
          updated_at timestamptz
        SINCE 20230402418590
          authentication_method text NOT NULL
        SINCE 20240306115329
          auth_code_issued_at timestamptz
        SINCE 20260115000000
          invite_token text
          referrer text
          oauth_client_state_id uuid
          linking_target_id uuid
          email_optional boolean NOT NULL DEFAULT false
          CONSTRAINT flow_state_pkey PRIMARY KEY (id)
        TABLE one_time_tokens SINCE 20240427152123 RLS
          id uuid NOT NULL
          user_id uuid NOT NULL
          token_type auth.one_time_token_type NOT NULL
          token_hash text NOT NULL
          relates_to text NOT NULL
          created_at timestamp without time zone NOT NULL DEFAULT now()
          updated_at timestamp without time zone NOT NULL DEFAULT now()
          CONSTRAINT one_time_tokens_pkey PRIMARY KEY (id)
          CONSTRAINT one_time_tokens_token_hash_check CHECK (char_length(token_hash) > 0)
          CONSTRAINT one_time_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users (id) ON DELETE CASCADE
        TABLE oauth_clients SINCE 20250731150234
          id uuid NOT NULL
          client_secret_hash text
          registration_type auth.oauth_registration_type NOT NULL
          redirect_uris text NOT NULL
          grant_types text NOT NULL
          client_name text
          client_uri text
          logo_uri text
          created_at timestamptz NOT NULL DEFAULT now()
          updated_at timestamptz NOT NULL DEFAULT now()
          deleted_at timestamptz
        SINCE 20250901200500
          client_type auth.oauth_client_type NOT NULL DEFAULT 'confidential'::auth.oauth_client_type
        SINCE 20260121000000
          token_endpoint_auth_method text NOT NULL
          CONSTRAINT oauth_clients_pkey PRIMARY KEY (id)
          CONSTRAINT oauth_clients_client_name_length CHECK (char_length(client_name) <= 1024)
          CONSTRAINT oauth_clients_client_uri_length CHECK (char_length(client_uri) <= 2048)
          CONSTRAINT oauth_clients_logo_uri_length CHECK (char_length(logo_uri) <= 2048)
          CONSTRAINT oauth_clients_token_endpoint_auth_method_check CHECK (token_endpoint_auth_method = ANY (ARRAY['client_secret_basic'::text, 'client_secret_post'::text, 'none'::text]))
        TABLE oauth_authorizations SINCE 20250804100000
          id uuid NOT NULL
          authorization_id text NOT NULL
          client_id uuid NOT NULL
          user_id uuid
          redirect_uri text NOT NULL
          scope text NOT NULL
          state text
          resource text
          code_challenge text
          code_challenge_method auth.code_challenge_method
          response_type auth.oauth_response_type NOT NULL DEFAULT 'code'::auth.oauth_response_type
          status auth.oauth_authorization_status NOT NULL DEFAULT 'pending'::auth.oauth_authorization_status
          authorization_code text
          created_at timestamptz NOT NULL DEFAULT now()
          expires_at timestamptz NOT NULL DEFAULT (now() + '00:03:00'::interval)
          approved_at timestamptz
        SINCE 20251104100000
          nonce text
          CONSTRAINT oauth_authorizations_pkey PRIMARY KEY (id)
          CONSTRAINT oauth_authorizations_authorization_id_key UNIQUE (authorization_id)
          CONSTRAINT oauth_authorizations_authorization_code_key UNIQUE (authorization_code)
          CONSTRAINT oauth_authorizations_redirect_uri_length CHECK (char_length(redirect_uri) <= 2048)
          CONSTRAINT oauth_authorizations_scope_length CHECK (char_length(scope) <= 4096)
          CONSTRAINT oauth_authorizations_state_length CHECK (char_length(state) <= 4096)
          CONSTRAINT oauth_authorizations_resource_length CHECK (char_length(resource) <= 2048)
          CONSTRAINT oauth_authorizations_code_challenge_length CHECK (char_length(code_challenge) <= 128)
          CONSTRAINT oauth_authorizations_authorization_code_length CHECK (char_length(authorization_code) <= 255)
          CONSTRAINT oauth_authorizations_expires_at_future CHECK (expires_at > created_at)
          CONSTRAINT oauth_authorizations_nonce_length CHECK (char_length(nonce) <= 255)
          CONSTRAINT oauth_authorizations_client_id_fkey FOREIGN KEY (client_id) REFERENCES auth.oauth_clients (id) ON DELETE CASCADE
          CONSTRAINT oauth_authorizations_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users (id) ON DELETE CASCADE
        TABLE oauth_consents SINCE 20250804100000
          id uuid NOT NULL
          user_id uuid NOT NULL
          client_id uuid NOT NULL
          scopes text NOT NULL
          granted_at timestamptz NOT NULL DEFAULT now()
          revoked_at timestamptz
          CONSTRAINT oauth_consents_pkey PRIMARY KEY (id)
          CONSTRAINT oauth_consents_user_client_unique UNIQUE (user_id, client_id)
          CONSTRAINT oauth_consents_scopes_length CHECK (char_length(scopes) <= 2048)
          CONSTRAINT oauth_consents_scopes_not_empty CHECK (char_length(TRIM(BOTH FROM scopes)) > 0)
          CONSTRAINT oauth_consents_revoked_after_granted CHECK (revoked_at IS NULL OR revoked_at >= granted_at)
          CONSTRAINT oauth_consents_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users (id) ON DELETE CASCADE
          CONSTRAINT oauth_consents_client_id_fkey FOREIGN KEY (client_id) REFERENCES auth.oauth_clients (id) ON DELETE CASCADE
        TABLE oauth_client_states SINCE 20251201000000
          id uuid NOT NULL
          provider_type text NOT NULL
          code_verifier text
          created_at timestamptz NOT NULL
          CONSTRAINT oauth_client_states_pkey PRIMARY KEY (id)
        TABLE custom_oauth_providers SINCE 20260219120000
          id uuid NOT NULL DEFAULT gen_random_uuid()
          provider_type text NOT NULL
          identifier text NOT NULL
          name text NOT NULL
          client_id text NOT NULL
          client_secret text NOT NULL
          acceptable_client_ids text[] NOT NULL DEFAULT '{}'::text[]
          scopes text[] NOT NULL DEFAULT '{}'::text[]
          pkce_enabled boolean NOT NULL DEFAULT true
          attribute_mapping jsonb NOT NULL DEFAULT '{}'::jsonb
          authorization_params jsonb NOT NULL DEFAULT '{}'::jsonb
          enabled boolean NOT NULL DEFAULT true
          email_optional boolean NOT NULL DEFAULT false
          issuer text
          discovery_url text
          skip_nonce_check boolean NOT NULL DEFAULT false
          cached_discovery jsonb
          discovery_cached_at timestamptz
          authorization_url text
          token_url text
          userinfo_url text
          jwks_uri text
          created_at timestamptz NOT NULL DEFAULT now()
          updated_at timestamptz NOT NULL DEFAULT now()
        SINCE 20260625000000
          custom_claims_allowlist text[] NOT NULL DEFAULT '{}'::text[]
          CONSTRAINT custom_oauth_providers_pkey PRIMARY KEY (id)
          CONSTRAINT custom_oauth_providers_identifier_key UNIQUE (identifier)
          CONSTRAINT custom_oauth_providers_provider_type_check CHECK (provider_type = ANY (ARRAY['oauth2'::text, 'oidc'::text]))
          CONSTRAINT custom_oauth_providers_oidc_requires_issuer CHECK (provider_type <> 'oidc'::text OR issuer IS NOT NULL)
          CONSTRAINT custom_oauth_providers_oidc_issuer_https CHECK (provider_type <> 'oidc'::text OR issuer IS NULL OR issuer ~~ 'https://%'::text)
          CONSTRAINT custom_oauth_providers_oidc_discovery_url_https CHECK (provider_type <> 'oidc'::text OR discovery_url IS NULL OR discovery_url ~~ 'https://%'::text)
          CONSTRAINT custom_oauth_providers_oauth2_requires_endpoints CHECK (provider_type <> 'oauth2'::text OR (authorization_url IS NOT NULL AND token_url IS NOT NULL AND userinfo_url IS NOT NULL))
          CONSTRAINT custom_oauth_providers_authorization_url_https CHECK (authorization_url IS NULL OR authorization_url ~~ 'https://%'::text)
          CONSTRAINT custom_oauth_providers_token_url_https CHECK (token_url IS NULL OR token_url ~~ 'https://%'::text)
          CONSTRAINT custom_oauth_providers_userinfo_url_https CHECK (userinfo_url IS NULL OR userinfo_url ~~ 'https://%'::text)
          CONSTRAINT custom_oauth_providers_jwks_uri_https CHECK (jwks_uri IS NULL OR jwks_uri ~~ 'https://%'::text)
          CONSTRAINT custom_oauth_providers_identifier_format CHECK (identifier ~ '^[a-z0-9][a-z0-9:-]{0,48}[a-z0-9]$'::text)
          CONSTRAINT custom_oauth_providers_name_length CHECK (char_length(name) >= 1 AND char_length(name) <= 100)
          CONSTRAINT custom_oauth_providers_issuer_length CHECK (issuer IS NULL OR (char_length(issuer) >= 1 AND char_length(issuer) <= 2048))
          CONSTRAINT custom_oauth_providers_discovery_url_length CHECK (discovery_url IS NULL OR char_length(discovery_url) <= 2048)
          CONSTRAINT custom_oauth_providers_authorization_url_length CHECK (authorization_url IS NULL OR char_length(authorization_url) <= 2048)
          CONSTRAINT custom_oauth_providers_token_url_length CHECK (token_url IS NULL OR char_length(token_url) <= 2048)
          CONSTRAINT custom_oauth_providers_userinfo_url_length CHECK (userinfo_url IS NULL OR char_length(userinfo_url) <= 2048)
          CONSTRAINT custom_oauth_providers_jwks_uri_length CHECK (jwks_uri IS NULL OR char_length(jwks_uri) <= 2048)
          CONSTRAINT custom_oauth_providers_client_id_length CHECK (char_length(client_id) >= 1 AND char_length(client_id) <= 512)
        TABLE webauthn_credentials SINCE 20260302000000
          id uuid NOT NULL DEFAULT gen_random_uuid()
          user_id uuid NOT NULL
          credential_id bytea NOT NULL
          public_key bytea NOT NULL
          attestation_type text NOT NULL DEFAULT ''::text
          aaguid uuid
          sign_count bigint NOT NULL DEFAULT 0
          transports jsonb NOT NULL DEFAULT '[]'::jsonb
          backup_eligible boolean NOT NULL DEFAULT false
          backed_up boolean NOT NULL DEFAULT false
          friendly_name text NOT NULL DEFAULT ''::text
          created_at timestamptz NOT NULL DEFAULT now()
          updated_at timestamptz NOT NULL DEFAULT now()
          last_used_at timestamptz
          CONSTRAINT webauthn_credentials_pkey PRIMARY KEY (id)
          CONSTRAINT webauthn_credentials_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users (id) ON DELETE CASCADE
        TABLE webauthn_challenges SINCE 20260302000000
          id uuid NOT NULL DEFAULT gen_random_uuid()
          user_id uuid
          challenge_type text NOT NULL
          session_data jsonb NOT NULL
          created_at timestamptz NOT NULL DEFAULT now()
          expires_at timestamptz NOT NULL
          CONSTRAINT webauthn_challenges_pkey PRIMARY KEY (id)
          CONSTRAINT webauthn_challenges_challenge_type_check CHECK (challenge_type = ANY (ARRAY['signup'::text, 'registration'::text, 'authentication'::text]))
          CONSTRAINT webauthn_challenges_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users (id) ON DELETE CASCADE
        """

    /// `tablesText` as tables. A line in no known form stops the process: the text is the
    /// source's own, and every test run in Postgres mode reads it.
    static func parse(_ text: String) -> [Table] {
        var tables: [Table] = []
        var since = ""
        for raw in text.split(separator: "\n") {
            let line = raw.drop { $0 == " " }
            if line.hasPrefix("--") { continue }
            let words = line.split(separator: " ")
            if line.hasPrefix("TABLE "), words.count >= 4, words[2] == "SINCE" {
                since = String(words[3])
                tables.append(Table(name: String(words[1]), columns: [], constraints: [], foreignKeys: [],
                                    rowLevelSecurity: words.count == 5 && words[4] == "RLS", since: since))
            } else if line.hasPrefix("SINCE "), words.count == 2, !tables.isEmpty {
                since = String(words[1])
            } else if line.hasPrefix("CONSTRAINT "), !tables.isEmpty {
                if line.contains(" FOREIGN KEY ") {
                    tables[tables.count - 1].foreignKeys.append(String(line))
                } else {
                    tables[tables.count - 1].constraints.append(String(line))
                }
            } else if words.count >= 2, !tables.isEmpty {
                let name = String(words[0])
                let definition = String(line.dropFirst(name.count + 1))
                tables[tables.count - 1].columns.append(Column(name: name, definition: definition, since: since))
            } else {
                preconditionFailure("GoTrueSchema.tablesText: \(line)")
            }
        }
        return tables
    }

    /// The nine enum types, labels in declaration order (Postgres compares enum values by it).
    static let enums: [(name: String, labels: [String], since: String)] = [
        ("factor_type", ["totp", "webauthn", "phone"], "20221003041349"),
        ("factor_status", ["unverified", "verified"], "20221003041349"),
        ("aal_level", ["aal1", "aal2", "aal3"], "20221003041349"),
        ("code_challenge_method", ["s256", "plain"], "20230322519590"),
        ("one_time_token_type", ["confirmation_token", "reauthentication_token", "recovery_token",
                                 "email_change_token_new", "email_change_token_current", "phone_change_token"], "20240427152123"),
        ("oauth_registration_type", ["dynamic", "manual"], "20250731150234"),
        ("oauth_authorization_status", ["pending", "approved", "denied", "expired"], "20250804100000"),
        ("oauth_response_type", ["code"], "20250804100000"),
        ("oauth_client_type", ["public", "confidential"], "20250901200500"),
    ]

    /// Indexes that back no constraint: `(name, table, definition after ON auth.table)`.
    static let indexes: [(name: String, table: String, definition: String)] = [
        ("users_instance_id_email_idx", "users", "USING btree (instance_id, lower(email::text))"),
        ("users_instance_id_idx", "users", "USING btree (instance_id)"),
        // The token indexes skip empty, blank and all-digit values (OTPs collide by design).
        ("confirmation_token_idx", "users", "UNIQUE USING btree (confirmation_token) WHERE confirmation_token::text !~ '^[0-9 ]*$'::text"),
        ("recovery_token_idx", "users", "UNIQUE USING btree (recovery_token) WHERE recovery_token::text !~ '^[0-9 ]*$'::text"),
        ("email_change_token_current_idx", "users", "UNIQUE USING btree (email_change_token_current) WHERE email_change_token_current::text !~ '^[0-9 ]*$'::text"),
        ("email_change_token_new_idx", "users", "UNIQUE USING btree (email_change_token_new) WHERE email_change_token_new::text !~ '^[0-9 ]*$'::text"),
        ("reauthentication_token_idx", "users", "UNIQUE USING btree (reauthentication_token) WHERE reauthentication_token::text !~ '^[0-9 ]*$'::text"),
        // SSO users may share an email; everyone else may not (not lower-cased: the API does that).
        ("users_email_partial_key", "users", "UNIQUE USING btree (email) WHERE is_sso_user = false"),
        ("users_is_anonymous_idx", "users", "USING btree (is_anonymous)"),
        ("refresh_tokens_instance_id_idx", "refresh_tokens", "USING btree (instance_id)"),
        ("refresh_tokens_instance_id_user_id_idx", "refresh_tokens", "USING btree (instance_id, user_id)"),
        ("refresh_tokens_parent_idx", "refresh_tokens", "USING btree (parent)"),
        ("refresh_tokens_session_id_revoked_idx", "refresh_tokens", "USING btree (session_id, revoked)"),
        ("refresh_tokens_updated_at_idx", "refresh_tokens", "USING btree (updated_at DESC)"),
        ("audit_logs_instance_id_idx", "audit_log_entries", "USING btree (instance_id)"),
        ("identities_user_id_idx", "identities", "USING btree (user_id)"),
        ("identities_email_idx", "identities", "USING btree (email text_pattern_ops)"),
        ("user_id_created_at_idx", "sessions", "USING btree (user_id, created_at)"),
        ("sessions_user_id_idx", "sessions", "USING btree (user_id)"),
        ("sessions_not_after_idx", "sessions", "USING btree (not_after DESC)"),
        ("sessions_oauth_client_id_idx", "sessions", "USING btree (oauth_client_id)"),
        ("mfa_factors_user_friendly_name_unique", "mfa_factors", "UNIQUE USING btree (friendly_name, user_id) WHERE TRIM(BOTH FROM friendly_name) <> ''::text"),
        ("factor_id_created_at_idx", "mfa_factors", "USING btree (user_id, created_at)"),
        ("mfa_factors_user_id_idx", "mfa_factors", "USING btree (user_id)"),
        ("unique_phone_factor_per_user", "mfa_factors", "UNIQUE USING btree (user_id, phone)"),
        ("mfa_challenge_created_at_idx", "mfa_challenges", "USING btree (created_at DESC)"),
        ("sso_providers_resource_id_idx", "sso_providers", "UNIQUE USING btree (lower(resource_id))"),
        ("sso_providers_resource_id_pattern_idx", "sso_providers", "USING btree (resource_id text_pattern_ops)"),
        ("sso_domains_sso_provider_id_idx", "sso_domains", "USING btree (sso_provider_id)"),
        ("sso_domains_domain_idx", "sso_domains", "UNIQUE USING btree (lower(domain))"),
        ("saml_providers_sso_provider_id_idx", "saml_providers", "USING btree (sso_provider_id)"),
        ("saml_relay_states_sso_provider_id_idx", "saml_relay_states", "USING btree (sso_provider_id)"),
        ("saml_relay_states_for_email_idx", "saml_relay_states", "USING btree (for_email)"),
        ("saml_relay_states_created_at_idx", "saml_relay_states", "USING btree (created_at DESC)"),
        ("idx_auth_code", "flow_state", "USING btree (auth_code)"),
        ("idx_user_id_auth_method", "flow_state", "USING btree (user_id, authentication_method)"),
        ("flow_state_created_at_idx", "flow_state", "USING btree (created_at DESC)"),
        ("one_time_tokens_token_hash_hash_idx", "one_time_tokens", "USING hash (token_hash)"),
        ("one_time_tokens_relates_to_hash_idx", "one_time_tokens", "USING hash (relates_to)"),
        ("one_time_tokens_user_id_token_type_key", "one_time_tokens", "UNIQUE USING btree (user_id, token_type)"),
        ("oauth_clients_deleted_at_idx", "oauth_clients", "USING btree (deleted_at)"),
        ("oauth_auth_pending_exp_idx", "oauth_authorizations", "USING btree (expires_at) WHERE status = 'pending'::auth.oauth_authorization_status"),
        ("oauth_consents_active_user_client_idx", "oauth_consents", "USING btree (user_id, client_id) WHERE revoked_at IS NULL"),
        ("oauth_consents_user_order_idx", "oauth_consents", "USING btree (user_id, granted_at DESC)"),
        ("oauth_consents_active_client_idx", "oauth_consents", "USING btree (client_id) WHERE revoked_at IS NULL"),
        ("idx_oauth_client_states_created_at", "oauth_client_states", "USING btree (created_at)"),
        ("custom_oauth_providers_identifier_idx", "custom_oauth_providers", "USING btree (identifier)"),
        ("custom_oauth_providers_provider_type_idx", "custom_oauth_providers", "USING btree (provider_type)"),
        ("custom_oauth_providers_enabled_idx", "custom_oauth_providers", "USING btree (enabled)"),
        ("custom_oauth_providers_created_at_idx", "custom_oauth_providers", "USING btree (created_at)"),
        ("webauthn_credentials_credential_id_key", "webauthn_credentials", "UNIQUE USING btree (credential_id)"),
        ("webauthn_credentials_user_id_idx", "webauthn_credentials", "USING btree (user_id)"),
        ("webauthn_challenges_user_id_idx", "webauthn_challenges", "USING btree (user_id)"),
        ("webauthn_challenges_expires_at_idx", "webauthn_challenges", "USING btree (expires_at)"),
    ]

    /// The helpers PostgREST requests call in RLS policies. PostgREST (before 9) set one
    /// `request.jwt.claim.<name>` setting per claim, later versions set `request.jwt.claims`
    /// to the whole JSON; the functions read either, an empty setting counting as unset.
    static let functions = """
        CREATE OR REPLACE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE AS $$
          SELECT coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
                          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub'))::uuid
        $$;
        CREATE OR REPLACE FUNCTION auth.role() RETURNS text LANGUAGE sql STABLE AS $$
          SELECT coalesce(nullif(current_setting('request.jwt.claim.role', true), ''),
                          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role'))::text
        $$;
        CREATE OR REPLACE FUNCTION auth.email() RETURNS text LANGUAGE sql STABLE AS $$
          SELECT coalesce(nullif(current_setting('request.jwt.claim.email', true), ''),
                          (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email'))::text
        $$;
        CREATE OR REPLACE FUNCTION auth.jwt() RETURNS jsonb LANGUAGE sql STABLE AS $$
          SELECT coalesce(nullif(current_setting('request.jwt.claim', true), ''),
                          nullif(current_setting('request.jwt.claims', true), ''))::jsonb
        $$;
        """

    /// Every migration version GoTrue records in `auth.schema_migrations`, oldest first (the
    /// file names' numeric prefixes; gobuffalo/pop runs a migration whose version has no row).
    static let migrations: [String] = [
        "00", "20210710035447", "20210722035447", "20210730183235", "20210909172000", "20210927181326",
        "20211122151130", "20211124214934", "20211202183645", "20220114185221", "20220114185340", "20220224000811",
        "20220323170000", "20220429102000", "20220531120530", "20220614074223", "20220811173540", "20221003041349",
        "20221003041400", "20221011041400", "20221020193600", "20221021073300", "20221021082433", "20221027105023",
        "20221114143122", "20221114143410", "20221125140132", "20221208132122", "20221215195500", "20221215195800",
        "20221215195900", "20230116124310", "20230116124412", "20230131181311", "20230322519590", "20230402418590",
        "20230411005111", "20230508135423", "20230523124323", "20230818113222", "20230914180801", "20231027141322",
        "20231114161723", "20231117164230", "20240115144230", "20240214120130", "20240306115329", "20240314092811",
        "20240427152123", "20240612123726", "20240729123726", "20240802193726", "20240806073726", "20241009103726",
        "20250717082212", "20250731150234", "20250804100000", "20250901200500", "20250903112500", "20250904133000",
        "20250925093508", "20251007112900", "20251104100000", "20251111201300", "20251201000000", "20260115000000",
        "20260121000000", "20260219120000", "20260302000000", "20260625000000",
    ]

    /// The first GoTrue release that shipped each migration of the last few years (the oldest
    /// release tag containing the file), for reports: "a v2.189 database lacks it".
    static let firstRelease: [String: String] = [
        "20221215195500": "v2.40.0", "20221215195800": "v2.40.0", "20230116124310": "v2.41.0", "20230116124412": "v2.41.0",
        "20230322519590": "v2.55.0", "20230402418590": "v2.58.0", "20230818113222": "v2.93.0", "20231027141322": "v2.108.0",
        "20231114161723": "v2.113.0", "20231117164230": "v2.116.0", "20240214120130": "v2.144.0", "20240306115329": "v2.145.0",
        "20240314092811": "v2.145.0", "20240427152123": "v2.151.0", "20240612123726": "v2.154.0", "20240729123726": "v2.158.0",
        "20240802193726": "v2.158.1", "20241009103726": "v2.163.0", "20250717082212": "v2.178.0", "20250731150234": "v2.179.0",
        "20250804100000": "v2.180.0", "20250901200500": "v2.180.0", "20250903112500": "v2.180.0", "20250904133000": "v2.180.0",
        "20250925093508": "v2.181.0", "20251007112900": "v2.181.0", "20251104100000": "v2.183.0", "20251111201300": "v2.183.0",
        "20251201000000": "v2.184.0", "20260115000000": "v2.186.0", "20260121000000": "v2.186.0", "20260219120000": "v2.187.0",
        "20260302000000": "v2.188.0", "20260625000000": "v2.192.0",
    ]

    /// The whole creation script: enums, tables, foreign keys, indexes, functions, RLS flags,
    /// and GoTrue's grants to `postgres` when that role exists (20240612123726 grants it SELECT
    /// WITH GRANT OPTION on the tables then present, so a non-superuser `postgres` can expose
    /// them).
    static var creationScript: String {
        var sql = "CREATE SCHEMA IF NOT EXISTS auth;\n"
        // GoTrue's migrations create each enum on its own, skipping one that exists
        // (`EXCEPTION WHEN duplicate_object`), so a database that already has one of them (an
        // interrupted migration, an app's own) still gets the schema.
        for type in enums {
            let labels = type.labels.map(PostgresConnection.quoteLiteral).joined(separator: ", ")
            sql += "DO $$ BEGIN CREATE TYPE auth.\(type.name) AS ENUM (\(labels)); EXCEPTION WHEN duplicate_object THEN NULL; END $$;\n"
        }
        for table in tables {
            let lines = table.columns.map { PostgresConnection.quoteIdentifier($0.name) + " " + $0.definition } + table.constraints
            sql += "CREATE TABLE auth.\(table.name) (\n  " + lines.joined(separator: ",\n  ") + "\n);\n"
        }
        for table in tables {
            for key in table.foreignKeys {
                sql += "ALTER TABLE auth.\(table.name) ADD \(key);\n"
            }
        }
        for index in indexes {
            let unique = index.definition.hasPrefix("UNIQUE ")
            let rest = unique ? String(index.definition.dropFirst("UNIQUE ".count)) : index.definition
            sql += "CREATE \(unique ? "UNIQUE " : "")INDEX \(index.name) ON auth.\(index.table) \(rest);\n"
        }
        sql += functions + "\n"
        let secured = tables.filter(\.rowLevelSecurity).map(\.name)
        for name in secured {
            sql += "ALTER TABLE auth.\(name) ENABLE ROW LEVEL SECURITY;\n"
        }
        sql += "DO $$ BEGIN\n  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'postgres') THEN\n"
        for name in secured {
            sql += "    GRANT SELECT ON auth.\(name) TO postgres WITH GRANT OPTION;\n"
        }
        sql += "  END IF;\nEND $$;\n"
        sql += "INSERT INTO auth.schema_migrations (version) VALUES "
            + migrations.map { "('\($0)')" }.joined(separator: ", ") + " ON CONFLICT DO NOTHING;\n"
        return sql
    }
}
