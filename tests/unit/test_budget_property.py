"""Property: whatever the memories and the budget, the rendered context (headings included,
counted with tiktoken) never exceeds the budget, nor any section its reported cap; every in-scope candidate is either included or
dropped with a reason; another project's memories never show up; a greeting retrieves nothing."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nous.context import config as configs
from nous.context import pipeline
from nous.context.render import FENCE, fence_open
from nous.memory.embedder import HashEmbedder
from nous.memory.model import KINDS, Draft
from nous.memory.store import MemoryStore
from nous.text import tokens

CONFIG = configs.defaults()
COUNTER = tokens.counter()
VIEW = pipeline.View("app", "project:app", ["python"])
SCOPES = ["project:app", "language:python", "universal", "project:other", "language:go"]

text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=1200
).filter(lambda t: t.strip() != "")
words = st.lists(
    st.sampled_from("cache redis postgres deploy error test naming budget token sqlite the a".split()),
    min_size=1, max_size=60,
).map(" ".join)  # fmt: skip
memory = st.builds(
    Draft,
    kind=st.sampled_from(KINDS),
    content=st.one_of(text, words),
    scope=st.sampled_from(SCOPES),
    importance=st.floats(0, 1),
    confidence=st.floats(0, 1),
    outcome=st.sampled_from([None, "success", "partial", "pending", "failure"]),
    tags=st.lists(st.sampled_from(["impl", "dec", "block", "next", "instructions"]), max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    drafts=st.lists(memory, max_size=40),
    budget=st.integers(50, 12_000),
    mode=st.sampled_from(["startup", "turn", "recall"]),
    query=st.one_of(words, text, st.just("")),
    profile=st.sampled_from(["default", "knight", "squire", "royalty", "peasant"]),
)
def test_rendered_context_never_exceeds_the_budget(
    drafts: list[Draft], budget: int, mode: str, query: str, profile: str
) -> None:
    store = MemoryStore(":memory:", HashEmbedder(), COUNTER)
    written = store.remember_many(drafts)
    result = pipeline.assemble(
        store,
        CONFIG,
        VIEW,
        pipeline.Request(input=query, mode=mode, budget=budget, profile=profile),
    )
    assert result.tokens == (COUNTER.count(result.text) if result.text else 0)
    assert result.tokens <= budget
    for section in result.sections:  # every section reports the cap it had, and kept to it
        assert section.used <= section.cap <= budget, (section.layer, section.used, section.cap)
    inside = False
    for line in result.text.split("\n"):  # a rule block too is one `- ` line a rule in a fence
        if line in (fence_open(), FENCE):
            inside = line == fence_open()
        elif inside:
            assert line.startswith("- "), line
    included = [i.id for s in result.sections for i in s.items]
    dropped = [d.id for d in result.dropped]
    assert len(set(included)) == len(included)
    assert not set(included) & set(dropped)
    by_id = {w.memory.id: w.memory for w in written}
    in_scope = {i for i, m in by_id.items() if m.scope in VIEW.scopes}
    assert set(included) | set(dropped) <= in_scope
    retrieves = budget > 0 and not (mode == "turn" and query and result.intent["greeting"])
    if retrieves and result.intent["plan"]["limits"]:
        assert set(included) | set(dropped) == in_scope


@settings(max_examples=20, deadline=None)
@given(
    drafts=st.lists(memory, min_size=1, max_size=20),
    greeting=st.sampled_from(["hey", "hi!", "Hello there", "good morning", "thanks"]),
)
def test_a_greeting_retrieves_nothing(drafts: list[Draft], greeting: str) -> None:
    store = MemoryStore(":memory:", HashEmbedder(), COUNTER)
    store.remember_many(drafts)
    result = pipeline.assemble(store, CONFIG, VIEW, pipeline.Request(input=greeting, budget=3000))
    assert [i for s in result.sections for i in s.items] == [] and result.dropped == []
