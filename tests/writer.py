"""A separate writer process for the multi-process store tests.

python -m tests.writer DB PREFIX COUNT  → remembers COUNT distinct facts "PREFIX n".
"""

from __future__ import annotations

import sys

from nous.memory.embedder import HashEmbedder
from nous.memory.model import Draft
from nous.memory.store import MemoryStore
from nous.text import tokens


def main() -> None:
    path, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = MemoryStore(path, HashEmbedder(), tokens.counter())
    for n in range(count):
        store.remember(Draft(kind="fact", content=f"{prefix} wrote fact number {n}"))
    store.close()


if __name__ == "__main__":
    main()
