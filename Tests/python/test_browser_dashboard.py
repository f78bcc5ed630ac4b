"""The web dashboard in a real browser (headless Chromium through Selenium): every action a
person takes there, each checked afterwards through the admin or control API, a form filled and
sent with the keyboard alone, the users table's layout at 1920 and 360 px, the sessions table's
at 1280 and 1920 px, and the client snippets wrapped whole at every width.

Chromium, its driver and the skip rules are those of test_browser_consent.py (system packages,
the driver path passed explicitly; skipped locally without them, a failure under CI).
"""
import base64
import json

import httpx
import pytest

from conftest import ANON_KEY, SERVICE_ROLE_KEY
from test_browser_consent import WAIT_SECONDS, browser, chromium_session, element, until, wait_for_url  # noqa: F401 (browser is a fixture)

ADMIN = {"Authorization": f"Bearer {SERVICE_ROLE_KEY}", "apikey": SERVICE_ROLE_KEY}


def css(driver, selector):
    return driver.find_element("css selector", selector)


def accept_confirm(driver):
    """The script's `confirm()` before a destructive form is sent."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT_SECONDS).until(expected_conditions.alert_is_present())
    driver.switch_to.alert.accept()


def wait_for_notice(driver, text):
    # The previous page's notice may be read just as the next page replaces it: a node of that
    # page is a page still loading, so the wait goes on.
    until(driver, lambda d: any(text in n.text for n in d.find_elements("css selector", ".notice, .error")))


def wait_for_next_page(driver, old):
    """Until `old`, an element of the page a form was sent from, is gone: the answer has loaded."""

    def replaced(_):
        old.is_enabled()  # raises once `old`'s document is gone
        return False

    until(driver, replaced, gone=True)


def set_field(driver, selector, value):
    field = css(driver, selector)
    field.clear()
    field.send_keys(value)


def submit(driver, action, label):
    """Clicks the submit button labelled `label` of the form posting to `action`."""
    element(driver, f'form[action="{action}"] button[type=submit]')
    for button in driver.find_elements("css selector", f'form[action="{action}"] button[type=submit]'):
        if button.text == label:
            button.click()
            return
    raise AssertionError(f"no button {label!r} for {action}")


def create_user(browser, server, notice, confirmed=False, **fields):
    """Fills the users page's create form (`fields` by field name), ticks "Confirmed" if asked,
    sends it and waits for `notice`; returns the new user's id, from the page it lands on."""
    form = 'form[action="/emulator/users"]'
    browser.get(f"{server.url}/emulator")
    css(browser, "details summary").click()
    for name, value in fields.items():
        set_field(browser, f"{form} [name={name}]", value)
    if confirmed:
        css(browser, f"{form} input[name=confirmed]").click()
    submit(browser, "/emulator/users", "Create user")
    wait_for_notice(browser, notice)
    return browser.current_url.split("/emulator/users/")[1].split("?")[0]


@pytest.fixture
def browser_without_js():
    """test_browser_consent.py's browser with JavaScript turned off."""
    yield from chromium_session(javascript=False)


@pytest.fixture
def api():
    clients = []

    def make(server):
        client = httpx.Client(base_url=server.url, timeout=10)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def sign_up(http, email):
    response = http.post("/auth/v1/signup", headers={"apikey": ANON_KEY}, json={"email": email, "password": "password1"})
    assert response.status_code == 200, response.text
    return response.json()


def claims(token):
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def refresh(http, token):
    return http.post("/auth/v1/token?grant_type=refresh_token", headers={"apikey": ANON_KEY}, json={"refresh_token": token})


