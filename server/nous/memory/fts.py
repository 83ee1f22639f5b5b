"""The full-text query of a search: the input's words less stop words, as an FTS5 expression
(the store runs it against `memories_fts`)."""

from __future__ import annotations

import re

_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        # near-stopwords in questions to a coding assistant
        "use",
        "using",
        "used",
        "should",
        "could",
        "can",
        "get",
        "make",
        "need",
        "want",
        "like",
        "also",
        "just",
        "about",
        "any",
        "some",
        "there",
        "here",
    ]
)


def fts_query(text: str) -> str:
    """An FTS5 expression: the query's non-stop words, quoted, joined with OR."""
    words = [w for w in re.findall(r"\w+", text.lower()) if w not in _STOPWORDS]
    unique = list(dict.fromkeys(words))[:64]
    return " OR ".join(f'"{w}"' for w in unique)
