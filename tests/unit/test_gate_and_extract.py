"""The gate, the extract and the lean answer (design §2.5–2.8) with the real model: small talk and
questions nothing answers get nothing, priors never admit, a fact deep in a long record survives
as an extract, a paraphrase takes one slot, a superseded memory is left out or marked."""

from __future__ import annotations

import pytest

from nous.context import config as configs
from nous.context import pipeline
from nous.memory.model import Draft
from nous.memory.store import MemoryStore

CONFIG = configs.defaults()
VIEW = pipeline.View("shop", "project:shop", ["python"])
FACTS = [
    ("decision", "All payments go through the PaymentGateway adapter in shop/payments.py; nothing calls the card processor directly."),
    ("constraint", "Never log card numbers or CVV codes, not even at debug level."),
    ("procedure", "To release: bump the version in pyproject.toml, tag vX.Y.Z and push the tag; CI publishes the wheel."),
    ("fact", "Orders are immutable once paid; refunds create a new credit order."),
]  # fmt: skip


def ask(
    store: MemoryStore, text: str, mode: str = "turn", budget: int = 6000
) -> pipeline.ContextResult:
    return pipeline.assemble(
        store, CONFIG, VIEW, pipeline.Request(input=text, mode=mode, budget=budget)
    )


def items(result: pipeline.ContextResult) -> list[str]:
    return [i.text for s in result.sections for i in s.items]


@pytest.fixture
def shop(real_store: MemoryStore) -> MemoryStore:
    real_store.remember_many([Draft(kind=k, content=c, scope="project:shop") for k, c in FACTS])
    return real_store


@pytest.mark.parametrize(
    "text", ["hey, good morning!", "hi there 👋", "thanks, that worked", "good morning! how are you?",
             "ok cool, appreciate it"],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["turn", "recall", "startup"])
def test_small_talk_retrieves_nothing(shop: MemoryStore, text: str, mode: str) -> None:
    result = ask(shop, text, mode, 2000)
    assert result.intent["greeting"] is True  # recognised as small talk, not merely gated out
    assert items(result) == [] and result.dropped == []


def test_a_question_nothing_answers_gets_nothing(shop: MemoryStore) -> None:
    for text in ("How do I deploy to Kubernetes with a Helm chart?",
                 "How do I translate the settings screen into French?"):  # fmt: skip
        result = ask(shop, text, "recall", 500)
        assert items(result) == [], text
        assert {d.reason for d in result.dropped} <= {"low-score"}


def layer_items(result: pipeline.ContextResult, layer: str) -> list[str]:
    return [i.text for s in result.sections if s.layer == layer for i in s.items]


def test_always_on_layers_hold_the_censors_pinned_and_blocking(shop: MemoryStore) -> None:
    unrelated = ask(shop, "How do I release a new version?")
    # the censors layer holds the project's constraints whatever the input (design §2.7) …
    assert any("card numbers" in t for t in layer_items(unrelated, "constraints"))
    # … and the selected layers hold only what is relevant
    selected = [t for s in unrelated.sections if s.layer != "constraints" for i in s.items
                for t in [i.text]]  # fmt: skip
    assert not any("card numbers" in t for t in selected)
    assert any("tag vX.Y.Z" in t for t in selected)
    relevant = ask(shop, "Can I log the card number while debugging payments?")
    assert any("WARN: Never log card numbers" in t for t in items(relevant))
    pinned = shop.remember(
        Draft(
            kind="constraint",
            content="Production deploys need two approvals.",
            scope="project:shop",
        )
    ).memory
    shop.set_pinned(pinned.id)
    assert any("two approvals" in t for t in items(ask(shop, "How do I release a new version?")))


