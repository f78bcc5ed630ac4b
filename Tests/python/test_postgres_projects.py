"""Projects on Postgres: a project made with `"database": "postgres://..."` keeps its users in that
database's `auth` schema, as the default project does in Postgres mode (docs/projects.md,
"Projects on Postgres"), beside a default project on a SQLite file or on Postgres itself.

Each test makes fresh databases on the process's throw-away cluster (Tests/python/postgres_cluster.py).
"""
import httpx
import pytest
from supabase_auth import SyncGoTrueClient

import postgres_cluster
from conftest import FAST_HASHING, SERVICE_ROLE_KEY, postgres_cluster as cluster_of_this_process

from helpers_client import PASSWORD, unique_email

pytestmark = pytest.mark.skipif(
    not postgres_cluster.available(),
    reason="needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17)",
)

CONTROL = {"apikey": SERVICE_ROLE_KEY}


def make_project(server, **body):
    return httpx.post(f"{server.url}/emulator/v1/projects", headers=CONTROL, json=body, timeout=60)


def project_refs(server):
    response = httpx.get(f"{server.url}/emulator/v1/projects", headers=CONTROL, timeout=30)
    assert response.status_code == 200, response.text
    return [p["ref"] for p in response.json()["projects"]]


def client_of(project):
    return SyncGoTrueClient(url=project["auth_url"], headers={"apikey": project["anon_key"]}, auto_refresh_token=False)


@pytest.fixture
def cluster():
    return cluster_of_this_process()


@pytest.fixture
def file_server(start_server, tmp_path):
    """A default project on a SQLite file (its projects' specs are kept beside it)."""
    return lambda: start_server("--db", str(tmp_path / "auth.db"), env={**FAST_HASHING, "GOTRUE_MAILER_AUTOCONFIRM": "true"})


def test_a_project_keeps_its_users_in_its_own_postgres_database(file_server, cluster):
    server = file_server()
    database = cluster.make_database()
    # Trust authentication ignores the password; the answer must not show it.
    url = cluster.url(database).replace("postgresql://postgres@", "postgresql://postgres:s3cret@")
    response = make_project(server, ref="shop", database=url, database_bootstrap=True)
    assert response.status_code == 201, response.text
    shop = response.json()
    assert shop["database"].startswith("postgresql://postgres:***@/") and "s3cret" not in response.text

    # The app's table and trigger, once the emulator made GoTrue's schema in that database.
    cluster.psql("""
        CREATE TABLE public.profiles (id uuid PRIMARY KEY REFERENCES auth.users (id) ON DELETE CASCADE, email text);
        CREATE FUNCTION public.handle_new_user() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
        BEGIN INSERT INTO public.profiles (id, email) VALUES (NEW.id, NEW.email); RETURN NEW; END; $$;
        CREATE TRIGGER on_auth_user_created AFTER INSERT ON auth.users FOR EACH ROW EXECUTE FUNCTION public.handle_new_user();
    """, database=database)
    email = unique_email("shop")
    user = client_of(shop).sign_up({"email": email, "password": PASSWORD}).user
    assert cluster.psql(f"SELECT email FROM public.profiles WHERE id = '{user.id}'", database=database) == [(email,)]
    # GoTrue's row: a bcrypt hash pgcrypto checks, as in Postgres mode.
    assert cluster.psql(f"SELECT extensions.crypt('{PASSWORD}', encrypted_password) = encrypted_password "
                        f"FROM auth.users WHERE id = '{user.id}'", database=database) == [("t",)]
    # Not the default project's user: its store is the SQLite file.
    listed = httpx.get(f"{server.url}/auth/v1/admin/users", headers={**CONTROL, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}, timeout=30)
    assert email not in listed.text
    # The project's own keys open its admin API, which reads that database.
    admin = httpx.get(f"{shop['auth_url']}/admin/users/{user.id}",
                      headers={"apikey": shop["service_role_key"], "Authorization": f"Bearer {shop['service_role_key']}"}, timeout=30)
    assert admin.status_code == 200 and admin.json()["email"] == email


def test_one_database_serves_one_project_however_it_is_spelled(file_server, cluster):
    server = file_server()
    database = cluster.make_database()
    assert make_project(server, ref="one", database=cluster.url(database), database_bootstrap=True).status_code == 201
    # The same database by libpq's key=value form: one auth schema cannot hold two projects.
    response = make_project(server, ref="two", database=cluster.conninfo(database))
    assert response.status_code == 409, response.text
    assert response.json()["error_code"] == "conflict" and '"one"' in response.json()["msg"]
    assert "two" not in project_refs(server)


