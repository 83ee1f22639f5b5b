"""The reference judge (design §14) with the real model: a paraphrase of an injected memory counts
as a reference, an unrelated reply does not, and a word every injected item holds tells nothing."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nous.context import config as configs
from nous.context import judge
from nous.memory.embedder import OnnxEmbedder

CONFIG = configs.defaults()
DECISION = (
    "Store orders in PostgreSQL 16 through SQLAlchemy and asyncpg, because we need transactions."
)
OTHERS = [
    "Run the test suite with pytest -q before every commit.",
    "The frontend is built with React and Vite; components live in web/src.",
    "Deploy to production through the GitHub Actions release workflow.",
]
PARAPHRASES = [
    "They're persisted in Postgres, reached through the ORM with an async driver.",
    "Use the Postgres database for orders; it gives us transactions.",
]


def verdicts(embedder: OnnxEmbedder, reply: str, items: Sequence[str]) -> list[judge.Verdict]:
    return judge.judge(
        embedder.embed_many, reply, items, CONFIG.judge.model, CONFIG.judge.threshold
    )


def test_the_issues_paraphrases_are_references(real_embedder: OnnxEmbedder) -> None:
    for reply in PARAPHRASES:
        alone = verdicts(real_embedder, reply, [DECISION])
        among = verdicts(real_embedder, reply, [DECISION, *OTHERS])
        assert alone[0].referenced, (reply, alone[0])
        assert among[0].referenced, (reply, among[0])
        assert not any(v.referenced for v in among[1:]), (reply, among)


def test_the_old_word_overlap_missed_them(real_embedder: OnnxEmbedder) -> None:
    from nous.context import dedup

    for reply in PARAPHRASES:
        assert dedup.jaccard(DECISION, reply) < CONFIG.scoring.feedback_jaccard


def test_an_unrelated_reply_references_nothing(real_embedder: OnnxEmbedder) -> None:
    for reply in (
        "I renamed the button label and fixed the CSS padding in the header.",
        "Sure! Let me know if you need anything else.",
        "",
    ):
        got = verdicts(real_embedder, reply, [DECISION, *OTHERS])
        assert not any(v.referenced for v in got), (reply, got)
        assert all(0.0 <= v.score <= 1.0 for v in got)


def test_a_reply_quoting_a_memory_references_it(real_embedder: OnnxEmbedder) -> None:
    reply = f"Done. As the project decided: {OTHERS[2]} I'll open the PR now."
    got = verdicts(real_embedder, reply, [DECISION, *OTHERS])
    assert [v.referenced for v in got] == [False, False, False, True]


def test_a_word_every_item_holds_tells_nothing(real_embedder: OnnxEmbedder) -> None:
    items = [f"Zorblatt {text[0].lower()}{text[1:]}" for text in OTHERS]
    reply = "Zorblatt has a new logo; the marketing team picked the colours."
    got = verdicts(real_embedder, reply, items)
    assert not any(v.referenced for v in got), got
    rare = judge.FEATURES.index("rare")
    assert all(v.features[rare] == 0.0 for v in got)


def test_one_model_call_per_judgement(real_embedder: OnnxEmbedder) -> None:
    calls: list[int] = []

    def counted(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        calls.append(len(texts))
        return real_embedder.embed_batch(texts)

    reply = " ".join(f"Step {i}: the parser handles case {i}." for i in range(25))
    judge.judge(counted, reply, [DECISION, *OTHERS], CONFIG.judge.model, CONFIG.judge.threshold)
    assert calls == [25 + 4]


def test_sentences_keep_code_blocks_and_cap_long_replies() -> None:
    text = "First point. Second one!\n- a list item\n```py\nx = 1. y = 2\n```\nDone?"
    assert judge.sentences(text) == [
        "First point.", "Second one!", "a list item", "```py\nx = 1. y = 2\n```", "Done?",
    ]  # fmt: skip
    long = " ".join(f"Sentence number {i}." for i in range(200))
    parts = judge.sentences(long)
    assert len(parts) <= judge.MAX_SENTENCES
    assert " ".join(parts) == long


def test_prefix_terms_count_as_shared() -> None:
    item = judge.weights("PostgreSQL through asyncpg")
    assert judge._share(item, {"postgr", "async"}) == 1.0
    assert judge._share(item, {"post"}) == 0.0


def test_vectors_the_caller_has_are_not_embedded_again(real_embedder: OnnxEmbedder) -> None:
    calls: list[int] = []

    def counted(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        calls.append(len(texts))
        return real_embedder.embed_many(texts)

    items = [DECISION, *OTHERS]
    stored = {i: real_embedder.embed(text) for i, text in enumerate(items) if i != 2}
    reply = PARAPHRASES[0]
    fresh = judge.judge(counted, reply, items, CONFIG.judge.model, CONFIG.judge.threshold)
    reused = judge.judge(
        counted, reply, items, CONFIG.judge.model, CONFIG.judge.threshold, known=stored
    )
    assert calls == [1 + 4, 1 + 1]
    assert [v.referenced for v in reused] == [v.referenced for v in fresh] == [
        True, False, False, False,
    ]  # fmt: skip
    for a, b in zip(fresh, reused, strict=True):
        assert abs(a.score - b.score) < 1e-3
