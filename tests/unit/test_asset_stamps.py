"""A model file's checksum is remembered per file (inode, size, modification and change times):
a later process skips hashing the very same file, and any change to it is hashed again."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from nous import assets
from nous.errors import AssetError
from nous.settings import Settings


@pytest.fixture
def model(tmp_path: Path, environment: Callable[..., Settings]) -> tuple[Path, str]:
    environment(NOUS_VERIFIED_CACHE=str(tmp_path / "cache" / "verified.json"))
    path = tmp_path / "model.onnx"
    path.write_bytes(b"weights " * 1000)
    assets._verified.cache_clear()
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_verified_file_is_stamped(model: tuple[Path, str], tmp_path: Path) -> None:
    path, sha = model
    assets._verified(path, sha)
    stamps = json.loads((tmp_path / "cache" / "verified.json").read_text())
    assert stamps == {str(path): assets._stamp(path, sha)}
    assets._verified.cache_clear()
    assets._verified(path, sha)  # the stamp matches: accepted


def test_a_file_changed_in_place_is_hashed_again(model: tuple[Path, str]) -> None:
    path, sha = model
    assets._verified(path, sha)
    before = path.stat()
    with path.open("r+b") as handle:  # same size, modification time put back
        handle.write(b"W")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assets._verified.cache_clear()
    with pytest.raises(AssetError, match="checksum mismatch"):
        assets._verified(path, sha)


def test_a_wrong_checksum_is_never_stamped(model: tuple[Path, str], tmp_path: Path) -> None:
    path, _ = model
    with pytest.raises(AssetError, match="checksum mismatch"):
        assets._verified(path, "0" * 64)
    assert not (tmp_path / "cache" / "verified.json").exists()
