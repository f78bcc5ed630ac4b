"""docs/testing-data.md's examples, run as a reader runs them, against a real Postgres.

As test_postgres_docs.py does for docs/postgres.md: the page's blocks are marked `tested` by this
file, which runs them in page order on one fresh database of a throw-away cluster
(postgres_cluster.py), with DATABASE_URL, ANON_KEY, SERVICE_ROLE_KEY and psql on PATH. The
block that starts the emulator is started here in the background (`--port 0`) and left running
for the blocks after it, whose documented address is replaced by its. Each block's output is
checked against what the page says it shows, and the claims the page makes in prose (the
other migration order's error, a restart adopting the schema) are checked on databases of
their own.
"""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import postgres_cluster
from conftest import FAST_HASHING, Server, postgres_cluster as cluster_of_this_process

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "testing-data.md"
MARK = "<!-- tested: Tests/python/test_testing_data_docs.py"
DOCUMENTED_URL = "http://127.0.0.1:9999"
ADA = "11111111-2222-4333-8444-555555555555"

pytestmark = pytest.mark.skipif(not postgres_cluster.available(),
                                reason="needs PostgreSQL's server binaries (apt install postgresql)")


def blocks():
    """The page's blocks this file runs, in order, as (language, code)."""
    text = PAGE.read_text()
    found = re.findall(re.escape(MARK) + r"[^\n]*-->\n```(bash|python)\n(.*?)^```$", text, re.S | re.M)
    assert len(found) == text.count(MARK), "a block marked for this file is bash or python"
    return found


class Page:
    """The page's blocks run one after another in one folder against one server. As in one
    terminal, a shell variable a bash block sets (`claims=...`) is there for the blocks after it."""

    def __init__(self, folder, env, server, page):
        self.folder, self.env, self.server = folder, env, server
        self.variables = sorted({name for language, code in page if language == "bash"
                                 for name in re.findall(r"^([a-z_][a-z0-9_]*)=", code, re.M)})

    def run(self, block, check=True):
        language, code = block
        if self.server is not None:
            code = code.replace(DOCUMENTED_URL, self.server.url)
        if language == "bash":
            state = self.folder / ".shell-variables"
            code = (f"set -euo pipefail\n[ -f {state} ] && source {state}\n{code}\n"
                    f"declare -p {' '.join(self.variables)} > {state} 2>/dev/null || true\n")
        command = ["bash", "-c", code] if language == "bash" else [sys.executable, "-c", code]
        result = subprocess.run(command, cwd=self.folder, env=self.env, capture_output=True, text=True, timeout=120)
        if check:
            assert result.returncode == 0, f"{code}\n--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
        return result

    def lines(self, block):
        return self.run(block).stdout.splitlines()

    def sql(self, statement):
        return subprocess.run(["psql", self.env["DATABASE_URL"], "-Atq", "-v", "ON_ERROR_STOP=1", "-c", statement],
                              env=self.env, capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()


def test_the_page_runs_as_written(tmp_path):
    cluster = cluster_of_this_process()
    page = blocks()
    assert [language for language, _ in page] == ["bash"] * 5 + ["python", "bash", "python", "bash", "bash"], \
        "the page's runnable blocks changed: update this test"
    database_url = cluster.url(cluster.make_database())
    env = {**os.environ, **FAST_HASHING, "PATH": f"{cluster.bin}:{os.environ['PATH']}", "DATABASE_URL": database_url}

    # The emulator, as the first block starts it.
    words = page[0][1].strip().replace('"$DATABASE_URL"', database_url).split()
    assert words[:2] == ["auth-emulator", "serve"], page[0]
    server = Server(words[2:], env=env)
    try:
        assert "auth schema created" in server.info["database"]
        env["ANON_KEY"], env["SERVICE_ROLE_KEY"] = server.info["anon key"], server.info["service_role key"]
        reader = Page(tmp_path, env, server, page)

        # The app's migrations, after the auth schema.
        reader.run(page[1])
        assert reader.sql("select count(*) from pg_trigger where tgname = 'on_auth_user_created'") == ["1"]

        # Seed: users and their rows in one step; the profile trigger fired for both.
        assert reader.lines(page[2]) == ["ada@example.com", "bob@example.com", "Ada|Write the RLS test", "Bob|Bob's own todo"]

        # RLS as Ada: her todo only, an insert owned by auth.uid(), counted under the policy,
        # all rolled back; then the policy refuses a todo in Bob's name.
        assert reader.lines(page[3]) == ["Write the RLS test", "2"]
        assert reader.sql("select count(*) from public.todos") == ["2"]
        refused = reader.lines(page[4])
        assert len(refused) == 1 and 'ERROR:  new row violates row-level security policy for table "todos"' in refused[0]

        # The same from Python, as Bob.
        reader.run(page[5])

        # Reset with keep_seed: the app rows cascade away and the fixture's sql brings the seeded
        # ones back; the audit table (no foreign key to auth) keeps its row.
        assert reader.lines(page[6]) == ['{"users":2,"kept_seed":true}', "Write the RLS test", "Bob's own todo",
                                             "kept across resets"]

        # The pytest fixture, in a test run of its own: each test starts from the seeded rows.
        suite = tmp_path / "suite"
        suite.mkdir()
        (suite / "conftest.py").write_text(page[7][1].replace(DOCUMENTED_URL, server.url))
        (suite / "test_todos.py").write_text(
            "import os, subprocess\n"
            "def todos():\n"
            "    return subprocess.run(['psql', os.environ['DATABASE_URL'], '-Atq', '-c', 'select title from public.todos order by id'],\n"
            "                          capture_output=True, text=True, check=True).stdout.splitlines()\n"
            "def add(title):\n"
            f"    subprocess.run(['psql', os.environ['DATABASE_URL'], '-q', '-c', \"insert into public.todos (owner, title) values ('{ADA}', '\" + title + \"')\"], check=True)\n"
            "def test_one():\n"
            "    assert todos() == ['Write the RLS test', \"Bob's own todo\"]\n"
            "    add('one')\n"
            "def test_two():\n"
            "    assert todos() == ['Write the RLS test', \"Bob's own todo\"]\n"
            "    add('two')\n")
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(suite)],
                             cwd=suite, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr

        # A foreign key without a delete action: 409 naming it, nothing deleted.
        message = reader.lines(page[8])
        assert len(message) == 1 and message[0].startswith(
            "reset cannot delete the rows of auth.users: foreign key constraint invoices_customer_fkey of table public.invoices"), message
        assert message[0].endswith("Nothing was deleted.")
        assert reader.sql("select count(*) from auth.users") == ["2"]

        # ON DELETE SET NULL: the invoice outlives its customer; then emptied by hand.
        assert reader.lines(page[9]) == ['{"users":0,"kept_seed":false}', "no customer|1200"]
        assert reader.sql("select count(*) from public.invoices") == ["0"]
        assert reader.sql("select count(*) from public.audit_events") == ["0"]
    finally:
        assert server.stop() == 0



