"""Measure a secret scanner on the generated corpus (tests/security/corpus.py): per-format catch
rate, look-alikes touched, speed. Runs under any Python that has the scanner installed:

    scripts/secrets-corpus                       # Nous's redaction, in the project venv
    NOUS_SECRETS_ENGINE=builtin scripts/secrets-corpus     # Nous's own rules alone
    /tmp/sv-kf/bin/python scripts/secrets_corpus.py --scanner kingfisher
    (scanners: nous, kingfisher, kingfisher-low, betterleaks, detect-secrets[-file])

A secret counts as caught when every character of each of its values lies inside a reported
span; a look-alike counts as touched when any span is reported in it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server"))

from tests.security import corpus, family_formats, lookalike_families  # noqa: E402

Spans = list[tuple[int, int]]
Scan = Callable[[str], Spans]
MEMORY = (
    "Use the staging database for the load test; the runbook is in docs/runbook.md and the "
    "dashboards live under Grafana > Payments. Decision: the auth service keeps session tokens "
    "in Redis with a 15 minute TTL; password resets go through the token endpoint, see "
    "docs/adr/0007-auth.md and https://github.com/acme/api/pull/12. "
)[:500]
"""A typical 500-character memory: prose that mentions tokens and passwords, holds none."""


def _byte_to_char(text: str) -> Callable[[int], int]:
    data = text.encode()
    return lambda offset: len(data[:offset].decode(errors="ignore"))


def _value_spans(text: str, values: list[str]) -> Spans:
    spans = []
    for value in values:
        start = text.find(value) if value else -1
        while start != -1:
            spans.append((start, start + len(value)))
            start = text.find(value, start + 1)
    return spans


def nous_scanner() -> Scan:
    from nous import settings
    from nous.text import secrets

    settings.install(settings.load(env=settings.environment())[0])  # NOUS_SECRETS_ENGINE

    return lambda text: [(r.start, r.end) for r in secrets.find(text)]


def kingfisher_scanner(confidence: str) -> Scan:
    from kingfisher_sdk import Rules, Scanner

    scanner = Scanner(Rules(confidence=confidence))  # type: ignore[arg-type]

    def scan(text: str) -> Spans:
        to_char = _byte_to_char(text)
        return [
            (to_char(f.location["start_offset"]), to_char(f.location["end_offset"]))
            for f in scanner.scan(text)
        ]

    return scan


def betterleaks_scanner() -> Scan:
    import betterleaks  # type: ignore[import-not-found]

    return lambda text: _value_spans(text, [f.secret for f in betterleaks.scan_string(text)])


def detect_secrets_scanner() -> Scan:
    """detect-secrets' ad-hoc string scan (`scan_line`, every plugin, its filters off)."""
    from detect_secrets.core.scan import scan_line  # type: ignore[import-not-found]
    from detect_secrets.settings import default_settings  # type: ignore[import-not-found]

    def scan(text: str) -> Spans:
        with default_settings():
            values = [s.secret_value or "" for line in text.splitlines() for s in scan_line(line)]
        return _value_spans(text, values)

    return scan


def detect_secrets_file_scanner() -> Scan:
    """detect-secrets' own file path (its filters and entropy limits on), on a temp file."""
    import tempfile

    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    folder = Path(tempfile.mkdtemp())

    def scan(text: str) -> Spans:
        path = folder / "memory.md"
        path.write_text(text)
        with default_settings():
            values = [s.secret_value or "" for s in scan_file(str(path))]
        return _value_spans(text, values)

    return scan


SCANNERS: dict[str, Callable[[], Scan]] = {
    "nous": nous_scanner,
    "kingfisher": lambda: kingfisher_scanner("medium"),
    "kingfisher-low": lambda: kingfisher_scanner("low"),
    "betterleaks": betterleaks_scanner,
    "detect-secrets": detect_secrets_scanner,
    "detect-secrets-file": detect_secrets_file_scanner,
}


