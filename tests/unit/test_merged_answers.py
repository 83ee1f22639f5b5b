"""An item made of several sections of one document (`items.merge_documents`) keeps the answer
of every section that passed the gate: the section that answers is the second best here, and the
merged rendering used to spend the item's share on the best section whole and on a third one that
only repeats the question's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from nous.context import chat, items, pipeline, placement, relevance
from nous.context import config as configs
from nous.context.score import Scored
from nous.engine import Engine
from nous.memory.embedder import OnnxEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.protocol import RecallParams
from nous.settings import Settings

DEFAULTS = configs.defaults()
CONFIG = DEFAULTS.model_copy(
    update={"gate": DEFAULTS.gate.model_copy(
        update={"recall": 0.2, "recall_relative": 0.0, "sibling": 0.02}
    )}
)  # fmt: skip
"""Explicit floors (the gate model is refitted often): a section admits its document at 0.2 and
keeps its own answer there; a further section joins the document's item at 0.02."""
VIEW = pipeline.View("shop", "project:shop", ["python"])
QUESTION = (
    "How long is a release candidate kept in the staging registry, and is a new one tagged for "
    "later fixes?"
)
ANSWER = "Do not tag a new RC for later fixes: treat an RC as bound to its signed tag."
RELEASING = [  # docs/release.md, as the harvest stores it: one record a section
    ("release-candidates", "Release candidates",
     "A release candidate is tagged from main once the milestone is closed. Name the tag "
     "`vX.Y.Z-rc.N` and sign it with your release key. The release candidate is published to the "
     "staging registry so that downstream teams can try it. Every release candidate gets its own "
     "changelog entry and its own announcement on the mailing list. Release candidates are built "
     "by the release workflow; never build a release candidate on your own machine. Keep the "
     "release candidate tag until the final release is published. A release candidate is kept in "
     "the staging registry for ninety days. Downstream teams report problems with a release "
     "candidate on the release issue. A release candidate that fails its vote is withdrawn and "
     "its tag is kept for the record."),
    ("fixes-after-a-candidate", "Fixes after a candidate",
     f"A fix that lands on main after the tag does not change what was voted on. {ANSWER} They ship "
     "in the next release. The vote runs for three days. Binding votes come from the "
     "project's maintainers. Non-binding votes from the community are welcome and recorded on the "
     "vote thread. A vote that does not reach three binding votes is extended by two days. The "
     "release manager closes the vote and posts the result."),
    ("candidate-checklist", "Candidate checklist",
     "Before you tag a release candidate, check that main is green, that the fixes for the "
     "milestone have landed on main, that the changelog lists the fixes, and that the release "
     "candidate notes name the tag. After you tag the release candidate, check that the release "
     "candidate appears in the staging registry and that the tag is signed."),
    ("publishing", "Publishing",
     "After the vote passes, the release manager publishes the final release to the public "
     "registry and announces it."),
]  # fmt: skip


@pytest.fixture
def release_guide(real_store: MemoryStore) -> dict[str, str]:
    """{anchor: memory id} of the guide's sections."""
    ids = {}
    for anchor, heading, body in RELEASING:
        written = real_store.remember(
            Draft(kind="fact", scope="project:shop", source=f"file:docs/release.md#{anchor}",
                  content=f"# docs/release.md: Releasing › {heading}\n\n{body}")
        )  # fmt: skip
        ids[anchor] = written.memory.id
    return ids


def recall(store: MemoryStore, config: configs.Config = CONFIG) -> pipeline.ContextResult:
    request = pipeline.Request(input=QUESTION, mode="recall", budget=300)
    return pipeline.assemble(store, config, VIEW, request)


def test_a_merged_item_keeps_the_answer_of_its_second_best_section(
    real_store: MemoryStore, release_guide: dict[str, str]
) -> None:
    result = recall(real_store)
    [item] = [i for s in result.sections for i in s.items]
    # the best section leads; the one that answers is the second best, a third is merged too
    assert item.id == release_guide["release-candidates"]
    assert item.merged == [
        release_guide["fixes-after-a-candidate"],
        release_guide["candidate-checklist"],
    ]
    assert ANSWER in item.text, item.text
    assert "A release candidate is kept in the staging registry for ninety days." in item.text
    assert result.tokens <= 300


