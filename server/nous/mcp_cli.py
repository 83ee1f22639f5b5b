"""`nous mcp`: the options, and the start of the MCP server (`nous.mcp_server`, imported only
when the command runs, so other commands do not load the SDK)."""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from pathlib import Path

from nous import settings as settings_mod
from nous.settings import Settings, for_agent


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", help="chat session id (default: a new one per connection)")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument(
        "--max-recalls", type=int, metavar="N",
        help=f"recalls per connection (default {Settings().agent_max_recalls})",
    )  # fmt: skip
    parser.add_argument(
        "--session-cap", type=int, metavar="TOKENS",
        help=f"tokens injected per connection (default {Settings().agent_session_cap:,})",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=getattr(logging, args.log_level), stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True,
    )  # fmt: skip
    flags = {
        "db": getattr(args, "db", None), "team_store": getattr(args, "team_store", None),
        "encoding": getattr(args, "encoding", None), "agent_max_recalls": args.max_recalls,
        "agent_session_cap": args.session_cap,
    }  # fmt: skip
    try:
        settings, problems = settings_mod.load(env=settings_mod.environment(), flags=flags)
    except settings_mod.BadFlag as exc:
        print(f"nous: error: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        logging.getLogger(__name__).warning(problem)
    settings_mod.install(settings)
    workspace = getattr(args, "workspace", None)
    if workspace is not None and not Path(workspace).is_dir():
        print(f"nous: error: --workspace: not a folder: {workspace}", file=sys.stderr)
        return 2
    from nous.mcp_server import Memory, build

    memory = Memory(
        for_agent(settings),
        Path(workspace).resolve() if workspace else None,
        args.session or f"mcp-{uuid.uuid4().hex[:12]}",
    )
    try:
        build(memory).run("stdio")
    except KeyboardInterrupt:
        return 130
    finally:
        memory.worker.shutdown(wait=False, cancel_futures=True)
    return 0
