"""Settings: defaults, camelCase keys from clients, bad values fall back with a message."""

from __future__ import annotations

from nous import settings


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
