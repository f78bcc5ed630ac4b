"""The binary end to end over loopback: start-up contract, health, gateway key check, clean
shutdown on SIGTERM/SIGINT with the database left consistent."""
import json
import pathlib
import signal
import sqlite3

import httpx
import pytest

from conftest import ANON_KEY, SERVICE_ROLE_KEY, wait_until, wait_until_server_read


def test_banner_prints_keys_and_database(server):
    assert server.banner[0] == f"auth url:         {server.url}/auth/v1"
    assert server.banner[1] == f"anon key:         {ANON_KEY}"
    assert server.banner[2] == f"service_role key: {SERVICE_ROLE_KEY}"
    # supabase start's opaque keys are accepted by default too.
    assert server.info["publishable key"] == "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH"
    assert server.info["secret key"] == "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz"
    assert server.banner[-1] == "database:         :memory:"


def test_health_at_root_and_behind_gateway_prefix(server):
    expected = {
        "name": "GoTrue",
        "description": "GoTrue is a user registration and authentication API",
    }
    with httpx.Client(timeout=30) as client:
        root = client.get(f"{server.url}/health")
        assert root.status_code == 200
        assert root.headers["content-type"] == "application/json"
        body = root.json()
        assert {k: body[k] for k in expected} == expected
        assert body["version"]

        gateway = client.get(f"{server.url}/auth/v1/health", headers={"apikey": ANON_KEY})
        assert gateway.status_code == 200
        assert gateway.content == root.content


def test_gateway_checks_no_key_by_default(server):
    """As supabase start's Kong: /auth/v1 has no key check; opaque keys reach GoTrue as JWTs."""
    from conftest import SERVICE_ROLE_KEY as service_role

    with httpx.Client(timeout=30) as client:
        assert client.get(f"{server.url}/auth/v1/health").status_code == 200
        assert client.get(f"{server.url}/auth/v1/health", headers={"apikey": "nope"}).status_code == 200
        secret = server.info["secret key"]
        admin = client.get(f"{server.url}/auth/v1/admin/users", headers={"apikey": secret, "Authorization": f"Bearer {secret}"})
        assert admin.status_code == 200, admin.text
        assert client.get(f"{server.url}/admin/users", headers={"Authorization": f"Bearer {service_role}"}).status_code == 200


def test_gateway_requires_a_known_api_key(start_server):
    server = start_server("--db", ":memory:", "--require-apikey")
    with httpx.Client(timeout=30) as client:
        missing = client.get(f"{server.url}/auth/v1/health")
        assert missing.status_code == 401
        assert missing.json() == {"message": "No API key found in request"}
        wrong = client.get(f"{server.url}/auth/v1/health", headers={"apikey": "nope"})
        assert wrong.status_code == 401
        assert wrong.json() == {"message": "Invalid authentication credentials"}
        query = client.get(f"{server.url}/auth/v1/health", params={"apikey": SERVICE_ROLE_KEY})
        assert query.status_code == 200


def test_unknown_path_and_wrong_method(server):
    with httpx.Client(timeout=30) as client:
        missing = client.get(f"{server.url}/nope")
        assert missing.status_code == 404
        assert missing.text == "404 page not found\n"
        wrong = client.post(f"{server.url}/health")
        assert wrong.status_code == 405
        assert wrong.content == b""


def test_oversized_body_is_gotrue_413(server):
    with httpx.Client(timeout=10) as client:
        response = client.post(
            f"{server.url}/health",
            content=b"x" * (1024 * 1024 + 1),
            headers={"X-Supabase-Api-Version": "2024-01-01"},
        )
        assert response.status_code == 413
        assert response.json() == {
            "code": "request_entity_too_large",
            "message": "Request body too large (max 1048576 bytes)",
        }
        assert response.headers["x-sb-error-code"] == "request_entity_too_large"


