"""Measure a secret scanner on the generated corpus (tests/security/corpus.py): per-format catch
rate, look-alikes touched, speed. Runs under any Python that has the scanner installed:

    scripts/secrets-corpus                       # Nous's own redaction, in the project venv
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server"))

from tests.security import corpus  # noqa: E402

Spans = list[tuple[int, int]]
Scan = Callable[[str], Spans]


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
    from nous.memory import secrets

    return lambda text: [(r.start, r.end) for r in secrets.find(text)]


def kingfisher_scanner(confidence: str) -> Scan:
    from kingfisher_sdk import Rules, Scanner

    scanner = Scanner(Rules(confidence=confidence))

    def scan(text: str) -> Spans:
        to_char = _byte_to_char(text)
        out = []
        for f in scanner.scan(text):
            loc = f.location
            out.append((to_char(loc["start_offset"]), to_char(loc["end_offset"])))
        return out

    return scan


def betterleaks_scanner() -> Scan:
    import betterleaks

    return lambda text: _value_spans(text, [f.secret for f in betterleaks.scan_string(text)])


def detect_secrets_scanner() -> Scan:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

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


def measure(scan: Scan, data: corpus.Corpus) -> dict[str, object]:
    per_format: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed: list[str] = []
    for s in data.secrets:
        spans = scan(s.text)
        ok = all(corpus.covered(s.text, spans, v) for v in s.values)
        per_format[s.format][0] += ok
        per_format[s.format][1] += 1
        if not ok:
            missed.append(s.text)
    per_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    touched: list[str] = []
    for la in data.lookalikes:
        hit = bool(scan(la.text))
        per_class[la.kind][0] += hit
        per_class[la.kind][1] += 1
        if hit:
            touched.append(la.text)
    texts = [s.text for s in data.secrets] + [la.text for la in data.lookalikes]
    size = sum(len(t.encode()) for t in texts)
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        for t in texts:
            scan(t)
        runs.append(time.perf_counter() - t0)
    memory = (
        "Use the staging database for the load test; the runbook is in docs/runbook.md and the "
        "dashboards live under Grafana > Payments. " * 4
    )[:500]
    t0 = time.perf_counter()
    for _ in range(200):
        scan(memory)
    per_memory = (time.perf_counter() - t0) / 200
    caught = sum(v[0] for v in per_format.values())
    flagged = sum(v[0] for v in per_class.values())
    return {
        "secrets": len(data.secrets),
        "formats": len(per_format),
        "caught": caught,
        "lookalikes": len(data.lookalikes),
        "touched": flagged,
        "us_per_kb": statistics.median(runs) / (size / 1024) * 1e6,
        "us_per_500_chars": per_memory * 1e6,
        "per_format": {k: v for k, v in sorted(per_format.items())},
        "per_class": {k: v for k, v in sorted(per_class.items())},
        "missed": missed,
        "touched_texts": touched,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scanner", choices=sorted(SCANNERS), default="nous")
    ap.add_argument("--seed", type=int, default=corpus.SEED)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--show", action="store_true", help="print missed and touched texts")
    args = ap.parse_args()
    t0 = time.perf_counter()
    scan = SCANNERS[args.scanner]()
    setup = time.perf_counter() - t0
    data = corpus.generate(args.seed)
    r = measure(scan, data)
    r["setup_s"] = setup
    if args.json:
        print(json.dumps({k: v for k, v in r.items() if k not in ("missed", "touched_texts")}))
        return
    print(f"{'format':<32} caught")
    for name, (ok, n) in r["per_format"].items():  # type: ignore[attr-defined]
        print(f"{name:<32} {ok}/{n}{'' if ok == n else '   <-- missed'}")
    print(f"\n{'look-alike class':<32} touched")
    for name, (hit, n) in r["per_class"].items():  # type: ignore[attr-defined]
        print(f"{name:<32} {hit}/{n}{'   <-- touched' if hit else ''}")
    caught, total = int(r["caught"]), int(r["secrets"])  # type: ignore[call-overload]
    touched, looks = int(r["touched"]), int(r["lookalikes"])  # type: ignore[call-overload]
    print(
        f"\n{args.scanner}: caught {caught}/{total} ({caught / total:.1%}) "
        f"over {r['formats']} formats; look-alikes touched {touched}/{looks} ({touched / looks:.1%}); "
        f"{r['us_per_kb']:.0f} µs/KB, {r['us_per_500_chars']:.0f} µs per 500-char memory, "
        f"setup {setup:.2f} s (seed {args.seed})"
    )
    if args.show:
        for t in r["missed"]:  # type: ignore[attr-defined]
            print("MISSED:", repr(t[:300]))
        for t in r["touched_texts"]:  # type: ignore[attr-defined]
            print("TOUCHED:", repr(t[:300]))


if __name__ == "__main__":
    main()