def test_a_section_whose_answer_does_not_fit_the_item_is_its_own_item(
    real_store: MemoryStore, release_guide: dict[str, str]
) -> None:
    """When one item may not grow to hold every section's answer (`gate.item_max`), the least
    relevant sections leave it and are items of their own, the answer with them."""
    small = CONFIG.model_copy(update={"gate": CONFIG.gate.model_copy(update={"item_max": 80})})
    result = recall(real_store, small)
    by_id = {i.id: i for s in result.sections for i in s.items}
    fixes = by_id[release_guide["fixes-after-a-candidate"]]
    assert ANSWER in fixes.text, fixes.text
    assert fixes.id not in {d.id for d in result.dropped}  # in, not "merged into"
    assert fixes.id not in by_id[release_guide["release-candidates"]].merged
    assert result.tokens <= 300


PROFILING = "RFC: Experimental support for profiling"
MARK_APIS = (  # docs/rfcs/experimental-profiling.md of opentelemetry-collector, as harvested
    f"# {PROFILING} › Proposed approach › Mark specific APIs as `experimental`\n\n"
    "In order to boot a functional collector with profiles support, some stable packages need to "
    "be aware of the experimental ones.\n\nTo support that case, we will mark new APIs as "
    "`experimental` with go docs. Every experimental API will be documented as such:\n"
    "```golang\n// # Experimental\n//\n// Notice: This method is EXPERIMENTAL and may be changed "
    "or removed in a\n// later release.\n```\n\nAs documented, APIs marked as experimental may "
    "changed or removed across releases, without it being considered as a breaking change.\n\n"
    "There are no symbols that would need to be marked as experimental today. If there ever are "
    "then implementers may add an experimental comment to them"
)
BUILD_TAGS = (
    f"# {PROFILING} › Overview › Discarded approaches › Use build tags\n\nAn approach would have "
    "been to use build tags to limit the availability of profiles within packages.\n\nThis "
    "approach would make the UX very bad though, as most packages are meant to be imported and "
    "not used in a compiled collector. It would therefore not have been possible to specify the "
    "appropriate build tags.\n\nThis has been discarded, as the usage would have been too "
    "difficult."
)
COLLECTOR_COUNTS = (  # the question's words in the collector's 479 harvested memories
    {"profiles": 17, "signal": 35, "couldn": 1, "hide": 0, "apis": 49, "behind": 7, "go": 89,
     "build": 28, "tags": 19, "instead": 34, "adding": 62, "experimental": 23, "packages": 53},
    479,
)  # fmt: skip


def test_a_short_admitted_section_is_said_whole_with_its_reasons(real_store: MemoryStore) -> None:
    """A sibling that passed the gate keeps its own answer in the merged item; a short one's
    answer is all of it (`items.SHORT_SECTION_TOKENS`), not only the sentences that share the
    question's words: the reasons ("most packages are meant to be imported", "the usage would
    have been too difficult") share none."""
    sections = []
    for anchor, content in (("mark-apis", MARK_APIS), ("use-build-tags", BUILD_TAGS)):
        written = real_store.remember(
            Draft(kind="decision", scope="project:shop", content=content,
                  source=f"file:docs/rfcs/experimental-profiling.md#{anchor}")
        )  # fmt: skip
        sections.append(Scored(written.memory, 0.5, {"relevance": 0.6}))
    lead, sibling = sections
    question = (
        "For the profiles signal, couldn't we just hide the new APIs behind Go build tags instead "
        "of adding experimental packages?"
    )
    query = relevance.query(question, *COLLECTOR_COUNTS)
    renderings = items.Renderings(
        real_store, query, {lead.memory.id: 450}, {}, {lead.memory.id: [sibling]}, admitted=0.15
    )
    answers = " ".join(renderings.answers(lead))
    assert "most packages are meant to be imported" in answers, answers
    assert "the usage would have been too difficult" in answers, answers
    # the lead's own answer is still its best units, not all of it
    lead_sentences = (
        "To support that case, we will mark new APIs",
        "As documented, APIs marked as experimental may",
        "There are no symbols that would need to be marked",
        "In order to boot a functional collector",
    )
    assert 0 < sum(s in answers for s in lead_sentences) < len(lead_sentences), answers


