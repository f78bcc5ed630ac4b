"""Several emulator processes on one Postgres database, as several GoTrue replicas share one
(docs/postgres.md, "Several emulators on one database").

Each test starts two emulators (A and B) on one fresh database of a throw-away cluster
(Tests/python/postgres_cluster.py) and drives them with the real supabase-py client and raw
HTTP. What they must show is GoTrue's behaviour with replicas: a refresh token presented to both
at once is rotated once (the row locks and retry loop of `RefreshTokenGrant`), a PKCE code is
exchanged once, both come up when started at the same instant on an empty database, and what one
issues (tokens, codes, captured mail) the other accepts and shows.
"""
import base64
import concurrent.futures
import hashlib
import json
import os
import pathlib
import re
import secrets
import subprocess
import threading
import time

import httpx
import pytest

import postgres_cluster
from conftest import ANON_KEY, FAST_HASHING, SERVICE_ROLE_KEY, Server, postgres_cluster as cluster_of_this_process
from helpers_client import PASSWORD, REFRESH_TOKEN, unique_email
from test_client_admin import admin_client  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(
    not postgres_cluster.available(),
    reason="needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17)",
)

V2 = {"GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION": "2"}
# Parallel requests per test, split evenly between the two processes.
N = 16
# Hang guard for anything a test waits on (never a judgement of speed).
WAIT = 120


