"""Several isolated projects in one emulator (docs/projects.md), driven by the real supabase-auth
client: two projects side by side, addressed by path (`/project/<ref>/auth/v1`) and by host name
(`Host: <ref>.localhost:PORT`), each with its own users, mails, keys, scenarios, rate-limit
buckets and virtual clock."""
import os

import httpx
import jwt
import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError, AuthWeakPasswordError

from conftest import FAST_HASHING, SERVICE_ROLE_KEY
from helpers_client import PASSWORD, unique_email


def control(server, method, path, key=SERVICE_ROLE_KEY, **kwargs):
    return httpx.request(method, f"{server.url}/emulator/v1{path}", headers={"apikey": key}, timeout=10, **kwargs)


def create(server, ref, **body):
    made = control(server, "POST", "/projects", json={"ref": ref, **body})
    assert made.status_code == 201, made.text
    return made.json()


def project_control(project, method, path, **kwargs):
    """A project's own `/emulator/v1` routes, with its own service_role key."""
    return httpx.request(method, f"{project['url']}/emulator/v1{path}",
                         headers={"apikey": project["service_role_key"]}, timeout=10, **kwargs)


@pytest.fixture
def clients():
    made = []

    def make(project, server=None, by_host=False):
        headers = {"apikey": project["anon_key"]}
        url = project["auth_url"]
        if by_host:
            # `<ref>.localhost` names loopback for browsers and systemd-resolved, not for every
            # resolver: the request goes to the server's address with the name in Host, as a
            # browser's would.
            headers["Host"] = f"{project['ref']}.localhost:{server.port}"
            url = f"{server.url}/auth/v1"
        client = SyncGoTrueClient(url=url, headers=headers, auto_refresh_token=False, persist_session=True)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def two(start_server):
    server = start_server("--db", ":memory:", env=FAST_HASHING)
    return server, create(server, "alpha"), create(server, "beta")


