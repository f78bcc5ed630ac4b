"""docs/postgres.md's examples, run as a reader runs them, against a real Postgres.

The page's shell blocks need a database, which the generic runner (test_doc_snippets.py) does not
have: they are marked `tested` by this file, which runs them in page order with DATABASE_URL a
fresh database on a throw-away cluster (postgres_cluster.py) and psql on PATH. A block that
starts the emulator (`auth-emulator serve ...`) is started here in the background (`--port 0`
added) and left running for the blocks after it, whose documented address is replaced by its.
"""
import os
import pathlib
import re
import signal
import subprocess

import pytest

import postgres_cluster
from conftest import BIN, FAST_HASHING, Server, postgres_cluster as cluster_of_this_process

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "postgres.md"
MARK = "<!-- tested: Tests/python/test_postgres_docs.py"
DOCUMENTED_URL = "http://127.0.0.1:9999"
CLI_DATABASE = "postgresql://postgres:postgres@127.0.0.1:54322/postgres"

pytestmark = pytest.mark.skipif(not postgres_cluster.available(),
                                reason="needs PostgreSQL's server binaries (apt install postgresql)")


def blocks():
    """The page's shell blocks this file runs, in order."""
    lines = PAGE.read_text().splitlines()
    found = []
    for index, line in enumerate(lines):
        if line.startswith(MARK) and lines[index + 1].startswith("```bash"):
            end = lines.index("```", index + 2)
            found.append("\n".join(lines[index + 2:end]))
    return found


def serve(command, env):
    """Starts the block's `auth-emulator serve ...` line as the suite starts servers."""
    words = os.path.expandvars(command.replace('"', "")).split()
    assert words[:2] == ["auth-emulator", "serve"], command
    return Server(words[2:], env=env)


def test_the_page_runs_as_written(tmp_path):
    cluster = cluster_of_this_process()
    page = blocks()
    assert len(page) == 5, "the page's runnable blocks changed: update this test"
    env = {**FAST_HASHING, "PATH": f"{cluster.bin}:{os.environ['PATH']}"}

    # 1. Against `supabase db start`'s database: one with GoTrue's schema and roles already
    # there (made here as the CLI's is, by a first start), at the CLI's address.
    shaped = cluster.url(cluster.make_database())
    first = Server(["--db", shaped, "--db-bootstrap"], env=env)
    assert "auth schema created" in first.info["database"]
    first.stop()
    adopting = serve(page[0].replace(CLI_DATABASE, shaped), env)
    try:
        assert "auth schema adopted" in adopting.info["database"] and "writing as supabase_auth_admin" in adopting.info["database"]
        assert "postgres:postgres@" not in " ".join(adopting.banner)
    finally:
        assert adopting.stop() == 0

    # 2. A bare Postgres, bootstrapped; the server stays up for the blocks after it.
    database_url = cluster.url(cluster.make_database())
    env["DATABASE_URL"] = database_url
    os.environ["DATABASE_URL"] = database_url  # for the serve line's "$DATABASE_URL"
    try:
        server = serve(page[1], env)
    finally:
        del os.environ["DATABASE_URL"]
    try:
        anon = server.info["anon key"]

        def run(block):
            result = subprocess.run(["bash", "-c", "set -euo pipefail\n" + block.replace(DOCUMENTED_URL, server.url)],
                                    cwd=tmp_path, env={**os.environ, **env, "ANON_KEY": anon},
                                    capture_output=True, text=True, timeout=60)
            assert result.returncode == 0, result.stderr
            return result.stdout.split()

        # 3. The app's migration; 4. a sign-up fires the trigger; 5. RLS through auth.uid().
        run(page[2])
        assert run(page[3]) == ["Ada"]
        run_bob = page[3].replace("ada@example.com", "bob@example.com").replace('"Ada"', '"Bob"')
        run_bob = run_bob.replace("session.json", "bob.json")
        assert sorted(run(run_bob)) == ["Ada", "Bob"]
        assert run(page[4]) == ["t", "Ada"]
    finally:
        assert server.stop() == 0
