"""Postgres mode with the real client: GoTrue's `auth` schema in the app's own Postgres, so the
app's triggers, foreign keys and row-level security see the emulator's users.

Each test gets a fresh database on a throw-away cluster (Tests/python/postgres_cluster.py); the
emulator bootstraps it as a Supabase Postgres is before GoTrue first runs (`--db-bootstrap`:
roles, schema), creates GoTrue's schema and writes as `supabase_auth_admin` with
`search_path = auth`, so the app SQL below behaves as on the real stack. The seed app's
`handle_new_user()` is the one BoxScore's migration installs.
"""
import base64
import concurrent.futures
import json
import subprocess
import threading

import httpx
import pytest

import postgres_cluster
from conftest import BIN, FAST_HASHING, SERVICE_ROLE_KEY, postgres_cluster as cluster_of_this_process
from supabase_auth.errors import AuthApiError

from helpers_client import PASSWORD, unique_email

pytestmark = pytest.mark.skipif(
    not postgres_cluster.available(),
    reason="needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17)",
)

APPLE_SERVICE = "com.example.service"
APPLE = {
    "GOTRUE_EXTERNAL_APPLE_ENABLED": "true",
    "GOTRUE_EXTERNAL_APPLE_CLIENT_ID": APPLE_SERVICE,
    "GOTRUE_EXTERNAL_APPLE_SECRET": "apple-secret",
}

PROFILES = """
CREATE TABLE public.profiles (
    id uuid PRIMARY KEY REFERENCES auth.users (id) {on_delete},
    first_name text NOT NULL
);
"""

# The seed app's function: SECURITY DEFINER (it writes public.profiles, which GoTrue's role may
# not), an empty search_path (every name qualified), and a name that may be missing.
HANDLE_NEW_USER = """
CREATE FUNCTION public.handle_new_user() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
  INSERT INTO public.profiles (id, first_name)
  VALUES (NEW.id, COALESCE(NEW.raw_user_meta_data ->> 'first_name', ''));
  RETURN NEW;
END;
$$;
CREATE TRIGGER on_auth_user_created AFTER INSERT ON auth.users
  FOR EACH ROW EXECUTE FUNCTION public.handle_new_user();
"""


def api_error(call):
    """The `AuthApiError` the client raised for `call`."""
    with pytest.raises(AuthApiError) as raised:
        call()
    return raised.value


class App:
    """One emulator on a database of its own, and the app's SQL on that database."""

    def __init__(self, cluster, server, database):
        self.cluster = cluster
        self.server = server
        self.database = database

    def sql(self, statements, check=True):
        return self.cluster.psql(statements, database=self.database, check=check)

    def admin(self, method, path, headers=None, **kwargs):
        return httpx.request(method, f"{self.server.url}/auth/v1/admin/{path}",
                             headers={"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}", **(headers or {})},
                             timeout=30, **kwargs)

    def journal(self, **params):
        response = httpx.get(f"{self.server.url}/emulator/v1/journal", params=params,
                             headers={"apikey": SERVICE_ROLE_KEY}, timeout=30)
        assert response.status_code == 200, response.text
        return response.json()["entries"]


@pytest.fixture
def app(start_server):
    def start(on_delete="ON DELETE CASCADE", trigger=HANDLE_NEW_USER, **env):
        cluster = cluster_of_this_process()
        database = cluster.make_database()
        server = start_server("--db", cluster.url(database), "--db-bootstrap", env={**FAST_HASHING, **APPLE, **env})
        made = App(cluster, server, database)
        # The app's migration, after GoTrue's schema exists (as `supabase db reset` orders them).
        made.sql(PROFILES.format(on_delete=on_delete) + (trigger or ""))
        return made

    return start


def test_the_banner_names_the_database_and_the_role_without_a_password(app):
    made = app()
    line = made.server.info["database"]
    assert made.database in line and "auth schema created" in line and "writing as supabase_auth_admin" in line
    # GoTrue's migrations are recorded, so a real `gotrue migrate` would find nothing to do.
    assert int(made.sql("SELECT count(*) FROM auth.schema_migrations")[0][0]) >= 70


