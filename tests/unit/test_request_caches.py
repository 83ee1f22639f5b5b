"""The request path's caches answer exactly what the uncached code would: `render.clean` (and
its ASCII fast path) and the token counter."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nous.context import render
from nous.text import tokens


def slow_visible(text: str) -> str:
    return "".join(c for c in text if render._visible(c))


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_ascii_fast_path_matches_the_unicode_rule(text: str) -> None:
    render.clean.cache_clear()
    assert render.clean(text) == render.clean.__wrapped__(slow_visible(text))


def test_controls_and_invisible_characters_are_removed() -> None:
    assert render.clean("rm\x00 -rf\x1b[31m\x7f ok") == "rm -rf[31m ok"
    assert render.clean("zero\u200bwidth \u202eevil") == "zerowidth evil"


def test_token_count_cache_gives_the_encodings_count() -> None:
    counter = tokens.counter()
    text = "Payments go through the PaymentGateway adapter."
    fresh = tokens.TiktokenCounter(counter.name)
    assert counter.count(text) == fresh.count(text) == counter.count(text)
    long = "word " * 2000  # beyond the cached length: counted every time, still right
    assert counter.count(long) == fresh.count(long) > 1000
