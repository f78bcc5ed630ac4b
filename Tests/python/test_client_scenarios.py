"""Failure scenarios from the catalogue (`scenarios/`) as the real supabase-auth client sees
them: retryable errors for 5xx gateways, resets and timeouts, API errors with the right code for
GoTrue errors, parse failures for malformed bodies, and the journal's view of what it did.

The clients that retry on their own are replayed over raw HTTP with their published rules (see
the per-client table in `scenarios/README.md`): a scenario that fires once is invisible to
supabase-swift, whose one retry succeeds, and a refresh that fails twice is invisible to
supabase-js, whose refresh retries with backoff; the catalogue's variants reach both."""
import os
import time

import httpx
import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError, AuthRetryableError

from conftest import ANON_KEY, FAST_HASHING, SERVICE_ROLE_KEY
from helpers_client import PASSWORD, gateway, unique_email

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


def advance_clock(server, seconds):
    """Moves the emulator's clock on, which closes a scenario's `window_ms` without waiting."""
    assert control(server, "POST", "/clock", json={"advance_seconds": seconds}).status_code == 200


def freeze_clock(server):
    """Stops the emulator's clock: a scenario's `window_ms` then closes when the test moves the
    clock on, never because the machine took its time between two requests."""
    assert control(server, "POST", "/clock", json={"freeze": True}).json()["frozen"] is True


# How long a client waits on a request the scenario hangs forever: the hang outlasts any, so
# this only sets how long the test takes. Every other request is given GENEROUS: a busy
# machine is never mistaken for a hang.
HANG_TIMEOUT = 1.0
GENEROUS = 30.0


def hang_client(server, make_client):
    """A supabase-auth client and its HTTP client, whose timeout the test shortens to
    HANG_TIMEOUT around the calls that hang (httpx.Client.timeout is settable)."""
    http = httpx.Client(timeout=GENEROUS)
    return make_client(server, http_client=http), http


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


def test_hang_ends_in_the_clients_timeout(start_with, make_client):
    server = start_with("sign-in-timeout")
    client, http = hang_client(server, make_client)
    email, _ = sign_up(client)
    http.timeout = HANG_TIMEOUT
    with pytest.raises(AuthRetryableError) as raised:
        client.sign_in_with_password({"email": email, "password": PASSWORD})
    http.timeout = GENEROUS
    assert raised.value.status == 0
    assert client.sign_in_with_password({"email": email, "password": PASSWORD}).session is not None
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


# supabase-swift's retry rule for its auth client (supabase/supabase-swift:
# Sources/Helpers/HTTP/RetryRequestInterceptor.swift, configured in
# Sources/Auth/Internal/APIClient.swift with POST added): at most two attempts, the second 1 s
# (2^1 x 0.5 s) after the first failed with one of these statuses or a transport error (its
# URLError list: timeout, lost connection, bad server response, ...).
SWIFT_RETRY_STATUSES = {408, 500, 502, 503, 504, 520, 521, 522, 523, 524, 530}
SWIFT_RETRY_DELAY = 1.0


def swift_like(send, timeouts, attempts=None, pause=lambda: time.sleep(SWIFT_RETRY_DELAY)):
    """One call as supabase-swift makes it: `send(timeout)` once more, after the delay (`pause`),
    when the first attempt failed retryably, each attempt with its timeout from `timeouts`. What
    it returns or raises is what the app sees; `attempts` (a list) gets one entry per attempt."""
    for attempt in (1, 2):
        if attempts is not None:
            attempts.append(attempt)
        try:
            response = send(timeouts[attempt - 1])
        except httpx.TransportError:
            if attempt == 2:
                raise
        else:
            if attempt == 2 or response.status_code not in SWIFT_RETRY_STATUSES:
                return response
        pause()
    raise AssertionError("unreachable")


def raw_sender(server, operation, email):
    """A sign-in or sign-up over plain HTTP through the gateway, headers as the clients send them;
    `send(timeout)` makes one attempt."""
    http = httpx.Client(
        base_url=f"{server.url}/auth/v1",
        headers={"apikey": ANON_KEY, "X-Supabase-Api-Version": "2024-01-01"},
        timeout=GENEROUS,
    )
    body = {"email": email, "password": PASSWORD}
    if operation == "sign_in":
        return http, lambda timeout: http.post("/token", params={"grant_type": "password"}, json=body, timeout=timeout)
    return http, lambda timeout: http.post("/signup", json=body, timeout=timeout)


def journal_rules(server, op):
    """The rule (or None) that answered each request of `op`, oldest first."""
    entries = control(server, "GET", "/journal", params={"op": op}).json()["entries"]
    return [e["rule"] for e in entries]