def test_a_paraphrase_of_an_instruction_rule_takes_one_slot(shop: MemoryStore) -> None:
    shop.remember(Draft(kind="convention", scope="project:shop", source="file:AGENTS.md#conventions",
                        tags=["instructions"],
                        content="# AGENTS.md: Conventions\n\n- Money is stored as integer cents, never floats.\n- Every public function has a docstring."))  # fmt: skip
    said = shop.remember(Draft(kind="convention", scope="project:shop", source="chat",
                               content="We always keep money amounts as integer cents, never as floating point numbers.")).memory  # fmt: skip
    # both admitted (no relative floor: the mechanism is what is tested), the rule file's wins
    config = CONFIG.model_copy(update={"gate": CONFIG.gate.model_copy(update={"turn_relative": 0})})
    request = pipeline.Request(input="Do we keep money as integer cents or as floats?", budget=6000)
    result = pipeline.assemble(shop, config, VIEW, request)
    texts = items(result)
    assert not any("floating point numbers" in t for t in texts)
    assert any(d.id == said.id and d.reason == "duplicate" for d in result.dropped)
    rules = next(s for s in result.sections if s.layer == "rules")
    assert "docstring" in rules.items[0].text  # the rule file's record stays, whole


def test_superseded_is_left_out_with_its_successor_or_marked(shop: MemoryStore) -> None:
    old = shop.remember(
        Draft(
            kind="decision",
            scope="project:shop",
            content="Sessions are stored in Redis with a one-hour expiry.",
        )
    ).memory
    new = shop.remember(
        Draft(
            kind="decision",
            scope="project:shop",
            content="Sessions are stored in Postgres; Redis is only a cache now.",
        )
    ).memory
    shop.supersede(old.id, new.id)
    both = ask(shop, "Are sessions in Redis with an expiry, or in Postgres?")
    assert any(d.id == old.id and "superseded by" in d.detail for d in both.dropped)
    only_old = ask(shop, "what is the one-hour Redis session expiry?", "recall", 500)
    marked = [t for t in items(only_old) if "one-hour expiry" in t]
    assert marked and "(superseded by: " in marked[0]


def test_a_fact_deep_in_a_long_record_survives_as_an_extract(shop: MemoryStore) -> None:
    filler = " ".join(
        f"Paragraph {n} describes the general checkout flow and its screens in detail."
        for n in range(40)
    )
    content = f"# docs/guide.md: Checkout guide › Flow\n\n{filler}\n\nThe retry budget for the card processor is 3 attempts with 250 ms backoff.\n\n{filler}"
    shop.remember(
        Draft(kind="fact", scope="project:shop", source="file:docs/guide.md#flow", content=content)
    )
    result = ask(shop, "What is the retry budget for the card processor?", "recall", 500)
    found = [
        i for s in result.sections for i in s.items if "3 attempts with 250 ms backoff" in i.text
    ]
    assert found and found[0].detail == "extract"
    assert found[0].text.startswith("(fact) docs/guide.md: Checkout guide › Flow — ")
    assert result.tokens <= 500


def test_commits_come_in_for_history_questions_or_when_relevant(shop: MemoryStore) -> None:
    commit = shop.remember(Draft(kind="episode", scope="project:shop", source="git:" + "a" * 40,
                                 tags=["git"], content="Commit aaaaaaaaaa by Ada on 2026-11-20: switch the session cache to Redis")).memory  # fmt: skip
    history = ask(shop, "what changed recently?")
    assert any(i.id == commit.id for s in history.sections for i in s.items)
    unrelated = ask(shop, "How do I release a new version?")
    assert not any(i.id == commit.id for s in unrelated.sections for i in s.items)


def test_counts_taken_a_moment_apart_never_break_the_weights() -> None:
    from nous.context import relevance

    # a word counted after more writes than the total was: more documents than "all"
    query = relevance.query("cache layer limits", {"cache": 40, "layer": 12, "limits": 0}, 10)
    assert all(w > 0 for w in query.weights.values())
    assert 0.0 <= query.coverage("the cache layer") <= 1.0
    empty = relevance.query("cache", {"cache": 5}, 0)
    assert empty.total > 0  # no memories at all: every word unseen, weighed by the background


