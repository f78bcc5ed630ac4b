"""Crash safety of Postgres mode: two emulator processes on one database, as several GoTrue
replicas share one, and one of them killed with SIGKILL again and again under mixed load.

Every write either process answered with a 2xx must be in the database afterwards, as process A
shows it and as `psql` shows it: the users, their metadata (the acknowledged value or a later
one), every refresh token an answer carried (the session's active token, or a revoked ancestor
from which the family leads to it), and no half-written rows (a session without its user, a
refresh token without its session). A request that got no answer (the connection was reset
because the process died, or refused while it was down) may or may not have landed: its COMMIT
may have reached Postgres just before the kill. The checks allow both outcomes for it and
nothing else.

The load keeps one session per worker thread, refreshed by that thread alone, so two processes
never rotate the same refresh token at once (that race is the row locks' concern, tested with
them). Bounded: AUTH_EMULATOR_PG_CRASH_CYCLES kills (default 20), each once process B has
acknowledged a write since its restart; every wait has a bound of 30 s or more and nothing
judges how fast the machine is.

A second test shows why the kill loses nothing: an answer is written only after the COMMIT
carrying its changes returned. A deferred constraint trigger holds the emulator's COMMIT (an
advisory lock the test keeps) or makes it fail, and the client's answer follows the COMMIT.
"""
import collections
import os
import random
import subprocess
import threading
import time

import httpx
import pytest

import postgres_cluster
from conftest import ANON_KEY, FAST_HASHING, SERVICE_ROLE_KEY, Server, postgres_cluster as cluster_of_this_process, wait_until
from helpers_client import PASSWORD

pytestmark = pytest.mark.skipif(not postgres_cluster.available(),
                                reason="needs PostgreSQL's server binaries (apt install postgresql)")