# Each scenario that fires once, its variant that outlasts supabase-swift's retry, the request,
# what the app finally sees under the variant, and whether the fault is a hang.
SWIFT_PAIRS = [
    ("server-error-then-recovery", "server-error-twice", "sign_in", 500, False),
    ("proxy-html-502", "proxy-html-502-twice", "sign_up", 502, False),
    ("truncated-session", "truncated-session-twice", "sign_in", httpx.RemoteProtocolError, False),
    ("sign-in-timeout", "sign-in-timeout-twice", "sign_in", httpx.TimeoutException, True),
    ("sign-up-connection-reset", "sign-up-connection-reset-for-5s", "sign_up", httpx.TransportError, False),
]


@pytest.mark.parametrize("once, variant, operation, seen, hangs", SWIFT_PAIRS, ids=[p[1] for p in SWIFT_PAIRS])
def test_swift_retry_hides_the_once_scenario_but_not_its_variant(start_with, make_client, once, variant, operation, seen,
                                                                 hangs):
    op = "token.password" if operation == "sign_in" else "signup"
    # HANG_TIMEOUT stands in for URLRequest's 60 s on an attempt the scenario hangs (the hang
    # outlasts any); an attempt that gets an answer is given GENEROUS.
    faulted = HANG_TIMEOUT if hangs else GENEROUS

    # Fires once: the retry, 1 s later, succeeds and the app never hears of the fault.
    server = start_with(once)
    email = sign_up(make_client(server))[0] if operation == "sign_in" else unique_email()
    http, send = raw_sender(server, operation, email)
    with http:
        attempts = []
        response = swift_like(send, (faulted, GENEROUS), attempts)
        assert response.status_code == 200, response.text
        assert response.json()["access_token"]
        # The success came from the retry (after SWIFT_RETRY_DELAY), not the first attempt.
        assert attempts == [1, 2]
    assert journal_rules(server, op)[-2:] == [f"{once}#0", None]

    # The variant answers both attempts with the fault: the app sees it. The emulator's clock is
    # frozen and moved on by the retry delay alone, so a window (`..-for-5s`) outlasts the retry
    # however long the machine takes to send it.
    server = start_with(variant)
    email = sign_up(make_client(server))[0] if operation == "sign_in" else unique_email()
    freeze_clock(server)
    http, send = raw_sender(server, operation, email)

    def pause():
        time.sleep(SWIFT_RETRY_DELAY)
        advance_clock(server, SWIFT_RETRY_DELAY)

    with http:
        if isinstance(seen, int):
            response = swift_like(send, (faulted, faulted), pause=pause)
            assert response.status_code == seen
            if seen == 500:
                assert response.json()["code"] == "unexpected_failure"
            else:
                assert response.headers["content-type"].startswith("text/html")
        else:
            with pytest.raises(seen):
                swift_like(send, (faulted, faulted), pause=pause)
    assert journal_rules(server, op)[-2:] == [f"{variant}#0", f"{variant}#0"]


def test_server_error_twice_reaches_the_python_client(start_with, make_client):
    server = start_with("server-error-twice")
    client = make_client(server)
    email, _ = sign_up(client)
    client.sign_out()
    for _ in range(2):
        with pytest.raises(AuthApiError) as raised:
            client.sign_in_with_password({"email": email, "password": PASSWORD})
        assert raised.value.status == 500
        assert raised.value.code == "unexpected_failure"
    assert client.sign_in_with_password({"email": email, "password": PASSWORD}).session is not None


def test_proxy_html_502_twice_reaches_the_python_client(start_with, make_client):
    server = start_with("proxy-html-502-twice")
    client = make_client(server)
    for _ in range(2):
        with pytest.raises(AuthRetryableError) as raised:
            client.sign_up({"email": unique_email(), "password": PASSWORD})
        assert raised.value.status == 502
    sign_up(client)


def test_sign_in_timeout_twice_reaches_the_python_client(start_with, make_client):
    server = start_with("sign-in-timeout-twice")
    client, http = hang_client(server, make_client)
    email, _ = sign_up(client)
    http.timeout = HANG_TIMEOUT
    for _ in range(2):
        with pytest.raises(AuthRetryableError) as raised:
            client.sign_in_with_password({"email": email, "password": PASSWORD})
        assert raised.value.status == 0
    http.timeout = GENEROUS
    assert client.sign_in_with_password({"email": email, "password": PASSWORD}).session is not None
    entries = control(server, "GET", "/journal", params={"op": "token.password"}).json()["entries"]
    assert [e["fault"] for e in entries] == ["hang", "hang", None]


