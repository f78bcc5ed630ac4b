"""supabase-py's auth test stack, rebuilt on the emulator: four GoTrue services with different
settings, all on ONE Postgres database, driven with supabase-py as that suite drives them.

That suite (supabase-py's `src/auth/tests/`, against `src/auth/infra/docker-compose.yml`) runs
four `supabase/auth` containers on one `supabase/postgres`:

| service | port | settings |
|---|---|---|
| sign-up on, confirmations on | 9999 | GOTRUE_MAILER_AUTOCONFIRM false, phone sign-ins (Twilio), Google |
| autoconfirm | 9998 | autoconfirm on, anonymous users, the OAuth server with dynamic registration, GOTRUE_JWT_KEYS signing HS256 |
| sign-up disabled | 9997 | GOTRUE_DISABLE_SIGNUP, email and phone providers off |
| asymmetric keys | 9996 | autoconfirm on, GOTRUE_JWT_KEYS signing RS256, published in the JWKS |

Its test files cannot run in this repository's CI (they are fetched from GitHub, which CI cannot
reach, and the PyPI sdist does not ship them) and may not be copied here. So this module states,
per service, what that suite checks of the server, in its own tests: the services' `GOTRUE_*`
environment (with a secret and keys of this file's own; random free ports instead of fixed ones,
each service's API_EXTERNAL_URL and SITE_URL its own address), and what only a shared database
gives, which that suite relies on: its admin client talks to 9998 about users signed up on 9999.

The processes start one after another: each adopts the schema the first one created. The compose
file of docs/postgres.md ("A compose file with several services on one database") runs here too,
read from the page.
"""
import base64
import json
import os
import pathlib
import re
import socket
import urllib.parse
import uuid

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from supabase_auth import SyncGoTrueAdminAPI, SyncGoTrueClient
from supabase_auth.errors import AuthApiError, AuthError, AuthWeakPasswordError

import postgres_cluster
from conftest import FAST_HASHING, Server, postgres_cluster as cluster_of_this_process
from helpers_client import PASSWORD, unique_email

pytestmark = pytest.mark.skipif(not postgres_cluster.available(),
                                reason="needs PostgreSQL's server binaries (apt install postgresql)")

# The stack's shared HS256 secret (this file's own value) and its two JSON Web Keys, a symmetric
# one and an RSA pair, which two services share with other roles: the autoconfirm service signs
# with the symmetric key and lists the RSA one for verification; the asymmetric service signs
# with the RSA key, keeps the symmetric one for verification, and has that key's text as its
# secret.
SECRET = "compose-stack-secret-4f1c9a2e7b3d5e6f"
OCT_KID = str(uuid.UUID(int=1))
RSA_KID = str(uuid.UUID(int=2))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


OCT_KEY = {"kty": "oct", "k": b64url(os.urandom(32)), "kid": OCT_KID, "alg": "HS256"}
RSA_KEY = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(rsa.generate_private_key(public_exponent=65537, key_size=2048))),
           "kid": RSA_KID, "alg": "RS256"}


def keys(sign):
    """GOTRUE_JWT_KEYS with `sign` (OCT_KEY or RSA_KEY) the one signing key."""
    return json.dumps([{**key, "key_ops": ["sign", "verify"] if key is sign else ["verify"]} for key in (OCT_KEY, RSA_KEY)])


# What every service of the stack sets (GoTrue's names; the database and SMTP ones are read by
# GoTrue and listed as unused by the emulator, whose `--db` says where the database is).
# DATABASE_URL, the database itself, is added per stack.
COMMON = {
    "AUTH_EMULATOR_DEFAULTS": "gotrue",
    "GOTRUE_JWT_EXP": "3600",
    "GOTRUE_DB_DRIVER": "postgres",
    "DB_NAMESPACE": "auth",
    "GOTRUE_LOG_LEVEL": "DEBUG",
    "GOTRUE_OPERATOR_TOKEN": "operator-token-of-this-file",
    "GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED": "true",
    "GOTRUE_SMTP_HOST": "mail",
    "GOTRUE_SMTP_PORT": "2500",
    "GOTRUE_SMTP_USER": "user",
    "GOTRUE_SMTP_PASS": "pass",
    "GOTRUE_SMTP_ADMIN_EMAIL": "admin@email.com",
    "GOTRUE_COOKIE_KEY": "sb",
}

