"""Listening beyond loopback (docs/beyond-loopback.md): the real binary on this
machine's own non-loopback address, every request sent to that address only. The public demo
secrets no longer open anything, the dashboard and the test provider's consent page ask for the
key, the emulator's own routes refuse rebound host names, and links never point at 0.0.0.0."""
import re
import socket

import httpx
import jwt
import pytest

from conftest import ANON_KEY, SERVICE_ROLE_KEY
from helpers_client import CLI_KEY_ID, PASSWORD, unique_email

DEMO_SECRET_KEY = "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz"


def own_address():
    """This machine's address on its default route, without sending anything (a UDP socket's
    connect only picks the source address); None when there is no such interface."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1 (RFC 5737): never answered, never sent to
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") or address == "0.0.0.0" else address


ADDRESS = own_address()
pytestmark = pytest.mark.skipif(ADDRESS is None, reason="this machine has no non-loopback IPv4 address")


def client(base, **headers):
    return httpx.Client(base_url=base, headers=headers, timeout=10)


def test_the_demo_secrets_open_nothing_beyond_loopback(start_server):
    server = start_server("--db", ":memory:", host=ADDRESS)
    assert "beyond loopback" in server.stderr_text() and "--allow-demo-keys" in server.stderr_text()
    service, secret = server.info["service_role key"], server.info["secret key"]
    assert service != SERVICE_ROLE_KEY and server.info["anon key"] != ANON_KEY and secret != DEMO_SECRET_KEY
    base = f"http://{ADDRESS}:{server.port}"
    with client(base) as http:
        # The admin API, the side door and the dashboard refuse the demo keys...
        assert http.get("/admin/users", headers={"Authorization": f"Bearer {SERVICE_ROLE_KEY}"}).status_code in (401, 403)
        assert http.get("/auth/v1/admin/users", headers={"apikey": DEMO_SECRET_KEY}).status_code in (401, 403)
        assert http.get("/emulator/v1/outbox", headers={"apikey": SERVICE_ROLE_KEY}).status_code in (401, 403)
        assert http.get("/emulator/v1/outbox", headers={"apikey": DEMO_SECRET_KEY}).status_code in (401, 403)
        page = http.get("/emulator", follow_redirects=True)
        assert 'name="key"' in page.text and "service_role" in page.text
        # ...and accept the printed ones.
        assert http.get("/admin/users", headers={"Authorization": f"Bearer {service}"}).status_code == 200
        assert http.get("/emulator/v1/outbox", headers={"apikey": secret}).status_code == 200
        assert http.get("/emulator", headers={"apikey": service}).status_code == 200
        # A user signs up with the printed anon key as with any project.
        signed = http.post("/auth/v1/signup", headers={"apikey": server.info["anon key"]},
                           json={"email": unique_email("lan"), "password": PASSWORD})
        assert signed.status_code == 200 and signed.json()["access_token"]
        # The CLI's built-in signing key is public too: a fresh ES256 key signs instead.
        assert "signing key" in server.stderr_text()
        header = jwt.get_unverified_header(signed.json()["access_token"])
        assert header["alg"] == "ES256" and header["kid"] != CLI_KEY_ID
        assert [key["kid"] for key in http.get("/.well-known/jwks.json").json()["keys"]] == [header["kid"]]

        # The test provider's consent page asks for the key before it signs anyone in.
        query = "client_id=c&redirect_uri=" + f"{base}/callback" + "&response_type=code&state=s"
        prompt = http.get(f"/emulator/v1/idp/google/authorize?{query}")
        assert prompt.status_code == 401 and 'id="unlock"' in prompt.text
        form = {"client_id": "c", "redirect_uri": f"{base}/callback", "response_type": "code", "state": "s",
                "email": "anyone@example.com", "action": "approve"}
        assert http.post("/emulator/v1/idp/google/authorize", data=form).status_code == 401
        approved = http.post("/emulator/v1/idp/google/authorize", data={**form, "key": service})
        assert approved.status_code == 302 and "code=" in approved.headers["location"]


def test_rebound_names_and_other_origins_are_refused(start_server):
    server = start_server("--db", ":memory:", host=ADDRESS)
    secret = server.info["secret key"]
    base = f"http://{ADDRESS}:{server.port}"
    with client(base) as http:
        assert http.get("/emulator/v1/outbox", headers={"apikey": secret}).status_code == 200
        rebound = http.get("/emulator/v1/outbox", headers={"apikey": secret, "Host": f"rebind.evil.example:{server.port}"})
        assert rebound.status_code == 403
        assert http.get("/emulator/settings", headers={"Host": "rebind.evil.example"}).status_code == 403
        # GoTrue's own routes answer any Host, as the real server.
        assert http.get("/auth/v1/settings", headers={"Host": "rebind.evil.example"}).status_code == 200
        preflight = {"Origin": "https://evil.example", "Access-Control-Request-Method": "GET",
                     "Access-Control-Request-Headers": "authorization"}
        assert "access-control-allow-origin" not in http.options("/auth/v1/emulator/v1/outbox", headers=preflight).headers
        assert http.options("/auth/v1/token", headers=preflight).headers["access-control-allow-origin"] == "*"


def test_allow_demo_keys_keeps_them(start_server):
    server = start_server("--db", ":memory:", "--allow-demo-keys", host=ADDRESS)
    assert server.info["service_role key"] == SERVICE_ROLE_KEY
    with client(f"http://{ADDRESS}:{server.port}") as http:
        assert http.get("/admin/users", headers={"Authorization": f"Bearer {SERVICE_ROLE_KEY}"}).status_code == 200


def test_links_on_every_interface_use_a_reachable_address(start_server):
    server = start_server("--db", ":memory:", "--no-autoconfirm", host="0.0.0.0")
    note = re.search(r"links in mails and redirects use (http://[0-9.]+:\d+)", server.stderr_text())
    assert note, server.stderr_text()
    link_base = note.group(1)
    assert "0.0.0.0" not in link_base
    base = f"http://{ADDRESS}:{server.port}"
    with client(base, apikey=server.info["anon key"]) as http:
        email = unique_email("links")
        assert http.post("/auth/v1/signup", json={"email": email, "password": PASSWORD}).status_code == 200
        mail = http.get("/emulator/v1/outbox/latest", params={"to": email}, headers={"apikey": server.info["secret key"]}).json()
        assert mail["action_link"].startswith(link_base + "/"), mail["action_link"]
