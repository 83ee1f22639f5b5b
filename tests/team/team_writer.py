"""One user's process writing team memories: `python team_writer.py DB WORKSPACE URL COUNT TAG
[PAUSE]`. Prints `ack <id>` once each write is acknowledged (committed locally, queued for the
team store), then waits for the outbox to drain and prints `queued <n>` (what is left)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from nous.engine import Engine
from nous.memory.model import Draft
from nous.settings import Settings


def main() -> None:
    db, workspace, url, count, tag = sys.argv[1:6]
    pause = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
    drain_for = float(sys.argv[7]) if len(sys.argv) > 7 else 60.0
    engine = Engine(Settings(db=Path(db), team_store=url), workspace)
    for n in range(int(count)):
        result = engine.remember(
            Draft(kind="decision", scope="team", content=f"Team decision {tag}-{n}: service "
                  f"{tag} uses connection pool size {n + 8} and retries {n % 5} times")
        )  # fmt: skip
        print(f"ack {result.memory.id}", flush=True)
        if pause:
            time.sleep(pause)
    deadline = time.monotonic() + drain_for
    team = engine.store.team
    assert team is not None
    while engine.store.outbox.count(engine.project.scope) and time.monotonic() < deadline:
        team.flush(2.0)
        time.sleep(0.1)
    print(f"queued {engine.store.outbox.count(engine.project.scope)}", flush=True)
    team.close(flush_timeout=0)
    engine.close()


if __name__ == "__main__":
    main()