def test_create_edit_ban_sign_out_revoke_delete(start_auth, browser, api):
    server = start_auth()
    http = api(server)

    # Create: email, password, confirmed, metadata with markup in it.
    user_id = create_user(browser, server, "Created ada.dash@example.com.", confirmed=True, email="ada.dash@example.com",
                          password="password1", user_metadata='{"full_name": "<b>Ada</b>"}')
    user = http.get(f"/admin/users/{user_id}", headers=ADMIN).json()
    assert user["email"] == "ada.dash@example.com"
    assert user["email_confirmed_at"]
    assert user["user_metadata"]["full_name"] == "<b>Ada</b>"
    # Shown as text (in the metadata editor), never as markup.
    assert '"full_name": "<b>Ada</b>"' in css(browser, "textarea[name=user_metadata]").get_attribute("value")
    assert not browser.find_elements("css selector", "main b")

    # Search ignores case.
    browser.get(f"{server.url}/emulator?q=ADA.DASH")
    assert "1 user matching" in css(browser, "main").text

    # Edit the metadata: the textarea is the whole object.
    browser.get(f"{server.url}/emulator/users/{user_id}")
    set_field(browser, "textarea[name=user_metadata]", '{"nickname": "countess"}')
    submit(browser, f"/emulator/users/{user_id}/metadata", "Save metadata")
    wait_for_notice(browser, "Metadata saved.")
    user = http.get(f"/admin/users/{user_id}", headers=ADMIN).json()
    assert user["user_metadata"] == {"nickname": "countess"}

    # Ban (after the confirmation), then lift it.
    submit(browser, f"/emulator/users/{user_id}/ban", "Ban")
    accept_confirm(browser)
    wait_for_notice(browser, "Banned.")
    assert http.get(f"/admin/users/{user_id}", headers=ADMIN).json()["banned_until"]
    submit(browser, f"/emulator/users/{user_id}/unban", "Unban")
    wait_for_notice(browser, "Ban lifted.")
    assert http.get(f"/admin/users/{user_id}", headers=ADMIN).json().get("banned_until") is None

    # Revoke one session: its refresh token stops working, the other's does not.
    first = http.post("/auth/v1/token?grant_type=password", headers={"apikey": ANON_KEY},
                      json={"email": "ada.dash@example.com", "password": "password1"}).json()
    second = http.post("/auth/v1/token?grant_type=password", headers={"apikey": ANON_KEY},
                       json={"email": "ada.dash@example.com", "password": "password1"}).json()
    browser.get(f"{server.url}/emulator/users/{user_id}")
    session_id = claims(first["access_token"])["session_id"]
    element(browser, f'form[action="/emulator/users/{user_id}/sessions/{session_id}/revoke"] button').click()
    wait_for_notice(browser, "Session revoked.")
    assert refresh(http, first["refresh_token"]).status_code == 400
    second = refresh(http, second["refresh_token"])
    assert second.status_code == 200

    # Sign out everywhere: no refresh token of the user works any more.
    browser.get(f"{server.url}/emulator/users/{user_id}")
    submit(browser, f"/emulator/users/{user_id}/signout", "Sign out everywhere")
    accept_confirm(browser)
    wait_for_notice(browser, "Signed out everywhere: 1 session ended.")
    assert refresh(http, second.json()["refresh_token"]).status_code == 400

    # Delete.
    submit(browser, f"/emulator/users/{user_id}/delete", "Delete user")
    accept_confirm(browser)
    wait_for_notice(browser, "Deleted ada.dash@example.com.")
    assert http.get(f"/admin/users/{user_id}", headers=ADMIN).status_code == 404


def mint(browser, server, user_id, **fields):
    """Fills the user page's mint form (`fields` by field name; a list is chosen by value),
    sends it and returns the token the page shows."""
    from selenium.webdriver.support.ui import Select

    action = f"/emulator/users/{user_id}/token"
    browser.get(f"{server.url}/emulator/users/{user_id}")
    for name, value in fields.items():
        selector = f'form[action="{action}"] [name={name}]'
        if css(browser, selector).tag_name == "select":
            Select(css(browser, selector)).select_by_value(value)
        else:
            set_field(browser, selector, value)
    submit(browser, action, "Mint token")
    return element(browser, "#minted-token").text