CYCLES = int(os.environ.get("AUTH_EMULATOR_PG_CRASH_CYCLES", "20"))
WORKERS = 4
# A hang guard per request, generous for a busy machine: a request that outlasts it counts as
# unanswered, as one the kill cut off.
REQUEST_TIMEOUT = 30
# Every load thread stops sending by then, whatever happened to the cycles.
LOAD_BOUND = 90
ANON = {"apikey": ANON_KEY}
ADMIN = {"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}


class Ledger:
    """What the load was told. Only 2xx answers count as acknowledged."""

    def __init__(self):
        self.lock = threading.Lock()
        self.users = {}                      # user id -> email: accounts whose creation was acknowledged
        self.metadata = {}                   # user id -> [highest acknowledged n, highest n sent]
        self.tokens = {}                     # refresh token -> user id: every one a 2xx answer carried
        self.answers = collections.Counter()  # (process, status) of every answered request
        self.unanswered = collections.Counter()  # (process, how) -> requests that got no answer

    def acknowledged_by(self, process):
        with self.lock:
            return sum(count for (name, status), count in self.answers.items() if name == process and 200 <= status < 300)


class Worker:
    """One load thread: its own accounts and at most one session of its own at a time."""

    def __init__(self, index, urls, ledger, stop, seed):
        self.index = index
        self.urls = urls
        self.ledger = ledger
        self.stop = stop
        self.rng = random.Random(seed)
        self.accounts = []   # (email, user id) of acknowledged accounts
        self.session = None  # {"user", "refresh", "access"} of the last acknowledged session
        self.count = 0

    def send(self, client, process, method, path, **kwargs):
        """The 2xx answer's JSON body, or None (recorded either way)."""
        try:
            response = client.request(method, f"{self.urls[process]}{path}", **kwargs)
        except httpx.HTTPError as error:
            # No answer: the process died with the request in it (cut off) or was down (refused).
            # Whether a cut-off request landed is unknown; nothing of it counts as acknowledged.
            with self.ledger.lock:
                self.ledger.unanswered[(process, "refused" if isinstance(error, httpx.ConnectError) else "cut off")] += 1
            # The process is being restarted: not straight back into a refused connection.
            self.stop.wait(0.02)
            return None
        with self.ledger.lock:
            self.ledger.answers[(process, response.status_code)] += 1
        return response.json() if 200 <= response.status_code < 300 else None

    def acknowledge_session(self, body):
        user = body["user"]["id"]
        self.session = {"user": user, "refresh": body["refresh_token"], "access": body["access_token"]}
        with self.ledger.lock:
            self.ledger.tokens[body["refresh_token"]] = user

    def acknowledge_account(self, email, body):
        user = body["id"]
        self.accounts.append((email, user))
        with self.ledger.lock:
            self.ledger.users[user] = email
            self.ledger.metadata.setdefault(user, [0, 0])

    def step(self, client):
        self.count += 1
        process = self.rng.choice(("A", "B"))
        operation = self.rng.choices(("signup", "admin", "signin", "refresh", "update"), weights=(2, 1, 2, 3, 3))[0]
        if operation in ("refresh", "update") and self.session is None or operation == "signin" and not self.accounts:
            operation = "signup"
        email = f"w{self.index}-{self.count}@crash.example"
        if operation == "signup":
            body = self.send(client, process, "POST", "/auth/v1/signup", headers=ANON, json={"email": email, "password": PASSWORD})
            if body is not None:
                self.acknowledge_account(email, body["user"])
                self.acknowledge_session(body)
        elif operation == "admin":
            body = self.send(client, process, "POST", "/auth/v1/admin/users", headers=ADMIN,
                             json={"email": email, "password": PASSWORD, "email_confirm": True})
            if body is not None:
                self.acknowledge_account(email, body)
        elif operation == "signin":
            known, _ = self.rng.choice(self.accounts)
            body = self.send(client, process, "POST", "/auth/v1/token?grant_type=password", headers=ANON,
                             json={"email": known, "password": PASSWORD})
            if body is not None:
                self.acknowledge_session(body)
        elif operation == "refresh":
            body = self.send(client, process, "POST", "/auth/v1/token?grant_type=refresh_token", headers=ANON,
                             json={"refresh_token": self.session["refresh"]})
            if body is not None:
                self.acknowledge_session(body)
            else:
                # The token may have been rotated without the answer reaching us: never send it
                # again (past the reuse interval that would revoke the family, as GoTrue does).
                self.session = None
        else:
            user = self.session["user"]
            with self.ledger.lock:
                sent = self.ledger.metadata[user][1] = self.ledger.metadata[user][1] + 1
            body = self.send(client, process, "PUT", "/auth/v1/user",
                             headers={**ANON, "Authorization": f"Bearer {self.session['access']}"}, json={"data": {"n": sent}})
            if body is not None:
                with self.ledger.lock:
                    acknowledged = self.ledger.metadata[user]
                    acknowledged[0] = max(acknowledged[0], sent)

    def run(self):
        deadline = time.monotonic() + LOAD_BOUND
        with httpx.Client(timeout=REQUEST_TIMEOUT) as client:
            while not self.stop.is_set() and time.monotonic() < deadline:
                self.step(client)


def start(url, port=None):
    """An emulator on the database `url`; on `port` when given (a restart takes its old port)."""
    return Server(["--db", url, "--db-bootstrap", *(["--port", str(port)] if port else [])], env=FAST_HASHING)


def healthy(server):
    try:
        return httpx.get(f"{server.url}/health", timeout=REQUEST_TIMEOUT).status_code == 200
    except httpx.HTTPError:
        return False


def check_through_process(server, ledger):
    """Every acknowledged user, as the surviving process's admin API shows it."""
    with httpx.Client(timeout=REQUEST_TIMEOUT) as client:
        for user, email in ledger.users.items():
            response = client.get(f"{server.url}/auth/v1/admin/users/{user}", headers=ADMIN)
            assert response.status_code == 200, f"acknowledged user {email} not found through process A: {response.text}"
            body = response.json()
            assert body["email"] == email
            acknowledged, sent = ledger.metadata[user]
            if acknowledged:
                assert acknowledged <= body["user_metadata"]["n"] <= sent, (email, body["user_metadata"], acknowledged, sent)


def check_in_sql(cluster, database, ledger):
    def rows(sql):
        return cluster.psql(sql, database=database)

    users = {user: (email, n) for user, email, n in rows("SELECT id, email, coalesce(raw_user_meta_data ->> 'n', '') FROM auth.users")}
    later = 0
    for user, email in ledger.users.items():
        assert user in users and users[user][0] == email, f"acknowledged user {email} is not in auth.users"
        acknowledged, sent = ledger.metadata[user]
        if acknowledged:
            assert acknowledged <= int(users[user][1]) <= sent, (email, users[user][1], acknowledged, sent)
        later += users[user][1] != "" and int(users[user][1]) > acknowledged
    # What landed without an answer (allowed, not required): shown, for the record of the run.
    print(f"landed without an answer: {len(users) - len(ledger.users)} accounts, {later} metadata updates")

    # No half-written rows: the foreign keys forbid most; the columns they leave nullable must
    # be filled as GoTrue fills them.
    assert rows("SELECT count(*) FROM auth.sessions s WHERE NOT EXISTS (SELECT 1 FROM auth.users u WHERE u.id = s.user_id)") == [("0",)]
    assert rows("""SELECT count(*) FROM auth.refresh_tokens t WHERE t.session_id IS NULL
                   OR NOT EXISTS (SELECT 1 FROM auth.sessions s WHERE s.id = t.session_id AND s.user_id::text = t.user_id)""") == [("0",)]
    assert rows("SELECT count(*) FROM auth.identities i WHERE NOT EXISTS (SELECT 1 FROM auth.users u WHERE u.id = i.user_id)") == [("0",)]
    assert rows("SELECT count(*) FROM auth.mfa_amr_claims c WHERE NOT EXISTS (SELECT 1 FROM auth.sessions s WHERE s.id = c.session_id)") == [("0",)]

    tokens = {token: (parent, revoked == "t", session, user)
              for token, parent, revoked, session, user in rows("SELECT token, coalesce(parent, ''), revoked, session_id, user_id FROM auth.refresh_tokens")}
    children = collections.defaultdict(list)
    for token, (parent, _, _, _) in tokens.items():
        if parent:
            children[parent].append(token)
    active = collections.Counter(session for _, revoked, session, _ in tokens.values() if not revoked)
    for token, user in ledger.tokens.items():
        assert token in tokens, f"an acknowledged refresh token of user {user} is not in auth.refresh_tokens"
        _, _, session, owner = tokens[token]
        assert owner == user
        # The family: from the acknowledged token, each rotation to its one child, down to the
        # session's one active token.
        current, steps = token, 0
        while tokens[current][1]:
            assert len(children[current]) == 1, f"revoked token with {len(children[current])} children in session {session}"
            current = children[current][0]
            assert tokens[current][2] == session
            steps += 1
            assert steps <= len(tokens)
        assert active[session] == 1, f"session {session} has {active[session]} active refresh tokens"


def test_kill_9_cycles_under_mixed_load_lose_no_acknowledged_write():
    cluster = cluster_of_this_process()
    database = cluster.make_database()
    url = cluster.url(database)
    first = start(url)
    second = start(url)
    port = second.port
    ledger = Ledger()
    stop = threading.Event()
    rng = random.Random(19)
    workers = [Worker(index, {"A": first.url, "B": second.url}, ledger, stop, rng.random()) for index in range(WORKERS)]
    threads = [threading.Thread(target=worker.run, daemon=True) for worker in workers]
    try:
        for thread in threads:
            thread.start()
        for cycle in range(CYCLES):
            before = ledger.acknowledged_by("B")
            assert wait_until(lambda: ledger.acknowledged_by("B") > before, 60, interval=0.005), (
                f"cycle {cycle}: process B acknowledged nothing since its start; answers {dict(ledger.answers)}")
            # The random pause picks the moment of the kill; nothing waits on it.
            time.sleep(rng.uniform(0, 0.2))
            second.process.kill()
            second.process.wait(timeout=30)
            second.stop()
            second = start(url, port)
            assert wait_until(lambda: healthy(second), 30), f"cycle {cycle}: the restarted process does not answer /health"
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
            assert not thread.is_alive(), "a load thread is still running"

        # The load ran through both processes; whatever got an answer was a success (the kill
        # cuts requests off, it never makes a process answer wrongly).
        assert ledger.acknowledged_by("A") > 0 and ledger.acknowledged_by("B") >= CYCLES
        failures = {key: count for key, count in ledger.answers.items() if not 200 <= key[1] < 300}
        assert not failures, f"answers other than 2xx: {failures}"
        print(f"\n{len(ledger.users)} users, {len(ledger.tokens)} refresh tokens acknowledged; answers {dict(ledger.answers)}; "
              f"unanswered {dict(ledger.unanswered)}")
        check_through_process(first, ledger)
    finally:
        stop.set()
        for server in (first, second):
            server.stop(timeout=60)
    check_in_sql(cluster, database, ledger)


# A deferred constraint trigger runs at COMMIT: it fails the COMMIT for one address, and for the
# others waits while the test holds an advisory lock, so the emulator's COMMIT stays in
# progress for as long as the test wants.
HOLD_COMMIT = """
CREATE FUNCTION public.hold_commit() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
BEGIN
  IF NEW.email LIKE 'refused-%' THEN RAISE EXCEPTION 'refused at commit'; END IF;
  PERFORM pg_advisory_xact_lock_shared(4242);
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON auth.users DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION public.hold_commit();
"""


class HeldLock:
    """An exclusive advisory lock held by a psql session of the test's until `release()`."""

    def __init__(self, cluster, database, key):
        self.cluster, self.database, self.key = cluster, database, key
        command = [os.path.join(cluster.bin, "psql"), "-X", "-q", "-h", cluster.directory, "-U", "postgres", "-d", database]
        if cluster.as_root:
            command = ["/usr/sbin/runuser", "-u", "postgres", "--", *command]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        self.process.stdin.write(f"SELECT pg_advisory_lock({key});\n")
        self.process.stdin.flush()
        assert wait_until(lambda: self.count("granted") == [("1",)], 30), "the test's psql did not get the advisory lock"

    def count(self, condition):
        return self.cluster.psql(f"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = {self.key} AND {condition}",
                                 database=self.database)

    def release(self):
        if self.process.poll() is None:
            self.process.stdin.write(f"SELECT pg_advisory_unlock({self.key});\n\\q\n")
            self.process.stdin.close()
            self.process.wait(timeout=30)


def test_an_answer_follows_the_commit_of_its_write(start_server):
    cluster = cluster_of_this_process()
    database = cluster.make_database()
    server = start_server("--db", cluster.url(database), "--db-bootstrap", env=FAST_HASHING)
    cluster.psql(HOLD_COMMIT, database=database)

    def sign_up(email, answers):
        try:
            answers[email] = httpx.post(f"{server.url}/auth/v1/signup", headers=ANON, timeout=60,
                                        json={"email": email, "password": PASSWORD}).status_code
        except httpx.HTTPError as error:
            answers[email] = repr(error)

    def present(email):
        return cluster.psql(f"SELECT count(*) FROM auth.users WHERE email = '{email}'", database=database) == [("1",)]

    # A COMMIT that fails: the statements all succeeded, only the COMMIT refused them. No 2xx,
    # and nothing of the user is there.
    answers = {}
    sign_up("refused-alone@commit.example", answers)
    assert answers["refused-alone@commit.example"] == 500
    assert not present("refused-alone@commit.example")

    # A COMMIT in progress: the write is sent, the answer waits for it.
    lock = HeldLock(cluster, database, 4242)
    try:
        held = threading.Thread(target=sign_up, args=("held@commit.example", answers))
        held.start()
        # The emulator's backend waits for the lock inside its COMMIT (the trigger is deferred).
        committing = f"""SELECT count(*) FROM pg_stat_activity WHERE datname = '{database}' AND query = 'COMMIT'
                         AND wait_event_type = 'Lock' AND wait_event = 'advisory'"""
        assert wait_until(lambda: cluster.psql(committing, database=database) == [("1",)], 30), "the COMMIT never started"
        assert "held@commit.example" not in answers and not present("held@commit.example")
        # Writes that arrive meanwhile queue behind it, and share the next transaction when
        # they can: one of them fails that COMMIT.
        later = [threading.Thread(target=sign_up, args=(email, answers))
                 for email in ("queued-1@commit.example", "refused-queued@commit.example", "queued-2@commit.example")]
        for thread in later:
            thread.start()
        assert "held@commit.example" not in answers
    finally:
        lock.release()
    held.join(timeout=60)
    for thread in later:
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert answers["held@commit.example"] == 200 and present("held@commit.example")
    assert answers["refused-queued@commit.example"] == 500 and not present("refused-queued@commit.example")
    # A write sharing the refused COMMIT is refused with it; one that committed on its own is
    # there: in every case, a 2xx answer means the row is there, and no row is there without one.
    for email in ("queued-1@commit.example", "queued-2@commit.example"):
        assert answers[email] in (200, 500)
        assert present(email) == (answers[email] == 200), (email, answers[email])
