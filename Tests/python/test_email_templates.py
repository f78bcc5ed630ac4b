"""Custom email templates through the real binary and supabase-auth: the docs page's example as
written, the environment's file:// and http:// sources, a runtime change, the reload route, and
the real server's fallback to the built-in body when a template does not parse."""
import functools
import http.server
import os
import pathlib
import re
import subprocess
import sys
import threading
import urllib.parse

import httpx
import pytest

from conftest import BIN, SERVICE_ROLE_KEY
from helpers_client import PASSWORD, unique_email

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
ADMIN = {"Authorization": f"Bearer {SERVICE_ROLE_KEY}"}
MAGIC = '<p>Hi {{ .Data.first_name }}: <a href="{{ .SiteURL }}/auth/confirm?token_hash={{ .TokenHash }}&type=email">Log in</a></p>'


def outbox(server, to):
    return httpx.get(f"{server.url}/emulator/v1/outbox", params={"to": to}, headers=ADMIN).json()


def test_the_pages_example_runs_as_written():
    (block,) = re.findall(r"<!-- tested: Tests/python/test_email_templates\.py[^>]*-->\n```python\n(.*?)```",
                          (DOCS / "email-templates.md").read_text(), re.S)
    env = {**os.environ, "PATH": os.path.dirname(os.path.abspath(BIN)) + os.pathsep + os.environ["PATH"]}
    if os.path.basename(BIN) != "auth-emulator":
        pytest.skip("the binary under test is not named auth-emulator")
    run = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "signed in through the custom link"


def test_file_url_template_renders_with_metadata_and_its_token_hash_verifies(start_auth, make_client, tmp_path):
    template = tmp_path / "magic.html"
    template.write_text(MAGIC)
    server = start_auth(GOTRUE_MAILER_TEMPLATES_MAGIC_LINK=f"file://{template}",
                        GOTRUE_MAILER_SUBJECTS_MAGIC_LINK="Hello {{ .Data.first_name }} & co")
    client = make_client(server)
    email = unique_email("tmpl")
    client.sign_up({"email": email, "password": PASSWORD, "options": {"data": {"first_name": "Ada <3"}}})
    client.sign_in_with_otp({"email": email})
    (mail,) = [m for m in outbox(server, email) if m["type"] == "magiclink"]
    # html/template escapes the subject too, as the real server's subject template.
    assert mail["subject"] == "Hello Ada &lt;3 & co"
    assert "Hi Ada &lt;3: " in mail["body_html"]
    link = next(l for l in mail["links"] if "/auth/confirm" in l)
    assert link.startswith("http://127.0.0.1:3000/auth/confirm?token_hash=")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)
    assert query["token_hash"] == [mail["token_hash"]] and query["type"] == ["email"]
    session = client.verify_otp({"token_hash": query["token_hash"][0], "type": "email"}).session
    assert session.user.email == email


def test_http_template_is_fetched_and_reloaded(start_auth, make_client, tmp_path):
    (tmp_path / "recovery.html").write_text('<a href="{{ .ConfirmationURL }}">first</a>')
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        server = start_auth(GOTRUE_MAILER_TEMPLATES_RECOVERY=f"http://127.0.0.1:{httpd.server_port}/recovery.html",
                            GOTRUE_SMTP_MAX_FREQUENCY="0s")
        client = make_client(server)
        email = unique_email("fetched")
        client.sign_up({"email": email, "password": PASSWORD})
        client.reset_password_for_email(email)
        assert ">first</a>" in outbox(server, email)[0]["body_html"]

        (tmp_path / "recovery.html").write_text('<a href="{{ .ConfirmationURL }}">second</a>')
        reloaded = httpx.post(f"{server.url}/emulator/v1/templates/reload", headers=ADMIN)
        assert reloaded.status_code == 200 and reloaded.json()["warnings"] == []
        # Past the per-user frequency limit of a fresh address.
        other = unique_email("fetched2")
        client.sign_up({"email": other, "password": PASSWORD})
        client.reset_password_for_email(other)
        assert ">second</a>" in outbox(server, other)[0]["body_html"]
    finally:
        httpd.shutdown()