SERVICES = {
    "confirm": {  # 9999: sign-up on, autoconfirm off
        "GOTRUE_JWT_SECRET": SECRET,
        "GOTRUE_DISABLE_SIGNUP": "false",
        "GOTRUE_MAILER_AUTOCONFIRM": "false",
        "GOTRUE_MAILER_URLPATHS_CONFIRMATION": "/verify",
        "GOTRUE_MAILER_SUBJECTS_CONFIRMATION": "Please confirm",
        "GOTRUE_URI_ALLOW_LIST": "https://supabase.io/docs",
        "GOTRUE_EXTERNAL_GOOGLE_ENABLED": "true",
        "GOTRUE_EXTERNAL_GOOGLE_CLIENT_ID": "google-client-id",
        "GOTRUE_EXTERNAL_GOOGLE_SECRET": "google-secret",
        "GOTRUE_EXTERNAL_GOOGLE_REDIRECT_URI": "{url}/callback",
        "GOTRUE_EXTERNAL_PHONE_ENABLED": "true",
        "GOTRUE_SMS_PROVIDER": "twilio",
        "GOTRUE_SMS_TWILIO_ACCOUNT_SID": "",
        "GOTRUE_SMS_TWILIO_AUTH_TOKEN": "",
        "GOTRUE_SMS_TWILIO_MESSAGE_SERVICE_SID": "",
        "GOTRUE_SMS_AUTOCONFIRM": "false",
    },
    "autoconfirm": {  # 9998
        "GOTRUE_JWT_SECRET": SECRET,
        "GOTRUE_JWT_KEYS": keys(OCT_KEY),
        "GOTRUE_DISABLE_SIGNUP": "false",
        "GOTRUE_MAILER_AUTOCONFIRM": "true",
        "GOTRUE_SMS_AUTOCONFIRM": "true",
        "GOTRUE_EXTERNAL_PHONE_ENABLED": "true",
        "GOTRUE_OAUTH_SERVER_ENABLED": "true",
        "GOTRUE_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION": "true",
    },
    "disabled": {  # 9997
        "GOTRUE_JWT_SECRET": SECRET,
        "GOTRUE_DISABLE_SIGNUP": "true",
        "GOTRUE_MAILER_AUTOCONFIRM": "false",
        "GOTRUE_EXTERNAL_PHONE_ENABLED": "false",
        "GOTRUE_EXTERNAL_EMAIL_ENABLED": "false",
    },
    "asymmetric": {  # 9996
        "GOTRUE_JWT_SECRET": OCT_KEY["k"],
        "GOTRUE_JWT_KEYS": keys(RSA_KEY),
        "GOTRUE_DISABLE_SIGNUP": "false",
        "GOTRUE_MAILER_AUTOCONFIRM": "true",
        "GOTRUE_SMS_AUTOCONFIRM": "true",
        "GOTRUE_EXTERNAL_PHONE_ENABLED": "true",
    },
}


def admin_jwt(role, secret=SECRET):
    """An admin bearer as that suite mints it: HS256 with the secret, no `exp`."""
    return jwt.encode({"role": role}, secret, algorithm="HS256")


class Clients:
    """supabase-py clients at a service's root (no gateway in front, as in the stack), closed
    together at the end."""

    def __init__(self):
        self.opened = []

    def client(self, url):
        return self._keep(SyncGoTrueClient(url=url, auto_refresh_token=False, persist_session=True))

    def admin(self, url, secret, role="service_role"):
        return self._keep(SyncGoTrueAdminAPI(url=url, headers={"Authorization": f"Bearer {admin_jwt(role, secret)}"}))

    def _keep(self, client):
        self.opened.append(client)
        return client

    def close(self):
        for client in self.opened:
            client.close()