def test_the_default_projects_database_is_refused_too(start_server, cluster):
    database = cluster.make_database()
    server = start_server("--db", cluster.url(database), "--db-bootstrap", env=FAST_HASHING)
    response = make_project(server, ref="again", database=cluster.conninfo(database))
    assert response.status_code == 409 and '"default"' in response.json()["msg"], response.text
    # Another database of the same server is a project's own.
    other = cluster.make_database()
    made = make_project(server, ref="other", database=cluster.url(other), database_bootstrap=True)
    assert made.status_code == 201, made.text
    email = unique_email("other")
    client_of(made.json()).sign_up({"email": email, "password": PASSWORD})
    assert cluster.psql(f"SELECT count(*) FROM auth.users WHERE email = '{email}'", database=other) == [("1",)]
    assert cluster.psql(f"SELECT count(*) FROM auth.users WHERE email = '{email}'", database=database) == [("0",)]


def test_bad_database_input_makes_nothing(file_server, cluster):
    server = file_server()
    missing = make_project(server, ref="ghost", database=cluster.url("no_such_database"))
    assert missing.status_code == 400, missing.text
    body = missing.json()
    assert body["error_code"] == "validation_failed" and body["msg"].startswith("database: cannot open the Postgres database")
    assert "no_such_database" in body["msg"]
    wrong = make_project(server, ref="ghost", database="mysql://localhost/app")
    assert wrong.status_code == 400 and "postgres://" in wrong.json()["msg"]
    not_postgres = make_project(server, ref="ghost", database="file", database_bootstrap=True)
    assert not_postgres.status_code == 400 and not_postgres.json()["msg"].startswith("database_bootstrap:")
    assert "ghost" not in project_refs(server)


def test_dropping_keeps_the_rows_and_a_restart_reopens_the_project(start_server, tmp_path, cluster):
    db_file = str(tmp_path / "auth.db")
    server = start_server("--db", db_file, env={**FAST_HASHING, "GOTRUE_MAILER_AUTOCONFIRM": "true"})
    database = cluster.make_database()
    shop = make_project(server, ref="shop", database=cluster.url(database), database_bootstrap=True).json()
    email = unique_email("kept")
    client_of(shop).sign_up({"email": email, "password": PASSWORD})

    # A restart on the same file reopens the project on its database: the user signs in.
    server.stop()
    server = start_server("--db", db_file, env=FAST_HASHING)
    assert "shop" in project_refs(server)
    shop = httpx.get(f"{server.url}/emulator/v1/projects/shop", headers=CONTROL, timeout=30).json()
    assert client_of(shop).sign_in_with_password({"email": email, "password": PASSWORD}).user.email == email

    # Dropping closes it; the app's database keeps its rows, and a new project there adopts them.
    assert httpx.delete(f"{server.url}/emulator/v1/projects/shop", headers=CONTROL, timeout=30).status_code == 204
    assert not (tmp_path / "projects" / "shop.json").exists()
    assert cluster.psql(f"SELECT count(*) FROM auth.users WHERE email = '{email}'", database=database) == [("1",)]
    again = make_project(server, ref="shop2", database=cluster.url(database))
    assert again.status_code == 201, again.text
    assert client_of(again.json()).sign_in_with_password({"email": email, "password": PASSWORD}).user.email == email


def test_a_config_toml_body_names_its_database_in_the_query(file_server, cluster):
    server = file_server()
    database = cluster.make_database()
    response = httpx.post(f"{server.url}/emulator/v1/projects",
                          params={"ref": "blog", "database": cluster.url(database), "database_bootstrap": "true"},
                          headers={**CONTROL, "Content-Type": "application/toml"},
                          content=b"[auth]\nsite_url = \"http://localhost:4000\"\n", timeout=60)
    assert response.status_code == 201, response.text
    assert cluster.psql("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'auth' AND table_name = 'users'",
                        database=database) == [("1",)]


def test_the_docs_example_runs_as_written(file_server, cluster, tmp_path):
    """docs/projects.md's "Projects on Postgres" block, with SHOP_DATABASE_URL a fresh database."""
    import os
    import pathlib
    import subprocess

    page = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "projects.md").read_text().splitlines()
    start = page.index("<!-- tested: Tests/python/test_postgres_projects.py -->")
    assert page[start + 1] == "```bash"
    block = "\n".join(page[start + 2:page.index("```", start + 2)])
    server = file_server()
    database = cluster.make_database()
    result = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block.replace("http://127.0.0.1:9999", server.url)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "SERVICE_ROLE_KEY": SERVICE_ROLE_KEY, "SHOP_DATABASE_URL": cluster.url(database)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == cluster.url(database)
    assert "shop" in project_refs(server)
