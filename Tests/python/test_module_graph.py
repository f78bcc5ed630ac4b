"""Package.swift lists exactly what each target imports (docs/architecture.md): every module of
this package a file imports is a declared dependency of its target, and every declared Swift
dependency is imported somewhere in the target. SwiftPM itself refuses cycles, so a graph that
matches the imports points down only."""
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = re.compile(r'\.(target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)"')


def targets():
    """name -> (kind, declared dependencies, source folder), read from Package.swift."""
    text = open(os.path.join(ROOT, "Package.swift")).read()
    starts = [(m.start(), m.group(1), m.group(2)) for m in TARGET.finditer(text)]
    found = {}
    for index, (start, kind, name) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(text)
        body = text[start:end]
        listed = re.search(r"dependencies:\s*\[(.*?)\]", body, re.S)
        deps = set(re.findall(r'"([^"]+)"', listed.group(1))) if listed else set()
        path = re.search(r'path:\s*"([^"]+)"', body)
        folder = path.group(1) if path else ("Tests/" if kind == "testTarget" else "Sources/") + name
        found[name] = (kind, deps, folder)
    return found


def module(name):
    return name.replace("-", "_")


def imports(folder):
    found = set()
    for path in glob.glob(os.path.join(ROOT, folder, "**", "*.swift"), recursive=True):
        for line in open(path, encoding="utf-8"):
            match = re.match(r"\s*(?:@testable |@_exported )?import (\w+)", line)
            if match:
                found.add(match.group(1))
    return found


def test_every_import_is_declared_and_every_declared_module_imported():
    table = targets()
    ours = {module(name) for name in table}
    assert {"GoTrue", "EmulatorTools", "EmulatorConfiguration", "AuthEmulator"} <= ours
    problems = []
    for name, (kind, deps, folder) in sorted(table.items()):
        if kind == "systemLibrary" or not os.path.isdir(os.path.join(ROOT, folder)):
            continue
        used = imports(folder)
        declared = {module(d) for d in deps}
        undeclared = sorted(i for i in used if i in ours and i not in declared and i != module(name))
        # C modules are reached through a Swift module's API as often as imported: only Swift
        # dependencies must be imported.
        unused = sorted(d for d in declared if d not in used and table.get(d.replace("_", "-"), table.get(d, ("",)))[0] != "systemLibrary"
                        and not d.startswith("C"))
        if undeclared:
            problems.append(f"{name} imports {undeclared} without declaring them")
        if unused:
            problems.append(f"{name} declares {unused} and imports none of them")
    assert problems == []


def test_gotrue_never_imports_the_modules_above_it():
    above = {"EmulatorTools", "EmulatorConfiguration", "AuthEmulator", "AuthScenarios", "ScenarioControl", "AuthEmulatorTesting"}
    assert imports("Sources/GoTrue") & above == set()
    assert imports("Sources/EmulatorTools") & (above - {"EmulatorTools"}) == set()
