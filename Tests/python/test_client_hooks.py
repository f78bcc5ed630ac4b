"""Auth hooks over HTTP, driven through the real supabase-auth client: a hook server in this
process adds a `user_role` claim (custom_access_token), refuses sign-ups from a blocked domain
(before_user_created) and receives the emails itself (send_email). Every request's Standard
Webhooks signature is checked here with a hand-written HMAC, as a hook would check it. The same
server also answers over HTTPS, with a certificate from a throwaway authority that the emulator
trusts only through `SSL_CERT_FILE`. Redirects are followed as GoTrue's Go client follows them:
to any host, whatever the hook URI rule says."""
import base64
import datetime
import hashlib
import hmac
import ipaddress
import json
import os
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from supabase_auth.errors import AuthApiError

from conftest import BIN
from helpers_client import PASSWORD, api_error, claims, unique_email

KEY = b"0123456789abcdef0123456789abcdef"
SECRET = "v1,whsec_" + base64.b64encode(KEY).decode()


class HookServer:
    """A loopback HTTP server answering the three hooks; stopped at the end of the test. With
    `tls` (a certificate and key file pair) it answers over HTTPS. `/away` answers 307 to
    `redirect_to`. Each call's headers are kept in `headers`."""

    def __init__(self, tls=None, host="127.0.0.1"):
        self.calls = []
        self.headers = []
        self.redirect_to = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                signed = f"{self.headers['webhook-id']}.{self.headers['webhook-timestamp']}.".encode() + body
                expected = "v1," + base64.b64encode(hmac.new(KEY, signed, hashlib.sha256).digest()).decode()
                valid = expected in self.headers["webhook-signature"].split(", ")
                payload = json.loads(body)
                outer.calls.append((self.path, payload, valid, abs(time.time() - int(self.headers["webhook-timestamp"]))))
                outer.headers.append(self.headers)
                if self.path == "/away":
                    self.send_response(307)
                    self.send_header("Location", outer.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path == "/claims":
                    claims = payload["claims"]
                    claims["user_role"] = "admin" if claims.get("email", "").startswith("admin") else "member"
                    self.answer(200, {"claims": claims})
                elif self.path == "/before-user-created":
                    if payload["user"].get("email", "").endswith("@blocked.example"):
                        self.answer(200, {"error": {"http_code": 403, "message": "Sign-ups from this domain are not allowed"}})
                    else:
                        self.answer(200, {})
                elif self.path == "/send-email":
                    self.answer(200, {})
                else:
                    self.answer(404, {})

            def answer(self, status, value):
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer((host, 0), Handler)
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://{host}:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hooks():
    server = HookServer()
    yield server
    server.close()


def throwaway_authority(directory):
    """Writes ca.pem (a one-day authority) and a leaf certificate for 127.0.0.1 it signed;
    returns (ca path, (leaf certificate path, leaf key path))."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hook test authority")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])).issuer_name(ca_name)
            .public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = {name: directory / name for name in ("ca.pem", "leaf.pem", "leaf.key")}
    paths["ca.pem"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths["leaf.pem"].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths["leaf.key"].write_bytes(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    return str(paths["ca.pem"]), (str(paths["leaf.pem"]), str(paths["leaf.key"]))


@pytest.fixture
def tls_hooks(tmp_path):
    ca, leaf = throwaway_authority(tmp_path)
    server = HookServer(tls=leaf)
    server.ca = ca
    yield server
    server.close()


def hook_env(hooks, *names):
    env = {}
    paths = {"CUSTOM_ACCESS_TOKEN": "/claims", "BEFORE_USER_CREATED": "/before-user-created", "SEND_EMAIL": "/send-email"}
    for name in names:
        env[f"GOTRUE_HOOK_{name}_ENABLED"] = "true"
        env[f"GOTRUE_HOOK_{name}_URI"] = hooks.url + paths[name]
        env[f"GOTRUE_HOOK_{name}_SECRETS"] = SECRET
    return env


def test_custom_access_token_adds_a_claim(start_auth, make_client, hooks):
    server = start_auth(**hook_env(hooks, "CUSTOM_ACCESS_TOKEN"))
    client = make_client(server)
    admin_email = unique_email("admin")
    session = client.sign_up({"email": admin_email, "password": PASSWORD}).session
    assert claims(session.access_token)["user_role"] == "admin"
    assert client.get_claims()["claims"]["user_role"] == "admin"
    path, payload, valid, skew = hooks.calls[-1]
    assert path == "/claims" and valid and skew < 60
    assert payload["metadata"]["name"] == "customize-access-token"
    assert payload["authentication_method"] == "password"
    # Refreshing runs the hook again.
    refreshed = client.refresh_session().session
    assert claims(refreshed.access_token)["user_role"] == "admin"
    assert hooks.calls[-1][1]["authentication_method"] == "token_refresh"
    member = make_client(server).sign_up({"email": "m-" + unique_email("x"), "password": PASSWORD}).session
    assert claims(member.access_token)["user_role"] == "member"


def test_before_user_created_refuses_a_blocked_domain(start_auth, make_client, hooks):
    server = start_auth(**hook_env(hooks, "BEFORE_USER_CREATED"))
    client = make_client(server)
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_up({"email": "eve@blocked.example", "password": PASSWORD})
    # The hook's error has no code of its own: the real server answers `unknown`.
    api_error(excinfo, AuthApiError, "unknown", 403, "Sign-ups from this domain are not allowed")
    assert hooks.calls[-1][2]
    # Nothing was stored: the address is still free once the domain is allowed.
    ok = client.sign_up({"email": unique_email("allowed"), "password": PASSWORD})
    assert ok.user is not None


def test_send_email_hook_receives_the_code(start_auth, make_client, hooks):
    server = start_auth(GOTRUE_MAILER_AUTOCONFIRM="false", **hook_env(hooks, "SEND_EMAIL"))
    client = make_client(server)
    email = unique_email("hooked")
    client.sign_up({"email": email, "password": PASSWORD})
    path, payload, valid, _ = hooks.calls[-1]
    assert path == "/send-email" and valid
    assert payload["user"]["email"] == email
    assert payload["email_data"]["email_action_type"] == "signup"
    # The app's own sender got the code; the user confirms with it.
    token = payload["email_data"]["token"]
    session = client.verify_otp({"email": email, "token": token, "type": "signup"}).session
    assert session is not None


def test_an_https_hook_is_called_with_the_configured_trust_roots(start_auth, make_client, tls_hooks):
    server = start_auth(SSL_CERT_FILE=tls_hooks.ca, **hook_env(tls_hooks, "CUSTOM_ACCESS_TOKEN"))
    session = make_client(server).sign_up({"email": "admin-" + unique_email("tls"), "password": PASSWORD}).session
    assert claims(session.access_token)["user_role"] == "admin"
    path, _, valid, _ = tls_hooks.calls[-1]
    assert path == "/claims" and valid


def test_an_untrusted_https_hook_is_unreachable(start_auth, make_client, tls_hooks):
    # Without the authority the certificate does not verify: every attempt fails as an
    # unreachable hook would, and the sign-up is refused with nothing stored.
    server = start_auth(**hook_env(tls_hooks, "BEFORE_USER_CREATED"))
    client = make_client(server)
    email = unique_email("untrusted")
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_up({"email": email, "password": PASSWORD})
    api_error(excinfo, AuthApiError, "hook_timeout_after_retry", 422, "Failed to reach hook after maximum retries")
    assert tls_hooks.calls == []


def claims_hook_env(uri):
    return {"GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED": "true", "GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI": uri,
            "GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_SECRETS": SECRET}


@pytest.mark.skipif(sys.platform != "linux", reason="127.0.0.2 is a loopback address on Linux only")
def test_a_hook_redirect_reaches_a_host_the_uri_rule_refuses(start_auth, make_client, hooks):
    elsewhere = HookServer(host="127.0.0.2")
    try:
        # As a hook URI, that host stops the start, with the real server's message...
        refused = subprocess.run([BIN, "serve", "--port", "0", "--db", ":memory:"], capture_output=True, text=True,
                                 env={**os.environ, **claims_hook_env(elsewhere.url + "/claims")}, timeout=30)
        assert refused.returncode == 78, refused.stderr
        assert "only localhost, 127.0.0.1, and ::1 are supported with http" in refused.stderr
        # ...but an accepted hook may send the call there: the rule is checked on the
        # configuration only, and Go's client follows the 307, re-posting the signed body.
        hooks.redirect_to = elsewhere.url + "/claims"
        server = start_auth(**claims_hook_env(hooks.url + "/away"))
        session = make_client(server).sign_up({"email": "admin-" + unique_email("moved"), "password": PASSWORD}).session
        assert claims(session.access_token)["user_role"] == "admin"
        assert [call[0] for call in hooks.calls] == ["/away"]
        path, _, valid, _ = elsewhere.calls[-1]
        assert path == "/claims" and valid
        # Go's Referer: the URL that redirected.
        assert elsewhere.headers[-1]["Referer"] == hooks.url + "/away"
    finally:
        elsewhere.close()


def test_a_hook_redirect_from_https_to_http_is_followed_without_referer(start_auth, make_client, hooks, tls_hooks):
    tls_hooks.redirect_to = hooks.url + "/claims"
    server = start_auth(SSL_CERT_FILE=tls_hooks.ca, **claims_hook_env(tls_hooks.url + "/away"))
    session = make_client(server).sign_up({"email": "admin-" + unique_email("down"), "password": PASSWORD}).session
    assert claims(session.access_token)["user_role"] == "admin"
    path, _, valid, _ = hooks.calls[-1]
    assert path == "/claims" and valid
    # Go sends no Referer from https to http (net/http refererForURL).
    assert hooks.headers[-1]["Referer"] is None


class HangingHook:
    """A custom-access-token hook that holds every call until `release()` or, at the latest,
    HOLD seconds after the call arrived (well inside the emulator's 5 s deadline, so even a late
    answer reaches the emulator in time), counting the calls in flight and those let go."""

    HOLD = 3.0

    def __init__(self):
        self.in_flight = 0
        self.let_go = 0
        self.lock = threading.Lock()
        self.gate = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.in_flight += 1
                    gate = outer.gate
                gate.wait(outer.HOLD)
                with outer.lock:
                    outer.in_flight -= 1
                    outer.let_go += 1
                claims = payload["claims"]
                claims["held"] = True
                data = json.dumps({"claims": claims}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/claims"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def arm(self):
        """A new round: the calls that arrive from now on are held afresh."""
        with self.lock:
            self.gate = threading.Event()
            self.let_go = 0

    def release(self):
        self.gate.set()

    def all_held(self, count):
        """`count` calls are in flight and none has been let go since `arm()`."""
        with self.lock:
            return self.in_flight == count and self.let_go == 0

    def wait_for(self, count, seconds=30):
        """Until `count` calls are held at once; False if one was let go first (a round that
        cannot reach `count`) or the bound ran out."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                if self.let_go:
                    return False
                if self.in_flight == count:
                    return True
            time.sleep(0.01)
        return False

    def close(self):
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()


def test_a_hanging_hook_delays_only_the_requests_that_call_it(start_auth):
    """Six sign-ins wait on a hook that does not answer; meanwhile 50 unrelated writes and reads
    each finish while all six are still held: the hook is called with no database writer held,
    and the worker pool (four workers by default) keeps serving while its workers wait on the
    hook. Order, not speed: a request counts only if it was sent after the six calls reached
    the hook and answered before any of them was let go. The hook lets a call go by itself
    after HOLD seconds (the emulator gives up at 5 s); on a machine too busy to fit the 50 in
    one such window, the rest go in another round of six held sign-ins."""
    import httpx

    from conftest import ANON_KEY, SERVICE_ROLE_KEY

    hook = HangingHook()
    try:
        server = start_auth(GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED="true", GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI=hook.url,
                            GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_SECRETS=SECRET)
        admin = httpx.Client(base_url=f"{server.url}/auth/v1",
                             headers={"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}, timeout=30)
        emails = [unique_email("hang") for _ in range(6)]
        for email in emails:
            created = admin.post("/admin/users", json={"email": email, "password": PASSWORD, "email_confirm": True})
            assert created.status_code == 200, created.text

        results = []

        def sign_in(email):
            with httpx.Client(base_url=f"{server.url}/auth/v1", headers={"apikey": ANON_KEY}, timeout=30) as client:
                results.append(client.post("/token?grant_type=password", json={"email": email, "password": PASSWORD}))

        unrelated, rounds = 0, 0
        while unrelated < 50:
            rounds += 1
            # A server whose unrelated requests waited on the hook would never get one through.
            assert rounds <= 10, f"only {unrelated} of 50 unrelated requests finished while the hook held six calls"
            hook.arm()
            threads = [threading.Thread(target=sign_in, args=(email,)) for email in emails]
            for thread in threads:
                thread.start()
            if hook.wait_for(6):
                while unrelated < 50:
                    created = admin.post("/admin/users", json={"email": unique_email(f"free{unrelated}"), "password": PASSWORD})
                    assert created.status_code == 200, created.text
                    if not hook.all_held(6):
                        break
                    unrelated += 1
                    read = admin.get(f"/admin/users/{created.json()['id']}")
                    assert read.status_code == 200
                    if not hook.all_held(6):
                        break
                    unrelated += 1
            hook.release()
            for thread in threads:
                thread.join(30)
                assert not thread.is_alive()
        print(f"50 unrelated requests answered while six hook calls were held, in {rounds} round(s)")

        assert [r.status_code for r in results] == [200] * (6 * rounds), [r.text for r in results if r.status_code != 200]
        assert all(claims(r.json()["access_token"])["held"] is True for r in results)
        admin.close()
    finally:
        hook.close()
