"""A fixture's `sql` step (docs/testing-data.md, "Seed users and their rows in one step") on the
real binary against a real Postgres: `serve --seed` and `POST /emulator/v1/seed` run it after the
users in their transaction, as the database login; a failure keeps nothing; SQLite mode refuses it."""
import json
import subprocess

import httpx
import pytest

import postgres_cluster
from conftest import BIN, FAST_HASHING, postgres_cluster as cluster_of_this_process

pytestmark = pytest.mark.skipif(not postgres_cluster.available(),
                                reason="needs PostgreSQL's server binaries (apt install postgresql)")

ADA = "11111111-2222-4333-8444-555555555555"
APP_SCHEMA = """
create table public.todos (id bigint generated always as identity primary key,
                           owner uuid not null references auth.users (id) on delete cascade, title text not null);
create table public.seen (who text, at text);
-- Not SECURITY DEFINER: it sees the role and search path the emulator writes with.
create function public.note_writer() returns trigger language plpgsql as $$
begin insert into public.seen values (current_user::text || '/' || current_setting('search_path'), 'trigger'); return new; end; $$;
grant insert on public.seen to supabase_auth_admin;
"""


def fixture(sql, email="ada@example.com"):
    return {"users": [{"id": ADA, "email": email, "password": "correct-horse-1", "email_confirm": True}], "sql": sql}


@pytest.fixture
def database(start_server):
    """A bootstrapped database with GoTrue's schema (a first start) and the app's tables."""
    cluster = cluster_of_this_process()
    name = cluster.make_database()
    start_server("--db", cluster.url(name), "--db-bootstrap", env=FAST_HASHING).stop()
    cluster.psql(APP_SCHEMA, database=name)
    return cluster, name


def seed(server, document):
    return httpx.post(f"{server.url}/emulator/v1/seed", headers={"apikey": server.info["service_role key"]},
                      content=json.dumps(document), timeout=60)


def test_the_seed_route_runs_it_as_the_login_and_gives_the_writer_back(database, start_server):
    cluster, name = database
    server = start_server("--db", cluster.url(name), env=FAST_HASHING)
    response = seed(server, fixture([
        f"insert into todos (owner, title) values ('{ADA}', 'first');",
        "insert into seen values (current_user::text || '/' || current_setting('search_path'), 'fixture');",
    ]))
    assert response.status_code == 200, response.text
    assert cluster.psql("select title from public.todos", database=name) == [("first",)]
    # As psql with the --db URL: the login and its search path, not GoTrue's role and `auth`.
    assert cluster.psql("select who from public.seen where at = 'fixture'", database=name) == [('postgres/"$user", public',)]
    # The emulator's own writes are GoTrue's again: a trigger on auth.users sees its role.
    cluster.psql("create trigger note after insert on auth.users for each row execute function public.note_writer()", database=name)
    signup = httpx.post(f"{server.url}/signup", json={"email": "bob@example.com", "password": "correct-horse-2"}, timeout=60)
    assert signup.status_code == 200, signup.text
    assert cluster.psql("select who from public.seen where at = 'trigger'", database=name) == [("supabase_auth_admin/auth",)]
    # Seeding again runs the SQL again (the users are updated, not inserted).
    assert seed(server, fixture(f"insert into todos (owner, title) values ('{ADA}', 'again')")).status_code == 200
    assert cluster.psql("select title from public.todos order by id", database=name) == [("first",), ("again",)]


def test_a_failing_statement_keeps_nothing_and_says_why(database, start_server):
    cluster, name = database
    server = start_server("--db", cluster.url(name), env=FAST_HASHING)
    response = seed(server, fixture(f"insert into todos (owner, title) values ('{ADA}', 'ok'); insert into todos (title) values ('no owner')"))
    assert response.status_code == 400
    body = response.json()
    assert body["error_code"] == "validation_failed"
    assert body["msg"].startswith('invalid fixture: sql: null value in column "owner" of relation "todos" violates not-null constraint (SQLSTATE 23502)')
    assert cluster.psql("select count(*) from auth.users", database=name) == [("0",)]
    assert cluster.psql("select count(*) from public.todos", database=name) == [("0",)]
    ended = seed(server, fixture(f"insert into todos (owner, title) values ('{ADA}', 'x'); rollback"))
    assert ended.status_code == 400 and "COMMIT or ROLLBACK" in ended.json()["msg"]
    assert cluster.psql("select count(*) from auth.users", database=name) == [("0",)]
    # The server goes on serving: the next seed works.
    assert seed(server, fixture(f"insert into todos (owner, title) values ('{ADA}', 'ok')")).status_code == 200


def test_serve_seed_runs_it_before_listening_and_refuses_to_start_on_a_failure(database, start_server, tmp_path):
    cluster, name = database
    good = tmp_path / "good.json"
    good.write_text(json.dumps(fixture(f"insert into todos (owner, title) values ('{ADA}', 'seeded at start')")))
    server = start_server("--db", cluster.url(name), "--seed", str(good), env=FAST_HASHING)
    assert cluster.psql("select title from public.todos", database=name) == [("seeded at start",)]
    assert server.stop() == 0

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(fixture("insert into missing_table values (1)", email="grace@example.com")))
    run = subprocess.run([BIN, "serve", "--port", "0", "--db", cluster.url(name), "--seed", str(bad)],
                         capture_output=True, text=True, timeout=60, env={**FAST_HASHING, "PATH": "/usr/bin:/bin"})
    assert run.returncode != 0 and "listening on" not in run.stdout
    assert f"{bad}: invalid fixture: sql: relation \"missing_table\" does not exist (SQLSTATE 42P01)" in run.stderr, run.stderr
    assert cluster.psql("select email from auth.users", database=name) == [("ada@example.com",)]


def test_sqlite_mode_refuses_the_step(start_server):
    server = start_server("--db", ":memory:", env=FAST_HASHING)
    response = seed(server, fixture("select 1"))
    assert response.status_code == 400
    assert response.json()["msg"].startswith("invalid fixture: sql: runs only in Postgres mode (serve --db postgres://...)")
    users = httpx.get(f"{server.url}/admin/users", headers={"Authorization": f"Bearer {server.info['service_role key']}"}, timeout=60)
    assert users.json()["users"] == []
