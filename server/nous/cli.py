"""The `nous` command line. Every command takes `--json`, `--db PATH` and `--workspace DIR`.

Errors print one line on stderr and exit non-zero (1 for a refused operation, 2 for bad usage);
`--debug` adds the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from nous import __version__, browsing
from nous import settings as settings_mod
from nous.browsing import SORTS, SOURCE_TYPES
from nous.context import chat, stats
from nous.context.config import FRAMES
from nous.context.render import code
from nous.engine import KINDS, OUTCOMES, Draft, Engine
from nous.errors import NousError
from nous.protocol import (
    ContextParams,
    FeedbackParams,
    ListParams,
    RecallParams,
    RememberParams,
    UpdateParams,
)

Handler = Callable[[Engine, argparse.Namespace], Any]
RUNNERS = {
    "serve": ("nous.lsp.cli", "run the daemon: LSP over stdio (or --tcp PORT on loopback)"),
    "mcp": ("nous.mcp_cli", "serve context, recall, remember and forget as MCP tools (stdio)"),
    "bench": ("nous.bench.cli", "measure speed, memory and scale"),
    "eval": (
        "nous.evaluation.cli",
        "measure retrieval quality on LoCoMo, SciFact and real repositories, and the feedback "
        "judge on LoCoMo",
    ),
}
"""Commands that own their output: each module has `configure(parser)` and `run(args) -> int`,
and keeps heavy imports inside `run`."""


def _common(parser: argparse.ArgumentParser, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--db", type=Path, default=default, help="memory database file")
    parser.add_argument(
        "--workspace", type=Path, default=default, help="workspace folder (default: cwd)"
    )
    parser.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS if suppress else False,
        help="machine-readable output",
    )  # fmt: skip
    parser.add_argument(
        "--encoding", default=default, help="token encoding (o200k_base or cl100k_base)"
    )
    parser.add_argument(
        "--team-store", default=default, metavar="URL",
        help="the team's PostgreSQL store, without a password (default: NOUS_TEAM_STORE)",
    )  # fmt: skip
    parser.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS if suppress else False,
        help="log to stderr and show tracebacks",
    )  # fmt: skip


class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (`nous recall: error: …`), no usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


class UsageError(NousError):
    """Bad input the user can fix: one line on stderr, exit 2."""


def _kinds(text: str) -> list[str]:
    """`--kinds decision,fact`: a comma list of known kinds (unknown ones refused, listed)."""
    kinds = [k.strip().lower() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if not kinds or unknown:
        shown = f"invalid kind {unknown[0]!r}" if unknown else "no kind given"
        raise argparse.ArgumentTypeError(f"{shown}: use one of {', '.join(KINDS)}")
    return kinds


def _kind(text: str) -> str:
    """`remember --kind`: one of the kinds recall knows (the same list `--kinds` takes)."""
    if "," in text:
        raise argparse.ArgumentTypeError(f"one kind, not a list: {text!r}")
    return _kinds(text)[0]


def _unit(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _missing(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        print(f"nous: error: `nous {name}` is not part of this installation", file=sys.stderr)
        return 2

    return run


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser; of the commands that own their output (`RUNNERS`) only the one named in
    `argv` is imported and configured."""
    parser = Parser(prog="nous", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"nous {__version__}")
    _common(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        _common(p, suppress=True)
        p.set_defaults(handler=handler)
        return p

    p = command("remember", _remember, "store a memory (the same text again confirms it)")
    p.add_argument(
        "--kind", required=True, type=_kind,
        help=f"one of {', '.join(KINDS)} (the kinds recall and --kinds know)",
    )  # fmt: skip
    p.add_argument("--scope", help="project (default), language, universal, or a full scope")
    p.add_argument("--tags", nargs="*", default=[], help="free tags")
    p.add_argument("--outcome", choices=OUTCOMES)
    p.add_argument("--confidence", type=_unit, default=1.0)
    p.add_argument("--importance", type=_unit, default=0.5)
    p.add_argument("--source", default="manual")
    p.add_argument("text", help="the memory's text")

    p = command("recall", _recall, "recall memories for a query within a token budget")
    p.add_argument("--budget", type=_positive, help="tokens of rendered text (default 500)")
    p.add_argument("--kinds", type=_kinds, action="extend", metavar="KIND[,KIND…]",
                   help=f"only these kinds ({', '.join(KINDS)})")  # fmt: skip
    p.add_argument("query")

    p = command("context", _context, "the budgeted context for an input (the pipeline)")
    p.add_argument("--mode", choices=["startup", "turn"], default="turn")
    p.add_argument("--frame", choices=FRAMES, help="force the frame")
    p.add_argument("--profile", help="default, knight, squire, royalty, peasant, or configured")
    p.add_argument("--budget", type=_positive, help="total tokens (default: by mode and frame)")
    p.add_argument("--session", help="chat session id (startup is counted against its cap)")
    p.add_argument("--conversation-file", help="JSON list of recent messages, for dedup")
    p.add_argument("--model-max-tokens", type=_positive, help="the model's input window")
    p.add_argument("--conversation-tokens", type=_positive,
                   help="the conversation's tokens so far (`nous stats`)")  # fmt: skip
    p.add_argument("input", nargs="?", default="")

    p = command("feedback", _feedback, "judge which injected memories a reply referenced")
    p.add_argument("--session", required=True)
    p.add_argument("response")

    p = command("expand", _expand, "show the full record of a memory")
    p.add_argument("id")

    p = command("forget", _forget, "mark a memory inactive (or delete it with --purge)")
    p.add_argument("--purge", action="store_true", help="delete the row for good")
    p.add_argument("id")

    p = command("harvest", _harvest, "harvest instruction files, ADRs, procedures, git history")
    p.add_argument("dir", nargs="?", type=Path, help="workspace folder (default: --workspace)")
    p.add_argument("--commits", type=int, default=50, help="how many recent commits (default 50)")

    p = command("import", _import, "remember every memory in a JSON file")
    p.add_argument("file", nargs="?", type=Path, help="JSON list or JSON lines of memories")

    p = command("init", _init, "create the memory database (and its folder) if it is missing")

    p = command("list", _list, "list this project's memories, filtered and sorted (paged)")
    p.add_argument("query", nargs="?", help="words in the text or tags, an id prefix, a source")
    p.add_argument("--kinds", type=_kinds, action="extend", metavar="KIND[,KIND…]",
                   help=f"only these kinds ({', '.join(KINDS)})")  # fmt: skip
    p.add_argument("--scope", help="project, language, language:<id>, universal")
    p.add_argument("--statuses", nargs="*", help="only these lifecycle states")
    p.add_argument("--captured", dest="captured", action="store_true", default=None,
                   help="only what chat captured on its own (turns, session notes)")  # fmt: skip
    p.add_argument("--knowledge", dest="captured", action="store_false",
                   help="only project knowledge (harvested, committed, remembered)")  # fmt: skip
    p.add_argument("--sources", nargs="*", choices=SOURCE_TYPES, help="only these source types")
    p.add_argument("--since", help="captured at or after this ISO date or time")
    p.add_argument("--pinned", action="store_true", default=None, help="only pinned memories")
    p.add_argument("--review", action="store_true", help="the review queue: chat captures")
    p.add_argument("--sort", choices=SORTS, default="recent")
    p.add_argument("--origin", choices=["local", "team"], default="local",
                   help="team: the team store's memories of this project")  # fmt: skip
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=_positive, default=50)

    p = command("edit", _edit, "change a memory: text (re-embedded), kind, scope, tags, state")
    p.add_argument("id")
    p.add_argument("--content", help="the new text (re-rendered, re-embedded, redacted)")
    p.add_argument("--kind")
    p.add_argument("--scope", help="project, language, language:<id>, universal")
    p.add_argument("--tags", nargs="*", help="replace the tags")
    p.add_argument("--pin", dest="pinned", action="store_true", default=None)
    p.add_argument("--unpin", dest="pinned", action="store_false")
    p.add_argument("--importance", type=_unit)
    p.add_argument("--outcome", choices=OUTCOMES)
    p.add_argument("--status", help="a legal next state of the memory's kind")
    p.add_argument("--reviewed", action="store_true", default=None, help="keep (review queue)")
    p.add_argument("--share", dest="shared", action="store_true", default=None,
                   help="share with the team store")  # fmt: skip
    p.add_argument("--unshare", dest="shared", action="store_false")

    command("status", _status, "project, counts by kind and status, database, model, encoding")

    p = command("stats", _stats, "the seeds' metrics: relevance, utilization, refresh, overhead")
    p.add_argument("--session", help="one chat session's figures (default: the whole project)")
    p.add_argument("--by", choices=("profile", "frame"),
                   help="also per profile or frame: referenced share, utilization, refreshes "
                   "per turn and the sessions' decisions' outcomes")  # fmt: skip

    wanted = set(argv) & set(RUNNERS)
    for name, (module_name, help_text) in RUNNERS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        _common(p, suppress=True)
        if name not in wanted:
            continue  # configured only when asked for: `nous serve` never imports bench or eval
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if not module_name.startswith(exc.name or "\0"):
                raise
            p.set_defaults(runner=_missing(name))
            continue
        module.configure(p)
        p.set_defaults(runner=module.run)
    return parser


