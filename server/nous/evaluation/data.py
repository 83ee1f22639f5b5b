"""Loading the evaluation data from `shared/eval/` (never copied into the repository): LoCoMo,
BEIR SciFact and the repository-documentation set (`repos/`).

The folder is `--data`, else `NOUS_EVAL_DATA`, else `../shared/eval` beside the repository root.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from nous.errors import NousError
from nous.evaluation.metrics import evidence_ids

DATA_ENV = "NOUS_EVAL_DATA"
ROOT = Path(__file__).resolve().parents[3]
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""LoCoMo category ids (shared/eval/locomo/SOURCE.md, matched to the paper's Table 5 counts)."""
LOCOMO_SPLITS = {"dev": range(0, 5), "test": range(5, 10)}
SCIFACT_SPLITS = {"dev": "train", "test": "test"}


class EvalDataError(NousError):
    """The evaluation data is missing or not in the expected format."""


def data_dir(explicit: Path | None = None) -> Path:
    """`explicit` (`--data`, else `Settings.eval_data` from `NOUS_EVAL_DATA`: the caller's),
    else `../shared/eval` beside the repository root."""
    if explicit is not None:
        path = explicit
    else:
        base = ROOT if (ROOT / "pyproject.toml").is_file() else Path.cwd()
        path = base.parent / "shared" / "eval"
    if not path.is_dir():
        raise EvalDataError(
            f"evaluation data not found at {path}: pass --data DIR or set {DATA_ENV} "
            "(the folder holding locomo/ and beir-scifact/)"
        )
    return path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- LoCoMo ------------------------------------------------------------------------------------


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    date: str
    session: int
    caption: str | None = None


@dataclass
class Question:
    question: str
    category: int
    evidence: list[str]
    conversation: str
    answer: str = ""
    """The gold answer (empty for the adversarial category, which has none)."""


@dataclass
class Conversation:
    index: int
    sample_id: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def load_locomo(root: Path) -> list[Conversation]:
    path = root / "locomo" / "locomo10.json"
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvalDataError(f"cannot read {path}: {exc}") from exc
    out = []
    for index, sample in enumerate(samples):
        conv = Conversation(index=index, sample_id=str(sample["sample_id"]))
        talk = sample["conversation"]
        sessions = sorted(
            int(m.group(1))
            for key in talk
            if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(talk[key], list)
        )
        for n in sessions:
            date = str(talk.get(f"session_{n}_date_time", ""))
            for turn in talk[f"session_{n}"]:
                conv.turns.append(
                    Turn(
                        dia_id=str(turn["dia_id"]),
                        speaker=str(turn["speaker"]),
                        text=str(turn.get("text", "")),
                        date=date,
                        session=n,
                        caption=turn.get("blip_caption"),
                    )
                )
        for qa in sample["qa"]:
            evidence = evidence_ids(qa.get("evidence") or [])
            if not evidence:
                continue  # no gold turn: not scorable (4 items, plus a bare "D")
            conv.questions.append(
                Question(
                    question=str(qa["question"]),
                    category=int(qa["category"]),
                    evidence=evidence,
                    conversation=conv.sample_id,
                    answer=str(qa.get("answer", "")),
                )
            )
        out.append(conv)
    return out


# -- SciFact ------------------------------------------------------------------------------------


@dataclass
class Doc:
    id: str
    title: str
    text: str


@dataclass
class SciFact:
    corpus: list[Doc]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    """query id → {doc id: grade} for the split."""
    corpus_sha256: str


