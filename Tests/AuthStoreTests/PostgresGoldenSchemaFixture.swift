// GoTrue's `auth` schema after all 70 of its migrations (supabase/auth at bc32168, v2.196.0 + 2;
// newest migration 20260625000000), as the catalog listing in PostgresGoldenSchemaTests prints
// it: tables with their row-level-security flag, columns in order (type, NOT NULL, default or
// generation expression), constraints, indexes, enum labels in order and functions. Produced by
// applying GoTrue's own migration files to an empty Postgres 15 database as
// `supabase_auth_admin` (search_path auth) and listing the result.
//
// When GoTrue adds a migration, this listing and `GoTrueSchema` change together; the test
// names each line that differs.
let goTrueGoldenSchema = #"""
table audit_log_entries rls
column audit_log_entries.instance_id uuid
column audit_log_entries.id uuid not null
column audit_log_entries.payload json
column audit_log_entries.created_at timestamp with time zone
column audit_log_entries.ip_address character varying(64) not null default ''::character varying
constraint audit_log_entries.audit_log_entries_pkey PRIMARY KEY (id)
index audit_log_entries.audit_log_entries_pkey UNIQUE USING btree (id)
index audit_log_entries.audit_logs_instance_id_idx USING btree (instance_id)
table custom_oauth_providers
column custom_oauth_providers.id uuid not null default gen_random_uuid()
column custom_oauth_providers.provider_type text not null
column custom_oauth_providers.identifier text not null
column custom_oauth_providers.name text not null
column custom_oauth_providers.client_id text not null
column custom_oauth_providers.client_secret text not null
column custom_oauth_providers.acceptable_client_ids text[] not null default '{}'::text[]
column custom_oauth_providers.scopes text[] not null default '{}'::text[]
column custom_oauth_providers.pkce_enabled boolean not null default true
column custom_oauth_providers.attribute_mapping jsonb not null default '{}'::jsonb
column custom_oauth_providers.authorization_params jsonb not null default '{}'::jsonb
column custom_oauth_providers.enabled boolean not null default true
column custom_oauth_providers.email_optional boolean not null default false
column custom_oauth_providers.issuer text
column custom_oauth_providers.discovery_url text
column custom_oauth_providers.skip_nonce_check boolean not null default false
column custom_oauth_providers.cached_discovery jsonb
column custom_oauth_providers.discovery_cached_at timestamp with time zone
column custom_oauth_providers.authorization_url text
column custom_oauth_providers.token_url text
column custom_oauth_providers.userinfo_url text
column custom_oauth_providers.jwks_uri text
column custom_oauth_providers.created_at timestamp with time zone not null default now()
column custom_oauth_providers.updated_at timestamp with time zone not null default now()
column custom_oauth_providers.custom_claims_allowlist text[] not null default '{}'::text[]
constraint custom_oauth_providers.custom_oauth_providers_authorization_url_https CHECK (((authorization_url IS NULL) OR (authorization_url ~~ 'https://%'::text)))
constraint custom_oauth_providers.custom_oauth_providers_authorization_url_length CHECK (((authorization_url IS NULL) OR (char_length(authorization_url) <= 2048)))
constraint custom_oauth_providers.custom_oauth_providers_client_id_length CHECK (((char_length(client_id) >= 1) AND (char_length(client_id) <= 512)))
constraint custom_oauth_providers.custom_oauth_providers_discovery_url_length CHECK (((discovery_url IS NULL) OR (char_length(discovery_url) <= 2048)))
constraint custom_oauth_providers.custom_oauth_providers_identifier_format CHECK ((identifier ~ '^[a-z0-9][a-z0-9:-]{0,48}[a-z0-9]$'::text))
constraint custom_oauth_providers.custom_oauth_providers_identifier_key UNIQUE (identifier)
constraint custom_oauth_providers.custom_oauth_providers_issuer_length CHECK (((issuer IS NULL) OR ((char_length(issuer) >= 1) AND (char_length(issuer) <= 2048))))
constraint custom_oauth_providers.custom_oauth_providers_jwks_uri_https CHECK (((jwks_uri IS NULL) OR (jwks_uri ~~ 'https://%'::text)))
constraint custom_oauth_providers.custom_oauth_providers_jwks_uri_length CHECK (((jwks_uri IS NULL) OR (char_length(jwks_uri) <= 2048)))
constraint custom_oauth_providers.custom_oauth_providers_name_length CHECK (((char_length(name) >= 1) AND (char_length(name) <= 100)))
constraint custom_oauth_providers.custom_oauth_providers_oauth2_requires_endpoints CHECK (((provider_type <> 'oauth2'::text) OR ((authorization_url IS NOT NULL) AND (token_url IS NOT NULL) AND (userinfo_url IS NOT NULL))))
constraint custom_oauth_providers.custom_oauth_providers_oidc_discovery_url_https CHECK (((provider_type <> 'oidc'::text) OR (discovery_url IS NULL) OR (discovery_url ~~ 'https://%'::text)))
constraint custom_oauth_providers.custom_oauth_providers_oidc_issuer_https CHECK (((provider_type <> 'oidc'::text) OR (issuer IS NULL) OR (issuer ~~ 'https://%'::text)))
constraint custom_oauth_providers.custom_oauth_providers_oidc_requires_issuer CHECK (((provider_type <> 'oidc'::text) OR (issuer IS NOT NULL)))
constraint custom_oauth_providers.custom_oauth_providers_pkey PRIMARY KEY (id)
constraint custom_oauth_providers.custom_oauth_providers_provider_type_check CHECK ((provider_type = ANY (ARRAY['oauth2'::text, 'oidc'::text])))
constraint custom_oauth_providers.custom_oauth_providers_token_url_https CHECK (((token_url IS NULL) OR (token_url ~~ 'https://%'::text)))
constraint custom_oauth_providers.custom_oauth_providers_token_url_length CHECK (((token_url IS NULL) OR (char_length(token_url) <= 2048)))
constraint custom_oauth_providers.custom_oauth_providers_userinfo_url_https CHECK (((userinfo_url IS NULL) OR (userinfo_url ~~ 'https://%'::text)))
constraint custom_oauth_providers.custom_oauth_providers_userinfo_url_length CHECK (((userinfo_url IS NULL) OR (char_length(userinfo_url) <= 2048)))
index custom_oauth_providers.custom_oauth_providers_created_at_idx USING btree (created_at)
index custom_oauth_providers.custom_oauth_providers_enabled_idx USING btree (enabled)
index custom_oauth_providers.custom_oauth_providers_identifier_idx USING btree (identifier)
index custom_oauth_providers.custom_oauth_providers_identifier_key UNIQUE USING btree (identifier)
index custom_oauth_providers.custom_oauth_providers_pkey UNIQUE USING btree (id)
index custom_oauth_providers.custom_oauth_providers_provider_type_idx USING btree (provider_type)
table flow_state rls
column flow_state.id uuid not null
column flow_state.user_id uuid
column flow_state.auth_code text
column flow_state.code_challenge_method auth.code_challenge_method
column flow_state.code_challenge text
column flow_state.provider_type text not null
column flow_state.provider_access_token text
column flow_state.provider_refresh_token text
column flow_state.created_at timestamp with time zone
column flow_state.updated_at timestamp with time zone
column flow_state.authentication_method text not null
column flow_state.auth_code_issued_at timestamp with time zone
column flow_state.invite_token text
column flow_state.referrer text
column flow_state.oauth_client_state_id uuid
column flow_state.linking_target_id uuid
column flow_state.email_optional boolean not null default false
constraint flow_state.flow_state_pkey PRIMARY KEY (id)
index flow_state.flow_state_created_at_idx USING btree (created_at DESC)
index flow_state.flow_state_pkey UNIQUE USING btree (id)
index flow_state.idx_auth_code USING btree (auth_code)
index flow_state.idx_user_id_auth_method USING btree (user_id, authentication_method)
table identities rls
column identities.provider_id text not null
column identities.user_id uuid not null
column identities.identity_data jsonb not null
column identities.provider text not null
column identities.last_sign_in_at timestamp with time zone
column identities.created_at timestamp with time zone
column identities.updated_at timestamp with time zone
column identities.email text generated lower((identity_data ->> 'email'::text))
column identities.id uuid not null default gen_random_uuid()
constraint identities.identities_pkey PRIMARY KEY (id)
constraint identities.identities_provider_id_provider_unique UNIQUE (provider_id, provider)
constraint identities.identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE
index identities.identities_email_idx USING btree (email text_pattern_ops)
index identities.identities_pkey UNIQUE USING btree (id)
index identities.identities_provider_id_provider_unique UNIQUE USING btree (provider_id, provider)
index identities.identities_user_id_idx USING btree (user_id)
table instances rls
column instances.id uuid not null
column instances.uuid uuid
column instances.raw_base_config text
column instances.created_at timestamp with time zone
column instances.updated_at timestamp with time zone
constraint instances.instances_pkey PRIMARY KEY (id)
index instances.instances_pkey UNIQUE USING btree (id)
table mfa_amr_claims rls
column mfa_amr_claims.session_id uuid not null
column mfa_amr_claims.created_at timestamp with time zone not null
column mfa_amr_claims.updated_at timestamp with time zone not null
column mfa_amr_claims.authentication_method text not null
column mfa_amr_claims.id uuid not null
constraint mfa_amr_claims.amr_id_pk PRIMARY KEY (id)
constraint mfa_amr_claims.mfa_amr_claims_session_id_authentication_method_pkey UNIQUE (session_id, authentication_method)
constraint mfa_amr_claims.mfa_amr_claims_session_id_fkey FOREIGN KEY (session_id) REFERENCES auth.sessions(id) ON DELETE CASCADE
index mfa_amr_claims.amr_id_pk UNIQUE USING btree (id)
index mfa_amr_claims.mfa_amr_claims_session_id_authentication_method_pkey UNIQUE USING btree (session_id, authentication_method)
table mfa_challenges rls
column mfa_challenges.id uuid not null
column mfa_challenges.factor_id uuid not null
column mfa_challenges.created_at timestamp with time zone not null
column mfa_challenges.verified_at timestamp with time zone
column mfa_challenges.ip_address inet not null
column mfa_challenges.otp_code text
column mfa_challenges.web_authn_session_data jsonb
constraint mfa_challenges.mfa_challenges_auth_factor_id_fkey FOREIGN KEY (factor_id) REFERENCES auth.mfa_factors(id) ON DELETE CASCADE
constraint mfa_challenges.mfa_challenges_pkey PRIMARY KEY (id)
index mfa_challenges.mfa_challenge_created_at_idx USING btree (created_at DESC)
index mfa_challenges.mfa_challenges_pkey UNIQUE USING btree (id)
table mfa_factors rls
column mfa_factors.id uuid not null
column mfa_factors.user_id uuid not null
column mfa_factors.friendly_name text
column mfa_factors.factor_type auth.factor_type not null
column mfa_factors.status auth.factor_status not null
column mfa_factors.created_at timestamp with time zone not null
column mfa_factors.updated_at timestamp with time zone not null
column mfa_factors.secret text
column mfa_factors.phone text
column mfa_factors.last_challenged_at timestamp with time zone
column mfa_factors.web_authn_credential jsonb
column mfa_factors.web_authn_aaguid uuid
column mfa_factors.last_webauthn_challenge_data jsonb
constraint mfa_factors.mfa_factors_last_challenged_at_key UNIQUE (last_challenged_at)
constraint mfa_factors.mfa_factors_pkey PRIMARY KEY (id)
constraint mfa_factors.mfa_factors_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE
index mfa_factors.factor_id_created_at_idx USING btree (user_id, created_at)
index mfa_factors.mfa_factors_last_challenged_at_key UNIQUE USING btree (last_challenged_at)
index mfa_factors.mfa_factors_pkey UNIQUE USING btree (id)
index mfa_factors.mfa_factors_user_friendly_name_unique UNIQUE USING btree (friendly_name, user_id) WHERE (TRIM(BOTH FROM friendly_name) <> ''::text)
index mfa_factors.mfa_factors_user_id_idx USING btree (user_id)
index mfa_factors.unique_phone_factor_per_user UNIQUE USING btree (user_id, phone)
table oauth_authorizations
column oauth_authorizations.id uuid not null
column oauth_authorizations.authorization_id text not null
column oauth_authorizations.client_id uuid not null
column oauth_authorizations.user_id uuid
column oauth_authorizations.redirect_uri text not null
column oauth_authorizations.scope text not null
column oauth_authorizations.state text
column oauth_authorizations.resource text
column oauth_authorizations.code_challenge text
column oauth_authorizations.code_challenge_method auth.code_challenge_method
column oauth_authorizations.response_type auth.oauth_response_type not null default 'code'::auth.oauth_response_type
column oauth_authorizations.status auth.oauth_authorization_status not null default 'pending'::auth.oauth_authorization_status
column oauth_authorizations.authorization_code text
column oauth_authorizations.created_at timestamp with time zone not null default now()
column oauth_authorizations.expires_at timestamp with time zone not null default (now() + '00:03:00'::interval)
column oauth_authorizations.approved_at timestamp with time zone
column oauth_authorizations.nonce text
constraint oauth_authorizations.oauth_authorizations_authorization_code_key UNIQUE (authorization_code)
constraint oauth_authorizations.oauth_authorizations_authorization_code_length CHECK ((char_length(authorization_code) <= 255))
constraint oauth_authorizations.oauth_authorizations_authorization_id_key UNIQUE (authorization_id)
constraint oauth_authorizations.oauth_authorizations_client_id_fkey FOREIGN KEY (client_id) REFERENCES auth.oauth_clients(id) ON DELETE CASCADE
constraint oauth_authorizations.oauth_authorizations_code_challenge_length CHECK ((char_length(code_challenge) <= 128))
constraint oauth_authorizations.oauth_authorizations_expires_at_future CHECK ((expires_at > created_at))
constraint oauth_authorizations.oauth_authorizations_nonce_length CHECK ((char_length(nonce) <= 255))
constraint oauth_authorizations.oauth_authorizations_pkey PRIMARY KEY (id)
constraint oauth_authorizations.oauth_authorizations_redirect_uri_length CHECK ((char_length(redirect_uri) <= 2048))
constraint oauth_authorizations.oauth_authorizations_resource_length CHECK ((char_length(resource) <= 2048))
constraint oauth_authorizations.oauth_authorizations_scope_length CHECK ((char_length(scope) <= 4096))
constraint oauth_authorizations.oauth_authorizations_state_length CHECK ((char_length(state) <= 4096))
constraint oauth_authorizations.oauth_authorizations_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE
index oauth_authorizations.oauth_auth_pending_exp_idx USING btree (expires_at) WHERE (status = 'pending'::auth.oauth_authorization_status)
index oauth_authorizations.oauth_authorizations_authorization_code_key UNIQUE USING btree (authorization_code)
index oauth_authorizations.oauth_authorizations_authorization_id_key UNIQUE USING btree (authorization_id)
index oauth_authorizations.oauth_authorizations_pkey UNIQUE USING btree (id)
table oauth_client_states
column oauth_client_states.id uuid not null
column oauth_client_states.provider_type text not null
column oauth_client_states.code_verifier text
column oauth_client_states.created_at timestamp with time zone not null
constraint oauth_client_states.oauth_client_states_pkey PRIMARY KEY (id)
index oauth_client_states.idx_oauth_client_states_created_at USING btree (created_at)
index oauth_client_states.oauth_client_states_pkey UNIQUE USING btree (id)
table oauth_clients
column oauth_clients.id uuid not null
column oauth_clients.client_secret_hash text
column oauth_clients.registration_type auth.oauth_registration_type not null
column oauth_clients.redirect_uris text not null
column oauth_clients.grant_types text not null
column oauth_clients.client_name text
column oauth_clients.client_uri text
column oauth_clients.logo_uri text
column oauth_clients.created_at timestamp with time zone not null default now()
column oauth_clients.updated_at timestamp with time zone not null default now()
column oauth_clients.deleted_at timestamp with time zone
column oauth_clients.client_type auth.oauth_client_type not null default 'confidential'::auth.oauth_client_type
column oauth_clients.token_endpoint_auth_method text not null
constraint oauth_clients.oauth_clients_client_name_length CHECK ((char_length(client_name) <= 1024))
constraint oauth_clients.oauth_clients_client_uri_length CHECK ((char_length(client_uri) <= 2048))
constraint oauth_clients.oauth_clients_logo_uri_length CHECK ((char_length(logo_uri) <= 2048))
constraint oauth_clients.oauth_clients_pkey PRIMARY KEY (id)
constraint oauth_clients.oauth_clients_token_endpoint_auth_method_check CHECK ((token_endpoint_auth_method = ANY (ARRAY['client_secret_basic'::text, 'client_secret_post'::text, 'none'::text])))
index oauth_clients.oauth_clients_deleted_at_idx USING btree (deleted_at)
index oauth_clients.oauth_clients_pkey UNIQUE USING btree (id)
table oauth_consents
column oauth_consents.id uuid not null
column oauth_consents.user_id uuid not null
column oauth_consents.client_id uuid not null
column oauth_consents.scopes text not null
column oauth_consents.granted_at timestamp with time zone not null default now()
column oauth_consents.revoked_at timestamp with time zone
constraint oauth_consents.oauth_consents_client_id_fkey FOREIGN KEY (client_id) REFERENCES auth.oauth_clients(id) ON DELETE CASCADE
constraint oauth_consents.oauth_consents_pkey PRIMARY KEY (id)
constraint oauth_consents.oauth_consents_revoked_after_granted CHECK (((revoked_at IS NULL) OR (revoked_at >= granted_at)))
constraint oauth_consents.oauth_consents_scopes_length CHECK ((char_length(scopes) <= 2048))
constraint oauth_consents.oauth_consents_scopes_not_empty CHECK ((char_length(TRIM(BOTH FROM scopes)) > 0))
constraint oauth_consents.oauth_consents_user_client_unique UNIQUE (user_id, client_id)
constraint oauth_consents.oauth_consents_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE
index oauth_consents.oauth_consents_active_client_idx USING btree (client_id) WHERE (revoked_at IS NULL)
index oauth_consents.oauth_consents_active_user_client_idx USING btree (user_id, client_id) WHERE (revoked_at IS NULL)
index oauth_consents.oauth_consents_pkey UNIQUE USING btree (id)
index oauth_consents.oauth_consents_user_client_unique UNIQUE USING btree (user_id, client_id)
index oauth_consents.oauth_consents_user_order_idx USING btree (user_id, granted_at DESC)
table one_time_tokens rls
column one_time_tokens.id uuid not null
column one_time_tokens.user_id uuid not null
column one_time_tokens.token_type auth.one_time_token_type not null
column one_time_tokens.token_hash text not null
column one_time_tokens.relates_to text not null
column one_time_tokens.created_at timestamp without time zone not null default now()
column one_time_tokens.updated_at timestamp without time zone not null default now()
constraint one_time_tokens.one_time_tokens_pkey PRIMARY KEY (id)
constraint one_time_tokens.one_time_tokens_token_hash_check CHECK ((char_length(token_hash) > 0))
constraint one_time_tokens.one_time_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE
index one_time_tokens.one_time_tokens_pkey UNIQUE USING btree (id)
index one_time_tokens.one_time_tokens_relates_to_hash_idx USING hash (relates_to)
index one_time_tokens.one_time_tokens_token_hash_hash_idx USING hash (token_hash)
index one_time_tokens.one_time_tokens_user_id_token_type_key UNIQUE USING btree (user_id, token_type)
table refresh_tokens rls
column refresh_tokens.instance_id uuid
column refresh_tokens.id bigint not null default nextval('auth.refresh_tokens_id_seq'::regclass)
column refresh_tokens.token character varying(255)
column refresh_tokens.user_id character varying(255)
column refresh_tokens.revoked boolean
column refresh_tokens.created_at timestamp with time zone
column refresh_tokens.updated_at timestamp with time zone
column refresh_tokens.parent character varying(255)
column refresh_tokens.session_id uuid
constraint refresh_tokens.refresh_tokens_pkey PRIMARY KEY (id)
constraint refresh_tokens.refresh_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES auth.sessions(id) ON DELETE CASCADE
constraint refresh_tokens.refresh_tokens_token_unique UNIQUE (token)
index refresh_tokens.refresh_tokens_instance_id_idx USING btree (instance_id)
index refresh_tokens.refresh_tokens_instance_id_user_id_idx USING btree (instance_id, user_id)
index refresh_tokens.refresh_tokens_parent_idx USING btree (parent)
index refresh_tokens.refresh_tokens_pkey UNIQUE USING btree (id)
index refresh_tokens.refresh_tokens_session_id_revoked_idx USING btree (session_id, revoked)
index refresh_tokens.refresh_tokens_token_unique UNIQUE USING btree (token)
index refresh_tokens.refresh_tokens_updated_at_idx USING btree (updated_at DESC)
table saml_providers rls
column saml_providers.id uuid not null
column saml_providers.sso_provider_id uuid not null
column saml_providers.entity_id text not null
column saml_providers.metadata_xml text not null
column saml_providers.metadata_url text
column saml_providers.attribute_mapping jsonb
column saml_providers.created_at timestamp with time zone
column saml_providers.updated_at timestamp with time zone
column saml_providers.name_id_format text
constraint saml_providers.entity_id not empty CHECK ((char_length(entity_id) > 0))
constraint saml_providers.metadata_url not empty CHECK (((metadata_url = NULL::text) OR (char_length(metadata_url) > 0)))
constraint saml_providers.metadata_xml not empty CHECK ((char_length(metadata_xml) > 0))
constraint saml_providers.saml_providers_entity_id_key UNIQUE (entity_id)
constraint saml_providers.saml_providers_pkey PRIMARY KEY (id)
constraint saml_providers.saml_providers_sso_provider_id_fkey FOREIGN KEY (sso_provider_id) REFERENCES auth.sso_providers(id) ON DELETE CASCADE
index saml_providers.saml_providers_entity_id_key UNIQUE USING btree (entity_id)
index saml_providers.saml_providers_pkey UNIQUE USING btree (id)
index saml_providers.saml_providers_sso_provider_id_idx USING btree (sso_provider_id)
table saml_relay_states rls
column saml_relay_states.id uuid not null
column saml_relay_states.sso_provider_id uuid not null
column saml_relay_states.request_id text not null
column saml_relay_states.for_email text
column saml_relay_states.redirect_to text
column saml_relay_states.created_at timestamp with time zone
column saml_relay_states.updated_at timestamp with time zone
column saml_relay_states.flow_state_id uuid
constraint saml_relay_states.request_id not empty CHECK ((char_length(request_id) > 0))
constraint saml_relay_states.saml_relay_states_flow_state_id_fkey FOREIGN KEY (flow_state_id) REFERENCES auth.flow_state(id) ON DELETE CASCADE
constraint saml_relay_states.saml_relay_states_pkey PRIMARY KEY (id)
constraint saml_relay_states.saml_relay_states_sso_provider_id_fkey FOREIGN KEY (sso_provider_id) REFERENCES auth.sso_providers(id) ON DELETE CASCADE
index saml_relay_states.saml_relay_states_created_at_idx USING btree (created_at DESC)
index saml_relay_states.saml_relay_states_for_email_idx USING btree (for_email)
index saml_relay_states.saml_relay_states_pkey UNIQUE USING btree (id)
index saml_relay_states.saml_relay_states_sso_provider_id_idx USING btree (sso_provider_id)
table schema_migrations rls
column schema_migrations.version character varying(255) not null
constraint schema_migrations.schema_migrations_pkey PRIMARY KEY (version)
index schema_migrations.schema_migrations_pkey UNIQUE USING btree (version)
table sessions rls
column sessions.id uuid not null
column sessions.user_id uuid not null
column sessions.created_at timestamp with time zone
column sessions.updated_at timestamp with time zone
column sessions.factor_id uuid
column sessions.aal auth.aal_level
column sessions.not_after timestamp with time zone
column sessions.refreshed_at timestamp without time zone
column sessions.user_agent text
column sessions.ip inet
column sessions.tag text
column sessions.oauth_client_id uuid
column sessions.refresh_token_hmac_key text
column sessions.refresh_token_counter bigint
column sessions.scopes text
constraint sessions.sessions_oauth_client_id_fkey FOREIGN KEY (oauth_client_id) REFERENCES auth.oauth_clients(id) ON DELETE CASCADE
constraint sessions.sessions_pkey PRIMARY KEY (id)
constraint sessions.sessions_scopes_length CHECK ((char_length(scopes) <= 4096))
constraint sessions.sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE
index sessions.sessions_not_after_idx USING btree (not_after DESC)
index sessions.sessions_oauth_client_id_idx USING btree (oauth_client_id)
index sessions.sessions_pkey UNIQUE USING btree (id)
index sessions.sessions_user_id_idx USING btree (user_id)
index sessions.user_id_created_at_idx USING btree (user_id, created_at)
table sso_domains rls
column sso_domains.id uuid not null
column sso_domains.sso_provider_id uuid not null
column sso_domains.domain text not null
column sso_domains.created_at timestamp with time zone
column sso_domains.updated_at timestamp with time zone
constraint sso_domains.domain not empty CHECK ((char_length(domain) > 0))
constraint sso_domains.sso_domains_pkey PRIMARY KEY (id)
constraint sso_domains.sso_domains_sso_provider_id_fkey FOREIGN KEY (sso_provider_id) REFERENCES auth.sso_providers(id) ON DELETE CASCADE
index sso_domains.sso_domains_domain_idx UNIQUE USING btree (lower(domain))
index sso_domains.sso_domains_pkey UNIQUE USING btree (id)
index sso_domains.sso_domains_sso_provider_id_idx USING btree (sso_provider_id)
table sso_providers rls
column sso_providers.id uuid not null
column sso_providers.resource_id text
column sso_providers.created_at timestamp with time zone
column sso_providers.updated_at timestamp with time zone
column sso_providers.disabled boolean
constraint sso_providers.resource_id not empty CHECK (((resource_id = NULL::text) OR (char_length(resource_id) > 0)))
constraint sso_providers.sso_providers_pkey PRIMARY KEY (id)
index sso_providers.sso_providers_pkey UNIQUE USING btree (id)
index sso_providers.sso_providers_resource_id_idx UNIQUE USING btree (lower(resource_id))
index sso_providers.sso_providers_resource_id_pattern_idx USING btree (resource_id text_pattern_ops)
table users rls
column users.instance_id uuid
column users.id uuid not null
column users.aud character varying(255)
column users.role character varying(255)
column users.email character varying(255)
column users.encrypted_password character varying(255)
column users.email_confirmed_at timestamp with time zone
column users.invited_at timestamp with time zone
column users.confirmation_token character varying(255)
column users.confirmation_sent_at timestamp with time zone
column users.recovery_token character varying(255)
column users.recovery_sent_at timestamp with time zone
column users.email_change_token_new character varying(255)
column users.email_change character varying(255)
column users.email_change_sent_at timestamp with time zone
column users.last_sign_in_at timestamp with time zone
column users.raw_app_meta_data jsonb
column users.raw_user_meta_data jsonb
column users.is_super_admin boolean
column users.created_at timestamp with time zone
column users.updated_at timestamp with time zone
column users.phone text default NULL::character varying
column users.phone_confirmed_at timestamp with time zone
column users.phone_change text default ''::character varying
column users.phone_change_token character varying(255) default ''::character varying
column users.phone_change_sent_at timestamp with time zone
column users.confirmed_at timestamp with time zone generated LEAST(email_confirmed_at, phone_confirmed_at)
column users.email_change_token_current character varying(255) default ''::character varying
column users.email_change_confirm_status smallint default 0
column users.banned_until timestamp with time zone
column users.reauthentication_token character varying(255) default ''::character varying
column users.reauthentication_sent_at timestamp with time zone
column users.is_sso_user boolean not null default false
column users.deleted_at timestamp with time zone
column users.is_anonymous boolean not null default false
constraint users.users_email_change_confirm_status_check CHECK (((email_change_confirm_status >= 0) AND (email_change_confirm_status <= 2)))
constraint users.users_phone_key UNIQUE (phone)
constraint users.users_pkey PRIMARY KEY (id)
index users.confirmation_token_idx UNIQUE USING btree (confirmation_token) WHERE ((confirmation_token)::text !~ '^[0-9 ]*$'::text)
index users.email_change_token_current_idx UNIQUE USING btree (email_change_token_current) WHERE ((email_change_token_current)::text !~ '^[0-9 ]*$'::text)
index users.email_change_token_new_idx UNIQUE USING btree (email_change_token_new) WHERE ((email_change_token_new)::text !~ '^[0-9 ]*$'::text)
index users.reauthentication_token_idx UNIQUE USING btree (reauthentication_token) WHERE ((reauthentication_token)::text !~ '^[0-9 ]*$'::text)
index users.recovery_token_idx UNIQUE USING btree (recovery_token) WHERE ((recovery_token)::text !~ '^[0-9 ]*$'::text)
index users.users_email_partial_key UNIQUE USING btree (email) WHERE (is_sso_user = false)
index users.users_instance_id_email_idx USING btree (instance_id, lower((email)::text))
index users.users_instance_id_idx USING btree (instance_id)
index users.users_is_anonymous_idx USING btree (is_anonymous)
index users.users_phone_key UNIQUE USING btree (phone)
index users.users_pkey UNIQUE USING btree (id)
table webauthn_challenges
column webauthn_challenges.id uuid not null default gen_random_uuid()
column webauthn_challenges.user_id uuid
column webauthn_challenges.challenge_type text not null
column webauthn_challenges.session_data jsonb not null
column webauthn_challenges.created_at timestamp with time zone not null default now()
column webauthn_challenges.expires_at timestamp with time zone not null
constraint webauthn_challenges.webauthn_challenges_challenge_type_check CHECK ((challenge_type = ANY (ARRAY['signup'::text, 'registration'::text, 'authentication'::text])))
constraint webauthn_challenges.webauthn_challenges_pkey PRIMARY KEY (id)
constraint webauthn_challenges.webauthn_challenges_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE
index webauthn_challenges.webauthn_challenges_expires_at_idx USING btree (expires_at)
index webauthn_challenges.webauthn_challenges_pkey UNIQUE USING btree (id)
index webauthn_challenges.webauthn_challenges_user_id_idx USING btree (user_id)
table webauthn_credentials
column webauthn_credentials.id uuid not null default gen_random_uuid()
column webauthn_credentials.user_id uuid not null
column webauthn_credentials.credential_id bytea not null
column webauthn_credentials.public_key bytea not null
column webauthn_credentials.attestation_type text not null default ''::text
column webauthn_credentials.aaguid uuid
column webauthn_credentials.sign_count bigint not null default 0
column webauthn_credentials.transports jsonb not null default '[]'::jsonb
column webauthn_credentials.backup_eligible boolean not null default false
column webauthn_credentials.backed_up boolean not null default false
column webauthn_credentials.friendly_name text not null default ''::text
column webauthn_credentials.created_at timestamp with time zone not null default now()
column webauthn_credentials.updated_at timestamp with time zone not null default now()
column webauthn_credentials.last_used_at timestamp with time zone
constraint webauthn_credentials.webauthn_credentials_pkey PRIMARY KEY (id)
constraint webauthn_credentials.webauthn_credentials_user_id_fkey FOREIGN KEY (user_id) REFERENCES auth.users(id) ON DELETE CASCADE
index webauthn_credentials.webauthn_credentials_credential_id_key UNIQUE USING btree (credential_id)
index webauthn_credentials.webauthn_credentials_pkey UNIQUE USING btree (id)
index webauthn_credentials.webauthn_credentials_user_id_idx USING btree (user_id)
enum aal_level aal1, aal2, aal3
enum code_challenge_method s256, plain
enum factor_status unverified, verified
enum factor_type totp, webauthn, phone
enum oauth_authorization_status pending, approved, denied, expired
enum oauth_client_type public, confidential
enum oauth_registration_type dynamic, manual
enum oauth_response_type code
enum one_time_token_type confirmation_token, reauthentication_token, recovery_token, email_change_token_new, email_change_token_current, phone_change_token
function email() returns text sql stable
function jwt() returns jsonb sql stable
function role() returns text sql stable
function uid() returns uuid sql stable
"""#
