"""Words: the one home of how Nous splits text into words, which words it skips and how it stems
them (issue 29, item 5).

The reference is the store's full-text index, SQLite FTS5 with `porter unicode61
remove_diacritics 2` (`memory/migrations.py`); `tokens` spells its word rule in Python and
`stem` is its Porter stemmer. The other splitters are views of the same text that their callers
were fitted or tuned on, each named for what it keeps:

- `split`: the full-text query's words, the text's `\\w+` runs (with the diacritics and
  private-use characters FTS5 keeps in a token). A run is one or more FTS5 tokens: the query
  quotes each run, and FTS5 reads `"pr_bot"` as the phrase `pr bot`. The
  search, the browser's prefix search, the team store's `tsquery`, the test embedder, the
  dedup's word sets (`split` words of three letters or more) and the BM25 baseline take these.
- `compounds` and `content_words`: the ranking's words (`context/relevance.py`), ASCII
  identifiers kept whole (`api.v2`, `pr_bot`, `re-run`, `a:b`) and split at their joiners
  too, stop words and single letters out. The gate model was fitted on these features.
- `letters`: ASCII letter runs (shorthand lookup, an ADR's status word, small talk).
- `keywords` and `names`: the intent's topic words and the names of a proposal's alternative.

Stop words: `STOP` is the one list; `SEARCH_STOP` and `INTENT_STOP` name how the full-text
query's and the intent's lists differ from it, and why. The BM25 baseline keeps its own small
list on purpose (`evaluation/bm25.py`: the plain baseline an engine has to beat).
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata

import snowballstemmer

# -- the full-text index's tokens ------------------------------------------------------------

_DIACRITIC_LOW = 0x08029FDF  # U+0300..U+031F that FTS5 counts as diacritics (fts5_unicode2.c)
_DIACRITIC_HIGH = 0x000361F8  # … and U+0320..U+0331
_FTS5_KEEPS = frozenset("Ǡǡ")  # two marks FTS5's table does not strip (its own data's gap)


def _diacritic(char: str) -> bool:
    """A combining mark that FTS5's `remove_diacritics` drops (it does not end a token)."""
    code = ord(char)
    if code < 0x300 or code > 0x331:
        return False
    if code < 0x320:
        return bool(_DIACRITIC_LOW >> (code - 0x300) & 1)
    return bool(_DIACRITIC_HIGH >> (code - 0x320) & 1)


@functools.lru_cache(maxsize=4096)
def _folded(char: str) -> str | None:
    """`char` as FTS5 indexes it: case-folded, its diacritics removed; None when it separates."""
    if _diacritic(char):
        return ""
    kind = unicodedata.category(char)
    if kind[0] not in "LN" and kind != "Co":
        return None
    low = char.casefold()
    low = low if len(low) == 1 else char.lower()  # FTS5 folds one letter to one ("ß" stays)
    out = []
    for c in low:
        bare = unicodedata.normalize("NFD", c)
        marks = bare[1:]
        if c not in _FTS5_KEEPS and marks and bare[0] < "\x80" and all(map(_diacritic, marks)):
            c = bare[0]  # "é" is "e", "ṩ" is "s"; "ø" and "ά" keep their own letter
        if not _diacritic(c):
            out.append(c)
    return "".join(out)


