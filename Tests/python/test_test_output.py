"""scripts/test's short output: the filters it passes the build's and Swift Testing's output
through by default (docs/tests.md, "What it prints"). They are read out of the script and run
by bash on sample logs, so the script's own text is what is tested; the note naming the system
package the browser tests lack is read from the whole script, run with stubs for the builds and
test runners."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "test"

SWIFT_LOG = """\
◇ Test run started.
↳ Testing Library Version: 6.3.1 (937120cbc281cf2)
↳ Target Platform: x86_64-unknown-linux-gnu
◇ Suite ParserTests started.
◇ Test parsesNumbers() started.
◇ Test case passing 1 argument text → "a
b" to rejects(_:) started.
✔ Test parsesNumbers() passed after 0.012 seconds.
◇ Test rejectsGarbage() started.
✘ Test rejectsGarbage() recorded an issue at ParserTests.swift:31:9: Expectation failed: (status → 200) == 400
↳ the body was: {"ok":true}
✘ Test rejectsGarbage() failed after 0.020 seconds with 1 issue.
a line a test printed
✘ Suite ParserTests failed after 0.031 seconds with 1 issue.
✘ Test run with 2 tests in 1 suite failed after 0.033 seconds with 1 issue.
"""


def run_filter(function, text, verbose="0"):
    source = SCRIPT.read_text()
    match = re.search(rf"^{function}\(\) {{\n.*?^}}\n", source, re.S | re.M)
    assert match, f"scripts/test has no {function}"
    return subprocess.run(["bash", "-c", f"set -euo pipefail; verbose={verbose}\n{match.group(0)}\n{function}"],
                          input=text, capture_output=True, text=True, check=True, timeout=30).stdout


def test_swift_output_keeps_failures_and_suites_and_drops_progress():
    shown = run_filter("swift_test_output", SWIFT_LOG)
    assert shown.splitlines() == [
        "✘ Test rejectsGarbage() recorded an issue at ParserTests.swift:31:9: Expectation failed: (status → 200) == 400",
        "↳ the body was: {\"ok\":true}",
        "✘ Test rejectsGarbage() failed after 0.020 seconds with 1 issue.",
        "a line a test printed",
        "✘ Suite ParserTests failed after 0.031 seconds with 1 issue.",
        "✘ Test run with 2 tests in 1 suite failed after 0.033 seconds with 1 issue.",
    ]


def test_a_passing_run_shows_each_suite_and_the_count():
    log = "◇ Suite A started.\n◇ Test t() started.\n✔ Test t() passed after 0.001 seconds.\n" \
          "✔ Suite A passed after 0.002 seconds.\n✔ Test run with 1 test in 1 suite passed after 0.003 seconds.\n"
    assert run_filter("swift_test_output", log).splitlines() == [
        "✔ Suite A passed after 0.002 seconds.",
        "✔ Test run with 1 test in 1 suite passed after 0.003 seconds.",
    ]


def test_coloured_output_is_shortened_the_same_way():
    # Swift Testing colours its symbols when it writes to a pipe.
    coloured = SWIFT_LOG.replace("✔", "\x1b[92m✔\x1b[0m").replace("✘", "\x1b[91m✘\x1b[0m").replace("◇", "\x1b[1m◇\x1b[0m")
    shown = run_filter("swift_test_output", coloured)
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in shown.splitlines()]
    assert plain == run_filter("swift_test_output", SWIFT_LOG).splitlines()
    assert "\x1b[91m✘\x1b[0m" in shown


def test_in_process_emulator_logs_are_left_out():
    log = "auth-emulator: sms: missing Twilio account SID\n✔ Suite SMSTests passed after 0.1 seconds.\n"
    assert run_filter("swift_test_output", log).splitlines() == ["✔ Suite SMSTests passed after 0.1 seconds."]
    assert run_filter("swift_test_output", log, verbose="1") == log


def test_verbose_prints_everything():
    assert run_filter("swift_test_output", SWIFT_LOG, verbose="1") == SWIFT_LOG
    build = "[1/9] Compiling AuthJSON JSON.swift\nSources/A.swift:3:1: warning: unused\n[9/9] Linking x\nBuild complete! (1.0s)\n"
    assert run_filter("build_output", build, verbose="1") == build


def test_build_output_keeps_warnings_errors_and_the_result():
    build = ("Building for debugging...\n[1/9] Compiling AuthJSON JSON.swift\n"
             "Sources/A.swift:3:1: warning: variable 'x' was never used\n[9/9] Linking auth-emulator\n"
             "Build complete! (12.3s)\n")
    assert run_filter("build_output", build).splitlines() == [
        "Building for debugging...",
        "Sources/A.swift:3:1: warning: variable 'x' was never used",
        "Build complete! (12.3s)",
    ]
    # Nothing left to print is not a failure of the filter.
    assert run_filter("build_output", "[1/1] Write swift-version.txt\n") == ""


def test_the_script_parses():
    # The filters are read out of the script above; this checks the whole of it.
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True, timeout=30)


# --- which system package the browser tests lack -------------------------------------------

# What the script runs besides the builds and test runners the test replaces with stubs.
SCRIPT_TOOLS = ("bash", "dirname", "uname", "mktemp", "rm", "cat", "grep", "awk", "env", "flock", "cut", "head", "tail")
# Where the script looks for the browser and its driver besides PATH.
FALLBACK_DIRS = ("/usr/bin", "/usr/lib/chromium")
PACKAGES = {"chromium": "chromium", "chromedriver": "chromium-driver"}


def run_script_without(program, tmp_path, ci=False):
    """Runs scripts/test as it is with `swift`, the Swift test binary and Python replaced by stubs
    that succeed, and `program` (chromium or chromedriver) nowhere the script looks: not on PATH
    (the other one is, as a stub), and any copy installed in the script's fallback folders hidden
    behind /dev/null, which is not executable, in a private mount namespace."""
    stubs = tmp_path / "stubs"
    tools = tmp_path / "tools"
    built = tmp_path / "build"
    for folder in (stubs, tools, built):
        folder.mkdir(parents=True)

    def stub(path, body="exit 0"):
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)

    stub(stubs / "swift", f'[ "$2" = --show-bin-path ] && echo "{built}"; exit 0')
    stub(built / "supabase-auth-emulatorPackageTests.xctest",
         "echo '✔ Test run with 1 test in 1 suite passed after 0.001 seconds.'")
    stub(stubs / "python")
    other = next(name for name in PACKAGES if name != program)
    stub(stubs / other)
    for tool in SCRIPT_TOOLS:
        (tools / tool).symlink_to(shutil.which(tool))
    env = {"PATH": f"{stubs}:{tools}", "HOME": str(tmp_path), "AUTH_EMULATOR_PYTHON": str(stubs / "python"),
           "AUTH_EMULATOR_PORTABLE_PASS": "0", "AUTH_EMULATOR_TEST_VERBOSE": "0"}
    if ci:
        env["CI"] = "true"
    command = [str(SCRIPT)]
    installed = [f"{folder}/{program}" for folder in FALLBACK_DIRS if os.path.exists(f"{folder}/{program}")]
    if installed:
        # Not root: a user namespace too, in which this user may mount.
        unshare = [shutil.which("unshare") or "unshare", "-m", *([] if os.geteuid() == 0 else ["-r"])]
        if not shutil.which("unshare") or subprocess.run([*unshare, "true"], capture_output=True).returncode != 0:
            pytest.skip(f"{program} is installed and mount namespaces are not allowed here to hide it")
        hide = " && ".join(f'{shutil.which("mount")} --bind /dev/null "{path}"' for path in installed)
        command = [*unshare, "--propagation", "private", "/bin/sh", "-c", f'{hide} && exec "$@"', "sh", *command]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    return [line for line in result.stderr.splitlines() if "browser tests" in line]


@pytest.mark.parametrize("program", ["chromedriver", "chromium"])
def test_a_missing_browser_package_is_named_alone(tmp_path, program):
    package = PACKAGES[program]
    assert run_script_without(program, tmp_path) == [
        f"note: {package} not installed: the browser tests (Tests/python/test_browser_*.py) are skipped;"
        f" apt-get install -y {package} to run them"
    ]
    assert run_script_without(program, tmp_path / "ci", ci=True) == [
        f"error: the browser tests need {package} under CI (apt-get install -y {package})"
    ]


# --- each warning once, a line per quarter of the build -------------------------------------

WARNING = """\
/src/Sources/A/Platform.swift:79:24: warning: 'init(cString:)' is deprecated [#DeprecatedDeclaration]
 78 |                 guard x else { return nil }
 79 |                 return String(cString: buffer)
    |                        `- warning: 'init(cString:)' is deprecated [#DeprecatedDeclaration]
 80 |             }

[#DeprecatedDeclaration]: <https://docs.swift.org/compiler/documentation/diagnostics/deprecated-declaration>
"""


def test_a_warning_reported_by_several_compiler_jobs_is_printed_once():
    build = "Building for debugging...\n" + "[3/300] Compiling A a.swift\n" + WARNING * 3 + "Build complete! (1.0s)\n"
    assert run_filter("build_output", build) == "Building for debugging...\n" + WARNING + "Build complete! (1.0s)\n"
    # Another warning at another place is printed too.
    other = WARNING.replace(":79:24:", ":90:5:")
    assert run_filter("build_output", WARNING + other).count("warning: 'init(cString:)'") == 4


def test_a_long_build_prints_a_line_per_quarter_of_its_steps():
    build = "".join(f"[{n}/400] Compiling A f{n}.swift\n" for n in range(1, 401)) + "Build complete! (9.0s)\n"
    assert run_filter("build_output", build).splitlines() == [
        "   25% of the build steps (100/400)",
        "   50% of the build steps (200/400)",
        "   75% of the build steps (300/400)",
        "   100% of the build steps (400/400)",
        "Build complete! (9.0s)",
    ]


# --- the summary: every process runs, every failure is named ---------------------------------

def swift_counts(log, status="0", tmp_path=None):
    source = SCRIPT.read_text()
    match = re.search(r"^swift_counts\(\) {\n.*?^}\n", source, re.S | re.M)
    assert match, "scripts/test has no swift_counts"
    (tmp_path / "one.log").write_text(log)
    return subprocess.run(["bash", "-c", f"set -euo pipefail; work_dir={tmp_path}\n{match.group(0)}\nswift_counts one {status}"],
                          capture_output=True, text=True, check=True, timeout=30).stdout.splitlines()


def test_swift_counts_read_the_closing_line_and_name_each_failure(tmp_path):
    assert swift_counts(SWIFT_LOG, "1", tmp_path) == ["1 1 0", "rejectsGarbage()"]
    passing = "✔ Test run with 1,234 tests in 150 suites passed after 30.1 seconds.\n"
    assert swift_counts(passing, "0", tmp_path) == ["1234 0 0"]
    coloured = SWIFT_LOG.replace("✘", "\x1b[91m✘\x1b[0m")
    assert swift_counts(coloured, "1", tmp_path) == ["1 1 0", "rejectsGarbage()"]


def test_a_crashed_swift_process_counts_as_a_failure(tmp_path):
    crashed = "◇ Test run started.\n◇ Test deep() started.\n"
    assert swift_counts(crashed, "139", tmp_path) == [
        "0 1 0", 'the Swift test process "one" ended without its closing line (exit status 139)']


def run_stubbed_script(tmp_path, xctest, python, **env):
    """Runs the whole script with stubs for `swift`, the Swift test binary (`xctest`: its shell
    body) and Python (`python`), and the browser and its driver present; its result."""
    stubs, tools, built = tmp_path / "stubs", tmp_path / "tools", tmp_path / "build"
    for folder in (stubs, tools, built):
        folder.mkdir()

    def stub(path, body):
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)

    stub(stubs / "swift", f'[ "$2" = --show-bin-path ] && echo "{built}"; exit 0')
    stub(built / "supabase-auth-emulatorPackageTests.xctest", xctest)
    stub(stubs / "python", python)
    for name in ("chromium", "chromedriver"):
        stub(stubs / name, "exit 0")
    for tool in SCRIPT_TOOLS:
        (tools / tool).symlink_to(shutil.which(tool))
    env = {"PATH": f"{stubs}:{tools}", "HOME": str(tmp_path), "AUTH_EMULATOR_PYTHON": str(stubs / "python"),
           "AUTH_EMULATOR_PORTABLE_PASS": "0", "AUTH_EMULATOR_TEST_VERBOSE": "0", **env}
    return subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)


def summary_lines(result):
    """The script's output lines, the seconds left out of its timing lines."""
    return [re.sub(r" in \d+ s", "", line) for line in result.stdout.splitlines()]


def test_a_failing_swift_process_hides_neither_the_others_nor_pytest(tmp_path):
    """The Swift test process for GoTrueTests fails, the others pass, pytest runs all the same
    and fails one test; the summary names both and the script exits non-zero."""
    result = run_stubbed_script(tmp_path, xctest="""
if [ "$4" = '^GoTrueTests\\.' ]; then
  echo '✘ Test signsUp() failed after 0.1 seconds with 1 issue.'
  echo '✘ Test run with 10 tests in 2 suites failed after 0.2 seconds with 1 issue.'
  exit 1
fi
echo '✔ Test run with 5 tests in 1 suite passed after 0.1 seconds.'""", python="""
echo 'FAILED Tests/python/test_a.py::test_b - assert 1 == 2'
echo '1 failed, 7 passed, 2 skipped in 1.50s'
exit 1""")
    assert result.returncode != 0
    lines = summary_lines(result)
    assert "== Swift tests: 19 passed, 1 failed (3 processes)" in lines
    assert "== pytest: 7 passed, 1 failed, 2 skipped" in lines
    failed = lines[lines.index("== failed:") + 1:-1]
    assert failed == ["   Swift (gotrue): signsUp()",
                      "   pytest: FAILED Tests/python/test_a.py::test_b - assert 1 == 2"]
    assert lines[-1] == "tests: 26 passed, 2 failed, 2 skipped"


def test_the_postgres_pass_runs_the_swift_suites_as_a_process_of_its_own(tmp_path):
    """With PostgreSQL's server binaries (AUTH_EMULATOR_PG_BIN), a fifth Swift process runs the
    GoTrue and scenario suites with AUTH_EMULATOR_TEST_DB=postgres: its tests are counted, its
    failure is named by the process, and pytest is told to run its own Postgres pass."""
    result = run_stubbed_script(tmp_path, AUTH_EMULATOR_PG_BIN=str(tmp_path), xctest="""
if [ "$AUTH_EMULATOR_TEST_DB" = postgres ]; then
  [ "$4" = '^(GoTrueTests|AuthScenariosTests)\\.' ] || exit 3
  echo '✘ Test takenPhone() failed after 0.1 seconds with 1 issue.'
  echo '✘ Test run with 10 tests in 2 suites failed after 0.2 seconds with 1 issue.'
  exit 1
fi
echo '✔ Test run with 5 tests in 1 suite passed after 0.1 seconds.'""", python="""
[ "$AUTH_EMULATOR_TEST_POSTGRES" = 1 ] || exit 3
echo '7 passed in 1.50s'""")
    assert result.returncode != 0
    lines = summary_lines(result)
    assert "== Postgres pass (AUTH_EMULATOR_TEST_DB=postgres): Swift GoTrue and scenario suites" in lines
    assert "== Swift tests: 24 passed, 1 failed (4 processes)" in lines
    assert lines[lines.index("== failed:") + 1:-1] == ["   Swift (postgres): takenPhone()"]
    assert lines[-1] == "tests: 31 passed, 1 failed"