RELEASE_GUIDE = [
    ("creating-a-release-candidate", "Release Guide › Release Candidate › Creating a release candidate",
     "1. Navigate to the releases page.\n1. Choose a version tag. Include the `-rc` suffix followed by the next integer. RCs start at 0.\n1. Click **Generate release notes**.\n1. Toggle on the **Set as a pre-release** checkbox.\n1. **Publish release**."),
    ("mainnet-release", "Release Guide › Mainnet Release",
     "Follow the creating a release candidate section with the following considerations:\n\n- The version tag should not include the `-rc` suffix.\n- Toggle off the **Set as a pre-release** checkbox.\n- Toggle on the **Set as the latest release** checkbox."),
    ("testnet-release", "Release Guide › Testnet Release",
     "Follow the creating a release candidate section with the following considerations:\n\n- The version tag should not include the `-rc` suffix. Instead append the release with `-mocha`.\n- The release notes should contain an Upgrade Notice section."),
]  # fmt: skip


def test_a_documents_best_section_leads_whole_and_its_siblings_follow(
    shop: MemoryStore,
) -> None:
    """Sections of one document take one recall item; the section that answers is rendered
    whole even when its siblings repeat the question's words more often, and nothing twice."""
    for anchor, heading, body in RELEASE_GUIDE:
        shop.remember(Draft(kind="procedure", scope="project:shop", content=f"# docs/release.md: {heading}\n\n{body}",
                            source=f"file:docs/release.md#{anchor}"))  # fmt: skip
    result = ask(shop, "How do I tag a release candidate?", "recall", 300)
    texts = [i for s in result.sections for i in s.items if "docs/release.md" in i.text]
    assert len(texts) == 1, items(result)
    text = texts[0].text
    assert "RCs start at 0." in text and "Toggle on the Set as a pre-release checkbox." in text
    assert text.count("Toggle on the Set as a pre-release checkbox.") == 1
    assert texts[0].merged  # the siblings are named as merged into the item
    assert result.tokens <= 300


def extract_of(content: str, question: str, limit: int) -> str | None:
    """`extract.extract` of `content` for `question` in `limit` tokens (real o200k counts)."""
    from nous.context import extract, relevance
    from nous.text import tokens

    return extract.extract(content, relevance.query(question, {}, 0), limit, tokens.counter())


def test_equal_lines_of_a_code_block_stay_in_their_places() -> None:
    """ADR 12 of agent-framework has `options={` twice in one block; an extract drew both
    next to each other ("`options={` `options={`") when equal lines were one unit."""
    content = (
        "# ADR 12: Options › Usage\n\nUse the typed options like this:\n\n```python\n"
        "response = await client.get_response(\n    options={\n        \"temperature\": 0.7,\n    }\n)\n"
        "other = await client.get_streaming_response(\n    options={\n        \"top_k\": 40,\n    }\n)\n```\n"
    )  # fmt: skip
    text = extract_of(content, "typed options temperature top_k streaming response", 400)
    assert text is not None
    assert "`options={` `options={`" not in text
    assert text.count("`options={`") == 2, text


def test_a_code_line_of_closing_brackets_is_not_drawn_into_an_extract() -> None:
    """thunderbird-android's UI guide: the answer's room went to "Add the screen to the
    navigation graph: `)` `}` `}`" (the lines after the one the question's words led to)."""
    content = (
        "# docs/ui.md: UI › Add to Navigation\n\nAdd the screen to the navigation graph:\n\n"
        "```kotlin\ncomposable(route = \"settings\") {\n    SettingsScreen(\n"
        "        onBack = { navController.popBackStack() },\n    )\n}\n```\n\n"
        "The graph owns the back stack."
    )  # fmt: skip
    text = extract_of(content, "how is the settings screen added to the navigation graph", 200)
    assert text is not None and "SettingsScreen(" in text, text
    assert "`)`" not in text and "`}`" not in text, text


LONG_RULE = (
    "# src/AGENTS.md: Key Contracts\n\nAgents MUST NOT:\n\n"
    "- Call `DateTime.now()` or `pendulum.now()` directly; use `now()` from "
    "`types/_datetime.py`, which abstracts over the API differences of every supported "
    "release and keeps imports behind the version guard the client build needs. Version-specific "
    "code is guarded by feature-detection flags, not version checks, so a new release does not "
    "silently change behaviour. A no-argument `datetime.datetime.now()` returns a tz-naive value "
    "that raises `TypeError` against the tz-aware ones. Violations break on whichever release "
    "the helpers were not written for.\n"
    "- Import the engine lazily in the task runner module.\n"
)