@dataclass
class Figures:
    scanner: str
    seed: int
    secrets: int = 0
    formats: int = 0
    caught: int = 0
    lookalikes: int = 0
    touched: int = 0
    us_per_kb: float = 0.0
    us_per_memory: float = 0.0
    setup_s: float = 0.0
    per_format: dict[str, list[int]] = field(default_factory=dict)
    per_class: dict[str, list[int]] = field(default_factory=dict)
    per_family: dict[str, list[int]] = field(default_factory=dict)
    """Issue 28's provider families: [caught, secrets] over the family's formats."""
    missed: list[str] = field(default_factory=list)
    touched_texts: list[str] = field(default_factory=list)


def measure(name: str, seed: int) -> Figures:
    t0 = time.perf_counter()
    scan = SCANNERS[name]()
    scan("warm up: the library compiles its rules on first use")
    r = Figures(name, seed, setup_s=time.perf_counter() - t0)
    data = corpus.generate(seed)
    per_format: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s in data.secrets:
        spans = scan(s.text)
        ok = all(corpus.covered(s.text, spans, v) for v in s.values)
        per_format[s.format][0] += ok
        per_format[s.format][1] += 1
        if not ok:
            r.missed.append(s.text)
    per_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for la in data.lookalikes:
        hit = bool(scan(la.text))
        per_class[la.kind][0] += hit
        per_class[la.kind][1] += 1
        if hit:
            r.touched_texts.append(la.text)
    r.per_format, r.per_class = dict(sorted(per_format.items())), dict(sorted(per_class.items()))
    r.per_family = {
        family: [sum(per_format[n][i] for n in names if n in per_format) for i in (0, 1)]
        for family, names in family_formats.FAMILIES.items()
    }
    r.secrets, r.formats = len(data.secrets), len(per_format)
    r.caught = sum(v[0] for v in per_format.values())
    r.lookalikes, r.touched = len(data.lookalikes), sum(v[0] for v in per_class.values())
    texts = [s.text for s in data.secrets] + [la.text for la in data.lookalikes]
    size = sum(len(t.encode()) for t in texts)
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        for t in texts:
            scan(t)
        runs.append(time.perf_counter() - t0)
    r.us_per_kb = statistics.median(runs) / (size / 1024) * 1e6
    per_memory = []
    for _ in range(5):
        t0 = time.perf_counter()
        for i in range(200):
            scan(MEMORY + str(i))  # a new string each time: no cache helps
        per_memory.append((time.perf_counter() - t0) / 200)
    r.us_per_memory = statistics.median(per_memory) * 1e6
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--scanner", choices=sorted(SCANNERS), default="nous")
    ap.add_argument("--seed", type=int, default=corpus.SEED)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--show", action="store_true", help="print missed and touched texts")
    args = ap.parse_args()
    r = measure(args.scanner, args.seed)
    if args.json:
        print(
            json.dumps({k: v for k, v in asdict(r).items() if k not in ("missed", "touched_texts")})
        )
        return
    print(f"{'format':<32} caught")
    for name, (ok, n) in r.per_format.items():
        print(f"{name:<32} {ok}/{n}{'' if ok == n else '   <-- missed'}")
    print(f"\n{'look-alike class':<32} touched")
    for name, (hit, n) in r.per_class.items():
        print(f"{name:<32} {hit}/{n}{'   <-- touched' if hit else ''}")
    print(f"\n{'provider family (issue 28)':<32} caught")
    for name, (ok, n) in r.per_family.items():
        print(f"{name:<32} {ok}/{n} ({ok / n:.1%})")
    print(f"\n{'look-alike class (issue 28)':<32} redacted")
    for name in lookalike_families.WIDE:
        hit, n = r.per_class[name]
        print(f"{name:<32} {hit}/{n} ({hit / n:.1%})")
    print(
        f"\n{r.scanner}: caught {r.caught}/{r.secrets} ({r.caught / r.secrets:.1%}) over "
        f"{r.formats} formats; look-alikes touched {r.touched}/{r.lookalikes} "
        f"({r.touched / r.lookalikes:.1%}); {r.us_per_kb:.0f} µs/KB, {r.us_per_memory:.0f} µs per "
        f"500-char memory, setup {r.setup_s:.2f} s (seed {r.seed})"
    )
    if args.show:
        for t in r.missed:
            print("MISSED:", repr(t[:300]))
        for t in r.touched_texts:
            print("TOUCHED:", repr(t[:300]))


if __name__ == "__main__":
    main()
