"""The fake provider's consent page in a real browser (headless Chromium through Selenium):
GoTrue's `/authorize` → the page → `/callback` → the app's redirect target, as a person signing
in with Google would go through it (reference §5.16-5.18).

The app is a tiny loopback HTTP server; the implicit flow's tokens travel in the URL fragment,
which browsers never send to a server, so the final URL is read from the browser.

Chromium and its driver come from the system packages (`chromium`, `chromium-driver`); the
driver path is passed explicitly so Selenium never tries to download one. Without them the tests
are skipped, except under CI, which installs them and must run them.
"""
import os
import shutil
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import FAST_HASHING

IN_CI = os.environ.get("CI", "").lower() == "true"
WAIT_SECONDS = 20

GOOGLE = {
    "GOTRUE_EXTERNAL_GOOGLE_ENABLED": "true",
    "GOTRUE_EXTERNAL_GOOGLE_CLIENT_ID": "google-client.apps.googleusercontent.com",
    "GOTRUE_EXTERNAL_GOOGLE_SECRET": "google-secret",
}


def unavailable(reason):
    if IN_CI:
        pytest.fail(f"{reason} (CI installs it, so the browser tests must run there)")
    pytest.skip(reason)


def find_executable(name):
    return shutil.which(name) or next(
        (path for path in (f"/usr/bin/{name}", f"/usr/lib/chromium/{name}") if os.access(path, os.X_OK)), None
    )


class App:
    """The application's redirect target on loopback: answers every GET with a small page and
    records the paths (with queries) asked for under /auth/."""

    def __init__(self):
        requests = self.requests = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                # The browser also asks for /favicon.ico on its own; only the app's page counts.
                if self.path.startswith("/auth/"):
                    requests.append(self.path)
                body = b"<!DOCTYPE html><title>app</title><p id=app>signed in</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/auth/callback"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def app():
    server = App()
    yield server
    server.close()


def chromium_session(javascript=True):
    """A headless Chromium through Selenium, for a fixture to yield; skipped (failed under CI)
    when the browser, its driver or selenium is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable("selenium is not installed (Tests/python/requirements.txt)")
    chromium = find_executable("chromium")
    driver_path = find_executable("chromedriver")
    # The browser and its driver are separate packages: name the one that is missing.
    missing = [package for package, path in (("chromium", chromium), ("chromium-driver", driver_path)) if path is None]
    if missing:
        names = " and ".join(missing)
        unavailable(f"{names} {'is' if len(missing) == 1 else 'are'} not installed (apt-get install {' '.join(missing)})")

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        driver.set_page_load_timeout(WAIT_SECONDS)
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser():
    yield from chromium_session()


def node_gone(error):
    """Whether `error` says an element's page has been replaced. Selenium's name for that is a
    stale element; chromedriver, asked about a node while the next page replaces its document,
    may answer instead with an "unknown error" whose message says the node "does not belong to
    the document". Both mean the same thing to a wait: the old page is going away."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    if isinstance(error, StaleElementReferenceException):
        return True
    return isinstance(error, WebDriverException) and "does not belong to the document" in (error.msg or "")


def until(driver, condition, gone=False):
    """WebDriverWait(driver, WAIT_SECONDS).until(condition), where a node of a page being replaced
    counts as `gone` (False: keep waiting) instead of failing the test."""
    from selenium.webdriver.support.ui import WebDriverWait

    def check(d):
        try:
            return condition(d)
        except Exception as error:
            if node_gone(error):
                return gone
            raise

    return WebDriverWait(driver, WAIT_SECONDS).until(check)


def wait_for_url(driver, prefix):
    until(driver, lambda d: d.current_url.startswith(prefix))
    return driver.current_url


def element(driver, css):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions

    return until(driver, expected_conditions.element_to_be_clickable((By.CSS_SELECTOR, css)))


def fragment(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).fragment, keep_blank_values=True))


def query(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, keep_blank_values=True))


def open_sign_in(driver, client, app):
    """What an app's "Sign in with Google" button does: the client's URL, opened in the browser."""
    url = client.sign_in_with_oauth({"provider": "google", "options": {"redirect_to": app.url}}).url
    driver.get(url)
    return url


def test_consent_page_sign_in_then_account_chooser(start_server, make_client, browser, app):
    server = start_server("--db", ":memory:", env={**FAST_HASHING, **GOOGLE})
    client = make_client(server)
    email = "ada.browser@example.com"

    open_sign_in(browser, client, app)
    element(browser, "#email")
    assert browser.current_url.startswith(f"{server.url}/emulator/v1/idp/google/authorize?")
    assert "Sign in with Google" in browser.title
    browser.find_element("css selector", "#email").send_keys(email)
    browser.find_element("css selector", "#name").send_keys("Ada Browser")
    element(browser, "#continue").click()

    final = wait_for_url(browser, app.url)
    assert "#access_token=" in final, final
    tokens = fragment(final)
    assert tokens["token_type"] == "bearer"
    user = client.get_user(tokens["access_token"]).user
    assert user.email == email
    assert user.user_metadata["full_name"] == "Ada Browser"
    assert [i.provider for i in user.identities] == ["google"]
    # The browser really arrived at the app (without the fragment, which it keeps to itself).
    assert app.requests == ["/auth/callback"]

    # Second visit: the page offers the account just used; one click signs in again.
    open_sign_in(browser, client, app)
    element(browser, f'button.account[data-email="{email}"]').click()
    final = wait_for_url(browser, app.url)
    assert "#access_token=" in final, final
    again = client.get_user(fragment(final)["access_token"]).user
    assert again.id == user.id
    assert again.email == email


def test_consent_page_cancel_is_access_denied(start_server, make_client, browser, app):
    server = start_server("--db", ":memory:", env={**FAST_HASHING, **GOOGLE})
    client = make_client(server)

    open_sign_in(browser, client, app)
    element(browser, "#cancel").click()
    final = wait_for_url(browser, app.url)
    # GoTrue passes the provider's refusal on in the query and the fragment (`redirectErrors`).
    assert query(final)["error"] == "access_denied"
    assert query(final)["error_description"] == "The user denied the authorization request."
    assert fragment(final)["error"] == "access_denied"
    assert "access_token" not in final
    assert len(app.requests) == 1 and app.requests[0].startswith("/auth/callback?error=access_denied")
