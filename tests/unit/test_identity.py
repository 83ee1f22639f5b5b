"""The project-identity resolver (display name, key) and language detection."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from nous.workspace import detect, identity


def git_repo(path: Path, remote: str | None = None) -> Path:
    """A real git repository (`git init`), with `origin` set when given."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def test_pyproject_name_wins(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "My_Tool"\n')
    project = identity.resolve(tmp_path)
    assert project.name == "my_tool" and project.source == "pyproject.toml"
    assert project.scope == f"project:{project.key}"


def test_subfolder_of_a_git_repo_resolves_to_the_repo(tmp_path: Path) -> None:
    """A repository above the folder names it only when it tracks files there (a dotfiles home
    does not: tests/security/test_harvest_boundary.py)."""
    (tmp_path / "package.json").write_text(json.dumps({"name": "@acme/web"}))
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    (sub / "index.ts").write_text("")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "src"], check=True)
    assert identity.resolve(sub).name == "acme-web"


def test_monorepo_package_resolves_per_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "mono"\n')
    pkg = tmp_path / "packages" / "api"
    pkg.mkdir(parents=True)
    (pkg / "Cargo.toml").write_text('[package]\nname = "api-server"\n')
    assert identity.resolve(pkg).name == "api-server"
    assert identity.resolve(tmp_path).name == "mono"
    assert identity.resolve(pkg).key != identity.resolve(tmp_path).key


def test_go_mod_and_folder_fallbacks(tmp_path: Path) -> None:
    go = tmp_path / "svc"
    go.mkdir()
    (go / "go.mod").write_text("module github.com/acme/billing\n\ngo 1.22\n")
    assert identity.resolve(go).name == "billing"
    plain = tmp_path / "Plain Folder"
    plain.mkdir()
    project = identity.resolve(plain)
    assert (project.name, project.root, project.source) == (
        "plain-folder",
        plain.resolve(),
        "folder",
    )
    assert project.origin == str(plain.resolve()) and project.key.startswith("plain-folder-")


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("github.com/acme/widget/v2", "widget"),
        ("github.com/acme/widget/v10", "widget"),
        ('"github.com/acme/widget/v3" // quoted', "widget"),
        ("gopkg.in/yaml.v3", "yaml.v3"),
        ("example.com/tools/v1", "v1"),  # v1 is never a suffix in Go
    ],
)
def test_a_go_modules_major_version_suffix_is_not_its_name(
    tmp_path: Path, module: str, name: str
) -> None:
    (tmp_path / "go.mod").write_text(f"module {module}\n\ngo 1.22\n")
    assert identity.resolve(tmp_path).name == name


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


def test_same_named_repositories_get_different_keys(tmp_path: Path) -> None:
    with_remote = git_repo(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    without = git_repo(tmp_path / "scratch" / "api")
    plain_a, plain_b = tmp_path / "a" / "api", tmp_path / "b" / "api"
    plain_a.mkdir(parents=True)
    plain_b.mkdir(parents=True)
    projects = [identity.resolve(p) for p in (with_remote, without, plain_a, plain_b)]
    assert {p.name for p in projects} == {"api"}
    assert len({p.key for p in projects}) == 4
    assert len({p.scope for p in projects}) == 4
    assert projects[0].origin == "github.com/acme/api"
    assert all(p.key.startswith("api-") for p in projects)


def test_a_key_is_stable_and_follows_the_remote_not_the_folder(tmp_path: Path) -> None:
    first = git_repo(tmp_path / "one" / "api", "https://github.com/acme/api.git")
    clone = git_repo(tmp_path / "two" / "service", "git@github.com:acme/api.git")
    assert identity.resolve(first).key == identity.resolve(clone).key  # one repository
    assert identity.resolve(first) == identity.resolve(first)
    # its path key (before the remote was added) stays claimable as an alias
    assert identity.resolve(first).aliases == (
        identity.key_of("api", str((tmp_path / "one" / "api").resolve())),
    )


def test_a_subfolder_keeps_its_repository_key(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "api", "git@github.com:acme/api.git")
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    (sub / "main.py").write_text("")
    subprocess.run(["git", "-C", str(repo), "add", "src"], check=True)  # a folder the repo tracks
    assert identity.resolve(sub).key == identity.resolve(repo).key


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/api.git",
        "git@GitHub.com:acme/api",
        "ssh://git@github.com/acme/api.git",
        "ssh://git@github.com:22/acme/api.git/",
        "https://github.com/acme/api",
        "https://user:s3cret-token@github.com/acme/api.git",
        "http://github.com/acme/api.git?x=1#frag",
        "git://github.com/acme/api.git",
    ],
)
def test_remote_spellings_normalise_to_one_origin(url: str) -> None:
    assert identity.normalise_remote(url) == "github.com/acme/api"


def test_local_remotes_become_absolute_paths_and_credentials_never_survive(tmp_path: Path) -> None:
    assert identity.normalise_remote("file:///srv/git/api.git") == "file:/srv/git/api"
    assert identity.normalise_remote("/srv/git/api.git/") == "file:/srv/git/api"
    relative = identity.normalise_remote("../remote/api.git", tmp_path / "repo")
    assert relative == f"file:{(tmp_path / 'remote' / 'api').resolve()}"
    assert "s3cret" not in identity.normalise_remote("https://u:s3cret@host.example/x/y.git")
    assert identity.normalise_remote("") == ""


def test_an_unreadable_git_folder_falls_back_to_the_path_key(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # not a repository git can read
    project = identity.resolve(tmp_path)
    assert project.origin == str(tmp_path.resolve()) and project.aliases == ()
