"""The package as an app will take it once a version is tagged: `.package(url:..., from: "0.1.0")`
(no release is tagged yet; the docs pin a commit with `revision:`, which SwiftPM does not check
for unsafe flags, so the version pin is the one to prove).

Some targets build with unsafe flags in release (Package.swift: GoTrue and AuthEmulator file by
file instead of whole-module, AuthTOML and AuthTemplate unoptimized, which the cold build's time
needs). SwiftPM refuses a dependency
pinned by version whose targets carry unsafe flags unless its manifest declares tools version 6.2
or later. Loading the package graph is enough to see the refusal, so nothing is compiled: a
clone of this repository with the working tree's Package.swift, tagged 0.1.0, and an app that
depends on it by version, whose `swift package show-dependencies` must succeed. The same with the
manifest's tools version lowered to 6.0 must fail with SwiftPM's refusal, which proves the check
runs."""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(not shutil.which("swift") or not shutil.which("git"), reason="needs swift and git")

APP_MANIFEST = """// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "App",
    platforms: [.macOS(.v15)],
    dependencies: [.package(url: "file://{url}", from: "0.1.0")],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "AuthEmulator", package: "emulator")])]
)
"""


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.email=test@example.com", "-c", "user.name=test", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=60)


def app_depending_by_version(tmp_path, manifest):
    """An app whose one dependency is this package at tag 0.1.0, with `manifest` as its Package.swift."""
    emulator = tmp_path / "emulator"
    git(tmp_path, "clone", "--quiet", "--no-checkout", ROOT, str(emulator))
    git(emulator, "checkout", "--quiet", "HEAD")
    (emulator / "Package.swift").write_text(manifest)
    git(emulator, "commit", "--quiet", "--allow-empty", "-am", "manifest under test")
    git(emulator, "tag", "0.1.0")
    app = tmp_path / "app"
    (app / "Sources" / "App").mkdir(parents=True)
    (app / "Sources" / "App" / "main.swift").write_text("import AuthEmulator\n")
    (app / "Package.swift").write_text(APP_MANIFEST.format(url=emulator))
    return app


def show_dependencies(app):
    return subprocess.run(["swift", "package", "show-dependencies"], cwd=app, capture_output=True, text=True, timeout=300)


def working_manifest():
    with open(os.path.join(ROOT, "Package.swift")) as f:
        return f.read()


def test_the_manifest_declares_unsafe_flags_and_tools_version_6_2():
    manifest = working_manifest()
    assert manifest.startswith("// swift-tools-version:6.2\n")
    assert ".unsafeFlags(" in manifest


def test_an_app_can_depend_on_the_package_by_version(tmp_path):
    result = show_dependencies(app_depending_by_version(tmp_path, working_manifest()))
    assert result.returncode == 0, result.stderr
    assert "unsafe build flags" not in result.stdout + result.stderr


def test_with_tools_version_6_0_swiftpm_refuses_it(tmp_path):
    manifest = re.sub(r"^// swift-tools-version:6\.2\n", "// swift-tools-version:6.0\n", working_manifest())
    result = show_dependencies(app_depending_by_version(tmp_path, manifest))
    assert result.returncode != 0
    assert "contains unsafe build flags" in result.stderr