def test_the_other_order_fails_as_the_page_says_and_a_restart_adopts(tmp_path):
    cluster = cluster_of_this_process()
    page = blocks()
    env = {**os.environ, **FAST_HASHING, "PATH": f"{cluster.bin}:{os.environ['PATH']}"}
    migration = tmp_path / "supabase/migrations/20260101000000_todos.sql"

    def migrate(database_url):
        reader = Page(tmp_path, {**env, "DATABASE_URL": database_url}, server=None, page=page)
        return reader.run(page[1], check=False)

    # The app's migrations first, on a bare database: the first reference to auth fails.
    bare = cluster.make_database()
    failed = migrate(cluster.url(bare))
    assert failed.returncode == 3 and 'ERROR:  schema "auth" does not exist' in failed.stderr, failed.stderr
    assert cluster.psql("select count(*) from pg_tables where schemaname = 'public'", database=bare) == [("0",)]
    # ... and where the schema is there but GoTrue's tables are not.
    cluster.psql("create schema auth", database=bare)
    failed = migrate(cluster.url(bare))
    assert 'ERROR:  relation "auth.users" does not exist' in failed.stderr, failed.stderr
    assert migration.exists()

    # The emulator's first start, stopped; the migrations; the next start adopts it all.
    migrated = cluster.make_database()
    database_url = cluster.url(migrated)
    first = Server(["--db", database_url, "--db-bootstrap"], env=env)
    assert "auth schema created" in first.info["database"]
    assert first.stop() == 0
    assert migrate(database_url).returncode == 0
    second = Server(["--db", database_url], env=env)
    try:
        assert "auth schema adopted" in second.info["database"]
        signup = subprocess.run(
            ["curl", "-s", f"{second.url}/auth/v1/signup", "-H", f"apikey: {second.info['anon key']}", "-H", "Content-Type: application/json",
             "-d", json.dumps({"email": "ada@example.com", "password": "correct-horse-1", "data": {"first_name": "Ada"}})],
            capture_output=True, text=True, timeout=60)
        assert "access_token" in signup.stdout, signup.stdout
        assert cluster.psql("select first_name from public.profiles", database=migrated) == [("Ada",)]
    finally:
        assert second.stop() == 0
