"""What a chat turn holds for other sessions (`context/echo.py`): a turn that only asks, and a
captured memory that only says the question again, are no answers (issue 26)."""

from __future__ import annotations

import pytest

from nous.context import echo
from nous.memory import turns
from nous.memory.model import Memory


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("how do we take card payments?", True),
        ("use recall: how do we store memories", True),
        ("postgres orders storage 0", True),
        ("Show me the release procedure. Please list the steps?", True),
        ("Orders are stored in Postgres.", False),
        ("We use Postgres for orders", False),
        ("The nightly job keeps failing on the mirror.", False),
        ("Where do refunds go? They go through the ledger service.", False),
    ],
)
def test_a_turn_asks_only_when_every_sentence_asks(text: str, asks: bool) -> None:
    assert echo.asks_only(text) is asks


def memory(content: str, source: str, tags: list[str] | None = None) -> Memory:
    return Memory.model_construct(
        id="m1", kind="episode", scope="project:shop", content=content, summary=content,
        micro=content, source=source, tags=tags or [],
    )  # fmt: skip


def test_another_sessions_asking_turn_and_an_echo_are_no_answers() -> None:
    asking = memory("where are orders stored", "chat:a#0", [turns.TAG, turns.ASKING])
    assert echo.excluded("where do refunds go", "b", asking) == (
        "scope", "a question asked in another session",
    )  # fmt: skip
    assert echo.excluded("where do refunds go", "a", asking) is None  # its own window
    echoed = memory("use recall: where are the orders stored?", "chat:c#3")
    assert echo.excluded("where are orders stored", "d", echoed) == (
        "duplicate-of-conversation", "repeats the question",
    )  # fmt: skip
    # a statement holding the question's words answers it, however short
    answer = memory("Orders are stored in Postgres.", "chat:c#4")
    assert echo.excluded("where are orders stored", "d", answer) is None
    # a harvested or remembered memory is never an echo unless it is the question itself
    doc = memory("where are orders stored", "file:docs/faq.md#orders")
    assert echo.excluded("Where are orders stored?", "d", doc) is not None
    assert echo.excluded("where are orders kept", "d", doc) is None


@pytest.mark.parametrize(
    ("reply", "restated"),
    [
        (
            "According to the project's records, all payments go through the PaymentGateway "
            "adapter; nothing calls the card processor directly.",
            True,
        ),
        ("Money is stored as integer cents, never floats.", True),
        (
            "The recall found this in the project's records: money is stored as integer cents, "
            "never floats.",
            True,
        ),
        (
            "Payments go through the PaymentGateway adapter, so I will mock it in the checkout "
            "tests and add a retry with backoff for declined cards and timeouts.",
            False,
        ),
        ("We decided to compute shipping fees by parcel weight, not a flat rate.", False),
        ("Done, I've added the retry wrapper.", False),
        ("Use the adapter; add retries.", False),
        ("", False),
    ],
)
def test_a_reply_restates_the_injected_memories_when_it_adds_next_to_no_words(
    reply: str, restated: bool
) -> None:
    injected = [
        "All payments go through the PaymentGateway adapter in shop/payments.py; nothing calls "
        "the card processor directly.",
        "Money is stored as integer cents, never floats.",
    ]
    assert echo.restates(reply, injected) is restated
