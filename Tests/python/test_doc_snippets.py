"""Every example of README.md and docs/*.md runs here, each against a fresh emulator, so a page
cannot show a command or a snippet that does not work on the server it describes.

Fenced blocks in sh, bash, python, js, javascript, ts and swift run; json, yaml, toml, text and
unlabelled blocks are data. HTML comments directly above a block say how it runs (docs/tests.md,
"Examples in the docs", is the reader's version of these rules):

    <!-- server: ARGS -->             the block's emulator gets these flags and NAME=value variables;
                                      each must also be written in the page's text
    <!-- given: NAME ... -->          the block may use these names for the server's keys
    <!-- tested: Tests/python/F.py ... -->   run by that test, with checks of its own
    <!-- not run: REASON -->          not run, for the reason given (few, each naming its proof)

Each block runs in a new temporary folder holding `supabase/config.toml` (an unmodified
`supabase init` file, Tests/Fixtures/supabase/config.toml), as in a project using the Supabase
CLI, and this repository's `scenarios/` catalogue, with the documented address
http://127.0.0.1:9999 replaced by the emulator's and a folder first on PATH whose `auth-emulator`
is the binary under test (its `serve` is started and stopped, doc_snippets/auth-emulator.py) and
whose `curl` fails on an HTTP error status (--fail-with-body), so a request the page expects to
work must work. Shell blocks run with `set -eu` (bash also with pipefail), Python blocks with the
suite's interpreter, JavaScript and TypeScript blocks with node as ES modules (node 20 strips no
types: a ts block stays valid JavaScript), Swift blocks with the `swift` interpreter. The client
libraries the suite does not install are stood in for: '@supabase/supabase-js' by
doc_snippets/supabase-js.mjs and `import Supabase` by doc_snippets/Supabase.swift.

A reader runs a page's examples one after another against one server, so each page also runs
that way: one emulator started with every `server:` setting of the page's blocks, one project
folder, the blocks in page order. An example that makes a named thing a later one makes again
(a project ref, a user, a mail to the same address within the send interval) fails there.
"""
import os
import pathlib
import re
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from conftest import BIN, FAST_HASHING

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent / "doc_snippets"
PAGES = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
DOCUMENTED_URL = "http://127.0.0.1:9999"

RUNNERS = {"sh": "sh", "bash": "bash", "python": "python", "js": "node", "javascript": "node", "ts": "node",
           "swift": "swift"}
DATA = {"", "json", "yaml", "toml", "text", "html"}
GIVEN = {"ANON_KEY": "anon key", "anon_key": "anon key", "anonKey": "anon key",
         "SERVICE_ROLE_KEY": "service_role key", "service_role_key": "service_role key",
         "serviceRoleKey": "service_role key"}

FENCE = re.compile(r"^( *)```(\S*)\s*$")
COMMENT = re.compile(r"^\s*<!--\s*(not run|tested|server|given)\s*(?::\s*(.*?))?\s*-->\s*$")


@dataclass
class Block:
    page: pathlib.Path
    line: int
    language: str
    code: str
    marks: dict = field(default_factory=dict)

    @property
    def name(self):
        return f"{self.page.relative_to(REPOSITORY)}:{self.line}"


def blocks_of(page):
    lines = page.read_text().splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, language = len(opening.group(1)), opening.group(2).lower()
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        code = "\n".join(line[indent:] if line[:indent].strip() == "" else line for line in lines[index + 1:end])
        marks, above = {}, index - 1
        while above >= 0 and COMMENT.match(lines[above]):
            kind, value = COMMENT.match(lines[above]).groups()
            marks[kind] = value or ""
            above -= 1
        found.append(Block(page, index + 1, language, code + "\n", marks))
        index = end + 1
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks_of(page)]
RUN = [block for block in ALL_BLOCKS
       if block.language in RUNNERS and "not run" not in block.marks and "tested" not in block.marks]


def test_every_block_has_a_known_language():
    unknown = [f"{b.name}: ```{b.language}" for b in ALL_BLOCKS if b.language not in RUNNERS and b.language not in DATA]
    assert not unknown, f"add the language to RUNNERS or DATA in {__file__}: {unknown}"


def test_blocks_not_run_say_why_and_tested_ones_name_their_test():
    problems = []
    for block in ALL_BLOCKS:
        if "not run" in block.marks and len(block.marks["not run"]) < 20:
            problems.append(f"{block.name}: 'not run' needs a reason naming what proves the block instead")
        if "tested" in block.marks:
            test = (block.marks["tested"].split() or [""])[0]
            if not (REPOSITORY / test).is_file() or block.page.name not in (REPOSITORY / test).read_text():
                problems.append(f"{block.name}: 'tested' names {test!r}, which does not read {block.page.name}")
        if ("not run" in block.marks or "tested" in block.marks) and block.language in DATA:
            problems.append(f"{block.name}: a data block needs no mark")
    assert not problems, problems


