"""Words as the full-text queries take them: the text's `\\w+` runs, lower-cased, in order.

The one splitter of the SQLite FTS query (`fts.fts_terms`), the memory browser's prefix search,
the team store's `tsquery`, the test embedder and the BM25 baseline. The ranking's own word
features (`context/relevance.py`: compounds such as `a.b-c` and its stop words; its stemmer is
FTS5's Porter, from `snowballstemmer`), the
dedup's word sets (three letters or more) and the intent's keywords split differently, on
purpose: changing them changes retrieval (docs/configuration.md does not cover them; the
closing note of issue 29 lists them).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")


def split(text: str) -> list[str]:
    """`text`'s words: its runs of word characters (`\\w+`), lower-cased, in order, repeats kept."""
    return _WORD.findall(text.lower())
