"""The encoding's constructor arguments cached beside the tiktoken file: an encoding built from
them counts exactly as tiktoken's own, and a damaged cache is rebuilt, never trusted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import tiktoken

from nous import assets
from nous.settings import Settings
from nous.text import tokens

TEXTS = [
    "Use the repository's Makefile targets; never call pytest directly in CI.",
    "emoji 🎉 and accents: café, naïve — and <|endoftext|> as plain text",
    "def f(x):\n    return x ** 2  # 1234567890",
    "",
]


@pytest.mark.parametrize("name", tokens.ENCODINGS)
def test_cached_arguments_build_the_same_encoding(
    tmp_path: Path, environment: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    environment(TIKTOKEN_CACHE_DIR=str(tmp_path))  # where Nous unpacks the encoding …
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # … and where tiktoken reads it
    folder = tokens._seed_cache(name)
    entry = assets.manifest_entry("encodings", name)
    args_file = folder / f"{entry['cache_key']}.tiktoken-{tiktoken.__version__}.args"
    assert not args_file.exists()
    first = tokens.TiktokenCounter(name, folder)  # tiktoken's way; writes the arguments
    assert args_file.is_file()
    second = tokens.TiktokenCounter(name, folder)  # from the arguments
    reference = tiktoken.get_encoding(name)
    for text in TEXTS:
        expected = len(reference.encode_ordinary(text))
        assert first.count(text) == second.count(text) == expected
        assert second.truncate(text, 5) == first.truncate(text, 5)
    assert second._encoding.n_vocab == reference.n_vocab
    assert second._encoding.special_tokens_set == reference.special_tokens_set


def test_a_damaged_arguments_file_is_rebuilt(
    tmp_path: Path, environment: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "cl100k_base"
    environment(TIKTOKEN_CACHE_DIR=str(tmp_path))  # where Nous unpacks the encoding …
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # … and where tiktoken reads it
    folder = tokens._seed_cache(name)
    tokens.TiktokenCounter(name, folder)
    (args_file,) = folder.glob("*.args")
    whole = args_file.read_bytes()
    args_file.write_bytes(whole[: len(whole) // 2])  # a torn write
    counter = tokens.TiktokenCounter(name, folder)
    assert counter.count(TEXTS[0]) == len(tiktoken.get_encoding(name).encode_ordinary(TEXTS[0]))
    assert args_file.read_bytes() == whole
