"""One home per concept: scopes (`memory/scope.py`), the session-id rule for keeping turns
(`protocol.keeps_turns`), URI → path (`engine.uri_to_path`) and the full-text word splitter
(`text/words.py`) — each spelled once, and each as the places it replaced spelled it."""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import pytest

from nous.engine import file_path, uri_to_path
from nous.errors import InvalidMemory
from nous.memory import fts, scope, turns
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.protocol import SessionParams, TurnParams, keeps_turns
from nous.text import words

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "nous"

ODD = ["universal", "project:", "project:api-1f2e", "project", "projectx:a", "language:python",
       "language:", "language", "universe", "", ":", "team", "PROJECT:x", " project:x"]  # fmt: skip


# -- scopes ------------------------------------------------------------------------------------


def test_a_scope_parses_and_prints_back() -> None:
    for text in ("universal", "language:c#", "project:api-1f2e3d4c"):
        assert str(scope.Scope.parse(text)) == text
    assert scope.Scope.parse("  language:python ") == scope.Scope("language", "python")
    assert scope.Scope.parse("project:web-9a") == scope.Scope("project", "web-9a")
    assert scope.project("k") == "project:k" and scope.language("go") == "language:go"


@pytest.mark.parametrize("text", ["project", "team", "language:Python!", "project:a b", ""])
def test_a_bad_scope_names_the_three_forms(text: str) -> None:
    with pytest.raises(InvalidMemory, match="use 'universal', 'language:<id>' or 'project:<id>'"):
        scope.Scope.parse(text)
    with pytest.raises(InvalidMemory):
        Draft(kind="fact", content="x", scope=text or " ").validated()


@pytest.mark.parametrize("text", ODD)
def test_kind_is_exactly_the_prefix_tests_it_replaced(text: str) -> None:
    """Byte-identical ranking: the scoring and the tiers ask `kind`, where they asked
    `startswith("project:")`, `startswith("language:")` and `== "universal"`."""
    assert (scope.kind(text) == "project") == text.startswith("project:")
    assert scope.is_project(text) == text.startswith("project:")
    assert (scope.kind(text) == "language") == text.startswith("language:")
    assert (scope.kind(text) == "universal") == (text == "universal")
    if text.startswith("language:"):
        assert scope.name(text) == text.removeprefix("language:")
    if text.startswith("project:"):
        assert scope.name(text) == text.removeprefix("project:")


def test_a_read_sees_its_project_its_languages_and_universal() -> None:
    readable = scope.readable("project:a", ["python", "go"])
    assert readable == ["project:a", "language:python", "language:go", "universal"]
    assert scope.languages_of(readable) == ["python", "go"]


def test_only_a_project_memory_may_be_shared() -> None:
    with pytest.raises(InvalidMemory, match="cannot be shared"):
        Draft(kind="fact", content="x", scope="universal", shared=True).validated()
    assert Draft(kind="fact", content="x", scope="project:a", shared=True).validated().shared


# -- the session-id rule -----------------------------------------------------------------------


@pytest.mark.parametrize("session", ["s", "chat-1", "a#b", "#", "", None, "x" * 200])
def test_one_rule_keeps_turns_on_the_wire_and_in_the_store(session: str | None) -> None:
    """`keeps_turns` (what the chat, the MCP server and the pipeline ask) says what the wire's
    `nous/turn` and `nous/forgetSession` accept and what a turn's source can hold."""
    wire = True
    try:
        TurnParams(session_id=session, role="user", text="hi")  # type: ignore[arg-type]
        SessionParams(session_id=session)  # type: ignore[arg-type]
    except Exception:
        wire = False
    assert keeps_turns(session) == wire == bool(session and "#" not in session)
    if keeps_turns(session):
        assert turns.position(turns.source(session, 3)) == (session, 3)
    else:
        with pytest.raises(ValueError):
            turns.source(session or "", 3)


