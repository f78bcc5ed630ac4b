"""Starts the real auth-emulator binary on a loopback port for the Python test suite.

Every server is started with `--port 0`, its real URL read from the first stdout line
(`listening on http://HOST:PORT`), and stopped by its PID at the end (SIGTERM, then SIGKILL
after a bounded wait).
"""
import itertools
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

import pytest

BIN = os.environ.get("AUTH_EMULATOR_BIN", ".build/debug/auth-emulator")
ANON_KEY = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9"
    ".CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0"
)
SERVICE_ROLE_KEY = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0"
    ".EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU"
)


# The longest tests are placed for pytest-xdist's work-stealing scheduler (`scripts/test` runs
# `--dist worksteal`), which first hands each worker a contiguous slice of this order:
# - the bounded load runs (`test_floods.py`, 20-30 s each, in both I/O modes) at the head of
#   the first worker's slice, one after the other (`heavy_lock` below): a thousand connections
#   and fifty never-readers each, which nothing should double. Their checks hold on a busy
#   machine (they judge behaviour, not speed), so they go beside everything else;
# - the bounded fuzzing runs (20 s each) and the other long tests (the durability runs, the
#   503-on-shutdown test, Postgres mode's kill -9 cycles) one at the head of each other slice.
# Sorted to the front of the order as one block, the first worker ran all of them and more (110 s
# while the others finished in 45).
LOAD = ("test_floods.py",)
FUZZ = ("test_fuzz_socket.py",)
LONG = ("test_durability.py", "test_serve.py::test_shutdown_answers_unfinished_requests_with_503",
        "test_postgres_crash.py::test_kill_9_cycles_under_mixed_load_lose_no_acknowledged_write")