def test_truncated_session_twice_commits_sessions_the_client_never_gets(start_with, make_client):
    server = start_with("truncated-session-twice")
    client = make_client(server)
    email, _ = sign_up(client)
    client.sign_out()
    for _ in range(2):
        with pytest.raises(AuthRetryableError) as raised:
            client.sign_in_with_password({"email": email, "password": PASSWORD})
        assert raised.value.status == 0
        assert client.get_session() is None
    session = client.sign_in_with_password({"email": email, "password": PASSWORD}).session
    assert session is not None
    # Both cut sign-ins committed: the server answered 200 three times.
    entries = control(server, "GET", "/journal", params={"op": "token.password"}).json()["entries"]
    assert [(e["status"], e["fault"]) for e in entries] == [(200, "close_after_bytes")] * 2 + [(200, None)]


def test_sign_up_reset_window_fails_every_attempt_until_it_closes(start_with, make_client):
    server = start_with("sign-up-connection-reset-for-5s")
    client = make_client(server)
    email = unique_email()
    freeze_clock(server)
    for _ in range(3):
        with pytest.raises(AuthRetryableError) as raised:
            client.sign_up({"email": email, "password": PASSWORD})
        assert raised.value.status == 0
    listed = control(server, "GET", "/scenarios/sign-up-connection-reset-for-5s").json()
    assert listed["rules"][0]["fired"] == 3
    assert listed["rules"][0]["window_closes_at"]
    # The window is measured on the emulator's clock: moving it on ends the outage. No user was
    # created, so the same address signs up afresh.
    advance_clock(server, 5)
    assert client.sign_up({"email": email, "password": PASSWORD}).session is not None
    assert journal_rules(server, "signup") == ["sign-up-connection-reset-for-5s#0"] * 3 + [None]


# supabase-js's refresh (supabase/supabase-js: packages/core/auth-js/src/GoTrueClient.ts,
# `_refreshAccessToken`): attempt n > 0 waits 200 x 2^(n-1) ms; it retries an
# AuthRetryableFetchError (packages/core/auth-js/src/lib/fetch.ts: a network failure or one of
# these statuses) while the next attempt would start less than 30 s after the first.
JS_RETRY_STATUSES = {500, 501, 502, 503, 504, *range(520, 531)}
JS_REFRESH_BUDGET_MS = 30_000


def js_like_refresh(server, refresh_token):
    """A refresh as supabase-js makes it; returns every response. Its backoff sleeps move the
    emulator's clock instead of waiting (the request time, a few ms here, is left out: counting it
    would only end the loop sooner)."""
    responses = []
    elapsed = 0
    with gateway(server) as http:
        attempt = 0
        while True:
            if attempt > 0:
                backoff = 200 * 2 ** (attempt - 1)
                advance_clock(server, backoff / 1000)
                elapsed += backoff
            response = http.post("/token", params={"grant_type": "refresh_token"},
                                 json={"refresh_token": refresh_token})
            responses.append(response)
            if response.status_code not in JS_RETRY_STATUSES:
                return responses
            if elapsed + 200 * 2 ** attempt >= JS_REFRESH_BUDGET_MS:
                return responses
            attempt += 1
            assert attempt < 20, "the backoff budget bounds the loop"


def test_js_refresh_retry_hides_refresh_503_but_not_the_30s_outage(start_with, make_client):
    # refresh-503 fails twice: the third attempt, 600 ms in, succeeds.
    server = start_with("refresh-503")
    _, session = sign_up(make_client(server))
    responses = js_like_refresh(server, session.refresh_token)
    assert [r.status_code for r in responses] == [503, 503, 200]

    # refresh-503-for-30s: all eight attempts (the last 25.4 s in) get the 503; the client
    # reports it and keeps the session.
    server = start_with("refresh-503-for-30s")
    _, session = sign_up(make_client(server))
    # Frozen, the clock moves by the backoff alone: the last attempt is 25.4 s in, exactly.
    freeze_clock(server)
    responses = js_like_refresh(server, session.refresh_token)
    assert [r.status_code for r in responses] == [503] * 8
    assert responses[-1].headers["retry-after"] == "1"
    # Once the window has closed the same refresh token still works.
    advance_clock(server, 5)
    assert js_like_refresh(server, session.refresh_token)[-1].status_code == 200


def test_refresh_503_for_30s_reaches_the_python_client_and_keeps_the_session(start_with, make_client):
    server = start_with("refresh-503-for-30s")
    client = make_client(server)
    _, session = sign_up(client)
    freeze_clock(server)
    for _ in range(3):
        with pytest.raises(AuthRetryableError) as raised:
            client.refresh_session()
        assert raised.value.status == 503
        assert client.get_session().refresh_token == session.refresh_token
    advance_clock(server, 30)
    refreshed = client.refresh_session().session
    assert refreshed.refresh_token != session.refresh_token