def free_port():
    """A loopback port nothing listens on now: the service's URLs must name its address before
    it starts, as a compose file's fixed ports do."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Stack(Clients):
    def __init__(self, cluster, database):
        super().__init__()
        self.cluster = cluster
        self.database = database
        self.servers = {}

    def start(self, name):
        # GoTrue's variable for the database, as the stack gives it; the emulator's is --db.
        env = {**FAST_HASHING, **COMMON, **SERVICES[name], "DATABASE_URL": self.cluster.url(self.database)}
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {key: value.replace("{url}", url) for key, value in env.items()}
        env.update({"API_EXTERNAL_URL": url, "GOTRUE_SITE_URL": url, "PORT": str(port)})
        server = Server(["--db", self.cluster.url(self.database), "--db-bootstrap", "--port", str(port)], env=env)
        self.servers[name] = server
        return server

    def url(self, name):
        return self.servers[name].url

    def client(self, name):
        return super().client(self.url(name))

    def admin(self, name, role="service_role"):
        return super().admin(self.url(name), SERVICES[name]["GOTRUE_JWT_SECRET"], role)

    def sql(self, statement):
        return self.cluster.psql(statement, database=self.database)

    def stop(self):
        self.close()
        for server in self.servers.values():
            server.stop()


@pytest.fixture(scope="module")
def stack():
    cluster = cluster_of_this_process()
    made = Stack(cluster, cluster.make_database())
    try:
        for name in SERVICES:
            made.start(name)
        yield made
    finally:
        made.stop()


def api_error(call):
    """The `AuthApiError` the client raised for `call`."""
    with pytest.raises(AuthApiError) as raised:
        call()
    return raised.value


def header(token):
    return jwt.get_unverified_header(token)


def verified(token, key, algorithm):
    """The claims of `token` once its signature checks out with `key` (the stack sets no
    audience: GoTrue's `aud` is then empty)."""
    return jwt.decode(token, key, algorithms=[algorithm], options={"verify_aud": False})


def signed_up(stack, name):
    """A fresh user signed up (and signed in) on an autoconfirm service: (client, session)."""
    client = stack.client(name)
    response = client.sign_up({"email": unique_email(name), "password": PASSWORD})
    assert response.session is not None
    return client, response.session


def test_sign_up_with_confirmations_on_waits_for_the_admin_of_another_service(stack):
    client = stack.client("confirm")
    email = unique_email("confirm")
    response = client.sign_up({"email": email, "password": PASSWORD})
    # No session until the address is confirmed.
    assert response.session is None and response.user.email_confirmed_at is None
    assert api_error(lambda: client.sign_in_with_password({"email": email, "password": PASSWORD})).code == "email_not_confirmed"
    # That suite's admin client talks to the autoconfirm service: the shared database is what
    # lets it confirm a user the other service signed up.
    confirmed = stack.admin("autoconfirm").update_user_by_id(response.user.id, {"email_confirm": True})
    assert confirmed.user.email_confirmed_at
    session = client.sign_in_with_password({"email": email, "password": PASSWORD}).session
    assert session.user.id == response.user.id
    # Signed with the shared secret, no kid: this service has no keys. No GOTRUE_JWT_AUD in the
    # stack: GoTrue's empty audience.
    assert header(session.access_token) == {"alg": "HS256", "typ": "JWT"}
    assert verified(session.access_token, SECRET, "HS256")["aud"] == ""


def test_the_confirm_service_refuses_what_that_suite_expects_it_to_refuse(stack):
    client = stack.client("confirm")
    with pytest.raises(AuthWeakPasswordError) as weak:
        client.sign_up({"email": unique_email("weak"), "password": "123"})
    assert (weak.value.status, weak.value.code) == (422, "weak_password")
    unknown = api_error(lambda: client.sign_in_with_password({"email": unique_email("unknown"), "password": PASSWORD}))
    assert (unknown.status, unknown.code) == (400, "invalid_credentials")
    assert "SAML 2.0 is disabled" in api_error(lambda: client.sign_in_with_sso({"domain": "example.com"})).message
    # A resend to a number nobody has is answered as sent (no enumeration).
    client.resend({"phone": "+15550001111", "type": "sms"})
    # Google is enabled: the service redirects to it (the emulator's stand-in for Google) with
    # the stack's client id and its own callback.
    url = stack.url("confirm")
    answer = httpx.get(f"{url}/authorize", params={"provider": "google"}, follow_redirects=False, timeout=30)
    assert answer.status_code == 302, answer.text
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(answer.headers["location"]).query)
    assert (query["client_id"], query["redirect_uri"]) == (["google-client-id"], [f"{url}/callback"])


