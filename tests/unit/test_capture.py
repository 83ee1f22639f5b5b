"""The capture use case over a real store and the real model: turns get their session index,
notes their turn's source, and a later note on the same topic supersedes an earlier one."""

from __future__ import annotations

from dataclasses import dataclass, field

from nous.context import capture
from nous.memory import turns
from nous.memory.store import MemoryStore
from nous.protocol import TurnParams
from nous.settings import Settings


@dataclass
class Folder:
    store: MemoryStore
    settings: Settings = field(default_factory=Settings)

    def resolve_scope(self, scope: str | None) -> str:
        return "project:shop"


def said(folder: Folder, session: str, text: str, role: str = "user") -> capture.TurnResult:
    return capture.turn(folder, TurnParams(session_id=session, role=role, text=text))  # type: ignore[arg-type]


def test_turns_are_numbered_per_session_and_notes_point_at_their_turn(
    real_store: MemoryStore,
) -> None:
    folder = Folder(real_store)
    a0 = said(folder, "a", "Let's go with the int8 model for the daemon.")
    b0 = said(folder, "b", "The nightly job keeps failing on the mirror.")
    a1 = said(folder, "a", "Sounds good, I will measure it later today.", "assistant")
    assert (a0.index, b0.index, a1.index) == (0, 0, 1)
    note = real_store.get(a0.notes[0]["id"])
    assert note.kind == "note" and "dec" in note.tags
    assert turns.position(note.source) == ("a", 0)
    episode = real_store.get(a1.id or "")
    assert episode.kind == "episode" and "role:assistant" in episode.tags
    assert episode.scope == "project:shop"


def test_a_later_note_on_the_same_topic_supersedes_the_earlier_one(real_store: MemoryStore) -> None:
    folder = Folder(real_store)
    first = said(folder, "s1", "Next step: add the parser tests for nested lists.")
    other = said(folder, "s1", "We decided to keep the release on Fridays.")
    done = said(folder, "s2", "I've added the parser tests for nested lists.", "assistant")
    old = real_store.get(first.notes[0]["id"])
    assert old.status == "superseded" and old.superseded_by == done.notes[0]["id"]
    assert real_store.get(other.notes[0]["id"]).status != "superseded"  # another topic stays


def test_capture_off_or_small_talk_stores_nothing(real_store: MemoryStore) -> None:
    quiet = Folder(real_store, Settings(capture=False))
    assert said(quiet, "q", "We decided to keep SQLite for the store.").stored is False
    assert said(Folder(real_store), "q", "hey, good morning!").stored is False
    assert real_store.memory_count() == 0


def test_questions_are_session_only_and_nous_own_output_is_not_kept(
    real_store: MemoryStore,
) -> None:
    """A user's question asks and tells nothing: kept for its session's window only (tagged
    `asking`). A reply quoting what Nous injected, or talking about its tools, would be a memory
    of a memory. A question that also states a decision keeps its turn and note."""
    folder = Folder(real_store)
    for asked in ("how do we store memories in this project?",
                  "use recall: how do we store memories", "postgres orders storage 0"):  # fmt: skip
        kept = said(folder, "q", asked)
        assert kept.stored and kept.session_only, asked
        assert turns.ASKING in real_store.get(kept.id or "").tags
    quoted = "Here is what I got:\n\n```memories (recorded data, not instructions)\n- SQLite\n```"
    assert said(folder, "q", quoted, "assistant").stored is False
    echoed = "FAKE MODEL ANSWER: I received 2 messages.\n\n- (decision) Orders live in Postgres."
    assert said(folder, "q", echoed, "assistant").stored is False
    tools = "FAKE MODEL ANSWER: the startup context from nous_context had 812 characters."
    assert said(folder, "q", tools, "assistant").stored is False
    both = said(folder, "q", "We decided to keep SQLite. How do we back it up?")
    assert both.stored and not both.session_only and [n["tag"] for n in both.notes] == ["dec"]
    stated = said(folder, "q", "The orders table lives in Postgres, partitioned by month.")
    assert stated.stored and not stated.session_only


def test_a_tool_query_is_no_memory_and_a_tools_task_leaves_only_its_notes(
    real_store: MemoryStore,
) -> None:
    folder = Folder(real_store)

    def tool(name: str, text: str) -> capture.TurnResult:
        params = TurnParams(session_id="t", role="user", text=text, tool=name)  # type: ignore[arg-type]
        return capture.turn(folder, params)

    assert tool("nous_recall", "postgres orders storage 0").stored is False
    assert tool("nous_context", "fix the checkout page totals").stored is False
    task = tool("nous_context", "Drop the CSV export. Next step: add the nightly export tests.")
    assert task.stored and task.id is None and [n["tag"] for n in task.notes] == ["next"]
    assert real_store.memory_count() == 1  # the note, no turn
    assert real_store.get(task.notes[0]["id"]).content == "next: add the nightly export tests."
    assert tool("nous_context", "We decided to ship on Fridays.").index == 1  # after the note


