"""Settings: defaults, camelCase keys from clients, bad values fall back with a message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from nous import settings
from nous.text.secrets import library


def test_defaults() -> None:
    s = settings.Settings()
    assert (s.encoding, s.recall_budget, s.session_cap) == ("o200k_base", 500, 3000)


def test_client_options_in_camel_case_apply() -> None:
    s, problems = settings.load({"recallBudget": 800, "encoding": "cl100k_base"})
    assert (s.recall_budget, s.encoding, problems) == (800, "cl100k_base", [])


def test_bad_value_keeps_default_and_reports_it() -> None:
    s, problems = settings.load(
        {"sessionCap": -5, "encoding": "gpt2", "bogus": 1, "recallBudget": 700}
    )
    assert s.session_cap == 3000 and s.encoding == "o200k_base" and s.recall_budget == 700
    assert len(problems) == 3
    assert any("sessionCap" in p for p in problems) and any("bogus" in p for p in problems)


# -- sources and precedence: flag > client option > environment > default ---------------------


def test_each_source_overrides_the_ones_below_it(tmp_path: Path) -> None:
    flag, option, env = tmp_path / "flag.db", tmp_path / "option.db", tmp_path / "env.db"
    assert settings.load()[0].db is None  # the default: the user data dir
    assert settings.load(env={"NOUS_DB": str(env)})[0].db == env
    assert settings.load({"db": str(option)}, env={"NOUS_DB": str(env)})[0].db == option
    loaded, problems = settings.load(
        {"db": str(option)}, env={"NOUS_DB": str(env)}, flags={"db": flag}
    )
    assert loaded.db == flag and problems == []
    unset = settings.load({"db": str(option)}, env={"NOUS_DB": str(env)}, flags={"db": None})
    assert unset[0].db == option  # a flag not given is no source


def test_a_bad_source_leaves_the_next_one_down_standing() -> None:
    good = "postgresql://nous@env.internal/nous"
    loaded, problems = settings.load(
        {"teamStore": "postgresql://nous:pw@client.internal/nous"}, env={"NOUS_TEAM_STORE": good}
    )
    assert loaded.team_store == good  # the client's URL held a password: refused, env stands
    assert len(problems) == 1 and "teamStore" in problems[0] and "pw@" not in problems[0]


def test_an_empty_variable_is_unset() -> None:
    loaded, problems = settings.load(env={"NOUS_DB": "", "NOUS_MODELS_DIR": ""})
    assert (loaded.db, loaded.models_dir, problems) == (None, None, [])


def test_a_bad_flag_is_refused_by_name() -> None:
    with pytest.raises(settings.BadFlag, match=r"^--encoding: .*o200k_base"):
        settings.load(flags={"encoding": "gpt2"})
    with pytest.raises(settings.BadFlag, match=r"^--max-recalls: "):
        settings.load(flags={"agent_max_recalls": -1})


def test_the_environment_only_fields_are_not_a_clients_to_set(tmp_path: Path) -> None:
    loaded, problems = settings.load(
        {"modelsDir": str(tmp_path), "teamStorePassword": "x", "secretsEngine": "builtin"}
    )
    assert (loaded.models_dir, loaded.team_store_password, loaded.secrets_engine) == (
        None, None, None,
    )  # fmt: skip
    assert len(problems) == 3 and all("environment only" in p for p in problems)


def test_environment_reads_only_the_declared_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOUS_DB", "/tmp/x.db")
    monkeypatch.setenv("NOUS_NOT_A_SETTING", "1")
    monkeypatch.setenv("NOUS_MODELS_DIR", "")
    read = settings.environment()
    assert read["NOUS_DB"] == "/tmp/x.db"
    assert "NOUS_NOT_A_SETTING" not in read and "NOUS_MODELS_DIR" not in read
    assert set(read) <= set(settings.ENV.values())


def test_install_hands_the_secret_engine_choice_to_the_scanner(
    environment: Callable[..., settings.Settings],
) -> None:
    environment(NOUS_SECRETS_ENGINE="builtin")
    assert library.available() is False  # the own rules alone, whatever is installed


# -- one table in docs/configuration.md ---------------------------------------------------------

DOC = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()


def test_every_setting_and_each_of_its_sources_is_in_the_table() -> None:
    rows = {
        line.split("|")[1].strip().strip("`"): line
        for line in DOC.splitlines()
        if line.startswith("| `")
    }
    for name in settings.Settings.model_fields:
        assert name in rows, f"{name} is missing from docs/configuration.md"
        declared = settings.sources(name)
        row = rows[name]
        if declared.client:
            assert f"`{settings.client_key(name)}`" in row, name
        if declared.env:
            assert f"`{declared.env}`" in row, name
        if declared.flag:
            assert f"`{declared.flag}`" in row, name
