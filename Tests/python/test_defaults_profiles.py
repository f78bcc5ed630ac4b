"""The two defaults profiles and the settings table's names, through the real binary and the
supabase-auth client: `--defaults gotrue` behaves as a bare GoTrue container (TOTP MFA on, no
`iss`, no SMS provider is a 500), the compose example of docs/running.md runs with its own
environment, and the control API takes config.toml names and says where each value came from."""
import pathlib
import re
import urllib.parse

import httpx
import jwt
import pytest
from supabase_auth.errors import AuthApiError

from conftest import SERVICE_ROLE_KEY
from helpers_client import CLI_KEY_ID, CLI_PUBLIC_JWK, JWT_SECRET, PASSWORD, api_error, claims, unique_email

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
ADMIN = {"Authorization": f"Bearer {SERVICE_ROLE_KEY}", "apikey": SERVICE_ROLE_KEY}


def compose_example():
    """The `auth` service of docs/running.md's compose example: its serve arguments and environment."""
    text = (DOCS / "running.md").read_text()
    block = re.search(r"```yaml\n(services:.*?)```", text, re.S).group(1)
    command = re.search(r'command: \[(.*)\]', block).group(1)
    arguments = [part.strip().strip('"') for part in command.split(",")]
    environment = dict(re.findall(r"^      ([A-Z_]+): (.*)$", block, re.M))
    return arguments, {key: value.strip('"') for key, value in environment.items()}


def test_the_compose_example_runs_with_gotrues_defaults(start_server, make_client):
    arguments, environment = compose_example()
    assert arguments[:2] == ["/opt/auth-emulator/auth-emulator", "serve"]
    assert environment["AUTH_EMULATOR_DEFAULTS"] == "gotrue"
    # As written, except where it listens: this suite stays on loopback and an ephemeral port.
    options = arguments[2:]
    options = [option for index, option in enumerate(options)
               if option not in ("--host", "--port") and (index == 0 or options[index - 1] not in ("--host", "--port"))]
    server = start_server(*options, env=environment)
    assert server.info["defaults"] == "gotrue (as a bare GoTrue container)"

    client = make_client(server)
    session = client.sign_up({"email": unique_email("compose"), "password": PASSWORD}).session
    # Signed with the file's own secret.
    payload = jwt.decode(session.access_token, environment["GOTRUE_JWT_SECRET"], algorithms=["HS256"], audience="authenticated")
    # No GOTRUE_JWT_ISSUER: no iss, as GoTrue; aud and role as the file sets them.
    assert "iss" not in payload
    assert payload["aud"] == "authenticated" and payload["role"] == "authenticated"
    # TOTP MFA is on by GoTrue's default (off under supabase start).
    factor = client.mfa.enroll({"factor_type": "totp", "friendly_name": "phone"})
    assert factor.type == "totp" and factor.totp.secret


def test_each_profile_signs_as_its_server_does(start_auth, start_server, make_client):
    """`supabase start` hands GoTrue the CLI's built-in ES256 key: user tokens are ES256 with its
    kid and verify through the JWKS (as supabase-js and supabase-py verify them), while the anon
    and service_role keys stay the HS256 demo keys. A bare GoTrue container signs with its
    secret and publishes no key."""
    server = start_auth()
    client = make_client(server)
    session = client.sign_up({"email": unique_email("es256"), "password": PASSWORD}).session
    assert jwt.get_unverified_header(session.access_token) == {"alg": "ES256", "kid": CLI_KEY_ID, "typ": "JWT"}
    jwks = httpx.get(f"{server.url}/auth/v1/.well-known/jwks.json", timeout=10).json()
    assert jwks == {"keys": [{**CLI_PUBLIC_JWK, "ext": True, "key_ops": ["verify"], "use": "sig"}]}
    key = jwt.PyJWKClient(f"{server.url}/auth/v1/.well-known/jwks.json").get_signing_key_from_jwt(session.access_token)
    assert jwt.decode(session.access_token, key.key, algorithms=["ES256"], audience="authenticated")["sub"] == session.user.id
    assert jwt.get_unverified_header(server.info["anon key"])["alg"] == "HS256"
    jwt.decode(server.info["service_role key"], JWT_SECRET, algorithms=["HS256"])
    # The claims-based check of supabase-js's getClaims goes through the same JWKS.
    assert client.get_claims()["claims"]["sub"] == session.user.id
    config = httpx.get(f"{server.url}/emulator/v1/config", headers=ADMIN, timeout=10).json()
    assert config["jwt_keys"] == [{"kid": CLI_KEY_ID, "alg": "ES256", "sign": True}]
    assert config["sources"]["jwt_valid_methods"] == "default"

    bare = start_server("--db", ":memory:", "--defaults", "gotrue", env={"AUTH_EMULATOR_PASSWORD_ITERATIONS": "1000"})
    assert httpx.get(f"{bare.url}/.well-known/jwks.json", timeout=10).json() == {"keys": []}
    # Confirmations are on under gotrue: the user is made confirmed through the admin API.
    email = unique_email("hs256")
    assert httpx.post(f"{bare.url}/admin/users", headers=ADMIN, timeout=10,
                      json={"email": email, "password": PASSWORD, "email_confirm": True}).status_code == 200
    signed_in = httpx.post(f"{bare.url}/token?grant_type=password", json={"email": email, "password": PASSWORD}, timeout=10)
    assert jwt.get_unverified_header(signed_in.json()["access_token"]) == {"alg": "HS256", "typ": "JWT"}
    # (GoTrue's default audience is empty: no aud claim.)
    assert jwt.decode(signed_in.json()["access_token"], JWT_SECRET, algorithms=["HS256"])["email"] == email