def test_mint_a_token_use_it_and_decode_it(start_auth, browser, api):
    server = start_auth()
    http = api(server)
    user_id = sign_up(http, "mint@example.com")["user"]["id"]

    token = mint(browser, server, user_id, expires_in="600", claims='{"tenant": "<i>acme</i>"}')
    assert token.count(".") == 2
    me = http.get("/auth/v1/user", headers={"apikey": ANON_KEY, "Authorization": f"Bearer {token}"})
    assert me.status_code == 200
    assert me.json()["id"] == user_id

    submit(browser, "/emulator/tokens", "Decode")
    assert "Signature valid." in element(browser, "#verdict").text
    decoded = css(browser, "#decoded-claims").text
    assert '"tenant": "<i>acme</i>"' in decoded  # shown as text, never as markup
    assert not browser.find_elements("css selector", "#decoded-claims i")

    # The decoder page on its own, with a token signed by someone else.
    browser.get(f"{server.url}/emulator/tokens")
    head, body, _ = token.split(".")
    set_field(browser, "textarea[name=token]", f"{head}.{body}.AAAA")
    submit(browser, "/emulator/tokens", "Decode")
    assert "Signature invalid." in element(browser, "#verdict").text


def test_delete_a_factor(start_auth, browser, api):
    server = start_auth(GOTRUE_MFA_TOTP_ENROLL_ENABLED="true", GOTRUE_MFA_TOTP_VERIFY_ENABLED="true")
    http = api(server)
    session = sign_up(http, "factor@example.com")
    user_id = session["user"]["id"]
    enrolled = http.post("/auth/v1/factors", headers={"apikey": ANON_KEY, "Authorization": f"Bearer {session['access_token']}"},
                         json={"factor_type": "totp", "friendly_name": "phone app"})
    assert enrolled.status_code == 200, enrolled.text
    factor_id = enrolled.json()["id"]

    browser.get(f"{server.url}/emulator/users/{user_id}")
    element(browser, f'form[action="/emulator/users/{user_id}/factors/{factor_id}/delete"] button').click()
    accept_confirm(browser)
    wait_for_notice(browser, "Factor deleted.")
    assert http.get(f"/admin/users/{user_id}/factors", headers=ADMIN).json() == []


def advance_from_header(browser, http, page, step):
    """Presses the header's clock button for `step` ("+1 hour", "+1 day") on `page`; the browser
    comes back to that page. Returns the clock's offset then, read through the control API."""
    browser.get(page)
    element(browser, f'header button[aria-label="Advance the clock {step}"]').click()
    wait_for_notice(browser, "Clock now")
    assert browser.current_url.startswith(f"{page}?notice=")
    return http.get("/emulator/v1/clock", headers=ADMIN).json()["offset_seconds"]


def test_header_clock_journal_and_reset(start_auth, browser, api):
    server = start_auth()
    http = api(server)
    sign_up(http, "reset@example.com")
    assert http.get("/emulator/v1/journal", headers=ADMIN).json()["entries"]

    # +1 h from the header of the users page: back on the same page, an hour later.
    assert 3599 <= advance_from_header(browser, http, f"{server.url}/emulator", "+1 hour") <= 3700

    # Clear the journal.
    browser.get(f"{server.url}/emulator/journal")
    submit(browser, "/emulator/journal/clear", "Clear journal")
    accept_confirm(browser)
    wait_for_notice(browser, "Journal cleared.")
    assert http.get("/emulator/v1/journal", headers=ADMIN).json()["entries"] == []

    # Reset: the checkbox is required (the browser will not send the form without it).
    browser.get(f"{server.url}/emulator/settings")
    # The click meets the unticked checkbox: its `invalid` event fires and the form is not sent
    # (no submit event). Listeners set before the click record both; the test waits for the
    # first, not for a guessed moment after which a sent form would have left the page.
    from selenium.webdriver.support.ui import WebDriverWait

    browser.execute_script("""
        const form = document.querySelector('form[action="/emulator/settings/reset"]');
        window.resetBlocked = false;
        window.resetSent = false;
        form.querySelector('input[name=confirm]').addEventListener('invalid', () => { window.resetBlocked = true; });
        form.addEventListener('submit', () => { window.resetSent = true; });
    """)
    submit(browser, "/emulator/settings/reset", "Reset the project")
    WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.execute_script("return window.resetBlocked"))
    assert browser.execute_script("return window.resetSent") is False
    assert browser.current_url == f"{server.url}/emulator/settings"
    assert len(http.get("/admin/users", headers=ADMIN).json()["users"]) == 1
    css(browser, 'form[action="/emulator/settings/reset"] input[name=confirm]').click()
    submit(browser, "/emulator/settings/reset", "Reset the project")
    accept_confirm(browser)
    wait_for_notice(browser, "Project reset: 0 users left.")
    assert http.get("/admin/users", headers=ADMIN).json()["users"] == []
    assert abs(http.get("/emulator/v1/clock", headers=ADMIN).json()["offset_seconds"]) < 5