def test_the_autoconfirm_service_signs_in_refreshes_and_signs_with_its_key(stack):
    client, session = signed_up(stack, "autoconfirm")
    # Signed with the symmetric key of GOTRUE_JWT_KEYS, named by its kid.
    assert header(session.access_token) == {"alg": "HS256", "kid": OCT_KID, "typ": "JWT"}
    symmetric = jwt.PyJWK({**OCT_KEY, "key_ops": ["verify"]}).key
    assert verified(session.access_token, symmetric, "HS256")["sub"] == session.user.id
    # A symmetric token is checked by asking the server (getClaims calls GET /user).
    assert client.get_claims()["claims"]["email"] == session.user.email
    refreshed = client.refresh_session().session
    assert refreshed.refresh_token != session.refresh_token and refreshed.user.id == session.user.id
    # The session restored from its tokens, then the password changed and used.
    other = stack.client("autoconfirm")
    assert other.set_session(refreshed.access_token, refreshed.refresh_token).user.id == session.user.id
    other.update_user({"password": "another-horse-2"})
    assert other.sign_in_with_password({"email": session.user.email, "password": "another-horse-2"}).user.id == session.user.id
    assert other.get_user_identities().identities[0].identity_data["email"] == session.user.email
    # Anonymous users are on.
    anonymous = stack.client("autoconfirm").sign_in_anonymously().session
    assert anonymous.user.is_anonymous
    # The JWKS lists the public half of the RSA key only (never the symmetric one).
    jwks = httpx.get(f"{stack.url('autoconfirm')}/.well-known/jwks.json", timeout=30).json()
    assert [key["kid"] for key in jwks["keys"]] == [RSA_KID]


def test_the_admin_api_as_that_suite_uses_it(stack):
    admin = stack.admin("autoconfirm")
    email = unique_email("admin")
    created = admin.create_user({"email": email, "password": PASSWORD, "user_metadata": {"profile_image": "https://example.com/a.png"},
                                 "app_metadata": {"roles": ["editor", "publisher"]}}).user
    assert created.user_metadata == {"profile_image": "https://example.com/a.png"}
    assert {"provider", "providers", "roles"} <= set(created.app_metadata)
    assert email in [user.email for user in admin.list_users()]
    assert admin.get_user_by_id(created.id).user.email == email
    assert admin.update_user_by_id(created.id, {"email": f"new_{email}"}).user.email == f"new_{email}"
    # Merged into what the user had, as GoTrue merges it.
    assert admin.update_user_by_id(created.id, {"user_metadata": {"favorite_color": "yellow"}}).user.user_metadata == {
        "profile_image": "https://example.com/a.png", "favorite_color": "yellow"}
    invited = admin.invite_user_by_email(unique_email("invited"), {"data": {"status": "alpha"}}).user
    assert invited.invited_at
    link = admin.generate_link({"type": "signup", "email": unique_email("link"), "password": PASSWORD,
                                "options": {"data": {"status": "alpha"}}})
    assert link.user.user_metadata == {"status": "alpha"}
    _, session = signed_up(stack, "autoconfirm")
    admin.sign_out(session.access_token)
    with pytest.raises(AuthError):
        admin.sign_out("this-is-a-bad-token")
    admin.delete_user(created.id)
    assert f"new_{email}" not in [user.email for user in admin.list_users()]
    # The suite's other admin bearer: role supabase_admin, one of GoTrue's default admin roles.
    assert stack.admin("confirm", role="supabase_admin").get_user_by_id(invited.id).user.invited_at


def test_the_oauth_server_clients_of_the_autoconfirm_service(stack):
    oauth = stack.admin("autoconfirm").oauth
    made = oauth.create_client({"client_name": "Compose Client", "redirect_uris": ["https://example.com/callback"]}).client
    assert made.client_id and made.client_name == "Compose Client"
    assert any(client.client_id == made.client_id for client in oauth.list_clients().clients)
    assert oauth.get_client(made.client_id).client.client_id == made.client_id
    assert oauth.update_client(made.client_id, {"client_name": "Renamed"}).client.client_name == "Renamed"
    assert oauth.regenerate_client_secret(made.client_id).client.client_secret
    oauth.delete_client(made.client_id)
    # Only the service with the OAuth server on has the routes.
    off = api_error(lambda: stack.admin("confirm").oauth.list_clients())
    assert off.status == 404