def test_sign_up_runs_the_apps_trigger_and_the_profile_gets_the_name(app, make_client):
    made = app()
    client = make_client(made.server)
    email = unique_email("ada")
    response = client.sign_up({"email": email, "password": PASSWORD, "options": {"data": {"first_name": "Ada"}}})
    user_id = response.user.id
    assert made.sql(f"SELECT first_name FROM public.profiles WHERE id = '{user_id}'") == [("Ada",)]
    # The row as GoTrue writes it: '' in the token columns, a bcrypt hash pgcrypto can check.
    row = made.sql(f"""SELECT confirmation_token, recovery_token, email_change, aud, role,
                        extensions.crypt('{PASSWORD}', encrypted_password) = encrypted_password
                        FROM auth.users WHERE id = '{user_id}'""")
    assert row == [("", "", "", "authenticated", "authenticated", "t")]
    # And the user signs in again with the hash the emulator stored.
    client.sign_out()
    assert client.sign_in_with_password({"email": email, "password": PASSWORD}).user.id == user_id


def test_an_id_token_sign_in_without_a_name_gets_an_empty_one(app, make_client):
    made = app()
    minted = httpx.post(f"{made.server.url}/emulator/v1/idp/apple/id_token",
                        json={"sub": "001234.apple.0042", "email": unique_email("apple")},
                        headers={"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}, timeout=30)
    assert minted.status_code == 200, minted.text
    session = make_client(made.server).sign_in_with_id_token({"provider": "apple", "token": minted.json()["id_token"]})
    # Bracketed: psql prints an empty string as an empty line.
    assert made.sql(f"SELECT '[' || first_name || ']' FROM public.profiles WHERE id = '{session.user.id}'") == [("[]",)]


def assert_saving_fails(made, make_client, sqlstate, cause):
    """A sign-up an app trigger breaks: GoTrue's 500, nothing kept, the cause in the journal."""
    client = make_client(made.server)
    email = unique_email("broken")
    error = api_error(lambda: client.sign_up({"email": email, "password": PASSWORD, "options": {"data": {"first_name": "Ada"}}}))
    assert (error.status, error.code, error.message) == (500, "unexpected_failure", "Database error saving new user")
    assert made.sql(f"SELECT count(*) FROM auth.users WHERE email = '{email}'") == [("0",)]
    assert made.sql("SELECT count(*) FROM public.profiles") == [("0",)]
    # Nor does the emulator keep anything: the password grant finds no such user.
    refused = api_error(lambda: client.sign_in_with_password({"email": email, "password": PASSWORD}))
    assert refused.code == "invalid_credentials"
    # The client never sees the cause; the journal (and the server's log) do.
    [entry] = made.journal(op="signup")
    assert entry["status"] == 500 and sqlstate in entry["database_error"] and cause in entry["database_error"]
    assert cause in made.server.stderr_text()


def test_a_trigger_that_raises_rolls_the_sign_up_back(app, make_client):
    raising = """
    CREATE FUNCTION public.handle_new_user() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
    BEGIN RAISE EXCEPTION 'profiles are closed'; END; $$;
    CREATE TRIGGER on_auth_user_created AFTER INSERT ON auth.users FOR EACH ROW EXECUTE FUNCTION public.handle_new_user();
    """
    made = app(trigger=raising)
    assert_saving_fails(made, make_client, "P0001", "handle_new_user")


def test_a_trigger_without_security_definer_fails_as_under_gotrues_role(app, make_client):
    # The function runs as supabase_auth_admin, which may not write public.profiles.
    made = app(trigger=HANDLE_NEW_USER.replace("SECURITY DEFINER ", ""))
    assert_saving_fails(made, make_client, "42501", "permission denied for table profiles")


def test_an_unqualified_table_name_resolves_against_auth_and_fails(app, make_client):
    # No search_path of its own: `profiles` is looked up in GoTrue's search path, `auth`.
    unqualified = HANDLE_NEW_USER.replace("SET search_path = '' ", "").replace("public.profiles", "profiles")
    made = app(trigger=unqualified)
    assert_saving_fails(made, make_client, "42P01", 'relation "profiles" does not exist')


def test_admin_delete_goes_through_the_apps_cascade(app, make_client):
    made = app()
    user = make_client(made.server).sign_up({"email": unique_email(), "password": PASSWORD}).user
    assert made.admin("DELETE", f"users/{user.id}").status_code == 200
    assert made.sql(f"SELECT count(*) FROM public.profiles WHERE id = '{user.id}'") == [("0",)]
    assert made.sql(f"SELECT count(*) FROM auth.users WHERE id = '{user.id}'") == [("0",)]


def test_admin_delete_refused_by_a_foreign_key_without_cascade(app, make_client):
    made = app(on_delete="")
    user = make_client(made.server).sign_up({"email": unique_email(), "password": PASSWORD}).user
    # supabase-js and -py send API version 2024-01-01: GoTrue's message.
    response = made.admin("DELETE", f"users/{user.id}", headers={"X-Supabase-Api-Version": "2024-01-01"})
    assert (response.status_code, response.json()) == (500, {"code": "unexpected_failure", "message": "Database error deleting user"})
    # Without the header (the initial API version) GoTrue shows the database's own error for a
    # constraint violation (`utilities.NewPostgresError`).
    response = made.admin("DELETE", f"users/{user.id}")
    body = response.json()
    assert (response.status_code, body["code"]) == (500, "23503") and "profiles_id_fkey" in body["message"]
    # Nothing went: the user still signs in, the profile is there.
    assert made.sql(f"SELECT count(*) FROM auth.users WHERE id = '{user.id}'") == [("1",)]
    assert made.sql(f"SELECT count(*) FROM public.profiles WHERE id = '{user.id}'") == [("1",)]
    assert "profiles_id_fkey" in made.journal(op="admin.users.delete")[0]["database_error"]


def insert_user_by_sql(made, email, token_value):
    """A user seeded as app teams do by hand: pgcrypto's bcrypt hash, and `token_value` in the
    columns GoTrue scans into plain strings (NULL when None)."""
    token = "NULL" if token_value is None else f"'{token_value}'"
    made.sql(f"""
    INSERT INTO auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
        raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
        confirmation_token, recovery_token, email_change_token_new, email_change)
    VALUES ('00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated', '{email}',
        extensions.crypt('{PASSWORD}', extensions.gen_salt('bf')), now(),
        '{{"provider": "email", "providers": ["email"]}}', '{{}}', now(), now(), {token}, {token}, {token}, {token});
    """)


def test_a_user_seeded_by_sql_with_null_token_columns_cannot_sign_in(app, make_client):
    made = app(trigger=None)
    email = unique_email("seeded")
    insert_user_by_sql(made, email, None)
    error = api_error(lambda: make_client(made.server).sign_in_with_password({"email": email, "password": PASSWORD}))
    assert (error.status, error.code, error.message) == (500, "unexpected_failure", "Database error querying schema")
    assert "confirmation_token" in made.journal(op="token.password")[0]["database_error"]


def test_a_user_seeded_by_sql_as_gotrue_writes_signs_in_with_pgcryptos_hash(app, make_client):
    made = app(trigger=None)
    email = unique_email("seeded")
    insert_user_by_sql(made, email, "")
    session = make_client(made.server).sign_in_with_password({"email": email, "password": PASSWORD})
    assert session.user.email == email


def claims_of(access_token):
    payload = access_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_rls_through_auth_uid_as_postgrest_sets_the_claims(app, make_client):
    made = app()
    made.sql("""
    ALTER TABLE public.profiles ENABLE ROW LEVEL SECURITY;
    CREATE POLICY own_profile ON public.profiles FOR SELECT TO authenticated USING ((SELECT auth.uid()) = id);
    GRANT SELECT ON public.profiles TO authenticated;
    """)
    ada = make_client(made.server).sign_up({"email": unique_email("ada"), "password": PASSWORD,
                                            "options": {"data": {"first_name": "Ada"}}})
    make_client(made.server).sign_up({"email": unique_email("bob"), "password": PASSWORD,
                                      "options": {"data": {"first_name": "Bob"}}})
    claims = json.dumps(claims_of(ada.session.access_token)).replace("'", "''")
    # PostgREST's transaction for a request with this access token.
    rows = made.sql(f"""
    SET ROLE authenticated;
    SELECT set_config('request.jwt.claims', '{claims}', false);
    SELECT (SELECT auth.uid())::text, auth.role(), id::text, first_name FROM public.profiles;
    """)
    # psql prints every statement's rows: set_config's one column, then the query's four.
    assert [row for row in rows if len(row) == 4] == [(ada.user.id, "authenticated", ada.user.id, "Ada")]


def reset(made):
    return httpx.post(f"{made.server.url}/emulator/v1/reset", headers={"apikey": SERVICE_ROLE_KEY}, timeout=30)


def test_reset_goes_through_the_apps_cascades(app, make_client):
    made = app()
    make_client(made.server).sign_up({"email": unique_email(), "password": PASSWORD})
    assert reset(made).status_code == 200
    assert made.sql("SELECT (SELECT count(*) FROM auth.users), (SELECT count(*) FROM public.profiles)") == [("0", "0")]
    # GoTrue's migration records stay: the schema is still GoTrue's.
    assert int(made.sql("SELECT count(*) FROM auth.schema_migrations")[0][0]) >= 70


def test_reset_refused_by_a_foreign_key_without_cascade_keeps_everything(app, make_client):
    made = app(on_delete="")
    make_client(made.server).sign_up({"email": unique_email(), "password": PASSWORD})
    response = reset(made)
    assert response.status_code == 409
    message = response.json()["msg"]
    assert "profiles_id_fkey" in message and "Nothing was deleted" in message
    assert made.sql("SELECT (SELECT count(*) FROM auth.users), (SELECT count(*) FROM public.profiles)") == [("1", "1")]


@pytest.fixture
def bare_cluster():
    """A cluster of its own: roles are the server's, and other tests' bootstraps made GoTrue's."""
    cluster = postgres_cluster.Cluster()
    yield cluster
    cluster.stop()


def test_a_superuser_without_gotrues_role_is_warned_what_it_hides(start_server, bare_cluster):
    # No --db-bootstrap on a bare server: there is no supabase_auth_admin to write as.
    server = start_server("--db", bare_cluster.url(bare_cluster.make_database()), env=FAST_HASHING)
    assert "writing as postgres" in server.info["database"]
    warning = server.stderr_text()
    assert "superuser postgres" in warning and "supabase_auth_admin does not exist" in warning


def test_a_database_the_bootstrap_never_prepared_is_one_clear_error(start_server, bare_cluster):
    # GoTrue's role exists on the server (a first database was bootstrapped), not its grants here.
    start_server("--db", bare_cluster.url(bare_cluster.make_database()), "--db-bootstrap", env=FAST_HASHING).stop()
    result = subprocess.run([BIN, "serve", "--port", "0", "--db", bare_cluster.url(bare_cluster.make_database())],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "may not create GoTrue's schema in this database" in result.stderr and "--db-bootstrap" in result.stderr


def test_emulators_bootstrapping_databases_of_one_bare_server_at_once_all_come_up(start_server, bare_cluster, make_client):
    # A test worker each, each on a fresh database: the bootstraps meet on the server's roles.
    databases = [bare_cluster.make_database() for _ in range(4)]
    barrier = threading.Barrier(len(databases))

    def start(database):
        barrier.wait(timeout=60)
        return start_server("--db", bare_cluster.url(database), "--db-bootstrap", env=FAST_HASHING)

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(databases)) as pool:
        servers = list(pool.map(start, databases))
    for server, database in zip(servers, databases):
        assert "auth schema created" in server.info["database"] and "supabase_auth_admin" in server.info["database"]
        email = unique_email("worker")
        assert make_client(server).sign_up({"email": email, "password": PASSWORD}).user.email == email
        assert bare_cluster.psql("SELECT email FROM auth.users", database=database) == [(email,)]


def test_the_virtual_clock_moves_the_emulators_timestamps_not_the_databases(app, make_client):
    made = app(trigger=None)
    moved = httpx.post(f"{made.server.url}/emulator/v1/clock", json={"advance_seconds": 86400},
                       headers={"apikey": SERVICE_ROLE_KEY}, timeout=30)
    assert moved.status_code == 200, moved.text
    user = make_client(made.server).sign_up({"email": unique_email(), "password": PASSWORD}).user
    # created_at is the emulator's (a day ahead); the database's now() stays the wall clock.
    ahead = made.sql(f"SELECT extract(epoch FROM created_at - now())::int FROM auth.users WHERE id = '{user.id}'")
    assert 86000 < int(ahead[0][0]) <= 86400


def test_an_update_an_app_trigger_refuses_is_gotrues_500_and_changes_nothing(app, make_client):
    made = app()
    made.sql("""
    CREATE FUNCTION public.no_nicknames() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.raw_user_meta_data ? 'nickname' THEN RAISE EXCEPTION 'nicknames are not allowed'; END IF;
      RETURN NEW;
    END; $$;
    CREATE TRIGGER no_nicknames BEFORE UPDATE ON auth.users FOR EACH ROW EXECUTE FUNCTION public.no_nicknames();
    """)
    client = make_client(made.server)
    user = client.sign_up({"email": unique_email(), "password": PASSWORD}).user
    error = api_error(lambda: client.update_user({"data": {"nickname": "ada"}}))
    assert (error.status, error.code, error.message) == (500, "unexpected_failure", "Error updating user")
    assert made.sql(f"SELECT raw_user_meta_data ? 'nickname' FROM auth.users WHERE id = '{user.id}'") == [("f",)]
    assert client.update_user({"data": {"team": "blue"}}).user.user_metadata["team"] == "blue"
