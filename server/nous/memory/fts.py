"""The full-text query of a search: the input's words less stop words, as an FTS5 expression
(the store runs it against `memories_fts`), the very common ones left out in a large store."""

from __future__ import annotations

from nous.text.words import SEARCH_STOP, split


def fts_terms(text: str) -> list[str]:
    """The query's non-stop words, lower-cased, each once, in order (at most 64)."""
    words = [w for w in split(text) if w not in SEARCH_STOP]
    return list(dict.fromkeys(words))[:64]


def fts_match(terms: list[str]) -> str:
    """An FTS5 expression: `terms`, quoted, joined with OR."""
    return " OR ".join(f'"{w}"' for w in terms)


def prune(terms: list[str], frequencies: dict[str, int], total: int, share: float) -> list[str]:
    """The terms held by at most `share` of the `total` documents, or the rarest one when every
    term is that common: an OR-query's cost is the postings of its terms, and a word in a fifth
    of the memories costs a fifth of the store while its BM25 weight (IDF) is small."""
    limit = share * total
    kept = [t for t in terms if frequencies.get(t, 0) <= limit]
    if kept or not terms:
        return kept
    return [min(terms, key=lambda t: frequencies.get(t, 0))]