def test_mfa_on_the_autoconfirm_service(stack):
    import pyotp

    client, session = signed_up(stack, "autoconfirm")
    factor = client.mfa.enroll({"factor_type": "totp", "friendly_name": "test_otp", "issuer": "compose"})
    assert factor.totp.qr_code
    verified = client.mfa.challenge_and_verify({"factor_id": factor.id, "code": pyotp.TOTP(factor.totp.secret).now()})
    assert verified.user.id == session.user.id
    # Listed and deleted through another service's admin API.
    admin = stack.admin("confirm")
    [listed] = admin.mfa.list_factors({"user_id": session.user.id})
    assert (listed.friendly_name, listed.factor_type, listed.status) == ("test_otp", "totp", "verified")
    admin.mfa.delete_factor({"id": listed.id, "user_id": session.user.id})
    assert stack.admin("autoconfirm").mfa.list_factors({"user_id": session.user.id}) == []


def test_the_disabled_service_refuses_sign_ups_but_sees_every_user(stack):
    client = stack.client("disabled")
    refused = api_error(lambda: client.sign_up({"email": unique_email("disabled"), "password": PASSWORD}))
    assert (refused.status, refused.code) == (422, "signup_disabled")
    anonymous = api_error(lambda: client.sign_in_anonymously())
    assert (anonymous.status, anonymous.code) == (422, "signup_disabled")
    expired = api_error(lambda: client.verify_otp({"phone": "15550002222", "token": "123456", "type": "sms"}))
    assert expired.message == "Token has expired or is invalid"
    invalid = api_error(lambda: client.verify_otp({"phone": "15550002222-invalid", "token": "123456", "type": "sms"}))
    assert invalid.message == "Invalid phone number format (E.164 required)"
    # A user another service created is this one's too; its email provider is off.
    _, session = signed_up(stack, "autoconfirm")
    assert stack.admin("disabled").get_user_by_id(session.user.id).user.email == session.user.email
    off = api_error(lambda: client.sign_in_with_password({"email": session.user.email, "password": PASSWORD}))
    assert (off.status, off.code) == (422, "email_provider_disabled")


def test_the_asymmetric_service_signs_rs256_verified_through_its_jwks(stack):
    client, session = signed_up(stack, "asymmetric")
    assert header(session.access_token) == {"alg": "RS256", "kid": RSA_KID, "typ": "JWT"}
    jwks = httpx.get(f"{stack.url('asymmetric')}/.well-known/jwks.json", timeout=30).json()
    assert [key["kid"] for key in jwks["keys"]] == [RSA_KID] and "d" not in jwks["keys"][0]
    # supabase-py verifies an asymmetric token itself, with the key the JWKS gives.
    claims = client.get_claims()
    assert claims["claims"]["email"] == session.user.email and claims["headers"]["kid"] == RSA_KID
    key = jwt.PyJWKClient(f"{stack.url('asymmetric')}/.well-known/jwks.json").get_signing_key_from_jwt(session.access_token)
    assert verified(session.access_token, key.key, "RS256")["sub"] == session.user.id


def test_a_session_moves_between_services_sharing_the_database(stack):
    # Signed up on the asymmetric service, refreshed on the confirm service: the refresh token
    # is a database row, whichever service issued it; the new access token is the confirm
    # service's (its secret), accepted by every service with that secret.
    _, session = signed_up(stack, "asymmetric")
    moved = stack.client("confirm")
    refreshed = moved.refresh_session(session.refresh_token).session
    assert refreshed.user.id == session.user.id
    assert header(refreshed.access_token) == {"alg": "HS256", "typ": "JWT"}
    assert stack.client("disabled").get_user(refreshed.access_token).user.id == session.user.id
    # The token it replaced is revoked, its child the session's active token.
    rows = stack.sql(f"SELECT token, revoked, coalesce(parent, '') FROM auth.refresh_tokens WHERE user_id = '{session.user.id}' ORDER BY id")
    assert rows == [(session.refresh_token, "t", ""), (refreshed.refresh_token, "f", session.refresh_token)]
    # Keys go where GoTrue's key lookup sends them: a token whose kid a service has is checked
    # with that key (the autoconfirm service's HS256 token on the asymmetric service, the
    # asymmetric service's RS256 token on the autoconfirm service); a kid it lacks falls back to
    # its secret, which did not sign it.
    _, symmetric = signed_up(stack, "autoconfirm")
    assert stack.client("asymmetric").get_user(symmetric.access_token).user.id == symmetric.user.id
    assert stack.client("autoconfirm").get_user(session.access_token).user.id == session.user.id
    refused = api_error(lambda: stack.client("confirm").get_user(symmetric.access_token))
    assert (refused.status, refused.code) == (403, "bad_jwt")