def test_users_table_uses_the_width(start_auth, browser, api, tmp_path):
    server = start_auth()
    http = api(server)
    for index in range(3):
        http.post("/admin/users", headers=ADMIN, json={"email": f"wide.user.{index}@example.com", "phone": f"1555000000{index}"})

    browser.set_window_size(1920, 1080)
    browser.get(f"{server.url}/emulator")
    element(browser, "table")
    browser.save_screenshot(str(tmp_path / "users-1920.png"))
    # Every column, "Created" last, fits: the table does not scroll inside its frame.
    fits = browser.execute_script(
        "var s=document.querySelector('.scroll');return [s.scrollWidth, s.clientWidth,"
        " document.querySelector('th:last-child').getBoundingClientRect().right, window.innerWidth]"
    )
    assert fits[0] <= fits[1], fits
    assert fits[2] <= fits[3], fits

    browser.set_window_size(360, 800)
    browser.get(f"{server.url}/emulator")
    element(browser, "table")
    browser.save_screenshot(str(tmp_path / "users-360.png"))
    # The page itself never scrolls sideways; the table scrolls in its own frame.
    page_width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert page_width[0] <= page_width[1], page_width


LONG_USER_AGENTS = [
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
    "Safari/537.36 Edg/131.0.2903.86",
    "supabase-swift/2.24.1 (iOS 18.2; iPhone15,3) CFNetwork/1568.300.101 Darwin/24.2.0 SomeLongAppName/4.5.6 build 20261128",
]


def test_sessions_table_fits_with_revoke_in_view(start_auth, browser, api, tmp_path):
    server = start_auth()
    http = api(server)
    email = "ada.lovelace.with.a.long.address@example.com"
    user_id = http.post("/admin/users", headers=ADMIN, json={"email": email, "password": "password1", "email_confirm": True}).json()["id"]
    for agent in LONG_USER_AGENTS:
        signed_in = http.post("/auth/v1/token?grant_type=password", headers={"apikey": ANON_KEY, "User-Agent": agent},
                              json={"email": email, "password": "password1"})
        assert signed_in.status_code == 200, signed_in.text

    for width in (1280, 1920):
        browser.set_window_size(width, 900)
        browser.get(f"{server.url}/emulator/users/{user_id}")
        element(browser, "table.sessions")
        browser.save_screenshot(str(tmp_path / f"user-sessions-{width}.png"))
        # Every column, IP and Revoke last, is in view without scrolling sideways, and the long
        # user agents are there to read (wrapped, not cut).
        fits = browser.execute_script(
            "var t=document.querySelector('table.sessions'),s=t.closest('.scroll');"
            "var r=[].map.call(t.querySelectorAll('form[action$=\"/revoke\"] button'),function(b){return b.getBoundingClientRect().right});"
            "return {scroll: [s.scrollWidth, s.clientWidth], page: [document.documentElement.scrollWidth, window.innerWidth],"
            " revoke: r, ip: t.querySelector('td.ip').getBoundingClientRect().right, text: t.innerText}"
        )
        assert fits["scroll"][0] <= fits["scroll"][1], (width, fits)
        assert fits["page"][0] <= fits["page"][1], (width, fits)
        assert len(fits["revoke"]) == 2 and max(fits["revoke"]) <= fits["page"][1], (width, fits)
        assert fits["ip"] <= fits["page"][1], (width, fits)
        for agent in LONG_USER_AGENTS:
            assert agent in fits["text"].replace("\n", " "), width

    # At phone width the page itself still never scrolls sideways.
    browser.set_window_size(360, 800)
    browser.get(f"{server.url}/emulator/users/{user_id}")
    element(browser, "table.sessions")
    page_width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert page_width[0] <= page_width[1], page_width


