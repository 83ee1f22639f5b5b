"""Word rarity that means the same thing in every store (design §2.5: the gate's features must not
collapse on a store of five memories).

A store's own document frequencies say which words are rare *here*, but only once it holds
enough memories: in five, "dependency" and "add" are each in one or none, and the IDF of both is
the same. So each word's weight blends the store's IDF with a background rarity from English
usage (`data/wordfreq-en.tsv.gz`, derived from the wordfreq package: see its NOTICE), the
store's share growing with its size: `n / (n + store_half)`.
"""

from __future__ import annotations

import functools
import gzip
import math
import threading
from importlib import resources

DATA = "wordfreq-en.tsv.gz"
COMMON_ZIPF = 8.0
"""A word this frequent (Zipf: log10 per billion words; "the" is 7.7) is not rare at all …"""
RARE_ZIPF = 2.0
"""… and one this infrequent (or absent from the list: names, identifiers) is fully rare."""
FLOOR = 0.05


@functools.cache
def _table() -> dict[str, int]:
    """{word: Zipf frequency × 10}, read once per process (~30 ms)."""
    raw = resources.files("nous").joinpath(f"data/{DATA}").read_bytes()
    cells = gzip.decompress(raw).decode("ascii").split()
    return dict(zip(cells[0::2], map(int, cells[1::2]), strict=True))


def preload() -> None:
    """Read the table on a thread while a one-shot command opens its store and loads its model
    (onnxruntime and SQLite release the GIL meanwhile); a first lookup waits for it."""
    threading.Thread(target=_table, name="nous-rarity", daemon=True).start()


@functools.lru_cache(maxsize=65_536)
def background(word: str) -> float:
    """How rare `word` is in English, 0..1 (absent words, such as identifiers, are 1)."""
    tenths = _table().get(word)
    if tenths is None:  # absent: a name, an identifier, a rare word
        return 1.0
    zipf = tenths / 10
    return max(FLOOR, min(1.0, (COMMON_ZIPF - zipf) / (COMMON_ZIPF - RARE_ZIPF)))


def store_rarity(df: int, total: int) -> float:
    """The store's IDF of a word held by `df` of `total` memories, scaled to 0..1."""
    if total <= 0:
        return 1.0
    df = min(max(0, df), total)
    idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
    return idf / math.log(1 + (total + 0.5) / 0.5)


def blended(word: str, df: int, total: int, store_half: float) -> float:
    """The weight of `word` in a query: the store's rarity and the background's, the store's
    share `total / (total + store_half)`."""
    share = total / (total + store_half) if total > 0 else 0.0
    return share * store_rarity(df, total) + (1 - share) * background(word)
