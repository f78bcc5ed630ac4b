"""`auth-emulator` as the docs' shell examples find it on PATH.

Every command goes to the binary under test unchanged, except `serve`: an example's `serve` line
would run until stopped, so here it runs on an ephemeral port (`--port 0` added last, which wins
over the example's own `--port`), must print its whole banner within 10 s, and is then stopped by
its PID with SIGTERM and must exit 0. That proves the line's flags, variables and files start the
server as the page says, without a server that outlives the example.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

BINARY = os.environ["DOC_SNIPPETS_BINARY"]


def serve(args):
    host = args[args.index("--host") + 1] if "--host" in args[:-1] else os.environ.get("GOTRUE_API_HOST", "127.0.0.1")
    if host != "127.0.0.1":
        sys.exit(f"doc example: serve on {host} refused: the suite listens on loopback only")
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen([BINARY, "serve", *args, "--port", "0"], stdout=out, stderr=err, text=True)
        deadline = time.monotonic() + 10
        banner = ""
        while time.monotonic() < deadline and process.poll() is None:
            out.seek(0)
            banner = out.read()
            if any(line.startswith("database:") for line in banner.splitlines()):
                break
            time.sleep(0.05)
        complete = any(line.startswith("database:") for line in banner.splitlines())
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        out.seek(0)
        err.seek(0)
        sys.stdout.write(out.read())
        sys.stderr.write(err.read())
        if not complete:
            sys.exit(process.returncode or 1)
        if process.returncode != 0:
            sys.exit(f"doc example: serve exited {process.returncode} on SIGTERM")


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2:])
    else:
        os.execv(BINARY, [BINARY, *sys.argv[1:]])
