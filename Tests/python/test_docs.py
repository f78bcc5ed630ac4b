"""Examples of docs/ that are marked `<!-- tested: Tests/python/test_docs.py ... -->` run here as
written, against the binary the suite tests."""
import os
import pathlib
import re
import subprocess
import sys

from conftest import BIN

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
MARKED = re.compile(r"<!-- tested: Tests/python/test_docs\.py[^>]*-->\n```sh\n(.*?)```", re.S)


def marked_blocks(page):
    return MARKED.findall((DOCS / page).read_text())


SIGN_UP = (
    "import os, httpx\n"
    "r = httpx.post(os.environ['SUPABASE_AUTH_URL'] + '/signup', headers={'apikey': os.environ['SUPABASE_ANON_KEY']},\n"
    "               json={'email': 'ci@example.com', 'password': 'correct-horse-1'})\n"
    "assert 'access_token' in r.json(), r.text\n"
    "assert os.environ['SUPABASE_SERVICE_ROLE_KEY'].count('.') == 2\n"
    "print('sign-up ok')\n"
)


def run_ci_block(tmp_path, *command):
    (block,) = marked_blocks("ci.md")
    script = tmp_path / "with-auth-emulator.sh"
    script.write_text(block)
    env = {**os.environ, "AUTH_EMULATOR": os.path.abspath(BIN)}
    return subprocess.run(["sh", str(script), *command], capture_output=True, text=True, env=env, timeout=60)


def test_the_ci_recipe_starts_exports_runs_and_stops(tmp_path):
    run = run_ci_block(tmp_path, sys.executable, "-c", SIGN_UP)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "sign-up ok"


def test_the_ci_recipe_passes_the_tests_failure_on(tmp_path):
    run = run_ci_block(tmp_path, "sh", "-c", "exit 3")
    assert run.returncode == 3, run.stderr


def test_every_ci_recipe_runs_its_tests_through_the_tested_block():
    """The workflows are not run here (they need GitHub or GitLab); what they run is: each test job
    hands the binary to the tested block, saved as ci/with-auth-emulator.sh, through AUTH_EMULATOR."""
    text = (DOCS / "ci.md").read_text()
    assert "save it as `ci/with-auth-emulator.sh`" in text
    recipes = re.findall(r"```yaml\n(.*?)```", text, re.S)
    assert len(recipes) >= 3
    for recipe in recipes:
        runs = re.findall(r"^\s*(?:- )?(?:run: )?(.*\bci/with-auth-emulator\.sh\b.*)$", recipe, re.M)
        assert runs, recipe
        for line in runs:
            assert re.search(r"\bsh ci/with-auth-emulator\.sh \S", line), line
        assert "AUTH_EMULATOR=" in recipe, recipe
    # A cached binary is only as good as its key: every cache names the emulator's sources or version.
    for key in re.findall(r"^\s*key: (.*)$", "".join(recipes), re.M):
        assert "hashFiles('emulator/Package.swift', 'emulator/Sources/**')" in key or "$AUTH_EMULATOR_REF" in key, key


def github_anchor(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_link_of_the_readme_and_docs_resolves():
    repository = DOCS.parent
    pages = [repository / "README.md", *sorted(DOCS.glob("*.md")), repository / "bench/README.md",
             repository / "bench/results/HISTORY.md"]
    anchors = {page: {github_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} (.*)$", page.read_text(), re.M)}
               for page in pages}
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"^(https?:|mailto:)", target):
                continue
            path, _, fragment = target.partition("#")
            resolved = page if not path else (page.parent / path).resolve()
            if not resolved.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif fragment and resolved in anchors and fragment not in anchors[resolved]:
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_runtime_configuration_example_changes_settings_and_names_their_source(start_server, tmp_path):
    import json

    from test_doc_snippets import ALL_BLOCKS, failure, run_example

    (block,) = [b for b in ALL_BLOCKS if b.page.name == "runtime-configuration.md" and "tested" in b.marks]
    run, source, server = run_example(block, start_server, tmp_path)
    assert run.returncode == 0, failure(block, source, run, server)
    patched, shown = [json.loads(line) for line in run.stdout.replace("}{", "}\n{").splitlines()]
    assert patched == shown
    assert shown["mailer_autoconfirm"] is False and shown["password_min_length"] == 10
    assert shown["sources"]["mailer_autoconfirm"] == "runtime" and shown["sources"]["password_min_length"] == "runtime"


LONGEST_CELL = 300


def table_cells(text):
    """(line number, cell) of every table row outside fenced code; `\\|` inside a cell is text."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.lstrip().startswith("|"):
            for cell in re.split(r"(?<!\\)\|", line.strip().removeprefix("|").removesuffix("|")):
                yield number, cell.strip()


def test_no_table_cell_of_the_readme_or_docs_is_a_wall_of_text():
    """A table is read across: detail longer than a short paragraph goes in prose under it (or, for
    measurements of the past, in bench/results/HISTORY.md)."""
    repository = DOCS.parent
    long = [f"{page.relative_to(repository)}:{number}: {len(cell)} characters: {cell[:60]}..."
            for page in [repository / "README.md", *sorted(DOCS.glob("*.md"))]
            for number, cell in table_cells(page.read_text()) if len(cell) > LONGEST_CELL]
    assert not long, "\n".join(long)


def readme_and_docs():
    repository = DOCS.parent
    return [(page.relative_to(repository), page.read_text())
            for page in [repository / "README.md", *sorted(DOCS.glob("*.md"))]]


def test_no_page_points_into_a_document_the_reader_does_not_have():
    """Section signs cite published specifications (RFC 9110 §15, WebAuthn §7.1), never a
    reference text kept outside this repository."""
    pointers = [f"{page}: {m.group(0)}" for page, text in readme_and_docs()
                for m in re.finditer(r"\breference\s+§[\d.\-]+", text, re.I)]
    assert not pointers, pointers


def test_every_version_a_dependency_line_names_is_tagged():
    """A `from:`/`exact:` version or a checkout `ref:` in the docs must exist as a tag of this
    repository; until a release is tagged the pages pin a commit."""
    git = subprocess.run(["git", "-C", str(DOCS.parent), "tag", "--list"], capture_output=True, text=True)
    if git.returncode != 0:
        import pytest
        pytest.skip("not a git checkout")
    tags = set(git.stdout.split())
    lines = [(page, line) for page, text in readme_and_docs() for line in text.splitlines()
             if "supabase-auth-emulator" in line or "AUTH_EMULATOR_REF:" in line]
    named = [(page, version) for page, line in lines
             for version in re.findall(r'\b(?:from|exact):\s*"(\d[^"]*)"'
                                       r'|\bref:\s*(v?\d[\w.\-]*)|AUTH_EMULATOR_REF:\s*(v?\d[\w.\-]*)', line)]
    missing = [f"{page}: {v}" for page, found in named for v in found if v and v not in tags]
    assert not missing, missing


def test_the_readme_says_what_the_emulator_is_not():
    text = (DOCS.parent / "README.md").read_text()
    assert text.startswith("# supabase-auth-emulator\n"), "the README opens with its name and the two commands"
    section = " ".join(text.split("## What it is not", 1)[-1].split("\n## ", 1)[0].split())
    for absent in ("No Postgres", "auth.users", "auth.uid()", "PostgREST", "Storage", "Realtime", "Edge Functions"):
        assert absent in section, absent
    # The way to have them see the users is named where the absence is.
    assert "docs/postgres.md" in section and "--db postgres://" in section