def test_a_paragraph_long_rule_gives_the_sentence_that_answers_with_its_lead_in() -> None:
    """prefect's src/prefect/AGENTS.md keeps a rule as one 1,600-character list item: whole, it
    never fit an item's room, and shorter items that shared a word were said instead. Read
    sentence by sentence, the answering one comes, still led by "MUST NOT"; said in full, the
    item is one line again."""
    from nous.context import extract, relevance, rules
    from nous.text import markdown, tokens

    found = markdown.units(LONG_RULE)
    assert [u.kind for u in found if u.kind != "heading"][:2] == ["item", "more"]
    assert all(u.lead == "Agents MUST NOT:" for u in found if u.kind in ("item", "more"))
    text = extract_of(LONG_RULE, "can I call datetime.datetime.now() in the task engine?", 90)
    assert text is not None and "tz-naive" in text, text
    assert "MUST NOT: " in text.split("tz-naive")[0], text
    query = relevance.query("datetime now tz-naive version guard", {}, 0)
    wants = extract.Wants(render=rules.lines)
    whole = extract.extract(LONG_RULE, query, 400, tokens.counter(), wants)
    assert whole is not None and whole.count("MUST NOT") <= 2, whole
    assert "imports behind the version guard the client build needs. Version-specific" in whole


def test_a_further_section_of_an_admitted_document_needs_only_the_sibling_floor(
    shop: MemoryStore,
) -> None:
    """The floor admits documents: a section of a document already in needs `gate.sibling`;
    the same relevance from another document stays out."""
    from nous.context import gate as gates
    from nous.context import items, query
    from nous.context.score import Scored

    def section(path: str, anchor: str, text: str, relevance: float) -> Scored:
        memory = shop.remember(Draft(kind="fact", scope="project:shop", source=f"file:{path}#{anchor}",
                                     content=f"# {path}: {anchor}\n\n{text}")).memory  # fmt: skip
        return Scored(memory, relevance, {"relevance": relevance, "scopeFactor": 1.0})

    # the shipped sibling floor equals the floor (no lower one was fitted): the mechanism, with one
    config = CONFIG.model_copy(
        update={"gate": CONFIG.gate.model_copy(update={"sibling": CONFIG.gate.turn / 2})}
    )
    gate = config.gate
    between = (gate.sibling + gate.turn) / 2
    assert gate.sibling < between < gate.turn
    lead = section(
        "docs/a.md", "retries", "Card payments are retried three times with backoff.", 0.95
    )
    sibling = section(
        "docs/a.md", "intro", "This guide covers the checkout service and its queues.", between
    )
    stranger = section("docs/b.md", "fonts", "The marketing site uses two web fonts.", between)
    req = pipeline.Request(input="what is the answer?", mode="turn", budget=6000)
    work = items.Work()
    asked = query.of(config, VIEW, req)
    assert asked.frame == "question"
    kept = gates.admit(shop, asked, [lead, sibling, stranger], work)
    assert [k.memory.id for k in kept] == [lead.memory.id, sibling.memory.id], work.dropped
    assert stranger.memory.id in work.dropped_ids


def test_a_diagram_is_not_drawn_line_by_line_into_an_extract() -> None:
    """ADR 7 of thunderbird-android: "Where should new code go?" drew the mermaid lines
    (`LEG[Legacy Code]`) instead of "These modules should not be used for new development."."""
    content = (
        "# ADR 7: Project Structure › Legacy Modules\n\n"
        "These modules should not be used for new development.\n\n"
        "The goal is to migrate the functionality of these modules over time:\n\n"
        "```mermaid\ngraph TD\n    APP[New Code]\n    LEG[Legacy Code]\n    APP --> LEG\n```\n"
    )
    text = extract_of(content, "where should new code go? legacy modules", 60)
    assert text is not None and "should not be used for new development" in text
    assert "Legacy Code]" not in text and "graph TD" not in text


