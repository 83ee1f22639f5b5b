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
    from nous import settings
    from nous.lsp.server import Daemon

    env = settings.environment()  # the one read; the client's options join it at `initialize`
    flags = {name: getattr(args, name, None) for name in ("db", "team_store", "encoding")}
    try:  # a bad flag (a --team-store with a password: it sits in a process list) ends here
        loaded, _ = settings.load(env=env, flags=flags)
    except settings.BadFlag as exc:
        sys.stderr.write(f"nous: error: {exc}\n")
        return 2
    settings.install(loaded)  # the process-wide fields come from the environment alone
    overrides = {name: value for name, value in flags.items() if value is not None}
    if args.tcp is not None:
        import socket

        with socket.create_server(("127.0.0.1", args.tcp)) as listener:
            logging.getLogger(__name__).info("listening on 127.0.0.1:%d", args.tcp)
            conn, _ = listener.accept()
            with conn, conn.makefile("rb") as reader, conn.makefile("wb") as writer:
                return Daemon(reader, writer, overrides, env).serve()
    return Daemon(sys.stdin.buffer, stdout, overrides, env).serve()
