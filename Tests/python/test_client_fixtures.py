"""Fixtures, reset, export/import, the virtual clock and test tokens (issue 5), driven through
the real supabase-auth client against the real binary; the emulator's own control routes
(`/emulator/v1/...`, service_role key) are called with plain HTTP, as a test suite would."""
import json
import os
import pathlib

import httpx
import pytest
from supabase_auth.errors import AuthApiError

from conftest import SERVICE_ROLE_KEY

FIXTURE_FILE = pathlib.Path(__file__).resolve().parent.parent / "Fixtures" / "seed.json"
ADA_ID = "11111111-2222-4333-8444-555555555555"
# "abcdefghijklmnopqrstuvwxyz" at cost 10: a published test vector of jBCrypt's TestBCrypt.java
# (Damien Miller), also checked against libxcrypt's crypt(3); Tests/Fixtures/seed.json seeds it.
BCRYPT_PASSWORD = "abcdefghijklmnopqrstuvwxyz"
BCRYPT_HASH = "$2a$10$fVH8e28OQRj9tqiDXs1e1uxpsjN0c7II7YPKXua2NAKYvM6iQk7dq"


def control(server, method, path, body=None):
    response = httpx.request(
        method,
        f"{server.url}/emulator/v1/{path}",
        json=body,
        headers={"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"},
        timeout=10,
    )
    return response


def sign_in(client, email, password):
    return client.sign_in_with_password({"email": email, "password": password}).session


def test_seed_file_users_sign_in(start_auth, make_client):
    server = start_auth()
    assert json.loads(FIXTURE_FILE.read_text())["users"][1]["password_hash"] == BCRYPT_HASH
    assert control(server, "POST", "seed", json.loads(FIXTURE_FILE.read_text())).status_code == 200
    client = make_client(server)

    session = sign_in(client, "ada@example.com", "correct-horse")
    assert session.user.id == ADA_ID
    assert session.user.user_metadata["first_name"] == "Ada"
    assert session.user.app_metadata["plan"] == "pro"

    # The seeded bcrypt hash verifies as it would on a real Supabase project.
    grace = sign_in(client, "grace@example.com", BCRYPT_PASSWORD)
    assert [i.provider for i in grace.user.identities] == ["email", "github"]
    with pytest.raises(AuthApiError) as error:
        sign_in(client, "grace@example.com", "not-the-password")
    assert error.value.code == "invalid_credentials"

    with pytest.raises(AuthApiError) as error:
        sign_in(client, "banned@example.com", "correct-horse")
    assert error.value.code == "user_banned"


def test_serve_seed_flag_and_reset_to_the_seed(start_server, make_client):
    server = start_server("--db", ":memory:", "--seed", str(FIXTURE_FILE),
                          env={"AUTH_EMULATOR_PASSWORD_ITERATIONS": "1000"})
    client = make_client(server)
    session = sign_in(client, "ada@example.com", "correct-horse")
    client.sign_up({"email": "extra@example.com", "password": "password1"})

    reset = control(server, "POST", "reset?keep_seed=true")
    assert reset.status_code == 200
    assert reset.json() == {"users": 4, "kept_seed": True}
    # Sessions are gone, the seeded users are back with the same ids, the rest is gone.
    with pytest.raises(AuthApiError):
        client.refresh_session(session.refresh_token)
    assert sign_in(client, "ada@example.com", "correct-horse").user.id == ADA_ID
    with pytest.raises(AuthApiError):
        sign_in(client, "extra@example.com", "password1")

    assert control(server, "POST", "reset").json() == {"users": 0, "kept_seed": False}
    with pytest.raises(AuthApiError):
        sign_in(client, "ada@example.com", "correct-horse")