def tokens(text: str) -> list[str]:
    """`text`'s tokens as SQLite FTS5's `unicode61 remove_diacritics 2` makes them: runs of
    letters, digits and private-use characters (Unicode L*, N*, Co), case-folded and without
    diacritics; everything else, `_` included, separates. The tests compare it with FTS5's own
    vocabulary over ASCII, Latin-1, Latin Extended-A/B and samples of other scripts."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    out: list[str] = []
    run: list[str] = []
    for char in text:
        folded = _folded(char)
        if folded is None or (folded == "" and not run and _diacritic(char)):
            if run:
                out.append("".join(run))
                run = []
            continue
        run.append(folded)
    if run:
        out.append("".join(run))
    return [t for t in out if t]


_ASCII_TOKEN = re.compile(r"[a-z0-9]+")

# -- the full-text query's words -------------------------------------------------------------

_MARKS = "".join(chr(c) for c in range(0x300, 0x332) if _diacritic(chr(c)))
_PRIVATE = "\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
_WORD = re.compile(f"[\\w{_PRIVATE}][\\w{_PRIVATE}{_MARKS}]*")


def split(text: str) -> list[str]:
    """`text`'s words, lower-cased, in order, repeats kept: its runs of word characters (`\\w`:
    letters, digits, `_`), private-use characters and, inside a run, the diacritics FTS5 drops.
    Each is one or more of `tokens` (a `_` joins them), which FTS5 reads as a phrase; on text
    without combining marks or private-use characters it is `re.findall(r"\\w+", text.lower())`."""
    return _WORD.findall(text.lower())


# -- the ranking's words: identifiers whole and in parts ------------------------------------

_COMPOUND = re.compile(r"[a-z0-9][a-z0-9_]*(?:[.:-][a-z0-9_]+)*")
_JOINER = re.compile(r"[._:-]")
_JOINERS = re.compile(r"[._:-]+")


def compounds(text: str) -> list[str]:
    """`text`'s ASCII words, lower-cased, an identifier's joiners kept inside it: `api.v2`,
    `pr_bot`, `re-run` and `a:b` are one compound each (a non-ASCII letter separates, and so
    does a doubled joiner: `std::vec` is two)."""
    return _COMPOUND.findall(text.lower())


def pieces(compound: str) -> list[str]:
    """`compound` and, when it has joiners (`.`, `_`, `:`, `-`), its parts: `api.v2_b` gives
    `api.v2_b`, `api`, `v2` and `b`. Dotted, snake and kebab names are found whole and by part."""
    return [compound, *_JOINERS.split(compound)] if _JOINER.search(compound) else [compound]


def is_content(word: str) -> bool:
    """A word that carries meaning: not a stop word, not a single character."""
    return len(word) > 1 and word not in STOP


def content_words(text: str) -> list[str]:
    """`text`'s content words: its `compounds` with their `pieces`, stop words and single
    characters left out, in order, repeats kept (the ranking's words)."""
    return [p for c in compounds(text) for p in pieces(c) if is_content(p)]


# -- other views ---------------------------------------------------------------------------

_LETTERS = re.compile(r"[a-z]+")
_LETTERS_APOSTROPHE = re.compile(r"[a-z']+")
_KEYWORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{3,}")
_NAME = re.compile(r"[\w][\w.+#-]*")


def letters(text: str, apostrophes: bool = False) -> list[str]:
    """`text`'s runs of ASCII letters, lower-cased; with `apostrophes`, a `'` or `’` inside or
    beside one is kept ("what's", "don’t" as "don't")."""
    if apostrophes:
        return _LETTERS_APOSTROPHE.findall(text.lower().replace("’", "'"))
    return _LETTERS.findall(text.lower())


def keywords(text: str) -> list[str]:
    """`text`'s ASCII words of four characters or more that begin with a letter (`_` and `-`
    kept inside), lower-cased: the topic words of an intent."""
    return [w.lower() for w in _KEYWORD.findall(text)]


def names(text: str) -> list[str]:
    """`text`'s words as technologies are named, as written: a word character, then word
    characters, `.`, `+`, `#` and `-` (`C#`, `c++`, `node.js`, `Postgres`)."""
    return _NAME.findall(text)


# -- stop words ----------------------------------------------------------------------------

STOP = frozenset(
    """a an and are as at be been being but by can could did do does doing done for from had has
    have having how i if in into is it its just me my no not of on or our ours out over own so
    some such than that the their them then there these they this those through to too under up
    very was we were what when where which while who whom why will with would you your yours
    should shall may might must ok okay about also any all each more most other only same here
    get got use using used want need make like new one two way thing things lot really still now
    let lets please tell know see show give take just""".split()
) | frozenset(
    """don doesn didn isn aren wasn weren won shouldn wouldn couldn mustn needn shan haven hasn
    hadn ain ll ve re""".split()
)
"""Words that carry no subject: the ranking's list (the gate model was fitted with it), and what
a contraction leaves of itself once its apostrophe splits it ("don't" is "don" and "t", "we'll"
"we" and "ll"): "why don't we switch to PCRE2?" found every "Don't …" rule by its "don", and
the decision that answers it was measured against that rule's BM25."""

SEARCH_KEEPS = frozenset(
    """all been being doing done each give got having know let lets lot may might more most must
    new now ok okay one only other ours out over own please really same see shall show still such
    take tell thing things those through too two under up very way while whom yours""".split()
)
"""Stop words the full-text query searches for all the same: its list is the older, shorter one,
and the search's candidates (BM25 over FTS5) were tuned with it; the gate drops these words
from its features, the search does not."""

SEARCH_STOP = (STOP - SEARCH_KEEPS) | {"us"} | {"t", "s", "d", "m"}
"""The full-text query's stop words (`memory/fts.py`): `STOP` but `SEARCH_KEEPS`, "us", and the
single letters an apostrophe leaves ("don't", "it's", "I'd", "I'm"; the ranking skips every
single letter already)."""

INTENT_STOP = STOP | {"after", "again", "because", "before", "much", "thanks"}
"""The intent's stop words for its keywords and capitalised names (`context/intent.py`): `STOP`
and the time and courtesy words that name no topic but that the ranking weighs (a question
about what came "before" a migration)."""

# -- stems ---------------------------------------------------------------------------------

_PORTER = snowballstemmer.stemmer("porter")
_PORTER_LOCK = threading.Lock()  # a snowball stemmer keeps its word in itself while it works


@functools.lru_cache(maxsize=16_384)
def stem(word: str) -> str:
    """`word`'s Porter stem: the stemmer of SQLite FTS5's `porter` tokenizer, which the full-text
    search runs (`memory/fts.py`), so the gate's word features and the search agree on what one
    word is ("requests" and "request", "configuration" and "configure")."""
    with _PORTER_LOCK:
        return str(_PORTER.stemWord(word))
