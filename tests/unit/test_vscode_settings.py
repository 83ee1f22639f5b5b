"""The VS Code extension's `nous.*` settings are the daemon's `Settings` fields, defaults alike."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic.alias_generators import to_snake

from nous import settings

PACKAGE_JSON = Path(__file__).resolve().parents[2] / "vscode-client" / "package.json"


def _properties() -> dict[str, dict[str, object]]:
    manifest = json.loads(PACKAGE_JSON.read_text())
    props: dict[str, dict[str, object]] = manifest["contributes"]["configuration"]["properties"]
    return props


def test_every_vscode_setting_is_a_settings_field() -> None:
    names = {to_snake(key.removeprefix("nous.")) for key in _properties()}
    assert names, "package.json declares no nous.* settings"
    assert names <= set(settings.Settings.model_fields), names - set(settings.Settings.model_fields)


def test_vscode_defaults_are_the_daemon_defaults() -> None:
    defaults = settings.Settings()
    for key, prop in _properties().items():
        name = to_snake(key.removeprefix("nous."))
        expected = getattr(defaults, name)
        shown = prop["default"]
        assert shown == ("" if expected is None else expected), key


def test_vscode_defaults_load_without_problems() -> None:
    options = {
        key.removeprefix("nous."): prop["default"]
        for key, prop in _properties().items()
        if prop["default"] != ""
    }
    _, problems = settings.load(options)
    assert problems == []