def test_clock_expiry_refresh_and_session_timebox(start_auth, make_client):
    server = start_auth(GOTRUE_SESSIONS_TIMEBOX="2h")
    control(server, "POST", "seed", {"users": [{"email": "clock@example.com", "password": "correct-horse",
                                                "email_confirm": True}]})
    client = make_client(server, persist_session=False)
    session = sign_in(client, "clock@example.com", "correct-horse")
    assert client.get_user(session.access_token).user.email == "clock@example.com"

    moved = control(server, "POST", "clock", {"advance_seconds": 3601})
    assert moved.status_code == 200
    assert moved.json()["offset_seconds"] >= 3600
    assert moved.json()["frozen"] is False

    # The access token is now expired for the server ...
    with pytest.raises(AuthApiError) as error:
        client.get_user(session.access_token)
    assert error.value.code == "bad_jwt"
    # ... and refreshing gives a working one.
    refreshed = client.refresh_session(session.refresh_token).session
    assert client.get_user(refreshed.access_token).user.email == "clock@example.com"

    # Past GOTRUE_SESSIONS_TIMEBOX the session itself is over.
    control(server, "POST", "clock", {"advance_seconds": 3600})
    with pytest.raises(AuthApiError) as error:
        client.refresh_session(refreshed.refresh_token)
    assert error.value.code == "session_expired"

    bad = control(server, "POST", "clock", {"advance_seconds": "soon"})
    assert bad.status_code == 400
    assert bad.json()["error_code"] == "validation_failed"


def test_export_reset_import_round_trip(start_auth, make_client):
    server = start_auth()
    control(server, "POST", "seed", json.loads(FIXTURE_FILE.read_text()))
    client = make_client(server)
    session = sign_in(client, "ada@example.com", "correct-horse")

    exported = control(server, "GET", "export")
    assert exported.status_code == 200
    snapshot = exported.json()
    assert len(snapshot["tables"]["users"]) == 4
    assert len(snapshot["tables"]["sessions"]) == 1

    control(server, "POST", "reset")
    with pytest.raises(AuthApiError):
        sign_in(client, "ada@example.com", "correct-horse")

    imported = control(server, "POST", "import", snapshot)
    assert imported.status_code == 200
    assert imported.json()["imported"]["users"] == 4
    assert sign_in(client, "ada@example.com", "correct-horse").user.id == ADA_ID
    assert sign_in(client, "grace@example.com", BCRYPT_PASSWORD).user.email == "grace@example.com"
    # The session exported with the snapshot lives again.
    assert client.get_user(session.access_token).user.id == ADA_ID


def test_export_on_exit(start_server, tmp_path):
    target = tmp_path / "state.json"
    server = start_server("--db", ":memory:", "--seed", str(FIXTURE_FILE), "--export-on-exit", str(target),
                          env={"AUTH_EMULATOR_PASSWORD_ITERATIONS": "1000"})
    assert not target.exists()
    assert server.stop() == 0
    snapshot = json.loads(target.read_text())
    assert snapshot["format"] == "supabase-auth-emulator.snapshot"
    assert {user["email"] for user in snapshot["tables"]["users"]} >= {"ada@example.com", "grace@example.com"}


@pytest.mark.parametrize("secrets", [False, True])
def test_export_on_exit_keeps_the_emulators_keys_out_unless_asked(start_server, tmp_path, secrets):
    target = tmp_path / "state.json"
    args = ["--db", ":memory:", "--export-on-exit", str(target)] + (["--export-secrets"] if secrets else [])
    server = start_server(*args)
    # The providers' key set makes the fake providers' RSA key.
    first = control(server, "GET", "idp/google/jwks").json()["keys"][0]["kid"]
    assert server.stop() == 0
    tables = json.loads(target.read_text())["tables"]
    assert ("idp_signing_keys" in tables) == secrets
    assert ("emulator_authenticator_keys" in tables) == secrets
    if secrets:
        assert '"d"' in tables["idp_signing_keys"][0]["private_jwk"]

    # Either snapshot imports; the providers keep their key, or make a new one when it was left out.
    fresh = start_server("--db", ":memory:")
    assert control(fresh, "POST", "import", json.loads(target.read_text())).status_code == 200
    assert (control(fresh, "GET", "idp/google/jwks").json()["keys"][0]["kid"] == first) == secrets


def test_minted_token_is_accepted_by_the_client(start_auth, make_client):
    server = start_auth()
    control(server, "POST", "seed", json.loads(FIXTURE_FILE.read_text()))
    minted = control(server, "POST", "token", {"email": "ada@example.com", "claims": {"tenant": "acme"}})
    assert minted.status_code == 200
    body = minted.json()
    client = make_client(server)
    session = client.set_session(body["access_token"], body["refresh_token"]).session
    assert session.user.id == ADA_ID
    assert client.get_user().user.email == "ada@example.com"
    assert client.refresh_session().session.user.id == ADA_ID

    missing = control(server, "POST", "token", {"email": "nobody@example.com"})
    assert missing.status_code == 404
    assert missing.json()["error_code"] == "user_not_found"