def _init(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    store = engine.store  # opening it creates the file (and, here only, its folder)
    return {"database": str(store.path), "memories": store.memory_count()}


def _remember(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    # Unvalidated here: the store validates the draft and names what is wrong (InvalidMemory).
    params = RememberParams.model_construct(
        kind=args.kind, content=args.text, scope=args.scope, tags=args.tags,
        outcome=args.outcome, confidence=args.confidence, importance=args.importance,
        source=args.source,
    )  # fmt: skip
    result = engine.remember(Draft.of(params))
    return {
        "id": result.memory.id,
        "status": result.status,
        "memory": result.memory.public(),
        "redactions": [r.kind for r in result.redactions],
    }


def _recall(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    if not args.query.strip():
        raise UsageError("recall: the query is empty; say what to recall")
    result = chat.recall(engine, RecallParams.model_construct(
        query=args.query, budget=args.budget, kinds=args.kinds, session_id=None, scope=None
    ))  # fmt: skip
    return result.model_dump(mode="json", by_alias=True)


def _context(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    conversation: list[dict[str, str]] = []
    if args.conversation_file:
        try:
            raw = json.loads(Path(args.conversation_file).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise NousError(f"cannot read conversation file: {exc}") from exc
        conversation = [m if isinstance(m, dict) else {"content": str(m)} for m in raw]
    try:
        params = ContextParams.model_validate(
            {"input": args.input, "mode": args.mode, "frame": args.frame,
             "profile": args.profile, "budget": args.budget, "sessionId": args.session,
             "conversation": conversation, "modelMaxTokens": args.model_max_tokens,
             "conversationTokens": args.conversation_tokens}
        )  # fmt: skip
    except ValidationError as exc:
        raise NousError(f"invalid request: {exc.errors()[0]['msg']}") from exc
    return chat.context(engine, params).model_dump(mode="json", by_alias=True)


def _feedback(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    params = FeedbackParams(session_id=args.session, response=args.response)
    return chat.feedback(engine, params).model_dump(mode="json", by_alias=True)


def _expand(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    return engine.expand(args.id).public()


def _forget(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    memory = engine.forget(args.id, args.purge)
    return {"id": memory.id, "purged": args.purge, "status": memory.status}


def _harvest(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    if args.dir and not args.dir.is_dir():
        raise UsageError(f"harvest: not a folder: {args.dir}")
    if args.dir:
        engine = Engine(engine.settings, args.dir)
    project = engine.project
    return {"project": project.name, "projectKey": project.key, **engine.harvest(args.commits)}


def _import(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    if args.file is None:
        raise UsageError("import: give the JSON file of memories to import")
    results = engine.import_file(args.file)
    created = sum(r.status == "created" for r in results)
    return {
        "created": created,
        "confirmed": len(results) - created,
        "ids": [r.memory.id for r in results],
    }


def _params(model: type[Any], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate({k: v for k, v in data.items() if v is not None})
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        raise NousError(f"invalid {field}: {error['msg']}") from exc


def _list(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    params = _params(
        ListParams,
        {"query": args.query, "kinds": args.kinds, "scope": args.scope,
         "statuses": args.statuses, "sourceTypes": args.sources, "since": args.since,
         "pinned": args.pinned, "review": args.review, "sort": args.sort, "offset": args.offset,
         "limit": args.limit, "origin": args.origin, "captured": args.captured},
    )  # fmt: skip
    return browsing.list_memories(engine, params).model_dump(mode="json", by_alias=True)


def _edit(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    params = _params(
        UpdateParams,
        {"id": args.id, "content": args.content, "kind": args.kind, "scope": args.scope,
         "tags": args.tags, "pinned": args.pinned, "importance": args.importance,
         "outcome": args.outcome, "status": args.status, "reviewed": args.reviewed,
         "shared": args.shared},
    )  # fmt: skip
    return browsing.update(engine, params).model_dump(mode="json", by_alias=True)


def _status(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    return engine.status()


def _stats(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    result = stats.compute(engine.store, engine.project_key, args.session, args.by)
    return result.model_dump(mode="json", by_alias=True)


_STAT_LABELS = {
    "contextRelevance": "context relevance",
    "budgetUtilization": "budget utilization",
    "refreshRate": "refresh rate",
    "coldStart": "cold start",
    "overhead": "context overhead",
}


def _print_stats(data: dict[str, Any]) -> None:
    whose = f"session {code(data['sessionId'], 80)}" if data["sessionId"] else "project"
    print(f"{whose} {code(data['project'], 80)}: {data['answers']} answers, "
          f"{data['sessions']} chat sessions, {data['turns']} session turns")  # fmt: skip
    for metric in data["metrics"]:
        value = metric["value"]
        if value is None:
            shown = "unknown"
        elif metric["unit"] == "share":
            shown = f"{value:.0%}"
        elif metric["unit"] == "ms":
            shown = f"{value:.0f} ms"
        else:
            shown = f"{value:.2f}/turn"
        met = {True: "ok", False: "off target", None: "-"}[metric["met"]]
        print(f"  {_STAT_LABELS[metric['name']]:<20} {shown:<10} target {metric['target']:<36} "
              f"{met:<10} {metric['basis']}")  # fmt: skip
    if data.get("by"):
        _print_groups(data)


def _percent(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.0%}"


def _print_groups(data: dict[str, Any]) -> None:
    """One row per profile or frame: what its answers loaded and what of it was used."""
    print(f"by {data['by']}:")
    print(f"  {data['by']:<14} {'answers':>7} {'turns':>5} {'refresh/turn':>12} "
          f"{'referenced':>18} {'utilization':>11} {'decisions (accuracy)':>21}")  # fmt: skip
    for g in data["groups"]:
        rate = "unknown" if g["refreshRate"] is None else f"{g['refreshRate']:.2f}"
        used = f"{g['referenced']} of {g['judged']} ({_percent(g['referencedShare'])})"
        decided = f"{g['decisions']} ({_percent(g['decisionAccuracy'])})"
        print(f"  {code(g['key'], 40):<14} {g['answers']:>7} {g['turns']:>5} {rate:>12} "
              f"{used:>18} {_percent(g['utilization']):>11} {decided:>21}")  # fmt: skip
    if data["unattributed"]:
        print(f"  ({data['unattributed']} judged items from answers that did not name their "
              "items are in no group)")  # fmt: skip


SHOWN_DROPS = 10
"""Dropped candidates listed after a context: the first ones (the best scored), then a count per
reason. A startup in a large workspace drops a hundred or more."""


def _print_text(command: str, data: dict[str, Any]) -> None:
    if command == "remember":
        redacted = f" (redacted: {', '.join(data['redactions'])})" if data["redactions"] else ""
        print(f"{data['status']} {data['id']} [{data['memory']['status']}]{redacted}")
    elif command in ("recall", "context"):
        print(data["text"] or "(nothing to inject)")
        print(f"\n-- {data['tokens']}/{data['budget']} tokens · frame {data['frame']}")
        for section in data["sections"]:
            print(f"   [{section['layer']}] {section['used']}/{section['cap']}")
            for item in section["items"]:  # names the workspace chose, as inline code
                source = f"  {code(item['source'], 160, tail=True)}" if item["source"] else ""
                print(
                    f"     + {item['id'][:8]} {item['kind']:<10} {item['detail']:<7} "
                    f"{item['tokens']:>3} tok  score {item['score']:.3f}  "
                    f"{code(item['scope'], 120)}{source}"
                )
        dropped = data["dropped"]
        for drop in dropped[:SHOWN_DROPS]:
            print(f"     - {drop['id'][:8]} {drop['kind']:<10} dropped: {drop['reason']}")
        if len(dropped) > SHOWN_DROPS:
            reasons = Counter(d["reason"] for d in dropped[SHOWN_DROPS:])
            said = ", ".join(f"{reason} {n}" for reason, n in reasons.most_common())
            print(f"     … {len(dropped) - SHOWN_DROPS} more dropped ({said}; --json lists them)")
        for note in data["notes"]:
            print(f"   note: {note}")
    elif command == "feedback":
        print(f"referenced: {', '.join(data['referenced']) or '-'}")
        print(f"not referenced: {', '.join(data['notReferenced']) or '-'}")
        if data.get("echoes"):
            print(f"own earlier replies (not credited): {', '.join(data['echoes'])}")
    elif command == "status":
        print(f"project    {code(data['project'], 80)} ({data['projectSource']})")
        print(f"languages  {', '.join(code(x, 40) for x in data['languages']) or '-'}")
        print(f"database   {data['database']} ({data['databaseBytes']:,} bytes)")
        print(f"model      {data['model']} ({data['dimension']}-d)")
        print(f"encoding   {data['encoding']}")
        print(f"memories   {data['memories']}")
        team = data["team"]
        if team["state"] != "off" or team["queued"]:
            shown = f"{team.get('url', '-')} ({team['state']}, {team['queued']} queued)"
            error = f": {team['lastError']}" if team.get("lastError") else ""
            print(f"team       {shown}{error}")
        for kind, by_status in data["counts"].items():
            states = ", ".join(f"{s} {n}" for s, n in by_status.items())
            print(f"  {kind:<12} {states}")
    elif command == "stats":
        _print_stats(data)
    elif command == "harvest":
        print(
            f"{data['project']}: {data['files']} files ({data['changed']} changed), "
            f"{data['created']} created, {data['confirmed']} confirmed, {data['retired']} retired, "
            f"{data['commits']} commits, {data['seconds']} s"
        )
        for error in data["errors"]:
            print(f"  skipped {error}")
    elif command == "list":
        for m in data["items"]:
            pin = " pinned" if m["pinned"] else ""
            used = (
                f" · injected {m['injected']}, referenced {m['referenced']}"
                if m["injected"]
                else ""
            )
            kind_of = "captured" if m["captured"] else m["sourceType"]
            origin = f" in {code(m['scope'], 120)}"
            origin += f" from {code(m['source'], 160, tail=True)}" if m["source"] else ""
            print(f"{m['id'][:8]} {m['kind']:<10} {m['status']:<10} {kind_of:<8} "
                  f"{m['micro']}{pin}{used}{origin}")  # fmt: skip
        shown = data["offset"] + len(data["items"])
        more = f", next: --offset {data['nextOffset']}" if data["nextOffset"] is not None else ""
        project = code(data["project"], 80)
        print(f"-- {data['offset'] + 1 if data['items'] else 0}–{shown} of {data['total']}{more}"
              f" · {data['reviewPending']} to review · project {project}")  # fmt: skip
    elif command == "edit":
        m = data["memory"]
        changed = ", ".join(data["changed"]) or "nothing changed"
        print(f"{m['id']} [{m['kind']}, {m['status']}]: {changed}"
              f"{' (re-embedded)' if data['reembedded'] else ''}")  # fmt: skip
    elif command == "import":
        print(f"created {data['created']}, confirmed {data['confirmed']}")
    elif command == "init":
        print(f"{data['database']}: {data['memories']} memories")
    elif command == "forget":
        print(f"{'purged' if data['purged'] else data['status']} {data['id']}")
    else:
        for key, value in data.items():
            print(f"{key}: {value}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if getattr(args, "runner", None) is not None:
        code: int = args.runner(args)
        return code
    try:
        settings, problems = settings_mod.load(
            env=settings_mod.environment(),
            flags={"db": args.db, "team_store": args.team_store, "encoding": args.encoding},
        )
    except settings_mod.BadFlag as exc:
        print(f"nous: error: {exc}", file=sys.stderr)
        return 2
    for warning in problems:
        print(f"nous: warning: {warning}", file=sys.stderr)
    settings_mod.install(settings)
    problem = _bad_paths(args)
    if problem:
        print(f"nous: error: {problem}", file=sys.stderr)
        return 2
    engine: Engine | None = None
    try:
        engine = Engine(settings, args.workspace or Path.cwd())
        data = args.handler(engine, args)
    except UsageError as exc:
        print(f"nous: error: {exc}", file=sys.stderr)
        return 2
    except NousError as exc:
        print(f"nous: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"nous: internal error: {type(exc).__name__}: {exc} (rerun with --debug)",
              file=sys.stderr)  # fmt: skip
        return 1
    finally:
        if engine is not None:
            engine.close()  # a team store gets what this command queued (briefly waited for)
    try:
        if args.json:
            json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
            sys.stdout.write("\n")
        else:
            _print_text(args.command, data)
        sys.stdout.flush()
    except BrokenPipeError:  # `nous list | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
    return 0


def _bad_paths(args: argparse.Namespace) -> str | None:
    """A folder the command was pointed at that does not exist (only `nous init` and the
    daemon create a database, and never a workspace)."""
    workspace: Path | None = args.workspace
    if workspace is not None and not workspace.is_dir():
        return f"--workspace: not a folder: {workspace}"
    db: Path | None = args.db
    if db is None or str(db) == ":memory:":
        return None
    if db.is_dir():
        return f"--db: {db} is a folder; give the database file, e.g. {db / 'memory.db'}"
    if args.command != "init" and not db.parent.is_dir():
        return f"--db: no such folder: {db.parent} (create it, or run `nous init --db {db}`)"
    return None
