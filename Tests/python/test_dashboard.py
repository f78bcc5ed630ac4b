"""The web dashboard of the real binary, over loopback: every page renders as HTML without a key
(loopback bind), and a state-changing form is accepted only with the page's CSRF token."""
import re

import httpx

from conftest import SERVICE_ROLE_KEY
from test_serve import wait_for_log

ADMIN = {"Authorization": f"Bearer {SERVICE_ROLE_KEY}", "apikey": SERVICE_ROLE_KEY}


def csrf_token(html):
    match = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert match, "no CSRF field on the page"
    return match.group(1)


def test_pages_render_and_a_csrf_protected_ban(start_auth):
    server = start_auth()
    assert server.info["dashboard"] == f"{server.url}/emulator"
    with httpx.Client(base_url=server.url, follow_redirects=False, timeout=10) as http:
        signup = http.post("/signup", json={"email": "ada@example.com", "password": "password1",
                                             "data": {"nickname": "<script>alert(1)</script>"}})
        assert signup.status_code == 200
        user_id = signup.json()["user"]["id"]

        pages = {
            "/emulator": "ada@example.com",
            f"/emulator/users/{user_id}": "&lt;script&gt;alert(1)&lt;/script&gt;",
            "/emulator/mailbox": "Mailbox",
            "/emulator/journal": "signup",
            "/emulator/scenarios": "Paste a scenario",
            "/emulator/settings": SERVICE_ROLE_KEY,
        }
        for path, content in pages.items():
            page = http.get(path)
            assert page.status_code == 200, path
            assert page.headers["content-type"] == "text/html; charset=utf-8", path
            assert content in page.text, path
            assert "<script>alert(1)" not in page.text, path

        token = csrf_token(http.get(f"/emulator/users/{user_id}").text)
        # Without the token (or with a wrong one) nothing happens.
        assert http.post(f"/emulator/users/{user_id}/ban").status_code == 403
        assert http.post(f"/emulator/users/{user_id}/ban", data={"csrf": "0" * len(token)}).status_code == 403
        assert http.get(f"/admin/users/{user_id}", headers=ADMIN).json().get("banned_until") is None
        # A form from another site carries no SameSite=Strict cookie: refused even with the token.
        with httpx.Client(base_url=server.url, timeout=10) as stranger:
            assert stranger.post(f"/emulator/users/{user_id}/ban", data={"csrf": token}).status_code == 403

        banned = http.post(f"/emulator/users/{user_id}/ban", data={"csrf": token})
        assert banned.status_code == 303
        assert banned.headers["location"].startswith(f"/emulator/users/{user_id}?notice=")
        assert http.get(f"/admin/users/{user_id}", headers=ADMIN).json()["banned_until"] is not None
        refused = http.post("/token?grant_type=password", json={"email": "ada@example.com", "password": "password1"})
        assert refused.status_code == 400
        assert refused.json()["error_code"] == "user_banned"

        # The live endpoint answers a small JSON stamp for the script to poll.
        live = http.get("/emulator/live", params={"view": "users"})
        assert live.status_code == 200
        assert re.fullmatch(r"[0-9a-f]{20}", live.json()["stamp"])


def test_dashboard_actions_reach_the_access_log(start_auth):
    """Each dashboard action (a POST) writes one access-log line on stderr, as an API call does;
    page loads and the live polling write none."""
    server = start_auth()
    with httpx.Client(base_url=server.url, follow_redirects=False, timeout=10) as http:
        token = csrf_token(http.get("/emulator").text)
        assert http.get("/emulator/live", params={"view": "users"}).status_code == 200
        created = http.post("/emulator/users", data={"email": "logged@example.com", "password": "password1", "csrf": token})
        assert created.status_code == 303
        user_id = created.headers["location"].split("/emulator/users/")[1].split("?")[0]
        assert http.post(f"/emulator/users/{user_id}/ban", data={"csrf": token}).status_code == 303
        assert http.post("/emulator/settings/config", data={"setting": "disable_signup", "value": "true",
                                                            "csrf": token}).status_code == 303
        # A marker request after the actions: once its line is out, theirs are too.
        http.get("/health")
    log = wait_for_log(server, "GET /health 200")
    lines = [line.rsplit(" ", 1)[0] for line in log.splitlines() if line.startswith(("GET ", "POST ", "HEAD "))]
    assert lines == ["POST /emulator/users 303", f"POST /emulator/users/{user_id}/ban 303",
                     "POST /emulator/settings/config 303", "GET /health 200"], log


def test_root_names_the_dashboard_and_the_apis(start_auth):
    server = start_auth()
    with httpx.Client(base_url=server.url, timeout=10) as http:
        page = http.get("/", headers={"Accept": "text/html"})
        assert page.status_code == 200
        assert f'href="{server.url}/emulator"' in page.text
        text = http.get("/")
        assert text.headers["content-type"] == "text/plain; charset=utf-8"
        for line in (f"Dashboard: {server.url}/emulator", f"Auth API: {server.url}/auth/v1",
                     f"Control API: {server.url}/emulator/v1", f"JWKS: {server.url}/auth/v1/.well-known/jwks.json"):
            assert line in text.text
        slash = http.get("/emulator/")
        assert slash.status_code == 302 and slash.headers["location"] == "/emulator"
        # GoTrue's own 404 everywhere else.
        for path in ("/auth/v1/", "/nowhere"):
            missing = http.get(path)
            assert (missing.status_code, missing.text) == (404, "404 page not found\n"), path


def test_dashboard_off_is_not_found(start_server):
    server = start_server("--db", ":memory:", "--dashboard", "off")
    assert "dashboard" not in server.info
    with httpx.Client(base_url=server.url, timeout=10) as http:
        assert http.get("/emulator").status_code == 404
        assert http.get("/emulator/settings").status_code == 404
        # The bare URL stays GoTrue's 404 too.
        assert (http.get("/", headers={"Accept": "text/html"}).text, http.get("/emulator/").status_code) == ("404 page not found\n", 404)