RETRIES = " ".join(
    f"Step {n}: the payment client retries a failed charge after {n * 2} seconds, with jitter, "
    f"and logs the attempt number {n} with the charge id."
    for n in range(1, 30)
)


def test_a_recall_spends_what_it_left_on_the_extracts_it_cut(
    real_store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shares are set before the answer is placed (1/rank of the budget); what the answer
    left unspent grows the extracts that were cut, best first, within the budget."""
    for source, content in (
        ("docs/payments.md#retries", f"# docs/payments.md: Payments › Retries\n\n{RETRIES}"),
        ("docs/payments.md#timeouts", "# docs/ops.md: Payment client timeouts\n\nThe payment "
         "client gives up on a charge after 30 seconds of retries."),
        ("docs/alerts.md#payments", "# docs/alerts.md: Payment retry alerts\n\nFive failed "
         "charge retries in a minute page the payments on-call."),
    ):  # fmt: skip
        real_store.remember(
            Draft(kind="fact", scope="project:shop", content=content, source=f"file:{source}")
        )
    request = pipeline.Request(
        input="How does the payment client retry a failed charge?", mode="recall", budget=500
    )
    grown = pipeline.assemble(real_store, CONFIG, VIEW, request)
    monkeypatch.setattr(placement, "spend_spare", lambda *args: False)
    first = pipeline.assemble(real_store, CONFIG, VIEW, request)
    assert next(i.detail for s in first.sections for i in s.items) == "extract", first.text
    assert first.tokens < grown.tokens <= 500
    assert len(grown.sections[0].items[0].text) > len(first.sections[0].items[0].text)


def test_sections_of_one_document_take_one_slot_of_the_plan(
    real_store: MemoryStore, release_guide: dict[str, str]
) -> None:
    """The plan's per-kind limit counts items, and a document's sections merge into one item:
    with one fact allowed, the section that answers still joins the document's item instead of
    being dropped "beyond the plan's 1 facts" (fx-private-relay's ADR 1 lost its "20 of 40
    websites" consequence that way in a turn)."""
    one = CONFIG.model_copy(update={
        "plan": CONFIG.plan.model_copy(
            update={"default_limit": 1, "dominant_limit": 1, "other_limit": 1}
        ),
        "gate": CONFIG.gate.model_copy(
            update={"turn": 0.2, "turn_relative": 0.0, "sibling": 0.02}
        ),
    })  # fmt: skip
    request = pipeline.Request(input=QUESTION, mode="turn", budget=600)
    result = pipeline.assemble(real_store, one, VIEW, request)
    beyond = [d for d in result.dropped if "beyond the plan" in d.detail]
    assert release_guide["fixes-after-a-candidate"] not in {d.id for d in beyond}, beyond
    [item] = [i for s in result.sections for i in s.items]
    assert item.id == release_guide["release-candidates"]
    assert release_guide["fixes-after-a-candidate"] in item.merged, result.dropped


L10N_AGENTS = "# agents.md\n\nGuidance for coding agents working in this repository.\n\n## Global Principles\n\n### Frontend Build\n\nThe frontend is built once and deployed to every environment. Environment-specific values cannot be baked into the build.\n\n### Translations Submodule\n\n`shop/locales/` is a separate git repository that holds the frontend's messages. Always clone with `--recurse-submodules`, or the build finds no messages. Updated automatically by daily jobs.\n\n### Code Quality\n\n- Use clear variable names.\n- Keep functions short.\n"

L10N_DOC = "# Localization\n\nHow the shop gets its translated messages, and how developers work with them.\n\n## Development Workflows\n\n### Loading Translations\n\nThe translated messages live in a separate repository, included here as a git submodule that points at a specific commit. When you clone the shop, you can fetch the messages too: `git clone --recurse-submodules https://example.com/shop.git`. If you cloned without `--recurse-submodules`, set the messages up with `git submodule init` and then `git submodule update`. When you check out a branch, `git status` may report that `shop/locales` changed: the submodule commit is out of step with the branch. Run `git submodule update --remote` to bring it in step, or set `git config --global submodule.recurse true` so that every checkout and pull updates the submodule for you. The frontend build reads the messages from `shop/locales/en/` at build time, so an empty folder gives a build without any messages.\n\n### Nightly Translation Updates\n\nA scheduled job runs every night. It updates the `shop/locales` submodule to the newest commit of the messages repository and opens a pull request when anything changed. Review it like any other pull request: the messages are plain Fluent files, one folder per locale, and the job never touches application code. When the job fails, its log names the locale whose files did not parse; fix the file in the messages repository, not here, and the next night's run picks it up.\n\n### Submitting Pending Translations\n\nThe `shop/locales` folder is a checkout of the messages repository. It is an `https` checkout by default, so pushing a branch asks for a password. To push with your SSH key instead, run `cd shop/locales` and `git remote set-url origin git@example.com:shop/locales.git`. To prepare new strings for translation, check out the main branch of the messages repository, copy the pending strings from `frontend/pendingTranslations.ftl` into the matching files under `shop/locales/en/`, commit them there and open a pull request against the messages repository. Once it merges, update the submodule here.\n\n### Reverting a Translation Commit\n\nFind the commit that changed the submodule with `git log -- shop/locales`, revert it, and update the submodule pointer in the same pull request. Never edit the files inside the submodule from this repository's branches.\n"


def test_growing_a_recalls_extracts_never_costs_an_item_placed_before(
    tmp_path: Path, real_embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recall's unspent budget grows the extracts it cut (`placement.spend_spare`) and the
    answer is placed again; growing must not cost an item admitted on its relevance its
    rendering, nor push out one in by the censors layer (which may shrink to a line). The
    rule "`shop/locales/` is a separate git repository … Always clone with
    `--recurse-submodules`" was squeezed to its micro line, or out, when the extract before it
    took the whole spare and the layers' headings the rest (fx-private-relay's 06 lost its
    strict hit that way)."""
    workspace = tmp_path / "ws"
    (workspace / "docs").mkdir(parents=True)
    (workspace / "AGENTS.md").write_text(L10N_AGENTS)
    (workspace / "docs" / "l10n.md").write_text(L10N_DOC)
    engine = Engine(Settings(db=tmp_path / "m.db"), workspace, embedder=real_embedder)
    grow = placement.spend_spare
    question = ("After cloning, shop/locales/ is empty and the frontend build can't find any "
                "messages. What did I miss?")  # fmt: skip
    try:
        engine.harvest()
        grew = 0
        for budget in range(160, 420, 20):
            params = RecallParams(query=question, budget=budget)
            monkeypatch.setattr(placement, "spend_spare", lambda *args: False)
            first = chat.recall(engine, params)
            monkeypatch.setattr(placement, "spend_spare", grow)
            final = chat.recall(engine, params)
            after = {i.id: i.tokens for s in final.sections for i in s.items}
            for item in (i for s in first.sections for i in s.items):
                if item.terms.get("censor"):  # in by its layer alone: may shrink, never leave
                    assert item.id in after, (budget, item.text, final.text)
                else:
                    assert after.get(item.id, 0) >= item.tokens, (budget, item.text, final.text)
            assert final.tokens <= budget
            grew += final.tokens > first.tokens
        assert grew  # the spare was spent somewhere
    finally:
        engine.store.close()