def test_sigterm_and_sigint_stop_cleanly_and_keep_the_database(start_server, tmp_path):
    db = tmp_path / "nested" / "auth.db"
    for sig in (signal.SIGTERM, signal.SIGINT):
        # With nothing in flight a stop waits for nothing: a drain of an hour would outlast the
        # stop's generous bound, were the server to sit it out.
        server = start_server("--db", str(db), "--shutdown-timeout", "3600")
        assert server.banner[-1] == f"database:         {db}"
        with httpx.Client(timeout=30) as client:
            assert client.get(f"{server.url}/health").status_code == 200
        # The signals reach the server through a thread of its own, not a libdispatch worker.
        tasks = pathlib.Path(f"/proc/{server.process.pid}/task")
        if tasks.exists():
            names = [(task / "comm").read_text().strip() for task in tasks.iterdir()]
            assert "signal-reader" in names, names
            assert not any("qos" in name for name in names), names
        assert server.stop(sig, timeout=60) == 0
        # A clean close checkpoints the WAL into the main file.
        assert db.exists()
        wal = db.with_name(db.name + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            assert {"users", "identities", "sessions", "refresh_tokens", "schema_migrations"} <= tables


def test_port_in_use_is_a_clear_error(server):
    import subprocess
    from conftest import BIN

    result = subprocess.run(
        [BIN, "serve", "--port", str(server.port), "--db", ":memory:"],
        capture_output=True, text=True, timeout=10,
    )
    assert result.returncode == 1
    assert "cannot listen" in result.stderr


def test_usage_errors_exit_64():
    import subprocess
    from conftest import BIN

    for args in (["serve", "--port", "x"], ["serve", "--bogus", "1"], ["frobnicate"], []):
        result = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=10)
        assert result.returncode == 64, args
        assert "Error" in result.stderr or "USAGE" in result.stderr
    help_result = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True, timeout=10)
    assert help_result.returncode == 0
    assert "USAGE: auth-emulator serve" in help_result.stdout


def test_signal_right_after_start_is_never_lost(start_server):
    # The handler must be in place before the first line is printed: a SIGTERM sent the moment
    # the port is known has to stop the server cleanly (it once could be dropped).
    for sig in (signal.SIGTERM, signal.SIGINT) * 15:
        server = start_server("--db", ":memory:")
        assert server.stop(sig, timeout=30) == 0


def wait_for_log(server, needle, seconds=30):
    """The server's stderr once `needle` is in it (or the bound ran out): access lines are
    written after the response."""
    wait_until(lambda: needle in server.stderr_text(), seconds)
    return server.stderr_text()


def test_access_log_one_line_per_request_without_secrets(start_server):
    server = start_server("--db", ":memory:")
    httpx.get(f"{server.url}/auth/v1/verify?token=super-secret-token&type=signup", timeout=10)
    httpx.post(f"{server.url}/token?grant_type=password", json={"email": "no@example.com", "password": "hunter22"},
               timeout=10)
    log = wait_for_log(server, "POST /token 400")
    assert "GET /auth/v1/verify 303" in log
    assert "POST /token 400 invalid_credentials " in log
    assert "super-secret-token" not in log and "hunter22" not in log

    quiet = start_server("--db", ":memory:", "--quiet")
    httpx.get(f"{quiet.url}/health", timeout=10)
    # Once the server has exited it has written all it will: an absent line is absent for good.
    quiet.process.terminate()
    assert quiet.process.wait(timeout=10) == 0
    assert "GET /health" not in quiet.stderr_text()

    structured = start_server("--db", ":memory:", "--log-format", "json")
    httpx.get(f"{structured.url}/health", timeout=10)
    line = next(l for l in wait_for_log(structured, '"path":"/health"').splitlines() if '"path":"/health"' in l)
    entry = json.loads(line)
    assert entry["method"] == "GET" and entry["status"] == 200 and entry["ms"] >= 0 and entry["request_id"]


