"""Passkeys in a real browser: headless Chromium with a virtual platform authenticator (WebDriver's
virtual authenticator extension, what DevTools' `WebAuthn.addVirtualAuthenticator` provides)
runs `navigator.credentials.create()` and `navigator.credentials.get()` against the emulator's
options, on a page the emulator serves, so the emulator's verifier meets a browser's own
client data, authenticator data, CBOR and signatures.

The page is the emulator's `/health` on `http://localhost:<port>`: WebAuthn needs a secure
context and an RP id that is a domain, which `localhost` is (`127.0.0.1` is not accepted as an
RP id). Skipped without Chromium, except under CI (see test_browser_consent.py).
"""
import httpx
import pytest

from conftest import SERVICE_ROLE_KEY
from helpers_client import PASSWORD, claims, unique_email
from test_browser_consent import browser, find_executable, unavailable  # noqa: F401 (fixtures)

SCRIPT_HELPERS = """
const b64 = s => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), c => c.charCodeAt(0));
const enc = buf => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const post = async (path, body, token) => {
  const headers = {'Content-Type': 'application/json'};
  if (token) headers.Authorization = 'Bearer ' + token;
  const r = await fetch(window.location.origin + path, {method: 'POST', headers, body: JSON.stringify(body)});
  return {status: r.status, body: await r.json()};
};
"""

REGISTER = SCRIPT_HELPERS + """
const [token, done] = arguments;
(async () => {
  const options = await post('/passkeys/registration/options', {}, token);
  const pk = options.body.options;
  pk.challenge = b64(pk.challenge);
  pk.user.id = b64(pk.user.id);
  (pk.excludeCredentials || []).forEach(c => c.id = b64(c.id));
  const cred = await navigator.credentials.create({publicKey: pk});
  const credential = {
    id: cred.id, rawId: enc(cred.rawId), type: cred.type, authenticatorAttachment: cred.authenticatorAttachment,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: {clientDataJSON: enc(cred.response.clientDataJSON), attestationObject: enc(cred.response.attestationObject),
               transports: cred.response.getTransports()},
  };
  done(await post('/passkeys/registration/verify', {challenge_id: options.body.challenge_id, credential}, token));
})().catch(e => done({error: String(e)}));
"""

SIGN_IN = SCRIPT_HELPERS + """
const [done] = arguments;
(async () => {
  const options = await post('/passkeys/authentication/options', {});
  const pk = options.body.options;
  pk.challenge = b64(pk.challenge);
  const cred = await navigator.credentials.get({publicKey: pk});
  const credential = {
    id: cred.id, rawId: enc(cred.rawId), type: cred.type, authenticatorAttachment: cred.authenticatorAttachment,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: {clientDataJSON: enc(cred.response.clientDataJSON), authenticatorData: enc(cred.response.authenticatorData),
               signature: enc(cred.response.signature), userHandle: enc(cred.response.userHandle)},
  };
  done(await post('/passkeys/authentication/verify', {challenge_id: options.body.challenge_id, credential}));
})().catch(e => done({error: String(e)}));
"""


def test_chromium_virtual_authenticator_registers_and_signs_in(start_auth, browser):  # noqa: F811
    from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions

    server = start_auth(GOTRUE_PASSKEY_ENABLED="true")
    origin = f"http://localhost:{server.port}"
    # The relying party follows the page's origin (set at runtime: the port is only known now).
    patched = httpx.patch(f"{server.url}/emulator/v1/config", headers={"apikey": SERVICE_ROLE_KEY},
                          json={"webauthn": {"rp_id": "localhost", "rp_origins": [origin]}}, timeout=10)
    assert patched.status_code == 200, patched.text

    email = unique_email("browser")
    session = httpx.post(f"{server.url}/signup", json={"email": email, "password": PASSWORD}, timeout=10).json()

    browser.get(f"{origin}/health")
    browser.set_script_timeout(20)
    browser.add_virtual_authenticator(VirtualAuthenticatorOptions(
        protocol="ctap2", transport="internal", has_resident_key=True, has_user_verification=True, is_user_verified=True))

    registered = browser.execute_async_script(REGISTER, session["access_token"])
    assert registered.get("status") == 200, registered
    assert registered["body"]["friendly_name"]
    stored = browser.get_credentials()
    assert len(stored) == 1 and stored[0].is_resident_credential

    signed_in = browser.execute_async_script(SIGN_IN)
    assert signed_in.get("status") == 200, signed_in
    assert signed_in["body"]["user"]["email"] == email
    assert [entry["method"] for entry in claims(signed_in["body"]["access_token"])["amr"]] == ["passkey"]
    # The browser's authenticator counts signatures; the emulator stored its counter.
    assert browser.get_credentials()[0].sign_count >= 1

    # Another origin's assertion is refused: the page at 127.0.0.1 is not a configured origin
    # (and not an RP id the browser accepts at all).
    browser.get(f"{server.url}/health")
    refused = browser.execute_async_script(SIGN_IN)
    assert refused.get("status") != 200, refused