def test_server_settings_of_a_block_are_shown_on_its_page():
    """A setting the runner gives a block's emulator must be visible to the reader too."""
    hidden = []
    for block in ALL_BLOCKS:
        if "server" in block.marks:
            text = re.sub(r"<!--.*?-->", "", block.page.read_text(), flags=re.S)
            hidden += [f"{block.name}: {token}" for token in shlex.split(block.marks["server"]) if token not in text]
    assert not hidden, hidden


def server_arguments(block):
    args, env = [], {}
    for token in shlex.split(block.marks.get("server", "")):
        if re.fullmatch(r"[A-Z][A-Z0-9_]*=.*", token):
            name, _, value = token.partition("=")
            env[name] = value
        else:
            args.append(token)
    return args, env


def given_names(block):
    names = block.marks.get("given", "").replace(",", " ").split()
    unknown = [name for name in names if name not in GIVEN]
    assert not unknown, f"{block.name}: 'given' knows only {sorted(GIVEN)}, not {unknown}"
    return names


def tool_folder(tmp_path):
    """The folder put first on PATH: `auth-emulator` and a `curl` that fails on an error status
    (DOC_SNIPPETS_CURL_FAILURES names the file its failures go to)."""
    folder = tmp_path / ".bin"
    folder.mkdir()
    curl = shutil.which("curl")
    scripts = {
        "auth-emulator": f"#!{sys.executable}\n" + (HERE / "auth-emulator.py").read_text(),
        # A failure is also written down, since `curl ... | jq` in sh hides curl's exit status.
        "curl": (f'#!/bin/sh\n{shlex.quote(curl)} --fail-with-body "$@" && exit 0\nstatus=$?\n'
                 f'echo "curl $* (exit $status)" >> "$DOC_SNIPPETS_CURL_FAILURES"\nexit $status\n') if curl else None,
    }
    for name, text in scripts.items():
        if text is not None:
            (folder / name).write_text(text)
            (folder / name).chmod(0o755 | stat.S_IXUSR)
    return folder


def source_of(block, server):
    """The block as it runs: the given names defined first, the documented address replaced."""
    keys = {name: server.info[GIVEN[name]] for name in given_names(block)}
    if block.language in ("sh", "bash"):
        prologue = ("set -euo pipefail\n" if block.language == "bash" else "set -eu\n")
        prologue += "".join(f"{name}={shlex.quote(value)}\n" for name, value in keys.items())
    elif block.language == "python":
        prologue = "".join(f"{name} = {value!r}\n" for name, value in keys.items())
    elif block.language == "swift":
        prologue = "".join(f'let {name} = "{value}"\n' for name, value in keys.items())
    else:
        prologue = "".join(f"const {name} = {value!r}\n" for name, value in keys.items())
    source = prologue + block.code
    source = source.replace(DOCUMENTED_URL, server.url)
    if block.language == "swift" and re.search(r"^import Supabase$", source, re.M):
        source = (HERE / "Supabase.swift").read_text() + re.sub(r"^import Supabase$", "", source, flags=re.M)
    if RUNNERS[block.language] == "node":
        stand_in = (HERE / "supabase-js.mjs").as_uri()
        source = re.sub(r"""(['"])@supabase/supabase-js\1""", f"'{stand_in}'", source)
    return source


def command_for(block, script):
    runner = RUNNERS[block.language]
    if runner == "python":
        return [os.environ.get("AUTH_EMULATOR_PYTHON") or sys.executable, str(script)]
    return [runner, str(script)]


def failure(block, source, run, server):
    numbered = "\n".join(f"{n:4} {line}" for n, line in enumerate(source.splitlines(), 1))
    log = server.stderr_text().splitlines()[-20:] if server else []
    return (f"{block.name}: the {block.language} example failed (exit {run.returncode})\n"
            f"--- as run ---\n{numbered}\n--- stdout ---\n{run.stdout}--- stderr ---\n{run.stderr}"
            f"--- emulator log (last lines) ---\n" + "\n".join(log))


SWIFT_BLOCKS = [block for block in ALL_BLOCKS if block.language == "swift"]


