"""Failure scenarios from the catalogue (`scenarios/`) as the real supabase-auth client sees
them: retryable errors for 5xx gateways, resets and timeouts, API errors with the right code for
GoTrue errors, parse failures for malformed bodies, and the journal's view of what it did."""
import os

import httpx
import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError, AuthRetryableError

from conftest import ANON_KEY, FAST_HASHING, SERVICE_ROLE_KEY
from helpers_client import PASSWORD, unique_email

CATALOGUE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scenarios")


def scenario(name):
    return os.path.join(CATALOGUE, name + ".json")


@pytest.fixture
def start_with(start_server):
    """An emulator with catalogue scenarios active from the start."""

    def start(*names, env=None):
        args = ["--db", ":memory:"]
        for name in names:
            args += ["--scenario", scenario(name)]
        return start_server(*args, env={**FAST_HASHING, **(env or {})})

    return start


def control(server, method, path, **kwargs):
    """A call to the emulator's control routes with the service_role key."""
    headers = {"Authorization": f"Bearer {SERVICE_ROLE_KEY}"}
    return httpx.request(method, f"{server.url}/emulator/v1{path}", headers=headers, timeout=10, **kwargs)


def journal_count(server, **query):
    return control(server, "GET", "/journal/count", params=query).json()["count"]


def sign_up(client):
    email = unique_email()
    session = client.sign_up({"email": email, "password": PASSWORD}).session
    assert session is not None
    return email, session


def test_503_during_refresh_is_retryable_and_keeps_the_session(start_with, make_client):
    server = start_with("refresh-503")
    client = make_client(server)
    _, session = sign_up(client)

    for _ in range(2):
        with pytest.raises(AuthRetryableError) as raised:
            client.refresh_session()
        assert raised.value.status == 503
        # The client keeps the session it has: a retryable error is no sign-out.
        assert client.get_session().refresh_token == session.refresh_token

    refreshed = client.refresh_session().session
    assert refreshed.refresh_token != session.refresh_token
    assert client.get_session().access_token == refreshed.access_token
    # The journal saw three refresh attempts, two answered by the scenario.
    assert journal_count(server, op="token.refresh_token") == 3
    assert journal_count(server, op="token.refresh_token", status="503") == 2


def test_429_over_request_rate_limit_on_token(start_with, make_client):
    server = start_with("token-rate-limited")
    client = make_client(server)
    email, _ = sign_up(client)

    with pytest.raises(AuthApiError) as raised:
        client.sign_in_with_password({"email": email, "password": PASSWORD})
    assert raised.value.status == 429
    assert raised.value.code == "over_request_rate_limit"
    assert raised.value.message == "Request rate limit reached"
    # The header the client could back off on, as a raw request shows.
    entries = control(server, "GET", "/journal", params={"op": "token.password"}).json()["entries"]
    assert entries[0]["rule"] == "token-rate-limited#0"

    assert client.sign_in_with_password({"email": email, "password": PASSWORD}).session is not None


def test_retry_after_header_on_the_wire(start_with):
    server = start_with("token-rate-limited")
    response = httpx.post(
        f"{server.url}/auth/v1/token?grant_type=password",
        headers={"apikey": ANON_KEY},
        json={"email": "x@example.com", "password": "x"},
    )
    assert response.status_code == 429
    assert response.headers["retry-after"] == "30"
    assert response.headers["x-sb-error-code"] == "over_request_rate_limit"


def test_malformed_json_is_a_parse_failure_without_a_session(start_with, make_client):
    server = start_with("sign-in-malformed-json")
    client = make_client(server)
    email, _ = sign_up(client)
    client.sign_out()

    with pytest.raises(ValueError):
        client.sign_in_with_password({"email": email, "password": PASSWORD})
    assert client.get_session() is None
    assert client.sign_in_with_password({"email": email, "password": PASSWORD}).session is not None


def test_hang_ends_in_the_clients_timeout(start_with):
    server = start_with("sign-in-timeout")
    client = SyncGoTrueClient(
        url=f"{server.url}/auth/v1",
        headers={"apikey": ANON_KEY},
        auto_refresh_token=False,
        http_client=httpx.Client(timeout=1.0),
    )
    try:
        email, _ = sign_up(client)
        with pytest.raises(AuthRetryableError) as raised:
            client.sign_in_with_password({"email": email, "password": PASSWORD})
        assert raised.value.status == 0
        assert client.sign_in_with_password({"email": email, "password": PASSWORD}).session is not None
    finally:
        client.close()
    entries = control(server, "GET", "/journal", params={"op": "token.password"}).json()["entries"]
    assert [(e["status"], e["fault"]) for e in entries] == [(None, "hang"), (200, None)]


