"""One home per concept: scopes (`memory/scope.py`), the session-id rule for keeping turns
(`protocol.keeps_turns`), URI → path (`engine.uri_to_path`) and the full-text word splitter
(`text/words.py`) — each spelled once, and each as the places it replaced spelled it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from nous.engine import file_path, uri_to_path
from nous.errors import InvalidMemory
from nous.memory import scope, turns
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


# -- the full-text word splitter ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["Why does the PR_bot fail?", "café — naïve 2nd-try x.y:z", "", "   ", "ÉCOLE_42 über"]
)
def test_the_splitter_is_the_expression_it_replaced(text: str) -> None:
    assert words.split(text) == re.findall(r"\w+", text.lower())


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


def test_the_gate_stems_words_as_the_full_text_search_does(store: MemoryStore) -> None:
    """One stemmer (issue 29 item 5): the gate's word features and SQLite FTS5's `porter`
    tokenizer give every word the same stem, read from the store's own full-text vocabulary."""
    from nous.context import relevance

    text = (
        "requests running configuration configured dependencies generalizes pulled tests testing "
        "databases authentication migrations relational happily agreed sized conditional ponies "
        "caresses generously hopefulness electrical adding"
    )
    store.remember(Draft(kind="fact", content=text, scope="project:demo"))
    conn = store._conn
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, memories_fts, row)")
    fts = {row[0] for row in conn.execute("SELECT term FROM temp.vocab")}
    assert {relevance.stem(w) for w in text.split()} <= fts
    assert relevance.stem("dependencies") == relevance.stem(
        "depend"
    )  # the old list said "dependency"
