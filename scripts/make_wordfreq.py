"""Write server/nous/data/wordfreq-en.tsv.gz: English word rarity that does not depend on the
store (context/rarity.py), derived from the `wordfreq` package (Robyn Speer; code Apache-2.0,
data CC BY-SA 4.0: see server/nous/data/wordfreq-en.NOTICE.md).

The package is 57 MB (every language) and only needed to make this file, so it is not a
dependency: `scripts/make-wordfreq` installs it into a throwaway venv and runs this.
Each line is `word<TAB>zipf×10` (Zipf frequency: log10 of occurrences per billion words) for the
most frequent 100,000 English words that are one token for Nous's word splitter."""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import wordfreq  # type: ignore[import-not-found]

WORD = re.compile(r"[a-z0-9][a-z0-9_]*")
COUNT = 100_000


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("server/nous/data/wordfreq-en.tsv.gz")
    rows = []
    for word in wordfreq.top_n_list("en", COUNT * 2, wordlist="best"):
        if len(rows) >= COUNT:
            break
        if WORD.fullmatch(word):
            rows.append(f"{word}\t{round(10 * wordfreq.zipf_frequency(word, 'en'))}")
    data = ("\n".join(rows) + "\n").encode()
    out.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{out}: {len(rows)} words, {out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