def pytest_collection_modifyitems(items):
    def kind(item):
        path, name = item.nodeid.split("::")[0], item.nodeid.split("[")[0]
        if path.endswith(LOAD):
            return "load"
        if path.endswith(FUZZ):
            return "fuzz"
        return "long" if path.endswith(LONG) or name.endswith(LONG) else "short"

    kinds = {name: [item for item in items if kind(item) == name] for name in ("load", "fuzz", "long", "short")}
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))

    def other(index):
        """The slice after the first that the index-th fuzzing or long run goes to."""
        return 1 + index % (workers - 1) if workers > 1 else 0

    heads = [[] for _ in range(workers)]
    heads[0].extend(kinds["load"])
    for index, item in enumerate(kinds["fuzz"] + kinds["long"]):
        heads[other(index)].append(item)
    # Short tests, in their own order, fill each slice up to an equal length after its head.
    size = -(-len(items) // workers)
    rest = iter(kinds["short"])
    shares = [head + list(itertools.islice(rest, max(0, size - len(head)))) for head in heads]
    items[:] = [item for share in shares for item in share] + list(rest)


@pytest.fixture(autouse=True)
def heavy_lock(request):
    """One load run at a time across the session's workers (and whichever worker stole the
    test): an exclusive lock on a file named after the run."""
    path = request.node.nodeid.split("::")[0]
    if not path.endswith(LOAD):
        yield
        return
    import fcntl

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))
    path_name = os.path.join(tempfile.gettempdir(), f"auth-emulator-heavy-{run}.lock")
    with open(path_name, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# The tests that move bytes over real sockets in every way a client can (docs/platforms.md). With
# AUTH_EMULATOR_TEST_PORTABLE=1 (scripts/test sets it on Linux) each of them runs twice, as
# `[native]` and `[portable]`: the second time every server it starts serves through the
# transport macOS uses (AUTH_EMULATOR_PORTABLE_IO=1: poll(2), a wake-up pipe, accept and fcntl).
# Both runs are in one session, so pytest-xdist's workers share them out.
PORTABLE_FILES = (
    "test_serve.py", "test_floods.py", "test_concurrency.py", "test_durability.py",
    "test_fuzz_socket.py", "test_client_reliability.py", "test_client_scenarios.py",
)


def pytest_generate_tests(metafunc):
    if os.environ.get("AUTH_EMULATOR_TEST_PORTABLE") == "1" and metafunc.definition.path.name in PORTABLE_FILES:
        metafunc.parametrize("io_mode", ["native", "portable"], indirect=True)
    if os.environ.get("AUTH_EMULATOR_TEST_POSTGRES") == "1" and POSTGRES_FILES.fullmatch(metafunc.definition.path.name):
        metafunc.parametrize("store", ["sqlite", "postgres"], indirect=True)


@pytest.fixture(autouse=True)
def store(request):
    """The store the test's servers on `--db :memory:` use. A test marked
    `@pytest.mark.sqlite_only("why")` is skipped on Postgres with that reason."""
    mode = getattr(request, "param", None) or os.environ.get("AUTH_EMULATOR_TEST_DB", "sqlite")
    if mode == "postgres":
        marker = request.node.get_closest_marker("sqlite_only")
        if marker is not None:
            pytest.skip(f"not on Postgres yet: {marker.args[0]}")
    previous = _store["mode"]
    _store["mode"] = mode
    yield mode
    _store["mode"] = previous


def pytest_configure(config):
    config.addinivalue_line("markers", "sqlite_only(reason): a feature Postgres mode does not have yet (docs/postgres.md)")


@pytest.fixture(autouse=True)
def io_mode(request, monkeypatch):
    """The transport the test's servers use; `portable` sets AUTH_EMULATOR_PORTABLE_IO=1 for them."""
    mode = getattr(request, "param", "native")
    if mode == "portable":
        monkeypatch.setenv("AUTH_EMULATOR_PORTABLE_IO", "1")
    return mode


def wait_until(condition, seconds=30, interval=0.01):
    """Polls `condition` until it returns something true, which is returned; None once `seconds`
    ran out. A bound on how long the test waits for a state, never a judgement of how fast the
    machine reached it."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value or None
        time.sleep(interval)


_TCP_STATES = {"01": "ESTABLISHED", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "0A": "LISTEN"}


def tcp_connection(local_port, remote_port):
    """The kernel's view of one end of a loopback TCP connection, `{"state", "send_queue",
    "receive_queue"}` (bytes not yet acknowledged by the peer, bytes not yet read by the owner),
    or None when there is no such socket: /proc/net/tcp on Linux, `netstat` elsewhere."""
    if os.path.exists("/proc/net/tcp"):
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                with open(table) as lines:
                    next(lines)
                    for line in lines:
                        fields = line.split()
                        local, remote, state, queues = fields[1], fields[2], fields[3], fields[4]
                        if int(local.rsplit(":", 1)[1], 16) == local_port and int(remote.rsplit(":", 1)[1], 16) == remote_port:
                            send_queue, receive_queue = (int(q, 16) for q in queues.split(":"))
                            return {"state": _TCP_STATES.get(state, state), "send_queue": send_queue,
                                    "receive_queue": receive_queue}
            except OSError:
                continue
        return None
    # BSD netstat: Proto Recv-Q Send-Q Local-Address Foreign-Address (state), ports after the last dot.
    out = subprocess.run(["netstat", "-an", "-p", "tcp"], capture_output=True, text=True, timeout=30).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[0].startswith("tcp"):
            if fields[3].rsplit(".", 1)[-1] == str(local_port) and fields[4].rsplit(".", 1)[-1] == str(remote_port):
                return {"state": fields[5], "send_queue": int(fields[2]), "receive_queue": int(fields[1])}
    return None


def wait_until_server_read(server_port, client_port, seconds=30):
    """Waits until the server has read all the client sent on a connection: the client's bytes
    are acknowledged and none wait in the server's receive queue. The emulator parses what it
    reads in the same step, so a complete request is then in the server (dispatched, in flight).
    Asserts within the bound."""
    def read():
        client = tcp_connection(client_port, server_port)
        server = tcp_connection(server_port, client_port)
        return (client is not None and server is not None and client["send_queue"] == 0
                and server["receive_queue"] == 0)

    assert wait_until(read, seconds), (
        f"the server did not read the request within {seconds} s: client end {tcp_connection(client_port, server_port)}, "
        f"server end {tcp_connection(server_port, client_port)}")


# Postgres mode (docs/postgres.md). A test whose store is `postgres` has every server it starts
# on `--db :memory:` on a fresh database of its own on a throw-away cluster instead (one cluster
# per pytest process, started on first use and stopped at exit); servers on a file stay on
# SQLite. With AUTH_EMULATOR_TEST_POSTGRES=1 (scripts/test sets it where Postgres' server
# binaries are, and always under CI) every real-client test (`test_client_*.py`) runs twice, as
# `[sqlite]` and `[postgres]`, in one session; AUTH_EMULATOR_TEST_DB=postgres makes `postgres`
# the store of every test instead (a whole run in Postgres mode).
# The real-client suite and the dashboard's (its pages, live stamp and browser flows).
POSTGRES_FILES = re.compile(r"test_client_.*\.py|test_dashboard\.py|test_browser_dashboard\.py")
_store = {"mode": os.environ.get("AUTH_EMULATOR_TEST_DB", "sqlite")}
_cluster = None


def postgres_cluster():
    """The process's throw-away Postgres cluster (Tests/python/postgres_cluster.py)."""
    global _cluster
    if _cluster is None:
        import atexit

        from postgres_cluster import Cluster

        _cluster = Cluster()
        atexit.register(_cluster.stop)
    return _cluster


def _in_test_database(args):
    if _store["mode"] != "postgres":
        return args
    args = list(args)
    for index in range(len(args) - 1):
        if args[index] == "--db" and args[index + 1] == ":memory:":
            cluster = postgres_cluster()
            # Bootstrapped as a bare server is (docs/postgres.md): the cluster's roles may exist
            # already (another test made them), but each new database needs its grants.
            return [*args[:index + 1], cluster.url(cluster.make_database()), "--db-bootstrap", *args[index + 2:]]
    return args


class Server:
    def __init__(self, args, env=None, host="127.0.0.1"):
        args = _in_test_database(args)
        # A file, not a pipe: a server that logs a lot must never block on a full pipe that
        # nobody reads.
        self._stderr = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            [BIN, "serve", "--host", host, "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env={**os.environ, **(env or {})},
        )
        first = self.process.stdout.readline()
        match = re.fullmatch(r"listening on (http://" + re.escape(host) + r":(\d+))\n", first)
        if not match:
            self.process.kill()
            self.process.wait(timeout=30)
            raise AssertionError(f"unexpected first line {first!r}; stderr: {self.stderr_text()}")
        self.url = match.group(1)
        self.port = int(match.group(2))
        # The banner ends with the database line; keys are labelled "<name>: <value>".
        self.banner = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(f"the banner ended without a database line: {self.banner}; stderr: {self.stderr_text()}")
            line = line.rstrip("\n")
            self.banner.append(line)
            if line.startswith("database:"):
                break
        self.info = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in self.banner)}
        # Later stdout lines (if any) are drained for the same reason as stderr.
        self.output = []
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()

    def _read_rest(self):
        for line in self.process.stdout:
            self.output.append(line)

    def stderr_text(self):
        self._stderr.seek(0)
        return self._stderr.read()

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Stops the server by PID; returns its exit status. `timeout` bounds the wait (the
        default drain alone may take 10 s), generously for a busy machine."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
                raise AssertionError("server did not stop within the timeout")
        self._drain.join(timeout=30)
        self.process.stdout.close()
        self._stderr.close()
        return self.process.returncode


@pytest.fixture
def start_server():
    servers = []

    def start(*args, env=None, host="127.0.0.1"):
        server = Server(list(args), env=env, host=host)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def server(start_server):
    return start_server("--db", ":memory:")


# Settings every real-client test starts from: cheap password hashing keeps the suite fast (stored
# hashes are self-describing, so the cost does not change behaviour).
FAST_HASHING = {"AUTH_EMULATOR_PASSWORD_ITERATIONS": "1000"}


@pytest.fixture
def start_auth(start_server):
    """Starts an emulator with GOTRUE_* settings; `db` is `:memory:` unless a file is given."""

    def start(db=":memory:", **env):
        return start_server("--db", str(db), env={**FAST_HASHING, **env})

    return start


@pytest.fixture
def make_client():
    """Builds supabase-auth clients pointed at a server's gateway prefix; closes them afterwards."""
    from supabase_auth import SyncGoTrueClient

    clients = []

    def make(server, persist_session=True, timeout=None, http_client=None):
        """`timeout` (seconds) replaces the client's own HTTP timeout; `http_client` replaces its
        HTTP client (for hang scenarios: a test that keeps it can shorten its timeout for the
        call that hangs alone)."""
        import httpx

        if http_client is None and timeout is not None:
            http_client = httpx.Client(timeout=timeout)
        client = SyncGoTrueClient(
            url=f"{server.url}/auth/v1",
            headers={"apikey": ANON_KEY},
            auto_refresh_token=False,
            persist_session=persist_session,
            http_client=http_client,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