def test_a_template_that_does_not_parse_falls_back_to_the_built_in_body(start_server, make_client, tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<p>{{ if .Token }}unclosed</p>")
    server = start_server("--db", ":memory:", env={"GOTRUE_MAILER_TEMPLATES_MAGIC_LINK": f"file://{broken}"})
    assert "email template magic_link: template:" in server.stderr_text()
    client = make_client(server)
    email = unique_email("broken")
    client.sign_up({"email": email, "password": PASSWORD})
    client.sign_in_with_otp({"email": email})
    mail = [m for m in outbox(server, email) if m["type"] == "magiclink"][0]
    assert mail["subject"] == "Your sign-in link" and mail["action_link"] in mail["links"]


def test_runtime_template_and_reset(start_auth, make_client):
    server = start_auth()
    url = f"{server.url}/emulator/v1/config"
    changed = httpx.patch(url, headers=ADMIN, json={"email": {"template": {"magic_link": {"content": "<b>{{ .Token }}</b>"}}}})
    assert changed.status_code == 200, changed.text
    client = make_client(server)
    email = unique_email("runtime")
    client.sign_up({"email": email, "password": PASSWORD})
    client.sign_in_with_otp({"email": email})
    mail = [m for m in outbox(server, email) if m["type"] == "magiclink"][0]
    assert mail["body_html"] == f"<b>{mail['otp']}</b>"
    # A template that does not parse is refused at run time, naming the setting.
    refused = httpx.patch(url, headers=ADMIN, json={"email.template.magic_link.content": "{{ end }}"})
    assert refused.status_code == 400 and refused.json()["msg"].startswith("email.template.magic_link.content: ")
    assert httpx.patch(url, headers=ADMIN, json={"email.template.magic_link.content": None}).json()["email"]["template"]["magic_link"]["content"] == ""


def test_the_deepest_allowed_inputs_render_in_the_binary_and_one_level_more_is_refused(start_auth, make_client):
    """The nesting limits (docs/email-templates.md, docs/runtime-configuration.md) through the
    binary the suite drives, which CI builds optimized: a template nested as deep as allowed is
    parsed by the PATCH and rendered by the sign-in, both on HTTP worker threads and their fixed
    stacks, and a config.toml nested as deep as allowed makes a project; one level more of
    either is a 400 naming the limit, and the server keeps answering."""
    server = start_auth()
    url = f"{server.url}/emulator/v1/config"
    depth = 14  # AuthTemplate's Parser.maxNestingDepth
    for opening in ("{{if 1}}", "{{with 1}}", "{{range 1}}"):
        deepest = opening * depth + "deep {{ $.Token }}" + "{{end}}" * depth  # `with` and `range` rebind dot
        changed = httpx.patch(url, headers=ADMIN, json={"email.template.magic_link.content": deepest}, timeout=30)
        assert changed.status_code == 200, changed.text
        client = make_client(server)
        email = unique_email("deep")
        client.sign_up({"email": email, "password": PASSWORD})
        client.sign_in_with_otp({"email": email})
        (mail,) = [m for m in outbox(server, email) if m["type"] == "magiclink"]
        assert mail["body_html"] == f"deep {mail['otp']}"
        too_deep = opening * (depth + 1) + "x" + "{{end}}" * (depth + 1)
        refused = httpx.patch(url, headers=ADMIN, json={"email.template.magic_link.content": too_deep}, timeout=30)
        assert refused.status_code == 400 and "nest" in refused.json()["msg"], refused.text
    # config.toml: 64 levels (AuthTOML's TOMLParser.maxDepth): the [auth] table, its key and
    # nested arrays.
    def project(ref, levels):
        body = "[auth]\nx = " + "[" * (levels - 2) + "1" + "]" * (levels - 2) + "\n"
        return httpx.post(f"{server.url}/emulator/v1/projects", params={"ref": ref}, content=body.encode(),
                          headers={**ADMIN, "Content-Type": "application/toml"}, timeout=30)
    # 64 levels are read to the end: what is refused is the key, which no Supabase CLI has.
    allowed = project("deep", 64)
    assert allowed.status_code == 400 and "auth.x: unknown setting" in allowed.json()["msg"], allowed.text
    deeper = project("deeper", 65)
    assert deeper.status_code == 400 and "nesting too deep: more than 64 levels" in deeper.json()["msg"], deeper.text
    assert httpx.get(f"{server.url}/health", timeout=30).status_code == 200