def test_client_snippets_are_never_cut_off(start_auth, browser, tmp_path):
    server = start_auth()
    for width, height in ((1280, 900), (1920, 1080), (360, 800)):
        browser.set_window_size(width, height)
        browser.get(f"{server.url}/emulator/settings")
        element(browser, "pre#snippet-js")
        browser.save_screenshot(str(tmp_path / f"settings-{width}.png"))
        # Each snippet wraps inside its box: nothing hidden past the right edge to scroll to.
        boxes = browser.execute_script(
            "return [].map.call(document.querySelectorAll('pre[id^=snippet-]'),function(p){"
            "return [p.id, p.scrollWidth, p.clientWidth, p.textContent]})"
        )
        assert [box[0] for box in boxes] == ["snippet-js", "snippet-swift", "snippet-py"]
        for name, scroll_width, client_width, text in boxes:
            assert scroll_width <= client_width, (width, name, scroll_width, client_width)
            # The whole line is there (the copy button copies this text): URL and key in full.
            assert server.url in text and "sb_publishable_" in text, (width, name)


def test_without_javascript_pages_read_and_forms_work(start_auth, browser_without_js, api):
    server = start_auth()
    http = api(server)
    driver = browser_without_js
    driver.get(f"{server.url}/emulator")
    css(driver, "details summary").click()
    set_field(driver, 'form[action="/emulator/users"] input[name=email]', "nojs@example.com")
    submit(driver, "/emulator/users", "Create user")
    wait_for_notice(driver, "Created nojs@example.com.")
    assert "nojs@example.com" in css(driver, "h1").text
    assert [u["email"] for u in http.get("/admin/users", headers=ADMIN).json()["users"]] == ["nojs@example.com"]

    # Destructive forms go without a confirm dialog (with the script running, its confirm()
    # would stop the form here), behind their server-side checks.
    driver.get(f"{server.url}/emulator/settings")
    css(driver, 'form[action="/emulator/settings/reset"] input[name=confirm]').click()
    submit(driver, "/emulator/settings/reset", "Reset the project")
    wait_for_notice(driver, "Project reset: 0 users left.")
    assert http.get("/admin/users", headers=ADMIN).json()["users"] == []


def test_a_projects_dashboard_stays_in_its_project(start_auth, browser, api):
    """Several projects (docs/projects.md): a user made in one project's dashboard, reached by
    path, lands in that project only; the header's switcher goes to the default project's."""
    server = start_auth()
    http = api(server)
    made = http.post("/emulator/v1/projects", headers=ADMIN, json={"ref": "shop"})
    assert made.status_code == 201, made.text
    shop = made.json()
    shop_admin = {"Authorization": f"Bearer {shop['service_role_key']}", "apikey": shop["service_role_key"]}

    mounted = "/project/shop/emulator"
    browser.get(f"{server.url}{mounted}")
    assert "shop" in browser.title
    css(browser, "details summary").click()
    set_field(browser, f'form[action="{mounted}/users"] input[name=email]', "ada.shop@example.com")
    set_field(browser, f'form[action="{mounted}/users"] input[name=password]', "password1")
    submit(browser, f"{mounted}/users", "Create user")
    wait_for_notice(browser, "Created ada.shop@example.com.")
    # Still inside the project: the new user's page is under its mount.
    assert f"{mounted}/users/" in browser.current_url
    users = http.get("/project/shop/auth/v1/admin/users", headers=shop_admin).json()["users"]
    assert [u["email"] for u in users] == ["ada.shop@example.com"]
    assert http.get("/admin/users", headers=ADMIN).json()["users"] == []

    # The switcher: the current project unlinked, the default project one click away.
    switcher = css(browser, "nav.projects")
    assert css(browser, "nav.projects [aria-current]").text == "shop"
    [default] = [a for a in switcher.find_elements("css selector", "a") if a.text == "default"]
    default.click()
    element(browser, "main")
    assert "/project/default/emulator" in browser.current_url
    assert "ada.shop@example.com" not in css(browser, "main").text


