"""The admin API (reference §12, §13) through the real supabase-auth client's admin interface
(`client.admin`: create_user, list_users, get_user_by_id, update_user_by_id, delete_user,
generate_link, mfa.list_factors) with the service_role key, against the real binary."""
import hashlib
import uuid
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

from conftest import ANON_KEY, SERVICE_ROLE_KEY
from helpers_client import PASSWORD, api_error, unique_email

# "correct-horse-1" (PASSWORD) as a cost-10 `$2a$` bcrypt hash, computed with libxcrypt's
# crypt(3) and checked by the Swift bcrypt known-answer tests (BcryptTests.fixtureCost10).
BCRYPT_HASH = "$2a$10$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki"
assert PASSWORD == "correct-horse-1"


@pytest.fixture
def admin_client():
    """Clients built with the service_role key, as a server-side Supabase app builds them."""
    clients = []

    def make(server, key=SERVICE_ROLE_KEY):
        client = SyncGoTrueClient(
            url=f"{server.url}/auth/v1",
            headers={"apikey": key, "Authorization": f"Bearer {key}"},
            auto_refresh_token=False,
            persist_session=False,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def test_create_get_list_update_delete(start_auth, admin_client, make_client):
    server = start_auth()
    admin = admin_client(server).admin
    email = unique_email("admin")

    created = admin.create_user(
        {"email": email, "password": PASSWORD, "email_confirm": True, "user_metadata": {"full_name": "Ada Admin"},
         "app_metadata": {"plan": "pro"}}
    ).user
    assert created.email == email
    assert created.email_confirmed_at is not None
    assert created.user_metadata == {"full_name": "Ada Admin", "email_verified": True}
    assert created.app_metadata == {"provider": "email", "providers": ["email"], "plan": "pro"}
    assert [identity.provider for identity in created.identities] == ["email"]

    fetched = admin.get_user_by_id(created.id).user
    assert fetched.id == created.id
    assert fetched.confirmed_at is not None

    # The created user signs in through an ordinary anon-key client.
    user_client = make_client(server)
    session = user_client.sign_in_with_password({"email": email, "password": PASSWORD}).session
    assert session.user.id == created.id

    others = [admin.create_user({"email": unique_email("other")}).user for _ in range(2)]
    listed = admin.list_users()
    assert [u.id for u in listed] == [others[1].id, others[0].id, created.id]
    assert all(u.identities is None for u in listed)
    assert [u.id for u in admin.list_users(page=2, per_page=1)] == [others[0].id]

    updated = admin.update_user_by_id(created.id, {"user_metadata": {"full_name": None, "team": "core"},
                                                   "ban_duration": "1h"}).user
    assert updated.user_metadata == {"email_verified": True, "team": "core"}
    assert updated.banned_until is not None
    with pytest.raises(AuthApiError) as banned:
        user_client.sign_in_with_password({"email": email, "password": PASSWORD})
    api_error(banned, AuthApiError, "user_banned", 400)

    admin.delete_user(others[0].id)
    with pytest.raises(AuthApiError) as gone:
        admin.get_user_by_id(others[0].id)
    api_error(gone, AuthApiError, "user_not_found", 404, "User not found")

    admin.delete_user(others[1].id, should_soft_delete=True)
    # Read raw: a soft-deleted user's identities have empty identity_data, which Go omits
    # (omitempty) and the client's model then refuses, as it would against the real server.
    headers = {"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}
    with httpx.Client(base_url=f"{server.url}/auth/v1", headers=headers, timeout=10) as http:
        soft = http.get(f"/admin/users/{others[1].id}").json()
    assert soft["deleted_at"]
    assert soft["email"] != others[1].email
    assert "identity_data" not in soft["identities"][0]

    assert admin.mfa.list_factors({"user_id": created.id}) == []


def test_list_headers_over_the_wire(start_auth):
    # Reference §12.1 / §18.9: Link and X-Total-Count with GoTrue's own paths.
    server = start_auth()
    headers = {"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}
    with httpx.Client(base_url=f"{server.url}/auth/v1", headers=headers, timeout=10) as http:
        for _ in range(2):
            assert http.post("/admin/users", json={"email": unique_email()}).status_code == 200
        response = http.get("/admin/users", params={"per_page": 1})
        assert response.status_code == 200
        assert response.headers["x-total-count"] == "2"
        assert response.headers["link"] == (
            '</admin/users?page=2&per_page=1>; rel="next", </admin/users?page=2&per_page=1>; rel="last"'
        )
        assert response.json()["aud"] == "authenticated"


def test_seeded_bcrypt_hash_signs_in(start_auth, admin_client, make_client):
    # Reference §13: a bcrypt hash imported through password_hash verifies at sign-in.
    server = start_auth()
    admin = admin_client(server).admin
    email = unique_email("bcrypt")
    user = admin.create_user({"email": email, "password_hash": BCRYPT_HASH, "email_confirm": True}).user

    client = make_client(server)
    result = client.sign_in_with_password({"email": email, "password": PASSWORD})
    assert result.user.id == user.id
    assert result.session.access_token

    with pytest.raises(AuthApiError) as wrong:
        client.sign_in_with_password({"email": email, "password": PASSWORD + "x"})
    api_error(wrong, AuthApiError, "invalid_credentials", 400)

    # Argon2id and Firebase scrypt hashes (users moved from other systems) sign in as on the
    # real server. Both hash "imported-secret-1"; made with argon2-cffi, and with hashlib's scrypt
    # and OpenSSL's AES-256-CTR.
    for imported in (
        "$argon2id$v=19$m=64,t=2,p=2$YWJjZGVmZ2gxMjM0NTY3OA$CB5p4+jLNSerPNJ+LsfLUxbOhkTVBt5O",
        "$fbscrypt$v=1,n=10,r=8,p=1,ss=Bw==,sk=KCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl9gYWJjZGVmZw=="
        "$nzphwtTltgcYKTpL$u5Dz43Qv5XhRLu6avAJbHNwiG1mBXjTTZXym8C9NwUC55QsHEaVRM4qK6bQ3q8PWpwXnIG1J6aBK+t7uS6hDaA==",
    ):
        address = unique_email()
        admin.create_user({"email": address, "password_hash": imported, "email_confirm": True})
        assert client.sign_in_with_password({"email": address, "password": "imported-secret-1"}).session.access_token
        with pytest.raises(AuthApiError) as wrong:
            client.sign_in_with_password({"email": address, "password": "imported-secret-2"})
        api_error(wrong, AuthApiError, "invalid_credentials", 400)

    # An Argon2 hash GoTrue's parser refuses (argon2d) is its 500, as any unknown hash.
    with pytest.raises(AuthApiError) as argon:
        admin.create_user({"email": unique_email(), "password_hash": "$argon2d$v=19$m=16,t=2,p=1$c2FsdHNhbHQ$aGFzaA"})
    api_error(argon, AuthApiError, "unexpected_failure", 500)


def test_create_user_errors(start_auth, admin_client):
    server = start_auth()
    admin = admin_client(server).admin
    email = unique_email()
    admin.create_user({"email": email})
    with pytest.raises(AuthApiError) as duplicate:
        admin.create_user({"email": email})
    api_error(duplicate, AuthApiError, "email_exists", 422, "A user with this email address has already been registered")
    with pytest.raises(AuthApiError) as neither:
        admin.create_user({"user_metadata": {}})
    api_error(neither, AuthApiError, "validation_failed", 400, "Cannot create a user without either an email or phone")
    with pytest.raises(AuthApiError) as not_found:
        admin.get_user_by_id(str(uuid.uuid4()))
    api_error(not_found, AuthApiError, "user_not_found", 404)


def test_an_email_another_audience_holds(start_auth, admin_client, make_client):
    """GoTrue looks for the email only within the request's audience, but its unique index
    covers every audience: the insert fails, a 500 (the client's API version hides the
    Postgres error), and nothing is stored. The same on SQLite and on Postgres."""
    server = start_auth()
    admin = admin_client(server).admin
    email = unique_email("audiences")
    partner = admin.create_user({"email": email, "aud": "partners"}).user
    assert partner.aud == "partners"
    with pytest.raises(AuthApiError) as created:
        admin.create_user({"email": email, "password": PASSWORD})
    api_error(created, AuthApiError, "unexpected_failure", 500, "Database error creating new user")
    with pytest.raises(AuthApiError) as signed_up:
        make_client(server).sign_up({"email": email.upper(), "password": PASSWORD})
    api_error(signed_up, AuthApiError, "unexpected_failure", 500, "Database error saving new user")
    assert [user.email for user in admin.list_users() if user.email == email] == []


def test_anon_key_is_not_admin(start_auth, admin_client):
    server = start_auth()
    with pytest.raises(AuthApiError) as refused:
        admin_client(server, key=ANON_KEY).admin.list_users()
    api_error(refused, AuthApiError, "not_admin", 403, "User not allowed")


def test_generate_link(start_auth, admin_client, make_client):
    # Reference §12.7: the client splits the flat response into properties and user.
    server = start_auth()
    admin = admin_client(server).admin
    email = unique_email("link")
    link = admin.generate_link(
        {"type": "signup", "email": email, "password": PASSWORD,
         "options": {"data": {"source": "admin"}, "redirect_to": "http://127.0.0.1:3000/welcome"}}
    )
    props = link.properties
    assert props.verification_type == "signup"
    assert props.redirect_to == "http://127.0.0.1:3000/welcome"
    assert len(props.email_otp) == 6 and props.email_otp.isdigit()
    assert props.hashed_token == hashlib.sha224((email + props.email_otp).encode()).hexdigest()
    parsed = urlparse(props.action_link)
    # Without API_EXTERNAL_URL, links point at the address the emulator listens on.
    assert f"{parsed.scheme}://{parsed.netloc}" == server.url
    # The CLI's URL path default: through the gateway prefix, as the emails' links.
    assert parsed.path == "/auth/v1/verify"
    assert parse_qs(parsed.query) == {
        "token": [props.hashed_token], "type": ["signup"], "redirect_to": ["http://127.0.0.1:3000/welcome"],
    }
    assert link.user.email == email
    assert link.user.user_metadata == {"source": "admin"}
    assert link.user.email_confirmed_at is None

    # The generated code confirms the sign-up through the ordinary client, as the email would.
    client = make_client(server)
    confirmed = client.verify_otp({"email": email, "token": props.email_otp, "type": "signup"})
    assert confirmed.session is not None
    assert confirmed.user.id == link.user.id
    assert confirmed.user.email_confirmed_at is not None

    recovery = admin.generate_link({"type": "recovery", "email": email})
    assert recovery.properties.verification_type == "recovery"
    assert recovery.user.id == link.user.id
    # A link's hashed token works as token_hash, once.
    by_hash = client.verify_otp({"token_hash": recovery.properties.hashed_token, "type": "recovery"})
    assert by_hash.session is not None and by_hash.user.id == link.user.id
    with pytest.raises(AuthApiError) as reused:
        client.verify_otp({"token_hash": recovery.properties.hashed_token, "type": "recovery"})
    api_error(reused, AuthApiError, "otp_expired", 403, "Email link is invalid or has expired")
    with pytest.raises(AuthApiError) as unknown:
        admin.generate_link({"type": "recovery", "email": unique_email()})
    api_error(unknown, AuthApiError, "user_not_found", 404, "User with this email not found")