def test_users_mails_and_keys_stay_in_their_project(two, clients):
    server, alpha, beta = two
    assert alpha["url"] == f"{server.url}/project/alpha"
    assert alpha["host_url"] == f"http://alpha.localhost:{server.port}"
    # Every key differs: a project's keys open no other project.
    for name in ("anon_key", "service_role_key", "publishable_key", "secret_key"):
        assert alpha[name] != beta[name]

    a, b = clients(alpha), clients(beta)
    email = unique_email("twin")
    # The same address signs up in both: two user tables.
    a_user = a.sign_up({"email": email, "password": PASSWORD}).user
    b_user = b.sign_up({"email": email, "password": PASSWORD}).user
    assert a_user.id != b_user.id

    # Each project signs with its own ES256 key; the client verifies through that project's JWKS.
    a_claims = a.get_claims()
    b_claims = b.get_claims()
    assert a_claims["claims"]["sub"] == a_user.id and b_claims["claims"]["sub"] == b_user.id
    assert a_claims["headers"]["kid"] != b_claims["headers"]["kid"]
    assert a_claims["claims"]["iss"] == alpha["auth_url"]

    # A token of one project is refused by the other.
    with pytest.raises(AuthApiError) as refused:
        b.get_user(a.get_session().access_token)
    assert refused.value.status == 403 and refused.value.code == "bad_jwt"
    # So is its service_role key, on the other's admin API and control routes.
    listed = httpx.get(f"{beta['auth_url']}/admin/users", headers={"apikey": beta["anon_key"],
                       "Authorization": f"Bearer {alpha['service_role_key']}"}, timeout=10)
    assert listed.status_code == 403
    assert project_control(beta, "GET", "/outbox").status_code == 200
    crossed = httpx.get(f"{beta['url']}/emulator/v1/outbox", headers={"apikey": alpha["service_role_key"]}, timeout=10)
    assert crossed.status_code in (401, 403)
    # And by the default project.
    assert control(server, "GET", "/outbox", key=alpha["service_role_key"]).status_code in (401, 403)

    # A mail goes to its project's outbox, its link to its project's address.
    a.reset_password_for_email(email)
    a_mail = project_control(alpha, "GET", "/outbox").json()
    b_mail = project_control(beta, "GET", "/outbox").json()
    assert [m["type"] for m in a_mail if m["to"] == email] == ["recovery"]
    assert [m for m in b_mail if m["type"] == "recovery"] == []
    assert f"{alpha['auth_url']}/verify?token=" in a_mail[-1]["body_html"]
    # The default project saw none of it.
    assert control(server, "GET", "/outbox").json() == []
    admin = {"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}
    assert httpx.get(f"{server.url}/auth/v1/admin/users", headers=admin, timeout=10).json()["users"] == []


def test_scenarios_rate_limits_and_clock_stay_in_their_project(two, clients):
    server, alpha, beta = two
    a, b = clients(alpha), clients(beta)
    a_email, b_email = unique_email("a"), unique_email("b")
    a.sign_up({"email": a_email, "password": PASSWORD})
    b.sign_up({"email": b_email, "password": PASSWORD})

    # A scenario loaded into alpha fails alpha's sign-ins only.
    scenario = {"name": "alpha-outage", "rules": [{"match": {"op": "token.password"},
                "then": {"error": "over_request_rate_limit"}}]}
    assert project_control(alpha, "POST", "/scenarios", json=scenario).status_code == 201
    with pytest.raises(AuthApiError) as limited:
        a.sign_in_with_password({"email": a_email, "password": PASSWORD})
    assert limited.value.code == "over_request_rate_limit"
    assert b.sign_in_with_password({"email": b_email, "password": PASSWORD}).session is not None
    assert project_control(alpha, "DELETE", "/scenarios").status_code in (200, 204)

    # Rate limits: alpha's tiny preset counts alpha's requests, beta keeps its own buckets.
    assert project_control(alpha, "PATCH", "/config", json={"rate_limits": "tiny"}).status_code == 200
    for _ in range(3):
        a.sign_in_with_password({"email": a_email, "password": PASSWORD})
    with pytest.raises(AuthApiError) as over:
        a.sign_in_with_password({"email": a_email, "password": PASSWORD})
    assert over.value.status == 429 and over.value.code == "over_request_rate_limit"
    for _ in range(5):
        assert b.sign_in_with_password({"email": b_email, "password": PASSWORD}).session is not None
    assert control(server, "GET", "/config").json()["rate_limits"] != "tiny"

    # The clock: two hours on alpha's clock expire alpha's tokens, not beta's.
    moved = project_control(alpha, "POST", "/clock", json={"advance_seconds": 7200})
    assert moved.status_code == 200, moved.text
    with pytest.raises(AuthApiError) as expired:
        a.get_user()
    assert expired.value.status == 403 and expired.value.code == "bad_jwt"
    assert b.get_user().user.email == b_email


def test_host_name_and_path_address_the_same_project(two, clients):
    server, alpha, _ = two
    by_path = clients(alpha)
    by_host = clients(alpha, server=server, by_host=True)
    email = unique_email("named")
    by_host.sign_up({"email": email, "password": PASSWORD})
    assert by_path.sign_in_with_password({"email": email, "password": PASSWORD}).user.email == email
    # `default.localhost` and `/project/default` are the default project.
    health = httpx.get(f"{server.url}/project/default/auth/v1/health", timeout=10)
    assert health.status_code == 200
    users = httpx.get(f"{server.url}/auth/v1/admin/users", timeout=10,
                      headers={"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}",
                               "Host": f"default.localhost:{server.port}"})
    assert users.status_code == 200 and users.json()["users"] == []
    # An unknown project is a 404 naming it, by either address.
    for response in (httpx.get(f"{server.url}/project/nope/auth/v1/health", timeout=10),
                     httpx.get(f"{server.url}/auth/v1/health", headers={"Host": "nope.localhost"}, timeout=10)):
        assert response.status_code == 404
        assert response.json()["msg"].startswith('No project "nope"')


def test_the_projects_api(start_server, clients):
    server = start_server("--db", ":memory:", env=FAST_HASHING)
    # A config.toml as the body: its [auth] section on top of the server's settings.
    made = httpx.post(f"{server.url}/emulator/v1/projects", params={"ref": "closed"},
                      content=b"[auth]\nenable_signup = false\n",
                      headers={"apikey": SERVICE_ROLE_KEY, "Content-Type": "application/toml"}, timeout=10)
    assert made.status_code == 201, made.text
    closed = made.json()
    with pytest.raises(AuthApiError) as refused:
        clients(closed).sign_up({"email": unique_email(), "password": PASSWORD})
    assert refused.value.code == "signup_disabled"
    # Control-API settings in JSON.
    confirm = create(server, "confirm", settings={"mailer_autoconfirm": False})
    assert clients(confirm).sign_up({"email": unique_email(), "password": PASSWORD}).session is None

    listed = control(server, "GET", "/projects").json()["projects"]
    assert [p["ref"] for p in listed] == ["default", "closed", "confirm"]
    assert listed[0]["default"] is True and listed[0]["url"] == server.url

    # Refusals change nothing.
    assert control(server, "POST", "/projects", json={"ref": "closed"}).status_code == 409
    bad = control(server, "POST", "/projects", json={"ref": "Not_A-Name"})
    assert bad.status_code == 400 and bad.json()["error_code"] == "validation_failed"
    bad_setting = control(server, "POST", "/projects", json={"ref": "x1", "settings": {"no_such_setting": 1}})
    assert bad_setting.status_code == 400
    assert control(server, "DELETE", "/projects/default").status_code == 400
    assert [p["ref"] for p in control(server, "GET", "/projects").json()["projects"]] == ["default", "closed", "confirm"]
    # Only the default project's key manages projects.
    assert httpx.get(f"{closed['url']}/emulator/v1/projects", headers={"apikey": closed["service_role_key"]},
                     timeout=10).status_code == 404

    assert control(server, "DELETE", "/projects/closed").status_code == 204
    assert control(server, "GET", "/projects/closed").status_code == 404
    assert httpx.get(f"{closed['auth_url']}/health", timeout=10).status_code == 404
    assert control(server, "DELETE", "/projects/closed").status_code == 404


def test_projects_declared_at_start_persist_with_their_data(start_server, clients, tmp_path):
    database = tmp_path / "auth.db"
    config = tmp_path / "alpha.toml"
    config.write_text("[auth]\nminimum_password_length = 12\n")
    server = start_server("--db", str(database), "--project", f"alpha={config}", env=FAST_HASHING)
    assert server.info["projects"] == f"{server.url}/project/alpha"
    alpha = control(server, "GET", "/projects/alpha").json()
    assert alpha["database"] == str(tmp_path / "projects" / "alpha.db")
    client = clients(alpha)
    with pytest.raises(AuthWeakPasswordError) as short:
        client.sign_up({"email": unique_email(), "password": "eleven-char"})
    assert short.value.code == "weak_password"
    email = unique_email("kept")
    client.sign_up({"email": email, "password": "twelve-chars!"})
    assert server.stop() == 0

    # Restarted without the flag: the project is reopened from its file, with its settings and
    # keys, so the session it issued still works.
    again = start_server("--db", str(database), env=FAST_HASHING)
    reopened = control(again, "GET", "/projects/alpha").json()
    assert reopened["anon_key"] == alpha["anon_key"]
    client = clients(reopened)
    assert client.sign_in_with_password({"email": email, "password": "twelve-chars!"}).user.email == email
    with pytest.raises(AuthWeakPasswordError):
        client.sign_up({"email": unique_email(), "password": "eleven-char"})

    # Dropped: its files go too.
    assert control(again, "DELETE", "/projects/alpha").status_code == 204
    assert not os.path.exists(tmp_path / "projects" / "alpha.db")
    assert not os.path.exists(tmp_path / "projects" / "alpha.json")


def test_auto_created_projects(start_server, clients):
    server = start_server("--db", ":memory:", "--auto-create-projects", env=FAST_HASHING)
    assert httpx.get(f"{server.url}/project/fresh/auth/v1/health", timeout=10).status_code == 200
    assert httpx.get(f"{server.url}/auth/v1/health", headers={"Host": "other.localhost"}, timeout=10).status_code == 200
    refs = [p["ref"] for p in control(server, "GET", "/projects").json()["projects"]]
    assert refs == ["default", "fresh", "other"]
    fresh = control(server, "GET", "/projects/fresh").json()
    token = clients(fresh).sign_up({"email": unique_email(), "password": PASSWORD}).session.access_token
    assert jwt.get_unverified_header(token)["alg"] == "ES256"