def test_an_adr_item_says_its_decision_whatever_section_matched(real_store: MemoryStore) -> None:
    """agent-framework's ADR 12 (development set): "Why do the Python chat clients take a typed
    options dict now instead of ChatOptions plus **kwargs?" matches its "Option 1: Status Quo"
    section best; the item must still say the chosen option, the first unit of the decision
    record merged into it, although that sentence shares few of the question's words."""
    from pathlib import Path

    from nous.workspace.harvest import adr

    rel = "docs/decisions/0012-python-typeddict-options.md"
    path = Path(__file__).resolve().parents[3] / "shared/eval/repos/agent-framework" / rel
    if not path.is_file():
        pytest.skip(f"no development repositories at {path}")
    from nous.context import items as item_renderings
    from nous.context import relevance
    from nous.context.score import Scored

    stored = [
        real_store.remember(Draft(kind=h.kind, scope="project:shop", content=h.content,
                                  source=h.anchor, tags=h.tags, status=h.status)).memory
        for h in adr.harvest(rel, path.read_text(encoding="utf-8"))
    ]  # fmt: skip
    [main] = [m for m in stored if m.source.endswith("#adr-12")]
    [option] = [m for m in stored if "option-1-status-quo" in (m.source or "")]
    question = "Why do the Python chat clients take a typed options dict now instead of ChatOptions"
    query = relevance.query(f"{question} plus kwargs", {}, 0)
    for others in ([], [Scored(main, 0.7)]):
        texts = item_renderings.Renderings(
            real_store, query, {option.id: 220}, {}, {option.id: others}
        ).of(Scored(option, 0.97))
        text = texts[0][1]  # the fullest rendering that fits
        assert "Option 1: Status Quo" in text  # the section that matched leads …
        said = 'Chosen option: "Option 2: TypedDict with Generic Type Parameters"' in text
        assert said == bool(others), text  # … and the decision merged into it is said


RELEASE_SKILL = [  # opendal's .agents/skills/opendal-release/SKILL.md (check split), abridged
    ("ground-rules", "Ground Rules",
     "- Use `gh` for GitHub PRs, issues, discussions, checks, and Actions logs.\n"
     "- Do not claim any step succeeded until the external system confirms it.\n"
     "- Treat an RC as bound to its signed tag, target commit, and generated artifacts. Do not "
     "create a new RC merely because `main` advances after tagging.\n"
     "- Do not put SVN, Nexus, or mail credentials in commands, files, issue text, PRs, or "
     "release notes."),
    ("go-binding-release-readiness", "Go Binding Release Readiness",
     "After the vote passes, if the Go binding RC was included in the vote, also push the final "
     "Go binding release tag at the same commit as the final top-level release tag on main."),
]  # fmt: skip


def test_a_merged_items_best_section_says_its_answer_first(real_store: MemoryStore) -> None:
    """opendal-05 (check split): the most relevant rule's section leads a censor item its
    document's other rules merge into, none of them over the gate's floor. The item says the
    lead's own answer ("Do not create a new RC merely because main advances") before what a
    sibling shares with the question (its "Go binding RC … included … tag … main")."""
    from nous.context import items as item_renderings
    from nous.context import relevance
    from nous.context.score import Scored

    lead, sibling = (
        real_store.remember(Draft(
            kind="constraint", scope="project:shop", tags=["instructions"],
            content=f"# .agents/skills/opendal-release/SKILL.md: OpenDAL Release › {heading}\n\n{body}",
            source=f"file:.agents/skills/opendal-release/SKILL.md#{anchor}",
        )).memory
        for anchor, heading, body in RELEASE_SKILL
    )  # fmt: skip
    question = ("We tagged the release candidate and then a couple of fixes landed on main. "
                "Do I need to cut a new RC so they're included?")  # fmt: skip
    query = relevance.query(question, {}, 0)
    merged = {lead.id: [Scored(sibling, 0.3, {"relevance": 0.01})]}
    texts = item_renderings.Renderings(real_store, query, {lead.id: 60}, {}, merged).of(
        Scored(lead, 0.4, {"relevance": 0.05})
    )
    text = dict(texts)["extract"]
    assert "Do not create a new RC merely because `main` advances after tagging." in text, text


