"""The parent watchdog: the daemon exits when the editor process that started it is gone (LSP
`processId`), so a crashed editor never leaves a daemon behind."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)


def start(pid: int) -> None:
    """Watch `pid` on a daemon thread of its own."""
    threading.Thread(target=watch, args=(pid,), name="nous-watchdog", daemon=True).start()


def watch(pid: int) -> None:
    """Exit when the editor process that started us is gone (LSP `processId`)."""
    while True:
        time.sleep(1.0)
        try:
            os.kill(pid, 0)
            gone = zombie(pid)
        except ProcessLookupError:
            gone = True
        except PermissionError:
            gone = False
        if gone:
            log.warning("editor process %d is gone; exiting", pid)
            os._exit(1)


def zombie(pid: int) -> bool:
    """A dead process its parent has not reaped yet still answers `kill 0` (Linux only check)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]
