"""The relocatable binary (scripts/release): it loads nothing but the C library, and it serves a
sign-up, sign-in and refresh when started with an empty environment where no Swift toolchain is
visible (a private mount namespace with a tmpfs over the toolchain; where namespaces are not
allowed, with the empty environment alone). Runs when AUTH_EMULATOR_RELOCATABLE names the
binary, as CI does with the one it builds."""
import os
import re
import shutil
import subprocess

import pytest

from helpers_client import PASSWORD, claims, unique_email

BINARY = os.environ.get("AUTH_EMULATOR_RELOCATABLE")
pytestmark = pytest.mark.skipif(not BINARY, reason="AUTH_EMULATOR_RELOCATABLE is not set (scripts/release builds it)")

C_LIBRARY = re.compile(r"^\s*(linux-vdso|linux-gate)\.so|/(libc|libm|libdl|libpthread|librt)\.so|ld-linux")


def toolchain_root():
    swift = shutil.which("swift")
    return os.path.dirname(os.path.dirname(os.path.realpath(swift))) if swift else None


def namespaces_allowed():
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0 if shutil.which("unshare") else False


def test_only_the_c_library_is_loaded():
    lines = [line for line in subprocess.run(["ldd", BINARY], capture_output=True, text=True, check=True).stdout.splitlines()
             if line.strip()]
    assert lines and all(C_LIBRARY.search(line) for line in lines), lines


def test_a_full_flow_without_a_toolchain(make_client):
    serve = ["env", "-i", BINARY, "serve", "--host", "127.0.0.1", "--port", "0", "--db", ":memory:", "--quiet"]
    root = toolchain_root()
    if root and namespaces_allowed():
        command = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                   f'mount -t tmpfs none "{root}" && test ! -e "{root}/bin/swift" && exec "$@"', "sh", *serve]
    else:
        command = serve
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline()
        match = re.fullmatch(r"listening on (http://127\.0\.0\.1:\d+)\n", first)
        assert match, (first, process.stderr.read() if process.poll() is not None else "")

        class Started:
            url = match.group(1)

        client = make_client(Started)
        email = unique_email("relocatable")
        signed_up = client.sign_up({"email": email, "password": PASSWORD}).session
        assert claims(signed_up.access_token)["email"] == email
        client.sign_out()
        signed_in = client.sign_in_with_password({"email": email, "password": PASSWORD}).session
        refreshed = client.refresh_session().session
        assert refreshed.refresh_token != signed_in.refresh_token
        assert claims(refreshed.access_token)["session_id"] == claims(signed_in.access_token)["session_id"]
    finally:
        process.terminate()
        process.wait(timeout=10)
