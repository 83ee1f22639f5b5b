"""The secrets corpus: true secrets over many formats and harmless look-alikes, all generated.

Every body is drawn from the alphabet and length its format uses, with one fixed seed, and set in
a realistic context (`secret_formats.py`, `lookalike_classes.py`). Each secret names the
substrings that must disappear (`values`); a look-alike must come back untouched. Pure standard
library: `scripts/secrets_corpus.py` runs it against other scanners too.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.security import family_formats, lookalike_families
from tests.security.bodies import Gen, LookAlike, Secret
from tests.security.lookalike_classes import LOOKALIKES
from tests.security.secret_formats import FORMATS

SEED = 20261124
PER_FORMAT = 4
PER_CLASS = 5
PER_FAMILY_FORMAT = 12
"""Issue 28's provider families: more instances per format (every context of CONTEXTS)."""
PER_CLASS_WIDE = lookalike_families.PER_CLASS_WIDE


@dataclass(frozen=True)
class Corpus:
    secrets: list[Secret]
    lookalikes: list[LookAlike]


def generate(seed: int = SEED) -> Corpus:
    """The corpus for `seed`: PER_FORMAT secrets per format (PER_FAMILY_FORMAT for the provider
    families), PER_CLASS look-alikes per class (PER_CLASS_WIDE for issue 28's classes)."""
    g = Gen(seed)
    secrets = [make(g, i) for make in FORMATS for i in range(PER_FORMAT)]
    lookalikes = [
        LookAlike(kind, make(g, i)) for kind, make in LOOKALIKES.items() for i in range(PER_CLASS)
    ]
    # issue 28, drawn after the rest so the earlier bodies stay what they were for a seed
    secrets += [make(g, i) for make in family_formats.FORMATS for i in range(PER_FAMILY_FORMAT)]
    lookalikes += [
        LookAlike(kind, make(g, i))
        for kind, make in lookalike_families.WIDE.items()
        for i in range(PER_CLASS_WIDE)
    ]
    for s in secrets:
        missing = [v for v in s.values if v not in s.text]
        assert not missing, (s.format, missing)
    return Corpus(secrets, lookalikes)


def covered(text: str, spans: list[tuple[int, int]], value: str) -> bool:
    """Whether every character of every occurrence of `value` in `text` lies inside a span."""
    marks = bytearray(len(text) + 1)
    for start, end in spans:
        marks[start:end] = b"\x01" * (end - start)
    start = text.find(value)
    while start != -1:
        if not all(marks[start : start + len(value)]):
            return False
        start = text.find(value, start + 1)
    return True
