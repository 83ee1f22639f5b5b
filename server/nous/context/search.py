"""Hybrid search: vector top-k and FTS5/BM25 fused into one ranking of memory ids.

`blend` is the retrieval the whole pipeline and the evaluation harness share (`ranked` is its
ordering); the fusion method was chosen with numbers from the development split (see
docs/benchmarks.md). `fuse` (reciprocal-rank fusion) stays for the comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from nous.context import echo, relevance
from nous.memory import turns
from nous.memory.embedder import Vector
from nous.memory.interface import Store
from nous.memory.model import Memory
from nous.memory.team import Hit

RRF_K = 60


def fuse(*rankings: Sequence[tuple[str, float]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: sum of 1/(k + rank) over the lists each id appears in."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, (memory_id, _) in enumerate(ranking, start=1):
            scores[memory_id] = scores.get(memory_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])


LEXICAL_REACH = 5000
"""BM25 is read for this many of the best full-text matches (scoring them costs FTS5 the same
as scoring the top 100; beyond them a candidate's BM25 is negligible and counts as 0)."""


@dataclass
class Signals:
    """Both signals of every candidate: {id: cosine}, {id: BM25 / the best BM25} (0 when the
    memory holds none of the words), and the BM25 of the best full-text matches."""

    cosine: dict[str, float]
    lexical: dict[str, float]
    bm25: dict[str, float]
    excluded: frozenset[str] = frozenset()
    """Never candidates (the asking session's own turns, echoes of the question)."""


@dataclass(frozen=True)
class Window:
    """A chat turn is scored with its session neighbours (design §10): own + `near`·the best of
    the ±1 turns + `far`·the best of the ±2 turns, over 1 + near + far. A turn that ends by
    asking (`turns.asks`) lends its own score to the next turn, its answer, at `answer` in place
    of `near`, and its windowed score is taken `asking` times. The neighbours of the `widen`
    best turns join the candidates."""

    near: float = 0.7
    far: float = 0.5
    widen: int = 30
    answer: float = 0.85
    """Chosen on LoCoMo's development conversations: 0.8 / 0.85 / 0.9 / 1.0 gave R@10 81.1 /
    81.3 / 81.3 / 81.1 (1.0 costs temporal questions 2 points)."""
    asking: float = 0.95
    """Alone (answer = near): R@10 79.9 → 80.9; 0.97 / 0.93 / 0.9 gave 80.4 / 80.9 / 80.9. In
    the development conversations 11 % of the turns that end by asking (630 of 2,760) are
    evidence for some question, against 25 % of all turns."""


@dataclass(frozen=True)
class Blend:
    """How `blend` mixes the signals: over the top-`depth` of each, `share`·cosine +
    (1 − `share`)·relative BM25, a chat turn windowed over its neighbours (`window`; None: not)."""

    depth: int = 100
    share: float = 0.6
    window: Window | None = Window()


def blend(
    store: Store, query: str, vector: Vector, scopes: Sequence[str] | None, how: Blend = Blend()
) -> tuple[dict[str, float], int]:
    """The hybrid relevance of every candidate: `share`·cosine (clipped at 0, absolute, so a
    weak match stays weak) + (1 − `share`)·BM25 / the best BM25 among the candidates, over the
    union of the vector top-`depth` and the FTS5 top-`depth`, each candidate scored on both
    signals; a chat turn's relevance is windowed over its session neighbours. Returns ({id:
    relevance in 0..1}, the number of candidates).

    Chosen on the development split over 96 variants (`nous eval fusion`): plain reciprocal-rank
    fusion lost to BM25 alone on LoCoMo (R@10 60.1 vs 65.8), this blend at share 0.6, depth 100
    reaches 69.9 there and nDCG@10 0.737 on SciFact (BM25 0.700, dense 0.660); the session
    window lifts LoCoMo's R@10 to 79.9, and a turn that ends by asking lending its score to its
    answer (`Window.answer`, `Window.asking`) to 81.3 (R@5 69.4 → 71.8; docs/benchmarks.md).
    """
    found = hybrid(store, query, vector, scopes, how.depth)
    turns = windowed(store, found, vector, scopes, how.share, how.window) if how.window else {}
    out = {i: turns.get(i, _own(found, i, how.share)) for i in found.cosine}
    return out, len(out)


def _own(found: Signals, memory_id: str, share: float) -> float:
    cosine = max(0.0, found.cosine.get(memory_id, 0.0))
    return share * cosine + (1 - share) * found.lexical.get(memory_id, 0.0)


def signals(
    store: Store, query: str, vector: Vector, scopes: Sequence[str] | None, depth: int = 100
) -> tuple[dict[str, float], dict[str, float]]:
    """({id: cosine}, {id: BM25 / the best BM25}) of `hybrid`."""
    found = hybrid(store, query, vector, scopes, depth)
    return found.cosine, found.lexical


def hybrid(
    store: Store, query: str, vector: Vector, scopes: Sequence[str] | None, depth: int = 100,
    exclude: frozenset[str] = frozenset(),
) -> Signals:  # fmt: skip
    """Both signals over the union of the vector top-`depth` and the FTS5 top-`depth`: every
    candidate has a cosine, and a BM25 whether or not it made the FTS5 top (the exact blend).
    `exclude`d ids (the asking session's own turns) are neither candidates nor the BM25 scale.

    With a team store (design §13) its top-`depth` of both kinds are asked for first, in the
    background, and join the candidates if they come in time (`_join_team`)."""
    team = store.team
    pending = team.start(query, vector, depth, scopes) if team is not None else None
    dense = store.vector_search(vector, depth + len(exclude) + 10, scopes)
    matches = store.text_search(query, max(depth, LEXICAL_REACH), scopes) if query.strip() else []
    # the memories at the head of both lists, read once: echoes and the BM25 scale need them
    head = store.get_many(
        list(dict.fromkeys([i for i, _ in matches[:SCALE_LOOK]] + [i for i, _ in dense[:10]]))
    )
    exclude = exclude | _echoes(query, head, dense, matches)
    dense = [d for d in dense if d[0] not in exclude][:depth]
    matches = [m for m in matches if m[0] not in exclude]
    top_bm25 = _scale(head, matches)
    found = Signals(
        dict(dense), {}, {i: min(1.0, score / top_bm25) for i, score in matches}, exclude
    )
    _fill(store, found, vector, [i for i, _ in matches[:depth]])
    if team is not None:
        _join_team(found, team.collect(pending))
    for memory_id in list(found.cosine):
        found.lexical[memory_id] = found.bm25.get(memory_id, 0.0)
    return found


def _join_team(found: Signals, hits: list[Hit]) -> None:
    """The team's candidates join the local ones with the same two signals: the cosine, and the
    full-text rank over the best team match's (the team's ranking is PostgreSQL's, so it is
    scaled within its own list, as BM25 is within the local one). A memory both hold (one this
    machine shared) is scored once, as the local row."""
    seen = found.cosine.keys() | found.excluded
    hits = [h for h in hits if h.memory.id not in seen]
    top = max((h.rank for h in hits), default=0.0) or 1.0
    for hit in hits:
        found.cosine[hit.memory.id] = hit.cosine
        if hit.rank > 0:
            found.bm25[hit.memory.id] = min(1.0, hit.rank / top)


def _echoes(
    query: str, head: dict[str, Memory], dense: list[tuple[str, float]],
    matches: list[tuple[str, float]],
) -> frozenset[str]:  # fmt: skip
    """The kept chat turns near the head of either list that say the query again (asked in an
    earlier session, `relevance.says_again`, and only ask: `echo.asks_only`): they answer
    nothing, and their BM25 would set the scale every answer is measured on. A statement that
    holds the question's words is an answer, however short ("The staging database lives on the
    blue cluster")."""
    asked = relevance.stems(query)
    if not asked:
        return frozenset()
    near = [i for i, _ in matches[:10]] + [i for i, _ in dense[:10]]
    return frozenset(
        i for i in near
        if (m := head.get(i)) is not None and turns.is_turn(m)
        and relevance.says_again(asked, m.content) and echo.asks_only(m.content)
    )  # fmt: skip


SCALE_LOOK = 20
"""How far down the full-text matches the best document is looked for."""


def _scale(head: dict[str, Memory], matches: list[tuple[str, float]]) -> float:
    """The BM25 every candidate's is divided by: the best document's. Chat turns are ranked on
    their own calibrated blend and window, and a long reply that repeats the question's words
    must not shrink a document's lexical figure under the gate (only turns: their best)."""
    if not matches:
        return 1.0
    for memory_id, score in matches[:SCALE_LOOK]:
        m = head.get(memory_id)
        if m is not None and not turns.is_turn(m):
            return score or 1.0
    return matches[0][1] or 1.0


def _fill(store: Store, found: Signals, vector: Vector, ids: list[str]) -> None:
    """`ids` join the candidates with both signals."""
    missing = [i for i in ids if i not in found.cosine]
    for memory_id, row in store.vectors(missing).items():
        found.cosine[memory_id] = float(row @ vector)
    for memory_id in ids:
        found.lexical[memory_id] = found.bm25.get(memory_id, 0.0)


def windowed(
    store: Store, found: Signals, vector: Vector, scopes: Sequence[str] | None,
    share: float, window: Window,
) -> dict[str, float]:  # fmt: skip
    """{id: windowed relevance} of the chat turns among the candidates (`Window`); the
    neighbours of the best join `found` (both signals filled in)."""
    neighbours, asks = store.turn_window(list(found.cosine), 2, scopes)
    if not neighbours:
        return {}
    own: dict[str, float] = {i: _own(found, i, share) for i in found.cosine}
    asking = set(asks)
    ends = 1 + window.near + window.far

    def lent(memory_id: str, step: int) -> float:
        """What neighbour `memory_id`, `step` turns away, lends: its own score by the weight."""
        if abs(step) == 2:
            return window.far * own.get(memory_id, 0.0)
        weight = window.answer if step == -1 and memory_id in asking else window.near
        return weight * own.get(memory_id, 0.0)

    def score(near: dict[str, list[tuple[str, int]]], ids: list[str]) -> dict[str, float]:
        outside = sorted({n for pairs in near.values() for n, _ in pairs} - own.keys())
        for memory_id, row in store.vectors(outside).items():
            cosine = max(0.0, float(row @ vector))
            own[memory_id] = share * cosine + (1 - share) * found.bm25.get(memory_id, 0.0)
        out = {}
        for memory_id in ids:
            if memory_id not in own:
                continue  # no vector yet (another process wrote it a moment ago)
            pairs = near.get(memory_id, [])
            one = max((lent(n, s) for n, s in pairs if abs(s) == 1), default=0.0)
            two = max((lent(n, s) for n, s in pairs if abs(s) == 2), default=0.0)
            total = (own[memory_id] + one + two) / ends
            out[memory_id] = total * window.asking if memory_id in asking else total
        return out

    scores = score(neighbours, list(neighbours))
    best = sorted(scores, key=lambda i: -scores[i])[: window.widen]
    joined = sorted(
        {n for i in best for n, _ in neighbours[i]} - found.cosine.keys() - found.excluded
    )
    if joined:
        _fill(store, found, vector, joined)
        joined = [i for i in joined if i in found.cosine]
        near, asks = store.turn_window(joined, 2, scopes)
        asking.update(asks)
        scores.update(score(near, joined))
    return scores


def ranked(
    store: Store,
    query: str,
    scopes: Sequence[str] | None,
    k: int = 50,
    vector: Vector | None = None,
    how: Blend = Blend(),
) -> list[tuple[str, float]]:
    """Up to `k` (id, relevance) for `query` within `scopes`, best first: the pipeline's hybrid."""
    if vector is None:
        vector = store.embed(query)
    scores, _ = blend(store, query, vector, scopes, replace(how, depth=max(how.depth, k)))
    return sorted(scores.items(), key=lambda pair: -pair[1])[:k]