def test_create_a_phone_user_and_edit_its_app_metadata(start_auth, browser, api):
    # Phone sign-in on, so the new user's password works (the admin route makes the user either way).
    server = start_auth(GOTRUE_EXTERNAL_PHONE_ENABLED="true")
    http = api(server)

    # A confirmed phone user: no email, the confirmation is the phone's.
    user_id = create_user(browser, server, "Created +15551234567.", confirmed=True, phone="+15551234567", password="password1")
    user = http.get(f"/admin/users/{user_id}", headers=ADMIN).json()
    assert user["phone"] == "15551234567"
    assert user["phone_confirmed_at"]
    assert not user.get("email")
    assert user["app_metadata"]["provider"] == "phone"
    signed_in = http.post("/auth/v1/token?grant_type=password", headers={"apikey": ANON_KEY},
                          json={"phone": "+15551234567", "password": "password1"})
    assert signed_in.status_code == 200, signed_in.text

    # app_metadata: the textarea holds the whole object; a key added is stored, the rest kept.
    field = css(browser, "textarea[name=app_metadata]")
    shown = json.loads(field.get_attribute("value"))
    assert shown == user["app_metadata"]
    set_field(browser, "textarea[name=app_metadata]", json.dumps({**shown, "plan": "pro", "roles": ["admin"]}))
    submit(browser, f"/emulator/users/{user_id}/metadata", "Save metadata")
    wait_for_notice(browser, "Metadata saved.")
    user = http.get(f"/admin/users/{user_id}", headers=ADMIN).json()
    assert user["app_metadata"]["plan"] == "pro"
    assert user["app_metadata"]["roles"] == ["admin"]
    assert user["app_metadata"]["provider"] == "phone"
    assert user["user_metadata"] == {}

    # A key taken out of the textarea is removed.
    shown = json.loads(css(browser, "textarea[name=app_metadata]").get_attribute("value"))
    del shown["plan"]
    set_field(browser, "textarea[name=app_metadata]", json.dumps(shown))
    saved_once = css(browser, "main")
    submit(browser, f"/emulator/users/{user_id}/metadata", "Save metadata")
    # The page still shows the first save's "Metadata saved.": wait for the next page first.
    wait_for_next_page(browser, saved_once)
    wait_for_notice(browser, "Metadata saved.")
    app_metadata = http.get(f"/admin/users/{user_id}", headers=ADMIN).json()["app_metadata"]
    assert "plan" not in app_metadata and app_metadata["roles"] == ["admin"]


def test_header_clock_advances_a_day_and_sets_a_time(start_auth, browser, api):
    server = start_auth()
    http = api(server)
    assert 86_399 <= advance_from_header(browser, http, f"{server.url}/emulator/mailbox", "+1 day") <= 86_500

    # A datetime-local field's keyboard entry follows the browser's locale; its value is the
    # one format every locale submits.
    field = element(browser, 'header input[name=set]')
    browser.execute_script("arguments[0].value = '2031-02-03T04:05'", field)
    submit(browser, "/emulator/settings/clock", "Set (UTC)")
    wait_for_notice(browser, "Clock now 2031-02-03T04:05")
    assert http.get("/emulator/v1/clock", headers=ADMIN).json()["now"].startswith("2031-02-03T04:05:")
    assert css(browser, "#header-clock").text.startswith("2031-02-03T04:05:")
    # What the API stamps follows the clock: a user made now was made in 2031.
    made = http.post("/admin/users", headers=ADMIN, json={"email": "later@example.com"}).json()
    assert made["created_at"].startswith("2031-02-03T04:05:")


def test_mint_with_role_and_aal(start_auth, browser, api):
    import jwt

    server = start_auth()
    http = api(server)
    user_id = sign_up(http, "aal@example.com")["user"]["id"]
    token = mint(browser, server, user_id, role="service_role", aal="aal2")

    # Verified with the project's published key, as a backend would.
    jwks = http.get("/auth/v1/.well-known/jwks.json").json()
    header = jwt.get_unverified_header(token)
    [key] = [key for key in jwks["keys"] if key["kid"] == header["kid"]]
    decoded = jwt.decode(token, jwt.PyJWK(key), algorithms=[header["alg"]], audience="authenticated")
    assert decoded["sub"] == user_id
    assert decoded["role"] == "service_role"
    assert decoded["aal"] == "aal2"
    assert decoded["email"] == "aal@example.com"