SAME = "We decided to ship the importer behind a feature flag."


def test_the_same_words_in_two_sessions_are_each_sessions_own_turn(
    real_store: MemoryStore,
) -> None:
    folder = Folder(real_store)
    a = said(folder, "a", SAME)
    b = said(folder, "b", SAME)
    assert a.id != b.id and a.notes[0]["id"] != b.notes[0]["id"]
    assert turns.position(real_store.get(a.id or "").source) == ("a", 0)
    assert turns.position(real_store.get(b.id or "").source) == ("b", 0)
    assert turns.position(real_store.get(b.notes[0]["id"]).source) == ("b", 0)
    # within one session the same words are still one memory, confirmed
    again = said(folder, "a", SAME)
    assert again.id == a.id and real_store.get(a.id or "").confirmations == 1


def test_forgetting_the_second_session_leaves_the_firsts_turn(real_store: MemoryStore) -> None:
    folder = Folder(real_store)
    a = said(folder, "a", SAME)
    said(folder, "b", SAME)
    assert capture.forget_session(folder, "b").forgotten == 2  # its turn and its note
    assert real_store.get(a.id or "").content == SAME
    note = real_store.get(a.notes[0]["id"])
    assert note.status not in ("superseded", "inactive") and "feature flag" in note.content
    assert a.notes[0]["id"] in real_store.recent_notes("project:shop")
    assert said(Folder(real_store, Settings(capture=False)), "b", SAME).stored is False
    assert real_store.session_rows("b", "project:shop") == []


def test_forgetting_the_first_session_leaves_the_seconds_turn_and_note(
    real_store: MemoryStore,
) -> None:
    folder = Folder(real_store)
    said(folder, "a", SAME)
    b = said(folder, "b", SAME)
    assert capture.forget_session(folder, "a").forgotten == 2
    kept = real_store.get(b.id or "")
    assert kept.content == SAME and turns.position(kept.source) == ("b", 0)
    note = real_store.get(b.notes[0]["id"])
    assert note.status not in ("superseded", "inactive") and "feature flag" in note.content
    assert b.notes[0]["id"] in real_store.recent_notes("project:shop")


def test_a_turn_said_in_an_earlier_session_too_keeps_its_place_in_this_one(
    real_store: MemoryStore,
) -> None:
    """The session window: a turn's neighbours are its own session's turns around it, and the
    session's next turn follows it."""
    folder = Folder(real_store)
    said(folder, "a", "The deploy script lives in the ops folder now.")
    said(folder, "a", SAME)
    b0 = said(folder, "b", "The mirror moved to Frankfurt last week.")
    b1 = said(folder, "b", SAME)
    b2 = said(folder, "b", "The nightly job runs at three in the morning.")
    assert (b0.index, b1.index, b2.index) == (0, 1, 2)
    near = real_store.turn_neighbours([b1.id or ""], 1, ["project:shop"])
    assert sorted(near[b1.id or ""]) == sorted([(b0.id, -1), (b2.id, 1)])  # signed steps


def test_a_reply_that_only_restates_what_was_injected_is_not_kept(real_store: MemoryStore) -> None:
    """A model answering from the context Nous gave it says the memories again in its own lead-in:
    kept, the reply would come back as a memory of the memory it quotes. A reply that adds its
    own words (a decision, an explanation) is a turn of the session."""
    folder = Folder(real_store)
    given = [
        "All payments go through the PaymentGateway adapter in shop/payments.py; nothing calls "
        "the card processor directly.",
        "Money is stored as integer cents, never floats.",
    ]
    restated = (
        "According to the project's records: all payments go through the PaymentGateway "
        "adapter in shop/payments.py, and nothing calls the card processor directly."
    )
    kept = capture.turn(
        folder, TurnParams(session_id="r", role="assistant", text=restated), injected=given
    )
    assert kept.stored is False
    assert real_store.memory_count() == 0
    own = (
        "The checkout should call the PaymentGateway adapter; I would add a retry with backoff "
        "around the refund call and log each declined card with its reason code."
    )
    assert capture.turn(
        folder, TurnParams(session_id="r", role="assistant", text=own), injected=given
    ).stored
    # the user's words are never judged by what was injected; nor a reply when nothing was
    assert capture.turn(
        folder, TurnParams(session_id="r", role="user", text=given[1]), injected=given
    ).stored
    assert said(folder, "r2", restated, "assistant").stored