def test_a_decision_that_only_names_the_option_chosen_says_why_too(
    real_store: MemoryStore,
) -> None:
    """opentelemetry-collector's logging RFC (check split): its "Accepted Solution" is a link
    naming the option, then the sentence that says why. "Why do we hold startup log messages in
    memory …?" matched the rejected option's section best; the item says the decision, and a
    name alone would not answer: the sentence after it comes with it."""
    from nous.context import items as item_renderings
    from nous.context import relevance
    from nous.context.score import Scored
    from nous.workspace.harvest import adr
    from tests.unit.test_harvest_markdown import LOGGING_RFC

    rel = "docs/rfcs/logging-before-config-resolution.md"
    stored = [
        real_store.remember(Draft(kind=h.kind, scope="project:shop", content=h.content,
                                  source=h.anchor, tags=h.tags, status=h.status)).memory
        for h in adr.harvest(rel, LOGGING_RFC)
    ]  # fmt: skip
    [main] = [m for m in stored if m.source.endswith("#adr-0")]
    [option] = [m for m in stored if "create-a-logger" in (m.source or "")]
    question = "Why hold startup messages in memory instead of creating a default logger early?"
    query = relevance.query(question, {}, 0)
    texts = item_renderings.Renderings(
        real_store, query, {option.id: 90}, {}, {option.id: [Scored(main, 0.3)]}
    ).of(Scored(option, 0.9))
    text = texts[0][1]
    assert "Buffer Logs in Memory" in text, text
    assert "write out the logs in the user-specified format" in text, text
    assert "Buffer Logs in Memory: This solution" in text  # the name, then what is said of it


def test_an_adr_section_brings_its_decision_and_why(real_store: MemoryStore) -> None:
    """vector's RFC 8025 (tune split): "Could I ship spans to Datadog APM?" matches the rejected
    RFC's "In scope" section; its main record (relevance 0.02 there) must come along, and say
    both what was decided and why (the status paragraph's second sentence)."""
    from nous.context import items as item_renderings
    from nous.context import relevance
    from nous.context.score import Scored
    from nous.workspace.harvest import adr
    from tests.unit.test_harvest_markdown import TRACING_RFC

    stored = [
        real_store.remember(Draft(kind=h.kind, scope="project:shop", content=h.content,
                                  source=h.anchor, tags=h.tags, status=h.status)).memory
        for h in adr.harvest("rfcs/2021-08-13-8025-internal-tracing.md", TRACING_RFC)
    ]  # fmt: skip
    [section] = [m for m in stored if (m.source or "").endswith("-in-scope")]
    kept = [Scored(section, 0.9, {"relevance": 0.4})]
    merged: dict[str, list[Scored]] = {}
    item_renderings.with_decisions(real_store, kept, merged)
    assert [m.memory.source for m in merged[section.id]] == [
        "file:rfcs/2021-08-13-8025-internal-tracing.md#adr-8025"
    ]
    item_renderings.with_decisions(real_store, kept, merged)  # once is enough
    assert len(merged[section.id]) == 1
    [main] = [m for m in stored if (m.source or "").endswith("#adr-8025")]
    apart: dict[str, list[Scored]] = {}  # the main record is an item of its own (a superseded
    item_renderings.with_decisions(  # record's sections are not merged): not said twice
        real_store, [*kept, Scored(main, 0.5, {"relevance": 0.02})], apart
    )
    assert apart == {}
    query = relevance.query("Could I ship our components' spans to Datadog APM?", {}, 0)
    text = item_renderings.Renderings(real_store, query, {section.id: 90}, {}, merged).of(kept[0])[
        0
    ][1]
    assert "decided not to move forward" in text and "more granular timing" in text, text
    assert "(status: Rejected)" in text, text  # the state in a word, not the sentence's start


