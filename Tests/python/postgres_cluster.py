"""A throw-away Postgres server for the real-client tests of Postgres mode.

`initdb` into a fresh folder under /tmp; the server listens only on a Unix socket in that folder
(no TCP port, so nothing clashes with another server or another test run), durability off; it is
stopped by its PID and the folder deleted at the end. As root (CI containers) the server runs as
the `postgres` user Debian's package creates, through `runuser`, as Postgres refuses root.

Finds the server binaries as the Swift tests do (Tests/Support/PostgresTestSupport/PostgresCluster.swift):
`AUTH_EMULATOR_PG_BIN`, Debian's /usr/lib/postgresql/<newest>/bin, Homebrew's folders, PATH.
"""
import glob
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import time


def bin_directory():
    candidates = []
    explicit = os.environ.get("AUTH_EMULATOR_PG_BIN")
    if explicit:
        candidates.append(explicit)
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]) if p.split("/")[-2].isdigit() else 0,
                    reverse=True)
    candidates += debian
    for prefix in ("/opt/homebrew/opt", "/usr/local/opt"):
        candidates += [f"{prefix}/postgresql@{v}/bin" for v in range(18, 13, -1)]
    candidates += os.environ.get("PATH", "").split(":")
    for directory in candidates:
        if all(os.access(os.path.join(directory, tool), os.X_OK) for tool in ("initdb", "pg_ctl", "postgres", "psql")):
            return directory
    return None


def available():
    """Whether the Postgres-mode tests can run here; under CI=true they must (no skip)."""
    return bin_directory() is not None or os.environ.get("CI") == "true"


class Cluster:
    def __init__(self):
        self.bin = bin_directory()
        if self.bin is None:
            raise RuntimeError("PostgreSQL's server binaries (initdb, pg_ctl, postgres, psql) were not found: apt install "
                               "postgresql (Debian/Ubuntu), brew install postgresql@17 (macOS), or set AUTH_EMULATOR_PG_BIN")
        self.directory = tempfile.mkdtemp(prefix="ae-pg-", dir="/tmp")
        self.as_root = os.geteuid() == 0
        if self.as_root:
            import pwd

            account = pwd.getpwnam("postgres")
            os.chown(self.directory, account.pw_uid, account.pw_gid)
        self._names = itertools.count(1)
        data = os.path.join(self.directory, "data")
        self._run("initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync")
        options = f"-k {self.directory} -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", data, "-o", options, "-l", os.path.join(self.directory, "log"), "-w", "-t", "120", "start")
        with open(os.path.join(data, "postmaster.pid")) as pid_file:
            self.pid = int(pid_file.readline())

    def _run(self, tool, *args):
        command = [os.path.join(self.bin, tool), *args]
        if self.as_root:
            command = ["/usr/sbin/runuser", "-u", "postgres", "--", *command]
        # Output to a file, not a pipe: the server pg_ctl starts would inherit a pipe's write end.
        with tempfile.TemporaryFile() as output:
            status = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=output, stderr=output, timeout=180).returncode
            if status != 0:
                output.seek(0)
                raise RuntimeError(f"{tool} exited with {status}: {output.read().decode(errors='replace')}")

    def conninfo(self, database="postgres", user="postgres"):
        """A libpq key=value connection string on the cluster's socket."""
        return f"host={self.directory} dbname={database} user={user}"

    def url(self, database="postgres", user="postgres"):
        """The same as a postgres:// URL (the socket folder as the host parameter)."""
        return f"postgresql://{user}@/{database}?host={self.directory}"

    def psql(self, sql, database="postgres", user="postgres", check=True):
        """Runs `sql` (one or more statements) with psql; returns the rows of the last result as
        tuples of strings (unaligned, tab-separated). `check=False` returns (status, stderr)
        instead of raising when psql fails."""
        result = subprocess.run(
            [os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
             "-h", self.directory, "-U", user, "-d", database, "-c", sql],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        )
        if not check:
            return result.returncode, result.stderr
        if result.returncode != 0:
            raise RuntimeError(f"psql failed ({result.returncode}): {result.stderr}")
        return [tuple(line.split("\t")) for line in result.stdout.splitlines() if line]

    def make_database(self):
        """A new, empty database's name."""
        name = f"test_{os.getpid()}_{next(self._names)}"
        self.psql(f"CREATE DATABASE {name}")
        return name

    def stop(self):
        """Fast shutdown by PID (SIGINT), waiting at most 30 s, then the folder is removed."""
        try:
            os.kill(self.pid, signal.SIGINT)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                os.kill(self.pid, 0)
                time.sleep(0.02)
        except ProcessLookupError:
            pass
        shutil.rmtree(self.directory, ignore_errors=True)