def test_access_log_shows_injected_faults_as_the_client_saw_them(start_server, tmp_path):
    rules = {"name": "faults", "rules": [
        {"match": {"op": "health"}, "when": {"times": 1}, "then": {"reset": True}},
        {"match": {"op": "settings"}, "when": {"times": 1}, "then": {"error": "unexpected_failure", "message": "Database error finding user"}},
    ]}
    path = tmp_path / "faults.json"
    path.write_text(json.dumps(rules))
    server = start_server("--db", ":memory:", "--scenario", str(path))
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{server.url}/health", timeout=10)
    assert httpx.get(f"{server.url}/settings", timeout=10).status_code == 500
    log = wait_for_log(server, "GET /settings 500")
    lines = [line.rsplit(" ", 1)[0] for line in log.splitlines() if line.startswith(("GET /health", "GET /settings"))]
    # The reset is no status at all (not the 200 the handler built), with the journal's rule name.
    assert lines == ["GET /health - reset rule=faults#0", "GET /settings 500 unexpected_failure rule=faults#1"]
    journal = httpx.get(f"{server.url}/emulator/v1/journal", headers={"Authorization": f"Bearer {SERVICE_ROLE_KEY}"},
                        timeout=10).json()["entries"]
    assert [(e["status"], e["fault"], e["rule"], e["error_code"]) for e in journal] == [
        (None, "reset", "faults#0", None), (500, None, "faults#1", "unexpected_failure")]

    structured = start_server("--db", ":memory:", "--scenario", str(path), "--log-format", "json")
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{structured.url}/health", timeout=10)
    line = next(l for l in wait_for_log(structured, '"fault":"reset"').splitlines() if '"path":"/health"' in l)
    entry = json.loads(line)
    assert entry["status"] is None and entry["fault"] == "reset" and entry["rule"] == "faults#0"
    assert "error_code" not in entry


def test_shutdown_answers_unfinished_requests_with_503(start_server):
    import http.client
    # A slow sign-up (costly hashing) is still in a worker when the drain time (0 s) runs out.
    # The most iterations the emulator accepts: about 0.7 s on one core of an optimized build,
    # several seconds in a debug build, all of which the stop then waits for (the worker
    # finishes its hash before the process exits): its bound is generous.
    server = start_server("--db", ":memory:", "--shutdown-timeout", "0", "--quiet",
                          env={"AUTH_EMULATOR_PASSWORD_ITERATIONS": "10000000"})
    body = json.dumps({"email": "slow@example.com", "password": "password1"})
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    connection.request("POST", "/signup", body=body, headers={"Content-Type": "application/json"})
    # Stop once the server has read the request (it is then dispatched, in flight), not after a
    # guessed delay; the answer is read from the socket afterwards.
    wait_until_server_read(server.port, connection.sock.getsockname()[1])
    assert server.stop(timeout=300) == 0
    response = connection.getresponse()
    assert response.status == 503
    assert response.read() == b"503 Service Unavailable: the server is shutting down\n"
    connection.close()


def test_a_closed_log_pipe_does_not_stop_the_server(tmp_path):
    """A harness that reads the start-up lines, then closes its end of the pipe that also takes
    the access log: the next log line fails with EPIPE and is dropped, where SIGPIPE would end
    the process after the first answer."""
    import subprocess

    from conftest import BIN

    process = subprocess.Popen(
        [BIN, "serve", "--host", "127.0.0.1", "--port", "0", "--db", ":memory:"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # Warnings (stderr, here the same pipe) may come before the first stdout line.
        lines = []
        while not (lines and lines[-1].startswith("listening on ")):
            lines.append(process.stdout.readline())
            assert lines[-1], f"the server ended before listening: {lines}"
        url = lines[-1].strip().removeprefix("listening on ")
        assert url.startswith("http://127.0.0.1:"), lines
        while not process.stdout.readline().startswith("database:"):
            pass
        process.stdout.close()
        with httpx.Client(timeout=30) as client:
            for _ in range(3):
                assert client.get(f"{url}/health").status_code == 200
        assert process.poll() is None, f"the server ended with {process.returncode}"
    finally:
        process.kill()
        process.wait(timeout=30)