# -- URI → path --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("file:///home/ana/my%20repo/app.py", Path("/home/ana/my repo/app.py")),
        ("/home/ana/app.py", Path("/home/ana/app.py")),
        ("src/app.py", Path("src/app.py")),
        ("untitled:Untitled-1", Path("untitled:Untitled-1")),
        ("vscode-notebook-cell://x/y", Path("vscode-notebook-cell://x/y")),
    ],
)
def test_a_client_file_reference_becomes_a_path(given: str, expected: Path) -> None:
    assert uri_to_path(given) == expected


def test_only_a_file_uri_has_a_file_path() -> None:
    assert file_path("file:///tmp/a%23b") == Path("/tmp/a#b")
    assert file_path("https://example.invalid/x") is None
    assert file_path("/tmp/x") is None


# -- words: one tokenizer, one identifier split, one stop list, one stemmer --------------------

FTS5_TOKENIZE = "porter unicode61 remove_diacritics 2"
SAMPLES = [
    "Why does the PR_bot fail?",
    "café — naïve 2nd-try x.y:z ÉCOLE_42 über Straße İstanbul Ångström",
    "snake_case_name dotted.module.name kebab-case-name std::vec::Vec 'quoted' don't it’s",
    "v2.3.1 0x1F 3.14 1,000 ½ ²3 Ⅻ ٣٤ line\nbreak\ttab",
    "Ωμέγα ά Привет мир ё й 日本語 テスト 한국어 ǅ ſ µ e\u0301x x\ue000y",
    "emoji 👋 ok… «quotes» — dash–dash a\u200db ﬁle Ａｂｃ",
]


def _fts5(conn: sqlite3.Connection, texts: list[str], tokenize: str) -> list[list[str]]:
    """Each of `texts` tokenized by SQLite FTS5 itself, read back with `fts5vocab`."""
    conn.execute(f"CREATE VIRTUAL TABLE temp.t USING fts5 (x, tokenize='{tokenize}')")
    conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(temp, t, instance)")
    conn.executemany("INSERT INTO temp.t (rowid, x) VALUES (?, ?)", enumerate(texts, 1))
    out: list[list[str]] = [[] for _ in texts]
    for doc, term in conn.execute("SELECT doc, term FROM temp.v ORDER BY doc, offset"):
        out[doc - 1].append(term)
    conn.execute("DROP TABLE temp.v")
    conn.execute("DROP TABLE temp.t")
    return out


def test_the_store_indexes_with_the_tokenizer_the_words_spell(store: MemoryStore) -> None:
    """`words.tokens` and `words.stem` spell this tokenizer: a change to it changes them."""
    (sql,) = store._conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'memories_fts'"
    ).fetchone()
    assert f"tokenize='{FTS5_TOKENIZE}'" in sql


@pytest.mark.parametrize("text", SAMPLES)
def test_the_tokens_are_fts5s(text: str) -> None:
    """Which characters make a token, case folding and diacritics, as SQLite FTS5 has them."""
    (fts5,) = _fts5(sqlite3.connect(":memory:"), [text], FTS5_TOKENIZE.removeprefix("porter "))
    assert words.tokens(text) == fts5


def test_every_latin_character_tokenizes_as_in_fts5() -> None:
    """Each character of ASCII, Latin-1 and Latin Extended-A/B (and the combining diacritics)
    inside a word and alone: the whole range FTS5's diacritic table covers for Latin text."""
    texts = [f"a{chr(c)}b {chr(c)}" for c in range(0x20, 0x370)]
    fts5 = _fts5(sqlite3.connect(":memory:"), texts, FTS5_TOKENIZE.removeprefix("porter "))
    wrong = [(t, w, f) for t, f in zip(texts, fts5, strict=True) if (w := words.tokens(t)) != f]
    assert not wrong, wrong[:10]


def test_a_token_is_letters_digits_and_private_use() -> None:
    assert words.tokens("a_b-c.d:e'f’g/h") == list("abcdefgh")  # `_` too separates, as in FTS5
    assert words.tokens("日本語 ٣٤ Ⅻ x\ue000y") == ["日本語", "٣٤", "ⅻ", "x\ue000y"]
    assert words.tokens("👋 — …") == []