def load_scifact(root: Path, split: str) -> SciFact:
    base = root / "beir-scifact"
    qrels_name = SCIFACT_SPLITS[split]
    try:
        corpus = [
            Doc(id=str(row["_id"]), title=str(row.get("title") or ""), text=str(row["text"]))
            for row in (json.loads(line) for line in (base / "corpus.jsonl").open("rb") if line)
        ]
        queries = {
            str(row["_id"]): str(row["text"])
            for row in (json.loads(line) for line in (base / "queries.jsonl").open("rb") if line)
        }
        qrels: dict[str, dict[str, int]] = {}
        with (base / "qrels" / f"{qrels_name}.tsv").open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t")
            next(reader)  # header: query-id corpus-id score
            for row in reader:
                if len(row) >= 3 and row[0].strip():
                    qrels.setdefault(row[0].strip(), {})[row[1].strip()] = int(row[2])
    except (OSError, ValueError, KeyError, StopIteration) as exc:
        raise EvalDataError(f"cannot read SciFact from {base}: {exc}") from exc
    missing = [q for q in qrels if q not in queries]
    if missing:
        raise EvalDataError(f"{len(missing)} qrels queries are not in queries.jsonl")
    return SciFact(corpus, queries, qrels, file_sha256(base / "corpus.jsonl"))


# -- repository documentation (repos/) ---------------------------------------------------------

REPO_KINDS = ("answerable", "no-answer", "greeting")


@dataclass(frozen=True)
class RepoQuestion:
    repo: str
    id: str
    question: str
    kind: str
    """`answerable`, `no-answer` or `greeting`."""
    expected_files: tuple[str, ...] = ()
    key_phrases: tuple[str, ...] = ()
    note: str = ""


def repos_dir(root: Path) -> Path:
    """The repository set: `root` itself when it holds questions.json, else `root/repos`."""
    path = root if (root / "questions.json").is_file() else root / "repos"
    if not (path / "questions.json").is_file():
        raise EvalDataError(f"no repository set at {path} (expected questions.json there)")
    return path


def load_repo_questions(path: Path) -> list[RepoQuestion]:
    """questions.json of the repository set, in file order; checks every repo folder exists."""
    file = path / "questions.json"
    try:
        rows = json.loads(file.read_text(encoding="utf-8"))
        questions = [
            RepoQuestion(
                repo=str(row["repo"]), id=str(row["id"]), question=str(row["question"]),
                kind=str(row["kind"]), expected_files=tuple(row.get("expected_files") or ()),
                key_phrases=tuple(row.get("key_phrases") or ()), note=str(row.get("note") or ""),
            )
            for row in rows
        ]  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EvalDataError(f"cannot read {file}: {exc}") from exc
    for q in questions:
        if q.kind not in REPO_KINDS:
            raise EvalDataError(f"{q.id}: unknown kind {q.kind!r}")
        if not (path / q.repo).is_dir():
            raise EvalDataError(f"{q.id}: no folder {path / q.repo}")
    return questions


TUNE = (
    "thunderbird-android",
    "agent-framework",
    "celestia-app",
    "vector",
    "sentry-cocoa",
    "kitsune",
)
CHECK = ("opendal", "opentelemetry-collector", "fx-private-relay")
"""The repository set's splits (its README): fit and tune on `TUNE` only, leave-one-repository-out
over it; `CHECK` predicts a repository nobody tuned on."""


def split_of(repo: str) -> str:
    return "tune" if repo in TUNE else "check" if repo in CHECK else "other"


MINI_ROOT = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", "CONVENTIONS.md", ".cursorrules",
             ".github/copilot-instructions.md", "AGENT.md", ".windsurfrules", ".rules",
             "CONTRIBUTING.md", "docs/CONTRIBUTING.md", ".github/CONTRIBUTING.md")  # fmt: skip


def mini_files(source: Path, questions: list[RepoQuestion]) -> list[str]:
    """The files of a repository's **mini** variant (design §9): its root instruction files,
    CONTRIBUTING and the expected files of its questions — tens of memories, not thousands."""
    wanted = [
        *MINI_ROOT,
        *(f for q in questions if q.repo == source.name for f in q.expected_files),
    ]
    return [f for f in dict.fromkeys(wanted) if (source / f).is_file()]