def at_once(calls):
    """Runs every call on a thread of its own, released together by a barrier; their results in
    order (an exception is raised here)."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait(timeout=WAIT)
        return call()

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(calls)) as pool:
        futures = [pool.submit(run, call) for call in calls]
        return [future.result(timeout=WAIT) for future in futures]


class Replicas:
    """Two emulators on one database, and SQL on that database."""

    def __init__(self, cluster, database, servers):
        self.cluster = cluster
        self.database = database
        self.a, self.b = servers

    def sql(self, statement):
        return self.cluster.psql(statement, database=self.database)


@pytest.fixture
def replicas(start_server):
    def start(*args, together=False, **env):
        cluster = cluster_of_this_process()
        database = cluster.make_database()

        def one():
            return start_server("--db", cluster.url(database), "--db-bootstrap", *args, env={**FAST_HASHING, **env})

        servers = at_once([one, one]) if together else [one(), one()]
        return Replicas(cluster, database, servers)

    return start


def session_id(access_token):
    payload = access_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["session_id"]


def post_at_once(targets, path, body=None, headers=None, form=None):
    """POSTs `body` (JSON) or `form` to `path` of each server in `targets` at the same instant,
    each on a connection opened beforehand, and returns the responses in order."""
    clients = [httpx.Client(base_url=f"{server.url}/auth/v1", headers={"apikey": ANON_KEY, **(headers or {})}, timeout=WAIT)
               for server in targets]
    try:
        for client in clients:
            assert client.get("/health").status_code == 200
        return at_once([lambda client=client: client.post(path, json=body, data=form) for client in clients])
    finally:
        for client in clients:
            client.close()


def refresh_at_once(replicas, token):
    return post_at_once([replicas.a, replicas.b] * (N // 2), "/token?grant_type=refresh_token", {"refresh_token": token})


# MARK: refresh-token rotation


def test_parallel_refreshes_of_one_token_on_two_processes_rotate_it_once(replicas, make_client):
    """GoTrue (tokens/service.go): the first grant to lock the token's row revokes it and issues
    one child; every other, on either replica, waits for that commit (retrying every 10-30 ms),
    finds the token revoked and the session's active token its child, and gets that same child
    back (the client lost the answer). So all 16 answer 200 with one token, one of them minted
    it, and the session holds two rows: the presented token, revoked, and its child."""
    pair = replicas()
    session = make_client(pair.a).sign_up({"email": unique_email("race"), "password": PASSWORD}).session
    token, sid = session.refresh_token, session_id(session.access_token)
    assert REFRESH_TOKEN.fullmatch(token)

    responses = refresh_at_once(pair, token)
    assert [r.status_code for r in responses] == [200] * N, [r.text for r in responses if r.status_code != 200]
    rows = pair.sql(f"SELECT token, revoked, coalesce(parent, '-') FROM auth.refresh_tokens WHERE session_id = '{sid}' ORDER BY id")
    children = {r.json()["refresh_token"] for r in responses}
    assert len(children) == 1, f"{len(children)} different tokens handed out; the session's rows: {rows}"
    (child,) = children
    assert child != token
    assert [r.headers.get("sb-auth-refresh-token-reuse") for r in responses].count("false") == 1
    assert rows == [(token, "t", "-"), (child, "f", token)]

    # The family is intact: the child rotates, through either process, into one grandchild.
    client = make_client(pair.b)
    rotated = client.refresh_session(child).session
    assert rotated.refresh_token not in (token, child)
    assert client.get_user(rotated.access_token).user.id == session.user.id
    assert pair.sql(f"SELECT revoked, coalesce(parent, '-') FROM auth.refresh_tokens WHERE session_id = '{sid}' ORDER BY id") \
        == [("t", "-"), ("t", token), ("f", child)]


def test_parallel_refreshes_of_a_session_format_token_on_two_processes(replicas, make_client):
    """The second format: the first grant to lock the session's row moves its counter from 0 to
    1; every other finds the presented token one behind within the reuse interval and gets the
    current token back (`concurrent-refresh,fail-to-save`), never a second increment. No
    `refresh_tokens` rows exist for such a session."""
    pair = replicas(**V2)
    session = make_client(pair.a).sign_up({"email": unique_email("race2"), "password": PASSWORD}).session
    token, sid = session.refresh_token, session_id(session.access_token)
    assert len(token) > 12

    responses = refresh_at_once(pair, token)
    assert [r.status_code for r in responses] == [200] * N, [r.text for r in responses if r.status_code != 200]
    (current,) = {r.json()["refresh_token"] for r in responses}
    assert current != token
    assert [r.headers.get("sb-auth-refresh-token-counter") for r in responses] == ["1"] * N
    minted = [r.headers.get("sb-auth-refresh-token-reuse") for r in responses].count("false")
    assert minted == 1, f"{minted} grants each moved the counter from 0 to 1"
    causes = [r.headers["sb-auth-refresh-token-reuse-cause"] for r in responses if "sb-auth-refresh-token-reuse-cause" in r.headers]
    assert causes == ["concurrent-refresh,fail-to-save"] * (N - 1)
    assert pair.sql(f"SELECT refresh_token_counter FROM auth.sessions WHERE id = '{sid}'") == [("1",)]
    assert pair.sql(f"SELECT count(*) FROM auth.refresh_tokens WHERE session_id = '{sid}'") == [("0",)]

    rotated = make_client(pair.b).refresh_session(current).session
    assert rotated.refresh_token != current
    assert pair.sql(f"SELECT refresh_token_counter FROM auth.sessions WHERE id = '{sid}'") == [("2",)]


def test_a_session_held_past_the_retry_loop_answers_gotrues_conflict(replicas, make_client):
    """A refresh whose session row another transaction holds retries for GoTrue's five seconds
    (`retryLoopDuration`), then answers 409 `conflict`; the token is left as it was."""
    pair = replicas()
    session = make_client(pair.a).sign_up({"email": unique_email("held"), "password": PASSWORD}).session
    sid = session_id(session.access_token)
    holder = subprocess.Popen(
        [os.path.join(pair.cluster.bin, "psql"), "-X", "-q", "-h", pair.cluster.directory, "-U", "postgres", "-d", pair.database,
         "-c", f"BEGIN; SELECT 1 FROM auth.sessions WHERE id = '{sid}' FOR UPDATE; SELECT pg_sleep(60); COMMIT;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The row is held once that transaction sleeps.
        deadline = time.monotonic() + WAIT
        while pair.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()") != [("1",)]:
            assert time.monotonic() < deadline, "the holding transaction never started"
            time.sleep(0.05)
        response = httpx.post(f"{pair.b.url}/auth/v1/token?grant_type=refresh_token", json={"refresh_token": session.refresh_token},
                              headers={"apikey": ANON_KEY, "X-Supabase-Api-Version": "2024-01-01"}, timeout=WAIT)
        assert (response.status_code, response.json()) == (
            409, {"code": "conflict", "message": "Too many concurrent token refresh requests on the same session or refresh token"})
    finally:
        pair.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()")
        holder.wait(timeout=WAIT)
    assert pair.sql(f"SELECT count(*), bool_or(revoked) FROM auth.refresh_tokens WHERE session_id = '{sid}'") == [("1", "f")]
    # Released, the same token rotates.
    assert make_client(pair.a).refresh_session(session.refresh_token).session.refresh_token != session.refresh_token


# MARK: single-use codes


def test_a_pkce_code_exchanged_on_both_processes_at_once_succeeds_once(replicas):
    """The code's flow state is locked by the exchange that claims it: one exchange issues a
    session, every other (on either process) finds it gone: GoTrue's 404 `flow_state_not_found`."""
    pair = replicas()
    email = unique_email("pkce")
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    headers = {"apikey": ANON_KEY}
    sent = httpx.post(f"{pair.a.url}/auth/v1/otp", headers=headers, timeout=WAIT,
                      json={"email": email, "code_challenge": challenge, "code_challenge_method": "s256"})
    assert sent.status_code == 200, sent.text
    link = outbox(pair.b, email)[0]["action_link"]
    redirect = httpx.get(link, timeout=WAIT, follow_redirects=False)
    assert redirect.status_code == 303, redirect.text
    code = re.search(r"[?&]code=([^&#]+)", redirect.headers["location"]).group(1)

    sessions_before = pair.sql("SELECT count(*) FROM auth.sessions")[0][0]
    responses = post_at_once([pair.a, pair.b] * (N // 2), "/token?grant_type=pkce", {"auth_code": code, "code_verifier": verifier})
    assert sorted(r.status_code for r in responses) == [200] + [404] * (N - 1), [r.text for r in responses]
    assert {r.json()["error_code"] for r in responses if r.status_code == 404} == {"flow_state_not_found"}
    # One session was issued, not one per process.
    assert int(pair.sql("SELECT count(*) FROM auth.sessions")[0][0]) == int(sessions_before) + 1


OAUTH_ON = {"GOTRUE_OAUTH_SERVER_ENABLED": "true", "GOTRUE_OAUTH_SERVER_AUTHORIZATION_PATH": "/oauth/consent"}


def test_an_oauth_authorization_is_decided_and_its_code_exchanged_once_across_processes(replicas, make_client):
    """The OAuth server locks the authorization row (`FindOAuthServerAuthorizationByIDForUpdate`):
    of consents sent to both processes at once one approves it, every other finds it decided
    (400) or held (404); of exchanges of its code at once one issues a session, every other gets
    `invalid_grant`."""
    pair = replicas(**OAUTH_ON)
    admin = {"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}
    app = httpx.post(f"{pair.a.url}/auth/v1/admin/oauth/clients", headers=admin, timeout=WAIT, json={
        "client_name": "RP", "redirect_uris": ["http://localhost:4000/cb"], "token_endpoint_auth_method": "none"})
    assert app.status_code == 201, app.text
    client_id = app.json()["client_id"]
    session = make_client(pair.a).sign_up({"email": unique_email("consent"), "password": PASSWORD}).session
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    location = httpx.get(f"{pair.a.url}/auth/v1/oauth/authorize", follow_redirects=False, timeout=WAIT, params={
        "client_id": client_id, "redirect_uri": "http://localhost:4000/cb", "scope": "email",
        "code_challenge": challenge, "code_challenge_method": "S256"}).headers["location"]
    authorization_id = re.search(r"authorization_id=([^&]+)", location).group(1)
    user = {"Authorization": f"Bearer {session.access_token}"}
    bound = httpx.get(f"{pair.b.url}/auth/v1/oauth/authorizations/{authorization_id}", headers={"apikey": ANON_KEY, **user}, timeout=WAIT)
    assert bound.status_code == 200, bound.text

    consents = post_at_once([pair.a, pair.b] * (N // 2), f"/oauth/authorizations/{authorization_id}/consent",
                            {"action": "approve"}, headers=user)
    approved = [r for r in consents if r.status_code == 200]
    assert len(approved) == 1 and {r.status_code for r in consents} <= {200, 400, 404}, [r.text for r in consents]
    code = re.search(r"[?&]code=([^&#]+)", approved[0].json()["redirect_url"]).group(1)

    sessions_before = int(pair.sql("SELECT count(*) FROM auth.sessions")[0][0])
    exchanges = post_at_once([pair.a, pair.b] * (N // 2), "/oauth/token", form={
        "grant_type": "authorization_code", "code": code, "client_id": client_id, "code_verifier": verifier,
        "redirect_uri": "http://localhost:4000/cb"})
    assert sorted(r.status_code for r in exchanges) == [200] + [400] * (N - 1), [r.text for r in exchanges]
    assert {r.json()["error"] for r in exchanges if r.status_code == 400} == {"invalid_grant"}
    assert int(pair.sql("SELECT count(*) FROM auth.sessions")[0][0]) == sessions_before + 1


# MARK: writes grouped into one transaction


def test_writes_to_shared_users_in_any_order_on_two_processes_all_succeed(replicas, make_client, admin_client):
    """Each process groups the writes arriving together into one transaction, which holds
    several requests' user-row locks at once: two such groups taking the same users in another
    order close a cycle Postgres ends by failing one transaction (40P01), a cycle two GoTrue
    replicas, one request per transaction, never close. The write Postgres picks is run again
    alone, so every sign-in and every admin update succeeds, as through GoTrue replicas
    (docs/postgres.md); an update's failure is one GoTrue names ("Error updating user"), which
    must not stop the write from running again."""
    pair = replicas(GOTRUE_MAILER_AUTOCONFIRM="true")
    emails = [unique_email(f"shared{index}") for index in range(4)]
    ids = [make_client(pair.a).sign_up({"email": email, "password": PASSWORD}).user.id for email in emails]
    threads, per_thread = 6, 40
    # Each thread's own order of the users, fixed so a failure can be replayed.
    orders = [[(seed * 7 + step * (1 + seed % 3)) % len(emails) for step in range(per_thread)]
              for seed in range(2 * threads)]
    servers = [server for server in (pair.a, pair.b) for _ in range(threads)]
    clients = [(make_client(server), admin_client(server).admin) for server in servers]

    def write_all(client, admin, order, seed):
        failures = []
        for step, index in enumerate(order):
            try:
                client.sign_in_with_password({"email": emails[index], "password": PASSWORD})
                admin.update_user_by_id(ids[(index + 1) % len(ids)], {"app_metadata": {"writer": f"{seed}.{step}"}})
            except Exception as error:  # the client raises AuthApiError on a 500
                failures.append(repr(error))
        return failures

    results = at_once([lambda client=client, admin=admin, order=order, seed=seed: write_all(client, admin, order, seed)
                       for seed, ((client, admin), order) in enumerate(zip(clients, orders))])
    failures = [failure for result in results for failure in result]
    assert failures == [], f"{len(failures)} of {2 * threads * per_thread} steps failed: {failures[:3]}"
    # One session per sign-up (mail is confirmed at once) and per sign-in, none lost or doubled.
    assert pair.sql("SELECT count(*) FROM auth.sessions") == [(str(len(emails) + 2 * threads * per_thread),)]
    # Every user was updated: its app_metadata names a writer, with the provider kept.
    for user_id in ids:
        app = json.loads(pair.sql(f"SELECT raw_app_meta_data FROM auth.users WHERE id = '{user_id}'")[0][0])
        assert app["provider"] == "email" and re.fullmatch(r"\d+\.\d+", app["writer"]), app


# MARK: start-up, keys, one-time tokens, mail


def test_two_processes_started_at_once_on_a_fresh_database_both_come_up(replicas, make_client):
    pair = replicas(together=True)
    lines = sorted(server.info["database"] for server in (pair.a, pair.b))
    # One created GoTrue's schema, the other found it and adopted it.
    assert ["auth schema adopted" in lines[0], "auth schema created" in lines[1]] == [True, True], lines
    email = unique_email("both")
    make_client(pair.a).sign_up({"email": email, "password": PASSWORD})
    assert make_client(pair.b).sign_in_with_password({"email": email, "password": PASSWORD}).user.email == email


@pytest.mark.parametrize("args", [(), ("--defaults", "gotrue"), ("--signing-key", "RS256"), ("--signing-key", "ES256")],
                         ids=["cli-es256", "hs256-secret", "generated-rs256", "generated-es256"])
def test_a_token_issued_by_one_process_is_accepted_by_the_other(replicas, make_client, args):
    """Started at the same instant: a key the emulator generates (`--signing-key`) is stored once
    and read by both, so both publish the same JWKS and verify each other's tokens."""
    pair = replicas(*args, together=True, GOTRUE_MAILER_AUTOCONFIRM="true")
    jwks = [httpx.get(f"{server.url}/auth/v1/.well-known/jwks.json", headers={"apikey": ANON_KEY}, timeout=WAIT).json()
            for server in (pair.a, pair.b)]
    assert jwks[0] == jwks[1]
    session = make_client(pair.a).sign_up({"email": unique_email("jwks"), "password": PASSWORD}).session
    if args and args[0] == "--signing-key":
        assert jwks[0]["keys"] and json.loads(base64.urlsafe_b64decode(
            session.access_token.split(".")[0] + "==="))["alg"] == args[1]
    for server in (pair.a, pair.b):
        response = httpx.get(f"{server.url}/auth/v1/user", headers={"apikey": ANON_KEY, "Authorization": f"Bearer {session.access_token}"},
                             timeout=WAIT)
        assert (response.status_code, response.json()["id"]) == (200, session.user.id)


APPLE = {"GOTRUE_EXTERNAL_APPLE_ENABLED": "true", "GOTRUE_EXTERNAL_APPLE_CLIENT_ID": "com.example.service",
         "GOTRUE_EXTERNAL_APPLE_SECRET": "apple-secret"}


def test_the_fake_providers_key_is_made_once_and_signs_for_both(replicas, make_client):
    """The fake identity providers' signing key is generated by the first process that needs it
    and stored: id_tokens minted by both at the same instant verify on either (strict id_tokens:
    the signature is checked). Their issuer is API_EXTERNAL_URL's, the one address in front of
    both, as for GoTrue replicas."""
    pair = replicas("--strict-id-tokens", API_EXTERNAL_URL="http://auth.replicas.test", **APPLE)
    admin = {"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}
    emails = [unique_email("apple-a"), unique_email("apple-b")]
    minted = at_once([lambda server=server, email=email: httpx.post(
        f"{server.url}/emulator/v1/idp/apple/id_token", json={"sub": f"apple.{email}", "email": email}, headers=admin, timeout=WAIT)
        for server, email in zip((pair.a, pair.b), emails)])
    assert [m.status_code for m in minted] == [200, 200], [m.text for m in minted]
    jwks = [httpx.get(f"{server.url}/emulator/v1/idp/apple/jwks", timeout=WAIT).json() for server in (pair.a, pair.b)]
    assert jwks[0] == jwks[1] and len(jwks[0]["keys"]) == 1
    # Each token signs in through the other process.
    for server, token, email in zip((pair.b, pair.a), minted, emails):
        session = make_client(server).sign_in_with_id_token({"provider": "apple", "token": token.json()["id_token"]})
        assert session.user.email == email


def outbox(server, to, type=None):
    response = httpx.get(f"{server.url}/emulator/v1/outbox", params={"to": to, **({"type": type} if type else {})},
                         headers={"apikey": SERVICE_ROLE_KEY}, timeout=WAIT)
    assert response.status_code == 200, response.text
    return response.json()


def test_one_time_tokens_sent_through_one_process_verify_through_the_other(replicas, make_client):
    pair = replicas()
    email = unique_email("mail")
    make_client(pair.a).sign_up({"email": email, "password": PASSWORD})

    # A magic link / OTP sent by A: its mail is read through B, its code verified by B.
    make_client(pair.a).sign_in_with_otp({"email": email})
    [message] = outbox(pair.b, email, type="magiclink")
    assert outbox(pair.a, email, type="magiclink") == [message]
    verified = make_client(pair.b).verify_otp({"email": email, "token": message["otp"], "type": "email"})
    assert verified.user.email == email

    # A recovery mail sent by A (to another user: one mail a minute per address): its link,
    # followed on B, signs in.
    other = unique_email("recover")
    make_client(pair.a).sign_up({"email": other, "password": PASSWORD})
    make_client(pair.a).reset_password_for_email(other)
    [recovery] = outbox(pair.b, other, type="recovery")
    followed = httpx.get(recovery["action_link"].replace(pair.a.url, pair.b.url), timeout=WAIT, follow_redirects=False)
    assert followed.status_code == 303 and "access_token=" in followed.headers["location"], followed.headers

    # Clearing the outbox through one process clears it for both.
    cleared = httpx.delete(f"{pair.b.url}/emulator/v1/outbox", headers={"apikey": SERVICE_ROLE_KEY}, timeout=WAIT)
    assert cleared.status_code == 200, cleared.text
    assert outbox(pair.a, email) == []


def test_a_dashboard_on_one_process_sees_the_others_writes(replicas, make_client):
    """The dashboard's pages and its live stamp read the shared database: a user signed up
    through B shows on A's users page, and A's stamp moves, so an open page refreshes."""
    pair = replicas()
    live = f"{pair.a.url}/emulator/live"
    before = httpx.get(live, params={"view": "users"}, timeout=WAIT)
    assert before.status_code == 200, before.text
    email = unique_email("seen")
    make_client(pair.b).sign_up({"email": email, "password": PASSWORD})
    after = httpx.get(live, params={"view": "users"}, timeout=WAIT).json()["stamp"]
    assert after != before.json()["stamp"]
    page = httpx.get(f"{pair.a.url}/emulator", timeout=WAIT)
    assert page.status_code == 200 and email in page.text


# MARK: docs/postgres.md

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "postgres.md"
MARK = "<!-- tested: Tests/python/test_postgres_replicas.py"


def test_the_docs_section_runs_as_written(tmp_path):
    """docs/postgres.md's "Several emulators on one database" examples, in page order: the two
    `serve` lines started at once (each on a free port instead of the documented one), then the
    shell block against them."""
    lines = PAGE.read_text().splitlines()
    blocks = []
    for index, line in enumerate(lines):
        if line.startswith(MARK) and lines[index + 1].startswith("```bash"):
            blocks.append(lines[index + 2:lines.index("```", index + 2)])
    assert len(blocks) == 2, "the section's runnable blocks changed: update this test"
    cluster = cluster_of_this_process()
    database_url = cluster.url(cluster.make_database())
    serve = re.compile(r'auth-emulator serve (.*) --port (\d+) &')
    starts = [serve.fullmatch(line) for line in blocks[0]]
    assert all(starts), blocks[0]
    env = {**FAST_HASHING, "PATH": f"{cluster.bin}:{os.environ['PATH']}"}

    def start(match):
        return Server(match.group(1).replace('"$DATABASE_URL"', database_url).split(), env=env)

    servers = at_once([lambda match=match: start(match) for match in starts])
    try:
        script = "\n".join(blocks[1])
        for match, server in zip(starts, servers):
            script = script.replace(f"http://127.0.0.1:{match.group(2)}", server.url)
        result = subprocess.run(["bash", "-c", "set -euo pipefail\n" + script], cwd=tmp_path,
                                env={**os.environ, **env, "ANON_KEY": servers[0].info["anon key"]},
                                capture_output=True, text=True, timeout=WAIT)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["grace@example.com"]
    finally:
        for server in servers:
            assert server.stop() == 0