def test_a_token_is_case_folded_and_loses_its_diacritics() -> None:
    assert words.tokens("ÉCOLE Straße ǅ µ") == ["ecole", "straße", "ǆ", "μ"]
    assert words.tokens("naïve e\u0301x ṩ ø ά") == ["naive", "ex", "s", "ø", "ά"]


@pytest.mark.parametrize("text", ["Why does the PR_bot fail?", "café — naïve 2nd-try x.y:z", "",
                                  "   ", "ÉCOLE_42 über", "don't it's"])  # fmt: skip
def test_the_query_splitter_is_the_expression_it_replaced(text: str) -> None:
    assert words.split(text) == re.findall(r"\w+", text.lower())


def test_a_query_word_keeps_what_fts5_keeps_in_a_token() -> None:
    """Unlike `\\w+`, a dropped diacritic and a private-use character do not end a word."""
    split = words.split("Cafe\u0301s İstanbul x\ue000y")
    assert split == ["cafe\u0301s", "i\u0307stanbul", "x\ue000y"]
    assert [words.tokens(w) for w in split] == [["cafes"], ["istanbul"], ["x\ue000y"]]


@pytest.mark.parametrize("text", SAMPLES[:4])
def test_a_query_word_is_a_phrase_of_fts5_tokens(text: str) -> None:
    """The search quotes each of `split`'s words, and FTS5 reads one as the phrase of its tokens:
    together they are exactly the tokens FTS5 indexed (no word cuts a token, none is lost)."""
    assert [t for w in words.split(text) for t in words.tokens(w)] == words.tokens(text)
    assert words.split("pr_bot") == ["pr_bot"] and words.tokens("pr_bot") == ["pr", "bot"]


def test_the_search_finds_a_memory_by_its_words_however_written(store: MemoryStore) -> None:
    store.remember(
        Draft(kind="fact", content="The PR_bot retries the École build", scope="project:d")
    )
    for asked in ("pr_bot", "PR bot", "ecole", "école", "ÉCOLE"):
        assert store.text_search(asked, 5), asked


def test_an_identifier_is_found_whole_and_by_its_parts() -> None:
    """Dotted, snake, kebab and `:` names are one compound, and its parts are words too."""
    assert words.compounds("See api.v2-b, PR_bot, a:b and std::vec; café.") == [
        "see", "api.v2-b", "pr_bot", "a:b", "and", "std", "vec", "caf",
    ]  # fmt: skip
    assert words.pieces("api.v2_b") == ["api.v2_b", "api", "v2", "b"]
    assert words.pieces("kebab-case-name") == ["kebab-case-name", "kebab", "case", "name"]
    assert words.pieces("plain") == ["plain"]
    assert words.content_words("The dotted.module_name is a-b") == [
        "dotted.module_name", "dotted", "module", "name", "a-b",
    ]  # fmt: skip


def test_what_a_contraction_leaves_is_no_word() -> None:
    """ "don't" splits into "don" and "t": "don" is no subject, and a question that asks "why
    don't we …?" must not find every "Don't …" rule by it, in the ranking or in the search."""
    assert words.content_words("Why don't we switch? It won't; we'll see, they're re-run") == [
        "switch", "re-run", "run",
    ]  # fmt: skip
    assert fts.fts_terms("why don't we switch to PCRE2?") == ["switch", "pcre2"]


def test_one_stop_list_and_its_named_differences() -> None:
    """`STOP` is the list; the search's and the intent's are it with named differences."""
    assert words.SEARCH_STOP - {"us", "t", "s", "d", "m"} == words.STOP - words.SEARCH_KEEPS
    assert words.STOP <= words.INTENT_STOP
    assert not words.is_content("the") and not words.is_content("x") and words.is_content("db")
    assert fts.fts_terms("What is the new PR_bot about?") == ["new", "pr_bot"]