SQUARE_SIZE = [  # celestia-app docs/maintainers/increase-square-size.md (development set), abridged
    ("increase-square-size", "Increase square size",
     "The max square size is the minimum of `GovMaxSquareSize` and `SquareSizeUpperBound`. If you "
     "need to produce squares larger than the max square size, you must override either or both."),
    ("govmaxsquaresize", "Increase square size › GovMaxSquareSize",
     "`GovMaxSquareSize` is the maximum square size that can be set by governance. By default it "
     "is set to 64."),
    ("squaresizeupperbound", "Increase square size › SquareSizeUpperBound",
     "Currently the `SquareSizeUpperBound` is set to 128. To increase it you must modify the "
     "hard-coded constant in versioned_consts.go and create a new binary."),
]  # fmt: skip


def test_a_short_document_comes_whole_once_a_section_is_admitted(shop: MemoryStore) -> None:
    """The answer sits in a three-line section that shares no word with the question; the
    document is short, so once its first section is admitted all of it comes (turn mode), and
    a long document does not (its other sections still need the sibling floor)."""
    for anchor, heading, body in SQUARE_SIZE:
        shop.remember(Draft(kind="fact", scope="project:shop", content=f"# docs/square.md: {heading}\n\n{body}",
                            source=f"file:docs/square.md#{anchor}"))  # fmt: skip
    question = "Our devnet needs bigger blocks than the max square size allows. What has to change?"
    texts = [t for t in items(ask(shop, question)) if "docs/square.md" in t]
    assert len(texts) == 1 and "create a new binary" in texts[0], texts
    short = CONFIG.model_copy(
        update={"gate": CONFIG.gate.model_copy(update={"short_document": 50})}
    )
    result = pipeline.assemble(shop, short, VIEW, pipeline.Request(input=question, mode="turn"))
    assert not any("create a new binary" in t for t in items(result)), items(result)


@pytest.mark.parametrize("mode", ["recall", "turn"])
def test_recall_and_turn_drop_what_is_far_below_their_best_item(mode: str) -> None:
    """`gate.recall_relative` / `gate.turn_relative`: an item that clears the absolute floor but
    sits far below the request's best item stays out (a long tail of weak matches was most of a
    turn's noise); startup keeps the absolute floor only."""
    from nous.context import gate as gates
    from nous.context import query
    from nous.memory.model import Memory

    # the shipped relative floors are what leave-one-out chose (docs/benchmarks.md): the
    # mechanism, with one
    config = CONFIG.model_copy(update={"gate": CONFIG.gate.model_copy(
        update={"recall_relative": 0.8, "turn_relative": 0.8})})  # fmt: skip
    gate = config.gate
    relative = gate.recall_relative if mode == "recall" else gate.turn_relative
    assert 0 < relative < 1
    memory = Memory.model_validate({
        "id": "m", "kind": "fact", "scope": "project:shop", "content": "x", "summary": "x",
        "micro": "x", "created_at": "", "updated_at": "", "last_seen_at": "", "status": "new",
        "status_changed_at": "", "confidence": 1.0, "importance": 0.5, "outcome": None,
        "confirmations": 0, "activations": 0, "frequency": 0, "source": "file:a.md#x",
        "content_hash": "", "superseded_by": None, "tags": [],
    })  # fmt: skip

    def floor(m: str, top: float) -> float:
        asked = query.of(config, VIEW, pipeline.Request(input="a question?", mode=m))
        return gates.floor(asked, memory, top, False)

    assert floor(mode, 1.0) == pytest.approx(max(getattr(gate, mode), relative))
    assert floor(mode, 0.1) == pytest.approx(getattr(gate, mode))
    assert floor("startup", 1.0) == pytest.approx(gate.startup)


CHAT = [  # small talk and loosely related turns from an earlier chat in the same project
    "Wow, Caroline! That sounds like a great weekend.",
    "I went hiking with my dog and we saw a deer near the lake.",
    "Did you finish the payments refactor before the holidays?",
    "Yes, mostly; I still need to look at the logging in the payment code.",
]