@pytest.mark.parametrize("block", SWIFT_BLOCKS, ids=[block.name for block in SWIFT_BLOCKS])
def test_every_swift_block_parses(block, tmp_path):
    """Also the blocks that do not run: a snippet that is not Swift at all fails here at once."""
    swiftc = shutil.which("swiftc")
    if not swiftc and os.environ.get("CI"):
        pytest.fail("swiftc is required under CI")
    if not swiftc:
        pytest.skip("swiftc is not on PATH")
    script = tmp_path / "main.swift"
    script.write_text(block.code)
    run = subprocess.run([swiftc, "-parse", str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, failure(block, block.code, run, None)


def tools_needed(block):
    """What a block runs besides the emulator; missing, it is skipped, or under CI=true fails."""
    needed = {"sh": ["sh"], "bash": ["bash"], "node": ["node"], "swift": ["swift"], "python": []}[RUNNERS[block.language]]
    if block.language in ("sh", "bash"):
        needed += [tool for tool in ("curl", "jq") if re.search(rf"\b{tool}\b", block.code)]
    missing = [tool for tool in needed if not shutil.which(tool)]
    if missing and os.environ.get("CI"):
        pytest.fail(f"{block.name} needs {', '.join(missing)}, required under CI (.ci/run installs them)")
    if missing:
        pytest.skip(f"{block.name} needs {', '.join(missing)}, not on PATH")


def start_emulator(start_server, *blocks):
    """One emulator with the `server:` settings of all these blocks (one block's, or a page's)."""
    args, env = [], {}
    for block in blocks:
        block_args, block_env = server_arguments(block)
        if block_args and not any(args[i:i + len(block_args)] == block_args for i in range(len(args))):
            args += block_args
        clashing = {name for name in block_env if env.get(name, block_env[name]) != block_env[name]}
        assert not clashing, f"{block.name}: its server needs {sorted(clashing)} set otherwise than an earlier block's"
        env.update(block_env)
    return start_server("--db", ":memory:", *args, env={**FAST_HASHING, **env})


def project_folder(tmp_path):
    """A folder as a project using the Supabase CLI has it, with the scenario catalogue."""
    work = tmp_path / "project"
    (work / "supabase").mkdir(parents=True)
    shutil.copy(REPOSITORY / "Tests/Fixtures/supabase/config.toml", work / "supabase/config.toml")
    (work / "scenarios").symlink_to(REPOSITORY / "scenarios", target_is_directory=True)
    return work


def run_against(block, server, work, tools, scripts):
    """Runs one block against a running server in a project folder; returns (result, source run)."""
    source = source_of(block, server)
    scripts.mkdir(exist_ok=True)
    script = scripts / {"node": "example.mjs", "swift": "main.swift"}.get(RUNNERS[block.language],
                                                                         f"example.{block.language}")
    script.write_text(source)
    environment = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}",
                   "DOC_SNIPPETS_BINARY": os.path.abspath(BIN),
                   "DOC_SNIPPETS_CURL_FAILURES": str(scripts / "curl-failures")}
    run = subprocess.run(command_for(block, script), cwd=work, capture_output=True, text=True, timeout=120,
                         env=environment, stdin=subprocess.DEVNULL)
    print(run.stdout, run.stderr, sep="")   # shown by pytest -rA: what the example printed
    failed = scripts / "curl-failures"
    if run.returncode == 0 and failed.exists():
        # The block went on past a failed request (its status lost in a pipeline): a failure too.
        run.returncode = 1
        run.stderr += "a request failed while the block went on:\n" + failed.read_text()
    return run, source


def run_example(block, start_server, tmp_path):
    """Runs a block as the rules above say; returns (the process's result, the source run, the server)."""
    tools_needed(block)
    server = start_emulator(start_server, block)
    run, source = run_against(block, server, project_folder(tmp_path), tool_folder(tmp_path), tmp_path)
    return run, source, server


@pytest.mark.parametrize("block", RUN, ids=[block.name for block in RUN])
def test_the_example_runs(block, start_server, tmp_path):
    run, source, server = run_example(block, start_server, tmp_path)
    assert run.returncode == 0, failure(block, source, run, server)


# Pages with more than one example to run: a page of one runs above as it would here.
PAGES_RUN = {page: blocks for page in PAGES if len(blocks := [b for b in RUN if b.page == page]) > 1}


@pytest.mark.parametrize("page", PAGES_RUN, ids=[str(page.relative_to(REPOSITORY)) for page in PAGES_RUN])
def test_the_page_runs_top_to_bottom_on_one_server(page, start_server, tmp_path):
    blocks = PAGES_RUN[page]
    for block in blocks:
        tools_needed(block)
    server = start_emulator(start_server, *blocks)
    work, tools = project_folder(tmp_path), tool_folder(tmp_path)
    for number, block in enumerate(blocks, 1):
        run, source = run_against(block, server, work, tools, tmp_path / f"block-{number}")
        assert run.returncode == 0, ("run after the page's earlier examples on the same server: "
                                     + failure(block, source, run, server))
