"""`nous serve`: the daemon over stdio (the default; `--stdio` is accepted because
vscode-languageclient appends it) or over TCP on loopback for debugging."""

from __future__ import annotations

import argparse
import logging
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (default)")
    parser.add_argument(
        "--tcp", type=int, metavar="PORT", help="serve one client on 127.0.0.1:PORT"
    )
    parser.add_argument("--log-file", help="write logs here instead of stderr")
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )


def run(args: argparse.Namespace) -> int:
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing may print into the LSP pipe
    handler: logging.Handler = (
        logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    )
    logging.basicConfig(
        level=getattr(logging, args.log_level), handlers=[handler],
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True,
    )  # fmt: skip
    logging.getLogger("pygls").setLevel(max(logging.WARNING, getattr(logging, args.log_level)))
    from nous.lsp.server import Daemon

    overrides: dict[str, object] = {"db": args.db} if getattr(args, "db", None) else {}
    if getattr(args, "team_store", None):
        from nous.memory import team_url

        try:  # the flag sits in a process list: never with a password
            overrides["team_store"] = team_url.check_synced(args.team_store)
        except team_url.BadTeamUrl as exc:
            sys.stderr.write(f"nous: error: --team-store: {exc}\n")
            return 2
    if args.tcp is not None:
        import socket

        with socket.create_server(("127.0.0.1", args.tcp)) as listener:
            logging.getLogger(__name__).info("listening on 127.0.0.1:%d", args.tcp)
            conn, _ = listener.accept()
            with conn, conn.makefile("rb") as reader, conn.makefile("wb") as writer:
                return Daemon(reader, writer, overrides).serve()
    return Daemon(sys.stdin.buffer, stdout, overrides).serve()