def test_the_gate_stems_words_as_the_full_text_search_does(store: MemoryStore) -> None:
    """One stemmer (issue 29 item 5): the gate's word features and SQLite FTS5's `porter`
    tokenizer give every word the same stem, read from the store's own full-text vocabulary."""
    text = (
        "requests running configuration configured dependencies generalizes pulled tests testing "
        "databases authentication migrations relational happily agreed sized conditional ponies "
        "caresses generously hopefulness electrical adding"
    )
    store.remember(Draft(kind="fact", content=text, scope="project:demo"))
    conn = store._conn
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, memories_fts, row)")
    fts5 = {row[0] for row in conn.execute("SELECT term FROM temp.vocab")}
    assert {words.stem(w) for w in words.tokens(text)} <= fts5
    assert words.stem("dependencies") == words.stem("depend")  # the old list said "dependency"


_CLASS = r"(?:\[(?!\^)[^\]]*(?:a-z|A-Z|0-9|\\w)[^\]]*\]|\\w)"
_WORD_RUN = re.compile(
    rf"^(?:\\b)?(?:{_CLASS}(?:\{{\d*,?\d*\}}|[+*?])?)*{_CLASS}(?:\{{\d+,\}}|[+*])(?:\\b)?$"
)
"""A regular expression that is nothing but word-character classes in a row, the last repeated
without bound (`\\w+`, `[a-z']+`, `[A-Za-z][A-Za-z0-9_-]{3,}`): a word splitter."""


def _regexes(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append(node.args[0].value)
    return found


def test_no_module_splits_words_stems_or_lists_stop_words_but_the_one_home() -> None:
    """Word splitting, stop words and stemming live in `text/words.py`. The BM25 baseline
    keeps its own stop words on purpose (`evaluation/bm25.py`); the secret scanner's patterns
    are shapes of secrets, not words."""
    home = "text/words.py"
    beside = ("text/secrets/",)
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        if name == home or name.startswith(beside):
            continue
        source = path.read_text()
        tree = ast.parse(source)
        found += [f"{name}: splits words with {r!r}" for r in _regexes(tree) if _WORD_RUN.match(r)]
        if "snowballstemmer" in source or "stemWord" in source:
            found.append(f"{name}: stems words")
        for node in tree.body:
            for target in node.targets if isinstance(node, ast.Assign) else []:
                stop = isinstance(target, ast.Name) and "STOP" in target.id.upper()
                if stop and name != "evaluation/bm25.py":
                    found.append(f"{name}: lists stop words at line {node.lineno}")
    assert not found, "\n".join(found)


def test_the_word_run_check_sees_the_splitters_it_replaced() -> None:
    for replaced in (r"\w+", r"\b\w{3,}\b", r"[a-z']+", r"[a-z]+", r"[A-Za-z][A-Za-z0-9_-]{3,}",
                     r"[\w][\w.+#-]*", r"[a-z0-9][a-z0-9_]*"):  # fmt: skip
        assert _WORD_RUN.match(replaced), replaced
    for phrase in (r"\b(error|exception)\b", r"(\d{4}-\d{2}-\d{2})", r"^\s*#", r"\S+"):
        assert not _WORD_RUN.match(phrase), phrase


def test_no_module_spells_the_replaced_expressions_again() -> None:
    """The prefix tests, the session-id rule and the `\\w+` splitter live in their homes only
    (`context/relevance.py`, `search.py` and `pipeline.py` aside: another change is in them)."""
    homes = {"memory/scope.py", "text/words.py", "protocol.py"}
    beside = ("bench/", "evaluation/")
    spelled = re.compile(
        r"""startswith\(["'](project|language):|removeprefix\(["'](project|language):"""
        r"""|["']#["'] not in session|findall\(r["']\\w\+["'], \w+\.lower\(\)\)"""
    )
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        if name in homes or name.startswith(beside):
            continue
        source = path.read_text()
        ast.parse(source)
        found += [f"{name}: {m.group(0)}" for m in spelled.finditer(source)]
    assert not found, "\n".join(found)