def test_one_database_holds_every_services_users(stack):
    emails = {}
    for name in ("confirm", "autoconfirm", "asymmetric"):
        email = unique_email(f"shared-{name}")
        emails[name] = stack.client(name).sign_up({"email": email, "password": PASSWORD}).user.id
    for name in SERVICES:
        listed = {user.id for user in stack.admin(name).list_users(per_page=1000)}
        assert set(emails.values()) <= listed, name
    ids = ", ".join(f"'{user}'" for user in emails.values())
    assert stack.sql(f"SELECT count(*) FROM auth.users WHERE id IN ({ids})") == [("3",)]


def test_each_service_has_its_own_settings_on_the_shared_database(stack):
    settings = {name: httpx.get(f"{stack.url(name)}/settings", timeout=30).json() for name in SERVICES}
    assert [settings[name]["disable_signup"] for name in SERVICES] == [False, False, True, False]
    assert [settings[name]["mailer_autoconfirm"] for name in SERVICES] == [False, True, False, True]
    assert [settings[name]["external"]["email"] for name in SERVICES] == [True, True, False, True]
    assert [settings[name]["external"]["phone"] for name in SERVICES] == [True, True, False, True]
    assert settings["confirm"]["external"]["google"] and not settings["autoconfirm"]["external"]["google"]
    # Each names the one database; none warns that DATABASE_URL goes unread (--db names it).
    for server in stack.servers.values():
        assert stack.database in server.info["database"] and "names GoTrue's database" not in server.stderr_text()


def test_a_confirmation_sent_by_one_service_is_verified_by_another(stack):
    email = unique_email("mail")
    user = stack.client("confirm").sign_up({"email": email, "password": PASSWORD}).user
    bearer = admin_jwt("service_role")
    mail = httpx.get(f"{stack.url('confirm')}/emulator/v1/outbox/latest", params={"to": email, "type": "signup"},
                     headers={"apikey": bearer, "Authorization": f"Bearer {bearer}"}, timeout=30).json()
    # The link names the service that sent it (its API_EXTERNAL_URL and the stack's path).
    assert mail["subject"] == "Please confirm" and mail["action_link"].startswith(f"{stack.url('confirm')}/verify?")
    # The code is a row of the shared database: the autoconfirm service takes it.
    session = stack.client("autoconfirm").verify_otp({"email": email, "token": mail["otp"], "type": "signup"}).session
    assert session.user.id == user.id and session.user.email_confirmed_at
    assert stack.client("confirm").sign_in_with_password({"email": email, "password": PASSWORD}).user.id == user.id


def test_a_service_left_on_its_own_store_says_so(start_server, tmp_path):
    # The stack's environment with GoTrue's DATABASE_URL but no --db naming it: the users would
    # stay in this process's own file, unseen by the other services. The emulator says so.
    env = {**FAST_HASHING, **COMMON, **SERVICES["autoconfirm"], "DATABASE_URL": "postgres://postgres:secret@db:5432/postgres"}
    server = start_server("--db", str(tmp_path / "auth.db"), env=env)
    warning = [line for line in server.stderr_text().splitlines() if "GoTrue's database" in line]
    assert warning == [f"warning: DATABASE_URL names GoTrue's database, which the emulator does not read: its users stay in "
                       f"{tmp_path / 'auth.db'}, this process's own; give that URL to --db to keep them in the Postgres every "
                       f"service shares (docs/postgres.md)"]
    assert "secret" not in server.stderr_text()


PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "postgres.md"
DOCUMENTED_DATABASE = "postgres://postgres:postgres@db:5432/postgres"


