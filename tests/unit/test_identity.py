"""The project-identity resolver and language detection."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from nous.workspace import detect, identity


def test_pyproject_name_wins(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "My_Tool"\n')
    project = identity.resolve(tmp_path)
    assert project.id == "my_tool" and project.source == "pyproject.toml"
    assert project.scope == "project:my_tool"


def test_subfolder_of_a_git_repo_resolves_to_the_repo(tmp_path: Path) -> None:
    """A repository above the folder names it only when it tracks files there (a dotfiles home
    does not: tests/security/test_harvest_boundary.py)."""
    (tmp_path / "package.json").write_text(json.dumps({"name": "@acme/web"}))
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    (sub / "index.ts").write_text("")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "src"], check=True)
    assert identity.resolve(sub).id == "acme-web"


def test_monorepo_package_resolves_per_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mono"\n')
    pkg = tmp_path / "packages" / "api"
    pkg.mkdir(parents=True)
    (pkg / "Cargo.toml").write_text('[package]\nname = "api-server"\n')
    assert identity.resolve(pkg).id == "api-server"
    assert identity.resolve(tmp_path).id == "mono"


def test_go_mod_and_folder_fallbacks(tmp_path: Path) -> None:
    go = tmp_path / "svc"
    go.mkdir()
    (go / "go.mod").write_text("module github.com/acme/billing\n\ngo 1.22\n")
    assert identity.resolve(go).id == "billing"
    plain = tmp_path / "Plain Folder"
    plain.mkdir()
    assert identity.resolve(plain) == identity.Project("plain-folder", plain.resolve(), "folder")


def test_broken_manifest_falls_through(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("this is [not toml")
    assert identity.resolve(tmp_path).source == "git"


def test_languages_by_weighted_counts_skipping_vendored_trees(tmp_path: Path) -> None:
    for n in range(6):
        (tmp_path / f"m{n}.py").write_text("")
    (tmp_path / "a.ts").write_text("")
    vendored = tmp_path / "node_modules" / "x"
    vendored.mkdir(parents=True)
    for n in range(50):
        (vendored / f"v{n}.js").write_text("")
    assert detect.languages(tmp_path) == ["python"]
    assert detect.languages(tmp_path, active="go") == ["go", "python"]