def test_the_cli_profile_keeps_totp_off_and_sets_the_issuer(start_auth, make_client):
    server = start_auth()
    assert server.info["defaults"] == "cli (as supabase start)"
    client = make_client(server)
    session = client.sign_up({"email": unique_email("cli"), "password": PASSWORD}).session
    assert claims(session.access_token)["iss"] == server.url + "/auth/v1"
    with pytest.raises(AuthApiError) as excinfo:
        client.mfa.enroll({"factor_type": "totp"})
    api_error(excinfo, AuthApiError, "mfa_totp_enroll_not_enabled", 422)


def test_no_sms_provider_is_gotrues_500_under_the_gotrue_profile(start_auth, make_client):
    phone = {"GOTRUE_EXTERNAL_PHONE_ENABLED": "true", "GOTRUE_SITE_URL": "http://localhost:3000"}
    client = make_client(start_auth(AUTH_EMULATOR_DEFAULTS="gotrue", **phone))
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_otp({"phone": "+15550001234"})
    api_error(excinfo, AuthApiError, "unexpected_failure", 500, "Unable to get SMS provider")

    # The cli profile captures the message instead; --sms provider gives the real answer there too.
    make_client(start_auth(**phone)).sign_in_with_otp({"phone": "+15550001234"})
    strict = make_client(start_auth(AUTH_EMULATOR_SMS="provider", **phone))
    with pytest.raises(AuthApiError) as excinfo:
        strict.sign_in_with_otp({"phone": "+15550001234"})
    api_error(excinfo, AuthApiError, "unexpected_failure", 500)


def test_an_external_url_ending_in_auth_v1_is_the_clis_meaning(start_auth):
    server = start_auth(API_EXTERNAL_URL="http://localhost:54321/auth/v1",
                        GOTRUE_EXTERNAL_GITHUB_ENABLED="true", GOTRUE_EXTERNAL_GITHUB_CLIENT_ID="id",
                        GOTRUE_EXTERNAL_GITHUB_SECRET="secret")
    answer = httpx.get(f"{server.url}/auth/v1/authorize", params={"provider": "github"}, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(answer.headers["location"]).query)
    # As `supabase start` builds it: <auth URL>/callback, not .../auth/v1/auth/v1/callback.
    assert query["redirect_uri"] == ["http://localhost:54321/auth/v1/callback"]
    config = httpx.get(f"{server.url}/emulator/v1/config", headers=ADMIN).json()
    assert config["jwt_issuer"] == "http://localhost:54321/auth/v1"


def test_the_control_api_takes_config_toml_names_and_shows_sources(start_auth):
    server = start_auth(GOTRUE_JWT_EXP="600")
    url = f"{server.url}/emulator/v1/config"
    changed = httpx.patch(url, headers=ADMIN, json={"email": {"enable_confirmations": True},
                                                    "mfa.totp.enroll_enabled": True, "mfa.totp.verify_enabled": True})
    assert changed.status_code == 200, changed.text
    config = changed.json()
    assert config["mailer_autoconfirm"] is False and config["mfa"]["totp"]["enroll_enabled"] is True
    assert config["sources"]["mailer_autoconfirm"] == "runtime"
    assert config["sources"]["jwt_expiry"] == "env" and config["jwt_expiry"] == 600
    assert config["sources"]["disable_signup"] == "default"
    # A value the environment would refuse is refused here too, naming the setting, and nothing changes.
    refused = httpx.patch(url, headers=ADMIN, json={"disable_signup": True, "email.otp_expiry": -1})
    assert refused.status_code == 400 and refused.json()["msg"].startswith("email.otp_expiry: ")
    assert httpx.get(url, headers=ADMIN).json()["disable_signup"] is False
