"""Which code release builds leave unoptimized, function by function (`@_optimize(none)`).

The cold release build is bound by the optimizer's CPU time on two cores (docs/tests.md, "Build
and test time"). Functions that only run at start-up, in the emulator's own routes, in the
dashboard or when a project is made are marked `@_optimize(none)`, which skips the SIL optimizer
and LLVM's for them. A mark on a function a measured request runs (routing, tokens, the store,
the HTTP parser, JSON) would cost every request, so the files that may carry it are pinned here,
and in `Projects.swift`, which holds the per-request `ProjectRouter` too, so are the functions.
Reading the sources is enough: nothing is compiled."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = os.path.join(ROOT, "Sources")
MARK = "@_optimize(none)"
NOTE = "// Built unoptimized in release too (`@_optimize(none)` on its functions)"

# Every function of these files may be marked; each file says so at its top.
WHOLE_FILES = {
    "AuthEmulator/CLI.swift",
    "AuthEmulator/ConfigFile.swift",
    "AuthEmulator/ConfigRoutes.swift",
    "AuthEmulator/ConsoleText.swift",
    "AuthEmulator/Emulator+Fixtures.swift",
    "AuthEmulator/Emulator.swift",
    "AuthEmulator/EmulatorOptions.swift",
    "AuthEmulator/EnvironmentConfiguration.swift",
    "AuthEmulator/Exposure.swift",
    "AuthEmulator/Platform+Files.swift",
    "AuthEmulator/ProjectRoutes.swift",
    "AuthEmulator/SettingSyntax.swift",
    "AuthEmulator/SettingsReference.swift",
    "AuthEmulator/TemplateSources.swift",
    "AuthScenarios/ControlRoutes.swift",
    "AuthScenarios/Scenario.swift",
    "GoTrue/API/SettingsTable+Rows.swift",
    "GoTrue/API/SettingsTable.swift",
    "GoTrue/Emulator/ClockRoutes.swift",
    "GoTrue/Emulator/DashboardHTML.swift",
    "GoTrue/Emulator/DashboardPages.swift",
    "GoTrue/Emulator/DashboardRoutes.swift",
    "GoTrue/Emulator/DashboardTokens.swift",
    "GoTrue/Emulator/DashboardUsers.swift",
    "GoTrue/Emulator/FakeIdentityProviders.swift",
    "GoTrue/Emulator/FakeProviderRoutes.swift",
    "GoTrue/Emulator/FixtureRoutes.swift",
    "GoTrue/Emulator/MFARoutes.swift",
    "GoTrue/Emulator/OutboxRoutes.swift",
    "GoTrue/Emulator/SoftwareAuthenticator.swift",
    "GoTrue/Emulator/SoftwareWallet.swift",
    "GoTrue/Emulator/TestTokenRoutes.swift",
}

# Projects.swift: only what runs when a project is made, opened, closed or removed.
PROJECT_FILE = "AuthEmulator/Projects.swift"
PROJECT_MARKED = {
    "ProjectSpec.init(ref:configTOML:settings:inMemory:)", "ProjectSpec.init(json:)",
    "ProjectRegistry.create", "ProjectRegistry.remove", "ProjectRegistry.reopenStored", "ProjectRegistry.closeOthers",
    "ProjectRegistry.configure", "ProjectRegistry.open", "ProjectRegistry.externalURL",
    "ProjectKeys.separate", "ProjectKeys.uuidString", "DerivedBytes.init(secret:label:)", "DerivedBytes.fill",
}
# What a request runs: these must stay optimized.
PROJECT_HOT = {
    "ProjectRegistry.entry", "ProjectRegistry.project", "ProjectRegistry.resolve", "ProjectEntry.hosted",
    "ProjectRouter.route", "ProjectRouter.target", "ProjectRouter.hostRef", "ProjectRouter.isForDefaultProject",
    "ProjectRouter.respondsInline", "ProjectRouter.dispatch", "ProjectRouter.respond",
}


def swift_files():
    """Every Swift source, as a path relative to Sources/."""
    for directory, _, names in os.walk(SOURCES):
        for name in names:
            if name.endswith(".swift"):
                yield os.path.relpath(os.path.join(directory, name), SOURCES)


def read(relative):
    with open(os.path.join(SOURCES, relative)) as handle:
        return handle.read()


def declarations(text):
    """(type, name, marked) for each func and init, the type being the nearest enclosing
    class, struct, enum or extension declared at the start of a line."""
    found = []
    current = None
    for line in text.split("\n"):
        kind = re.match(r"(?:public |package |final |private |fileprivate )*(?:class|struct|enum|extension) (\w+)", line)
        if kind:
            current = kind.group(1)
            continue
        func = re.search(r"\bfunc (\w+)", line)
        init = re.match(r"\s*(?:@_optimize\(none\) )?(?:(?:public|package|private|fileprivate|convenience) )*init\(([^)]*)", line)
        if func:
            name = func.group(1)
        elif init:
            labels = "".join(part.split(":")[0].split()[0] + ":" for part in init.group(1).split(",") if ":" in part)
            name = f"init({labels})"
        else:
            continue
        found.append((current, name, MARK in line))
    return found


def test_only_the_pinned_files_carry_the_mark():
    marked = {relative for relative in swift_files() if MARK in read(relative)}
    assert marked == WHOLE_FILES | {PROJECT_FILE}, (
        f"marked but not pinned: {sorted(marked - WHOLE_FILES - {PROJECT_FILE})}; "
        f"pinned but not marked: {sorted(WHOLE_FILES | {PROJECT_FILE} - marked)}")


def test_request_path_modules_carry_no_mark():
    for module in ("AuthHTTP", "AuthJSON", "AuthStore", "AuthJWT", "AuthCrypto", "AuthPlatform"):
        for relative in swift_files():
            if relative.startswith(module + "/"):
                assert MARK not in read(relative), relative


def test_each_whole_file_says_why_at_its_top():
    for relative in sorted(WHOLE_FILES):
        head = "\n".join(read(relative).split("\n")[:20])
        assert NOTE in head, f"{relative}: no note on why it is built unoptimized"


def test_projects_marks_only_what_runs_outside_requests():
    decls = declarations(read(PROJECT_FILE))
    marked = {f"{owner}.{name}" for owner, name, is_marked in decls if is_marked}
    names = {f"{owner}.{name}" for owner, name, _ in decls}
    assert PROJECT_MARKED <= names, f"not found: {sorted(PROJECT_MARKED - names)}"
    assert PROJECT_HOT <= names, f"not found: {sorted(PROJECT_HOT - names)}"
    assert marked == PROJECT_MARKED, f"marked: {sorted(marked)}"
