"""Token lifetimes, admin password input and malformed request bodies, seen through the real
client and over the wire: expires_in is the configured lifetime (exp - iat) on every path; the
admin API answers bad passwords and hashes as the real server does (internal/api/admin.go,
crypto/password.go); bad JSON gets Go's encoding/json texts and limits."""
import httpx
import pytest
from supabase_auth.errors import AuthApiError

from conftest import ANON_KEY, BIN
from helpers_client import PASSWORD, api_error, claims, unique_email
from test_client_admin import admin_client  # noqa: F401 (fixture)


def expect_lifetime(session, lifetime):
    minted = claims(session.access_token)
    assert minted["exp"] - minted["iat"] == lifetime
    assert session.expires_in == lifetime
    assert session.expires_at == minted["exp"]


def test_expires_in_is_the_configured_lifetime(start_auth, make_client):
    server = start_auth(GOTRUE_JWT_EXP="120")
    client = make_client(server)
    email = unique_email("lifetime")
    expect_lifetime(client.sign_up({"email": email, "password": PASSWORD}).session, 120)
    for _ in range(25):
        expect_lifetime(client.sign_in_with_password({"email": email, "password": PASSWORD}).session, 120)
        expect_lifetime(client.refresh_session().session, 120)


def test_admin_password_and_hash_errors(start_auth, admin_client):  # noqa: F811
    server = start_auth()
    admin = admin_client(server).admin
    # Over bcrypt's 72 bytes the real server's hashing panics (must(...)); its recoverer
    # answers 500 "Internal Server Error".
    with pytest.raises(AuthApiError) as long_create:
        admin.create_user({"email": unique_email(), "password": "p" * 73})
    assert long_create.value.status == 500
    assert long_create.value.message == "Internal Server Error"

    user = admin.create_user({"email": unique_email(), "password": PASSWORD}).user
    with pytest.raises(AuthApiError) as long_update:
        admin.update_user_by_id(user.id, {"password": "é" * 37})
    api_error(long_update, AuthApiError, "validation_failed", 400, "Password cannot be longer than 72 characters")

    # What golang.org/x/crypto/bcrypt's Cost refuses is the real server's "Error creating user".
    for refused in ["plain", "$2a$99$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki"]:
        with pytest.raises(AuthApiError) as bad_hash:
            admin.create_user({"email": unique_email(), "password_hash": refused})
        api_error(bad_hash, AuthApiError, "unexpected_failure", 500, "Error creating user")

    # The emulator's own PBKDF2 strings only within what its verifier checks.
    absurd = "$pbkdf2-sha256$i=99999999,l=32$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"
    with pytest.raises(AuthApiError) as pbkdf2:
        admin.create_user({"email": unique_email(), "password_hash": absurd})
    error = api_error(pbkdf2, AuthApiError, "validation_failed", 400)
    assert error.message.startswith("Invalid $pbkdf2-sha256$ password hash")


def post_raw(server, body):
    return httpx.post(f"{server.url}/auth/v1/signup", content=body,
                      headers={"apikey": ANON_KEY, "Content-Type": "application/json"})


@pytest.mark.parametrize("body, message", [
    (b'{"email":"a@example.com","password":"password1",}', "invalid character '}' looking for beginning of object key string"),
    (b'{"email":"a@example.com","password":"pass\\qword1"}', "invalid character 'q' in string escape code"),
    (b'{"email":"a@example.com\x00"}', "invalid character '\\x00' in string literal"),
    (b'{"email":"a@example.com","password":tru}', "invalid character '}' in literal true (expecting 'e')"),
    (b'{"email":"a@example.com","data":{"n":1e400}}',
     "json: cannot unmarshal number 1e400 into Go struct field SignupParams.data of type float64"),
    (b'{"x":' + b'[' * 10_000 + b']' * 10_000 + b'}', "invalid character '[' exceeded max depth"),
])
def test_bad_json_as_go_words_it(start_auth, body, message):
    server = start_auth()
    response = post_raw(server, body)
    assert response.status_code == 400
    assert response.json() == {"code": 400, "error_code": "bad_json",
                               "msg": "Could not parse request body as JSON: " + message}


def test_what_go_skips_is_accepted(start_auth):
    # A field the params struct does not have is only syntax-checked: deep nesting (Go allows
    # 10,000 levels) and numbers beyond a float64 are fine there.
    server = start_auth()
    deep = b'{"email":"%s","password":"password1","x":' % unique_email("deep").encode() \
        + b'[' * 9_998 + b']' * 9_998 + b',"n":1e400}'
    response = post_raw(server, deep)
    assert response.status_code == 200, response.text
    assert response.json()["user"]["email"].startswith("deep-")
    assert server.process.poll() is None


def test_test_harness_variables_are_not_unknown_settings(start_server):
    server = start_server("--db", ":memory:", env={
        "AUTH_EMULATOR_BIN": BIN, "AUTH_EMULATOR_PYTHON": "python3", "AUTH_EMULATOR_VENV": ".venv",
        "AUTH_EMULATOR_TYPO": "1",
    })
    assert httpx.get(f"{server.url}/health").status_code == 200
    stderr = server.stderr_text()
    assert "AUTH_EMULATOR_TYPO" in stderr
    for name in ["AUTH_EMULATOR_BIN", "AUTH_EMULATOR_PYTHON", "AUTH_EMULATOR_VENV"]:
        assert name not in stderr