def test_chat_turns_compete_with_the_documents_that_answer(shop: MemoryStore) -> None:
    """Turns have a LoCoMo-calibrated floor of their own (0.1), meant for a store of turns; in a
    project store with documents that answer, a turn also needs `gate.episode_relative` of the
    best other candidate: "Wow, Caroline!" no longer rides along with the card-logging rule."""
    from nous.memory import turns

    shop.remember_many([turns.draft("old", n, t, scope="project:shop") for n, t in enumerate(CHAT)])
    shop.wait_embedded()
    question = "Can we log card numbers at debug level?"
    off = CONFIG.model_copy(update={"gate": CONFIG.gate.model_copy(update={"episode_relative": 0})})
    for mode in ("recall", "turn"):
        texts = items(ask(shop, question, mode, 2000))
        assert any("Never log card numbers" in t for t in texts), texts
        assert not any(turn in t for t in texts for turn in CHAT), (mode, texts)
        request = pipeline.Request(input=question, mode=mode, budget=2000)
        ungated = items(pipeline.assemble(shop, off, VIEW, request))
        assert any(turn in t for t in ungated for turn in CHAT), (mode, ungated)


def test_an_old_chat_turn_does_not_raise_the_floor_over_the_document_that_answers(
    real_store: MemoryStore,
) -> None:
    """A chat turn's relevance is the search's blend, not the gate model's probability: an old
    turn that repeats the question's words (blend ≈ 0.9) once set the relative floor (half the
    best item's relevance) over the ADR that answers (≈ 0.3), and the user got their own turn
    back instead of the decision."""
    from nous.memory import turns

    adr = ("# ADR 3: HTTP client (status: accepted)\n\nWe use httpx for every outbound HTTP "
           "call; it gives us async and HTTP/2. The requests library is not used in new code.")  # fmt: skip
    real_store.remember_many([
        Draft(kind="decision", content=adr, source="file:docs/adr/0003-http-client.md#adr-3",
              scope="project:shop"),
        *(turns.draft("old", n, t, scope="project:shop") for n, t in enumerate([
            "Could we add the requests library to the HTTP client? It would make the code simpler.",
            "I tried the requests library in the HTTP client yesterday and it felt faster.",
        ])),
    ])  # fmt: skip
    real_store.wait_embedded()
    question = "Can I add the requests library to speed up the HTTP client?"
    for mode in ("recall", "turn"):
        result = ask(real_store, question, mode, 2000)
        episodes = [i for s in result.sections for i in s.items if i.kind == "episode"]
        assert episodes and episodes[0].terms["relevance"] > 0.6  # the turn is on its own scale
        assert any("We use httpx" in t for t in items(result)), (mode, result.dropped)


def test_the_censors_take_their_cap_in_order_of_relevance(shop: MemoryStore) -> None:
    """fastmcp: a review skill's procedure (relevance 0.024, the higher composite score) took the
    turn's censor cap ahead of the AGENTS.md rule that answered (0.046). The censors are placed
    by relevance, each in a place one of them held; items admitted on their relevance keep
    theirs."""
    from nous.context import placement
    from nous.context.score import Scored

    def scored(text: str, score: float, relevance: float, censor: bool) -> Scored:
        memory = shop.remember(Draft(kind="constraint", scope="project:shop", content=text)).memory
        terms = {"relevance": relevance, "scopeFactor": 1.0} | ({"censor": 1.0} if censor else {})
        return Scored(memory, score, terms)

    admitted = scored("Run the migrations before the server starts.", 0.9, 0.6, False)
    skill = scored("Never approve your own pull request in review.", 0.354, 0.024, True)
    other = scored("Do not edit the lockfile by hand, ever.", 0.33, 0.002, True)
    rule = scored("Never edit the generated SDK reference pages.", 0.313, 0.046, True)
    order = placement._censors_by_relevance([admitted, skill, other, rule])
    assert order == [admitted, rule, skill, other]


def test_the_gate_reads_a_paragraph_long_rule_whole() -> None:
    """The gate model was fitted with a list item as one unit ("is the answer in one place?"):
    the extract reads a long item by its sentences, the gate's `unit` feature still whole (split,
    the sentences of one rule would each hold part of the question and weigh less)."""
    from nous.context import relevance

    query = relevance.query("datetime tz-naive version guard", {}, 0)
    unit = relevance.features(query, LONG_RULE, 0.5, 0.5)[relevance.FEATURES.index("unit")]
    assert unit == pytest.approx(1.0)
