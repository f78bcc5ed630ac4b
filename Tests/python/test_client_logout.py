"""`POST /logout` scopes through the real supabase-auth client (reference §5.12, §21 item 6).

Each test opens three sessions of one user, each in its own client, signs out with one scope and
checks which access and refresh tokens still work: a deleted session's access token is 403
`session_not_found` on GET /user, its refresh token 400 `refresh_token_not_found`."""
import pytest
from supabase_auth.errors import AuthApiError

from helpers_client import PASSWORD, api_error, gateway, unique_email


def three_sessions(server, make_client):
    first = make_client(server)
    email = unique_email()
    first.sign_up({"email": email, "password": PASSWORD})
    clients = [first]
    for _ in range(2):
        client = make_client(server)
        client.sign_in_with_password({"email": email, "password": PASSWORD})
        clients.append(client)
    sessions = [client.get_session() for client in clients]
    assert len({s.refresh_token for s in sessions}) == 3
    return clients, sessions


def assert_alive(probe, session):
    assert probe.get_user(session.access_token).user.id == session.user.id


def assert_gone(probe, session):
    with pytest.raises(AuthApiError) as user:
        probe.get_user(session.access_token)
    api_error(user, AuthApiError, "session_not_found", 403, "Session from session_id claim in JWT does not exist")
    with pytest.raises(AuthApiError) as refresh:
        probe.refresh_session(session.refresh_token)
    api_error(refresh, AuthApiError, "refresh_token_not_found", 400, "Invalid Refresh Token: Refresh Token Not Found")


def test_local_sign_out_ends_only_this_session(start_auth, make_client):
    server = start_auth()
    (a, b, c), (sa, sb, sc) = three_sessions(server, make_client)
    probe = make_client(server, persist_session=False)

    a.sign_out({"scope": "local"})
    assert a.get_session() is None
    assert_gone(probe, sa)
    assert_alive(probe, sb)
    assert_alive(probe, sc)
    assert b.refresh_session().session is not None
    assert c.get_session() is not None


def test_others_sign_out_keeps_only_this_session(start_auth, make_client):
    server = start_auth()
    (a, b, c), (sa, sb, sc) = three_sessions(server, make_client)
    probe = make_client(server, persist_session=False)

    b.sign_out({"scope": "others"})
    # `others` never removes the caller's own session.
    assert b.get_session() is not None
    assert_alive(probe, sb)
    assert b.refresh_session().session is not None
    assert_gone(probe, sa)
    assert_gone(probe, sc)


def test_global_sign_out_ends_every_session(start_auth, make_client):
    server = start_auth()
    (a, b, c), sessions = three_sessions(server, make_client)
    probe = make_client(server, persist_session=False)

    c.sign_out()  # global is the default scope
    assert c.get_session() is None
    for session in sessions:
        assert_gone(probe, session)

    # Signing out again with a dead session counts as signed out for the client (it treats
    # 401/403/404 as such), and signing in again works.
    a.sign_out()
    assert a.get_session() is None
    fresh = a.sign_in_with_password({"email": sessions[0].user.email, "password": PASSWORD})
    assert_alive(probe, fresh.session)


def test_sign_out_of_another_user_leaves_this_one_alone(start_auth, make_client):
    server = start_auth()
    probe = make_client(server, persist_session=False)
    (a, _, _), _ = three_sessions(server, make_client)
    (_, _, z), (other, _, _) = three_sessions(server, make_client)
    a.sign_out()
    assert_alive(probe, other)
    assert z.refresh_session().session is not None


def test_logout_wire_shape(start_auth):
    # Reference §5.12: 204 with no body; an unknown scope is 400 before anything is deleted;
    # no bearer is 401.
    server = start_auth()
    version = {"X-Supabase-Api-Version": "2024-01-01"}
    with gateway(server) as http:
        token = http.post("/signup", json={"email": unique_email(), "password": PASSWORD}).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}", **version}

        bogus = http.post("/logout", params={"scope": "bogus"}, headers=auth)
        assert bogus.status_code == 400
        assert bogus.json() == {"code": "validation_failed", "message": 'Unsupported logout scope "bogus"'}
        assert http.get("/user", headers=auth).status_code == 200

        anonymous = http.post("/logout", headers=version)
        assert anonymous.status_code == 401
        assert anonymous.json()["code"] == "no_authorization"

        done = http.post("/logout", params={"scope": "local"}, headers=auth)
        assert done.status_code == 204
        assert done.content == b""
        gone = http.get("/user", headers=auth)
        assert gone.status_code == 403
        assert gone.json()["code"] == "session_not_found"
        assert gone.headers["x-sb-error-code"] == "session_not_found"
