"""The memory browser's use cases (design §11), shared by `nous/list` / `nous/update` and the
`nous list` / `nous edit` commands: one project's memories listed, and one changed in place.

A request acts only inside the project it comes from: the listing never holds another project's
memories, and another project's id is reported exactly like an unknown one (`Engine.own`).
"""

from __future__ import annotations

from pydantic.alias_generators import to_camel

from nous.engine import Engine
from nous.errors import InvalidMemory, InvalidTransition
from nous.memory import browse, lifecycle
from nous.memory.browse import REVIEWED_TAG, Listed

# The listing's vocabularies, for the command line's choices (it imports no memory/).
from nous.memory.browse import SORTS as SORTS
from nous.memory.browse import SOURCE_TYPES as SOURCE_TYPES
from nous.memory.edits import Edit
from nous.protocol import (
    ListedMemory,
    ListParams,
    ListResult,
    TransitionEntry,
    UpdateParams,
    UpdateResult,
    UsageEntry,
)


def list_memories(engine: Engine, params: ListParams) -> ListResult:
    """`nous/list`: one page of this project's memories (the team store's with `origin: team`)."""
    if params.origin == "team":
        return _team_page(engine, params)
    scope = engine.resolve_scope(params.scope) if params.scope else None
    found = engine.store.browse.page(
        browse.Filters(
            project_scope=engine.project.scope, query=params.query, kinds=params.kinds,
            scope=scope, statuses=params.statuses, source_types=params.source_types,
            since=params.since, pinned=params.pinned, review=params.review, ids=params.ids,
            captured=params.captured,
        ),
        sort=params.sort, offset=params.offset, limit=params.limit, history=params.history,
    )  # fmt: skip
    return ListResult(
        items=[listed(item) for item in found.items],
        total=found.total,
        offset=found.offset,
        next_offset=found.next_offset,
        review_pending=found.review_pending,
        project=engine.project.name,
        project_scope=engine.project.scope,
    )


def _team_page(engine: Engine, params: ListParams) -> ListResult:
    team = engine.store.team
    if team is None:
        raise InvalidMemory("origin: no team store is configured (nous.teamStore)")
    memories, total = team.page(params.offset, params.limit, params.query, params.statuses or ())
    shown = params.offset + len(memories)
    return ListResult(
        items=[listed(Listed(m)) for m in memories],
        total=total,
        offset=params.offset,
        next_offset=shown if shown < total else None,
        review_pending=0,
        project=engine.project.name,
        project_scope=engine.project.scope,
    )


def update(engine: Engine, params: UpdateParams) -> UpdateResult:
    """`nous/update`: change one memory of this project (see `MemoryStore.edit`)."""
    memory = engine.own(params.id)
    params = params.model_copy(update={"id": memory.id})  # a unique prefix names it too
    if memory.origin == "team":
        raise InvalidMemory(
            f"{params.id} is a team memory someone else shared: forget or supersede it instead"
        )
    tags = params.tags
    if params.reviewed is not None:
        kept = set(memory.tags if tags is None else tags) - {REVIEWED_TAG}
        tags = sorted(kept | {REVIEWED_TAG}) if params.reviewed else sorted(kept)
    scope = engine.resolve_scope(params.scope) if params.scope is not None else None
    if scope is not None and not engine.visible(scope):
        raise InvalidMemory(f"invalid scope {params.scope!r}: not this project's")
    edit = Edit(
        content=params.content, kind=params.kind, scope=scope, tags=tags, pinned=params.pinned,
        importance=params.importance, outcome=params.outcome, status=params.status,
        shared=params.shared,
    )  # fmt: skip
    try:
        result = engine.store.edit(params.id, edit)
    except InvalidTransition as exc:
        raise InvalidMemory(f"status: {exc}") from exc
    (item,) = engine.store.browse.page(
        browse.Filters(engine.project.scope, ids=[params.id]), history=True
    ).items
    return UpdateResult(
        memory=listed(item),
        changed=[to_camel(name) for name in result.changed],
        reembedded=result.reembedded,
        redactions=[r.kind for r in result.redactions],
    )


def listed(item: Listed) -> ListedMemory:
    m = item.memory
    return ListedMemory(
        id=m.id, kind=m.kind, scope=m.scope, status=m.status, content=m.content,
        summary=m.summary, micro=m.micro, source=m.source,
        source_type=browse.source_type(m.source),
        created_at=m.created_at, updated_at=m.updated_at, status_changed_at=m.status_changed_at,
        confidence=m.confidence, importance=m.importance, outcome=m.outcome,
        confirmations=m.confirmations, activations=m.activations, superseded_by=m.superseded_by,
        tags=m.tags, pinned=m.pinned, reviewed=REVIEWED_TAG in m.tags, shared=m.shared,
        captured=browse.captured(m),
        origin="team" if m.origin == "team" else "local",
        excluded=lifecycle.is_excluded(m.kind, m.status),
        next_statuses=sorted(lifecycle.machine(m.kind).edges.get(m.status, ())),
        injected=item.injected,
        referenced=item.referenced, last_injected_at=item.last_injected_at,
        last_referenced_at=item.last_referenced_at,
        usage=None if item.usage is None else [UsageEntry(**u) for u in item.usage],
        transitions=(
            None if item.transitions is None else [TransitionEntry(**t) for t in item.transitions]
        ),
    )  # fmt: skip
