"""Session notes drawn from chat turns without an LLM (design §10): impl / dec / block / next."""

from __future__ import annotations

import pytest

from nous.context import notes


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("We decided to keep SQLite and add a PostgreSQL team store later.", "dec"),
        ("Let's go with the int8 model for the daemon.", "dec"),
        ("Decision: sessions expire after one hour of inactivity.", "dec"),
        ("I've added the retry wrapper around the card processor client.", "impl"),
        ("The flaky watcher test is fixed now and all tests pass.", "impl"),
        ("Done: migration 5 adds the session column.", "impl"),
        ("The release build is blocked by the missing signing key.", "block"),
        ("CI keeps failing on the Windows runner with a path error.", "block"),
        ("Next step: write the pytest-lsp test for nous/turn.", "next"),
        ("We still need to document the capture setting in the README.", "next"),
        ("TODO port the status bar tooltip to the new session fields.", "next"),
    ],
)
def test_a_cue_names_the_note(text: str, tag: str) -> None:
    assert notes.draw(text) == [notes.Note(tag, text)]


@pytest.mark.parametrize(
    "text",
    [
        "Should we decide to keep SQLite?",  # a question decides nothing
        "thanks, that worked",
        "ok cool",
        "The cache holds sessions for an hour.",  # a fact, no cue
        "```sh\n# TODO we still need to fix this\nmake test\n```",  # code is material
    ],
)
def test_no_cue_no_note(text: str) -> None:
    assert notes.draw(text) == []


def test_a_reply_yields_each_kind_once_in_order_and_lists_keep_their_lead_in() -> None:
    reply = (
        "I've implemented the capture path and the tests now pass. We agreed to store turns "
        "as episodes with their session id. The e2e is blocked by the missing fake model.\n\n"
        "Next steps:\n\n- write the session-notes e2e\n- measure LoCoMo held-out again\n\n"
        "We decided to keep SQLite and add a PostgreSQL team store later."
    )
    drawn = notes.draw(reply)
    assert [n.tag for n in drawn] == ["impl", "dec", "block", "next", "next", "dec"]
    assert drawn[3].text == "Next steps: write the session-notes e2e"
    assert notes.draw(reply + "\n\n" + reply) == drawn  # the same sentence is one note


def test_a_long_sentence_is_cut_at_a_word() -> None:
    text = "We decided to " + " ".join(f"word{n}" for n in range(100)) + "."
    [note] = notes.draw(text)
    assert len(note.text) <= notes.MAX_CHARS + 1 and note.text.endswith("…")
    assert " word" in note.text and not note.text[:-1].endswith(" ")