def documented_compose():
    """docs/postgres.md's compose file: the shared entrypoint's arguments after `serve`, and per
    service (the database aside) its command and environment, in file order."""
    section = PAGE.read_text().split("## A compose file with several services on one database\n", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    entrypoint = json.loads(re.search(r"^  entrypoint: (\[.*?\])", block, re.M | re.S).group(1))
    assert entrypoint[1] == "serve", entrypoint
    services = {}
    for name, body in re.findall(r"^  ([\w-]+):\n((?:    .*\n)*)", block.split("\nservices:\n", 1)[1], re.M):
        command = re.search(r"^    command: (\[.*\])$", body, re.M)
        if command:
            environment = dict(re.findall(r"^      ([A-Z_]+): (.*)$", body, re.M))
            services[name] = (json.loads(command.group(1)), {key: value.strip('"') for key, value in environment.items()})
    return entrypoint[2:], services


def test_the_documented_compose_file_runs_on_one_database(start_server, request):
    arguments, services = documented_compose()
    assert list(services) == ["auth", "autoconfirm", "signup-off"]
    cluster = cluster_of_this_process()
    database = cluster.make_database()
    # As written, except where each listens: loopback and a free port, its URLs its own.
    arguments = [cluster.url(database) if word == DOCUMENTED_DATABASE else word for word in arguments]
    assert arguments[:2] == ["--host", "0.0.0.0"]
    urls, secret = {}, None
    for name, (command, environment) in services.items():
        assert command[0] == "--port"
        port = free_port()
        urls[name] = f"http://127.0.0.1:{port}"
        documented = f"http://localhost:{command[1]}"
        env = {key: value.replace(documented, urls[name]) for key, value in environment.items()}
        assert env["API_EXTERNAL_URL"] == env["GOTRUE_SITE_URL"] == urls[name]
        secret = env["GOTRUE_JWT_SECRET"]
        server = start_server(*arguments[2:], "--port", str(port), env={**FAST_HASHING, **env})
        assert server.url == urls[name] and database in server.info["database"]

    clients = Clients()
    request.addfinalizer(clients.close)

    def client(name):
        return clients.client(urls[name])

    def admin(name):
        return clients.admin(urls[name], secret)

    # Signed up on 9999 (confirmations on), confirmed through 9998's admin API.
    email = unique_email("compose")
    user = client("auth").sign_up({"email": email, "password": PASSWORD}).user
    assert admin("autoconfirm").update_user_by_id(user.id, {"email_confirm": True}).user.email_confirmed_at
    session = client("auth").sign_in_with_password({"email": email, "password": PASSWORD}).session
    # A code 9999 mailed verifies on 9998.
    mailed = unique_email("mailed")
    client("auth").sign_up({"email": mailed, "password": PASSWORD})
    bearer = admin_jwt("service_role", secret)
    mail = httpx.get(f"{urls['auth']}/emulator/v1/outbox/latest", params={"to": mailed, "type": "signup"},
                     headers={"apikey": bearer, "Authorization": f"Bearer {bearer}"}, timeout=30).json()
    assert client("autoconfirm").verify_otp({"email": mailed, "token": mail["otp"], "type": "signup"}).user.email_confirmed_at
    # The session refreshes on the service with sign-ups off; every service takes the tokens.
    refreshed = client("signup-off").refresh_session(session.refresh_token).session
    assert refreshed.user.id == user.id
    for name in services:
        assert client(name).get_user(refreshed.access_token).user.id == user.id
    assert client("autoconfirm").sign_in_anonymously().user.is_anonymous
    refused = api_error(lambda: client("signup-off").sign_up({"email": unique_email("off"), "password": PASSWORD}))
    assert refused.code == "signup_disabled"
    # A reset through one service empties the database for all.
    reset = httpx.post(f"{urls['signup-off']}/emulator/v1/reset", headers={"apikey": bearer, "Authorization": f"Bearer {bearer}"},
                       timeout=30)
    assert reset.status_code == 200, reset.text
    gone = api_error(lambda: admin("auth").get_user_by_id(user.id))
    assert gone.status == 404
    assert cluster.psql("SELECT count(*) FROM auth.users", database=database) == [("0",)]