def test_connection_reset_on_sign_up_creates_nothing(start_with, make_client):
    server = start_with("sign-up-connection-reset")
    client = make_client(server)
    email = unique_email()
    with pytest.raises(AuthRetryableError):
        client.sign_up({"email": email, "password": PASSWORD})
    # No user was created: the retry is a fresh sign-up with a session, not "already registered".
    assert client.sign_up({"email": email, "password": PASSWORD}).session is not None


def test_html_502_from_a_proxy_is_retryable(start_with, make_client):
    server = start_with("proxy-html-502")
    client = make_client(server)
    with pytest.raises(AuthRetryableError) as raised:
        client.sign_up({"email": unique_email(), "password": PASSWORD})
    assert raised.value.status == 502
    sign_up(client)


def test_refresh_token_reuse_revokes_the_family(start_with, make_client):
    server = start_with("refresh-token-reused", env={"GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL": "0"})
    client = make_client(server)
    _, session = sign_up(client)
    with pytest.raises(AuthApiError) as raised:
        client.refresh_session()
    assert raised.value.code == "refresh_token_already_used"
    assert raised.value.status == 400
    # The consequence: the session's tokens are revoked, so the real server refuses too.
    with pytest.raises(AuthApiError) as again:
        client.refresh_session(session.refresh_token)
    assert again.value.code == "refresh_token_already_used"


def test_session_expired_mid_use(start_with, make_client):
    server = start_with("session-expired-mid-use")
    client = make_client(server)
    _, session = sign_up(client)
    assert client.get_user().user.id == session.user.id

    with pytest.raises(AuthApiError) as raised:
        client.refresh_session()
    assert raised.value.code == "session_expired"
    assert raised.value.message == "Invalid Refresh Token: Session Expired"
    # The session ended on the server: its access token no longer names a session.
    with pytest.raises(AuthApiError) as gone:
        client.get_user(session.access_token)
    assert gone.value.code == "session_not_found"
    assert gone.value.status == 403


def test_email_not_confirmed(start_with, make_client):
    server = start_with("email-not-confirmed")
    client = make_client(server)
    email, _ = sign_up(client)
    with pytest.raises(AuthApiError) as raised:
        client.sign_in_with_password({"email": email, "password": PASSWORD})
    assert raised.value.code == "email_not_confirmed"
    assert raised.value.message == "Email not confirmed"


def test_scenario_posted_at_runtime_is_scoped_by_test_id(start_with, make_client):
    server = start_with()
    posted = control(server, "POST", "/scenarios", json={
        "name": "scoped-outage",
        "test": "case-42",
        "rules": [{"match": {"op": "signup"}, "then": {"error": "signup_disabled"}}],
    })
    assert posted.status_code == 201

    isolated = make_client(server)
    sign_up(isolated)  # another test's traffic is untouched

    scoped = SyncGoTrueClient(
        url=f"{server.url}/auth/v1",
        headers={"apikey": ANON_KEY, "X-Emulator-Test": "case-42"},
        auto_refresh_token=False,
    )
    try:
        with pytest.raises(AuthApiError) as raised:
            scoped.sign_up({"email": unique_email(), "password": PASSWORD})
        assert raised.value.code == "signup_disabled"
        assert raised.value.status == 422
    finally:
        scoped.close()
    assert journal_count(server, test="case-42") == 1
    listed = control(server, "GET", "/scenarios/scoped-outage").json()
    assert listed["rules"][0]["fired"] == 1
    assert control(server, "DELETE", "/scenarios/scoped-outage").status_code == 204


def test_rate_limits_tiny_preset_reaches_the_client(start_server, make_client):
    server = start_server("--db", ":memory:", "--rate-limits", "tiny", env=FAST_HASHING)
    client = make_client(server)
    email, _ = sign_up(client)
    for _ in range(3):
        client.sign_in_with_password({"email": email, "password": PASSWORD})
    with pytest.raises(AuthApiError) as raised:
        client.sign_in_with_password({"email": email, "password": PASSWORD})
    assert raised.value.code == "over_request_rate_limit"
    assert raised.value.status == 429
    # Switched off at runtime: the next sign-in passes.
    assert control(server, "PATCH", "/config", json={"rate_limits": "off"}).status_code == 200
    assert client.sign_in_with_password({"email": email, "password": PASSWORD}).session is not None
