"""Retrieval metrics, pure functions over ids: fractional evidence recall@k (LoCoMo), nDCG@k and
recall@k with binary relevance (BEIR), and the LoCoMo evidence-id clean-up."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence

_DIA = re.compile(r"^D(\d+):(\d+)$")


def evidence_ids(raw: Iterable[str]) -> list[str]:
    """LoCoMo evidence refs cleaned: entries split on `;`, `,` and spaces, `D:11:26` → `D11:26`,
    `D30:05` → `D30:5`; refs that name no turn (a bare `D`) are dropped. Order kept, no repeats.

    Well-formed ids that do not exist in the conversation are kept (they count as misses)."""
    out: list[str] = []
    for entry in raw:
        for part in re.split(r"[;,\s]+", str(entry)):
            part = part.strip()
            if part.startswith("D:"):
                part = "D" + part[2:]
            match = _DIA.match(part)
            if match is None:
                continue
            clean = f"D{int(match.group(1))}:{int(match.group(2))}"
            if clean not in out:
                out.append(clean)
    return out


def units(ranking: Sequence[str], mapping: Mapping[str, Sequence[str]]) -> list[str]:
    """Memory ids → the benchmark's unit ids (turns, documents), in rank order, first hit kept.

    One memory can stand for several units (identical texts are stored once)."""
    seen: set[str] = set()
    out: list[str] = []
    for memory_id in ranking:
        for unit in mapping.get(memory_id, ()):
            if unit not in seen:
                seen.add(unit)
                out.append(unit)
    return out


def found_share(retrieved: Iterable[str], gold: Collection[str]) -> float:
    """The share of `gold` present in `retrieved` (0 when there is no gold)."""
    if not gold:
        return 0.0
    hits = set(retrieved) & set(gold)
    return len(hits) / len(set(gold))


def recall_at(
    ranking: Sequence[str], mapping: Mapping[str, Sequence[str]], gold: Collection[str], k: int
) -> float:
    """Fractional recall@k: the share of gold units covered by the top-k memories."""
    return found_share(units(ranking[:k], mapping), gold)


def ndcg_at(ranked_docs: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """nDCG@k as trec_eval/BEIR compute it: gain = relevance grade, discount log2(rank + 1)."""
    dcg = sum(
        relevant.get(doc, 0) / math.log2(rank + 1)
        for rank, doc in enumerate(ranked_docs[:k], start=1)
    )
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def doc_recall_at(ranked_docs: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Recall@k over relevant (grade > 0) documents."""
    gold = {d for d, g in relevant.items() if g > 0}
    return found_share(ranked_docs[:k], gold)


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