def test_delete_a_passkey(start_auth, browser, api):
    server = start_auth(GOTRUE_PASSKEY_ENABLED="true", GOTRUE_SITE_URL="http://localhost:3000")
    http = api(server)
    session = sign_up(http, "passkey.dash@example.com")
    user_id = session["user"]["id"]
    user = {"apikey": ANON_KEY, "Authorization": f"Bearer {session['access_token']}"}
    # Registered through the software authenticator (docs/passkeys.md).
    options = http.post("/auth/v1/passkeys/registration/options", headers=user, json={}).json()
    credential = http.post("/emulator/v1/webauthn/attestation", headers=ADMIN, json=options).json()
    verified = http.post("/auth/v1/passkeys/registration/verify", headers=user,
                         json={"challenge_id": options["challenge_id"], "credential": credential})
    assert verified.status_code == 200, verified.text
    passkey_id = verified.json()["id"]
    assert [p["id"] for p in http.get(f"/admin/users/{user_id}/passkeys", headers=ADMIN).json()] == [passkey_id]

    browser.get(f"{server.url}/emulator/users/{user_id}")
    assert "Passkeys (1)" in css(browser, "main").text
    element(browser, f'form[action="/emulator/users/{user_id}/passkeys/{passkey_id}/delete"] button').click()
    accept_confirm(browser)
    wait_for_notice(browser, "Passkey deleted.")
    assert http.get(f"/admin/users/{user_id}/passkeys", headers=ADMIN).json() == []
    assert "Passkeys (0)" in css(browser, "main").text


def focused(driver):
    return driver.switch_to.active_element


def press(driver, *keys):
    """Keys to whatever has the focus, as a person at the keyboard sends them."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(*keys).perform()


def test_create_a_user_with_the_keyboard_only(start_auth, browser, api):
    from selenium.webdriver.common.keys import Keys

    server = start_auth()
    http = api(server)
    browser.get(f"{server.url}/emulator")
    # From the search box, Tab goes to its button, then into the create form's disclosure.
    css(browser, "input[name=q]").click()
    assert focused(browser).get_attribute("name") == "q"
    press(browser, Keys.TAB)
    assert focused(browser).text == "Search"
    press(browser, Keys.TAB)
    assert focused(browser).tag_name == "summary"
    press(browser, Keys.ENTER)
    # Through the fields in order: email, phone, password, confirmed, metadata, the button.
    press(browser, Keys.TAB)
    assert focused(browser).get_attribute("name") == "email"
    press(browser, "keys@example.com", Keys.TAB, Keys.TAB)
    assert focused(browser).get_attribute("name") == "password"
    press(browser, "password1", Keys.TAB)
    assert focused(browser).get_attribute("name") == "confirmed"
    press(browser, Keys.SPACE, Keys.TAB)
    assert focused(browser).get_attribute("name") == "user_metadata"
    press(browser, '{"via": "keyboard"}', Keys.TAB)
    assert focused(browser).text == "Create user"
    press(browser, Keys.ENTER)
    wait_for_notice(browser, "Created keys@example.com.")
    [user] = http.get("/admin/users", headers=ADMIN).json()["users"]
    assert user["email"] == "keys@example.com"
    assert user["email_confirmed_at"]
    assert user["user_metadata"]["via"] == "keyboard"

    # The search the same way: type, Tab to its button, Enter.
    browser.get(f"{server.url}/emulator")
    css(browser, "input[name=q]").click()
    press(browser, "KEYS@", Keys.TAB, Keys.ENTER)
    # The results page, not the one it replaces (whose table is there until it goes).
    wait_for_url(browser, f"{server.url}/emulator?q=KEYS%40")
    assert "1 user matching" in element(browser, "main").text
