"""The secret library loads and redacts with the network unreachable and an empty rule cache
(a first run on a machine), and `NOUS_SECRETS_ENGINE=builtin` runs the own rules alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

SCRIPT = r"""
import json, socket
def refuse(*args, **kwargs):
    raise OSError("network disabled by test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from nous import settings
from nous.text import secrets
settings.install(settings.load(env=settings.environment())[0])  # as every entry point does
token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
print(json.dumps({"engine": secrets.engine(), "text": secrets.redact("GITHUB_TOKEN=" + token)[0]}))
"""


def run(tmp_path: Path, **env: str) -> dict[str, str]:
    command = [sys.executable, "-c", SCRIPT]
    if (
        shutil.which("unshare")
        and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    ):
        command = ["unshare", "-n", *command]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "KF_RULE_CACHE_DIR": str(tmp_path / "rule-cache"), **env},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_library_compiles_its_rules_and_redacts_offline(tmp_path: Path) -> None:
    result = run(tmp_path)
    assert result["engine"].startswith("kingfisher ")
    assert result["text"] == "GITHUB_TOKEN=[REDACTED:github-pat]"


def test_the_builtin_engine_is_the_own_rules_alone(tmp_path: Path) -> None:
    result = run(tmp_path, NOUS_SECRETS_ENGINE="builtin")
    assert result["engine"] == "nous rules"
    assert result["text"] == "GITHUB_TOKEN=[REDACTED:github-token]"
