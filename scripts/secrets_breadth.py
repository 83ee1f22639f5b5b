"""What the library adds beyond the corpus: strings sampled from each Kingfisher rule's own
pattern (kept when Kingfisher detects them), scanned with Nous's own rules alone.

    .venv/bin/python scripts/secrets_breadth.py [--per-rule 3] [--seed 5]

Prints how many of the library's formats the own rules would catch without it. Uses the
standard library's regex parser (`re._parser`) to generate matches: a measuring tool, not
shipped code.
"""

from __future__ import annotations

import argparse
import random
import re
import re._constants as C
import re._parser as sre_parse
import string
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))
PRINTABLE = string.ascii_letters + string.digits + "-_./+=:"
CATEGORIES = {
    C.CATEGORY_DIGIT: string.digits,
    C.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_DIGIT: string.ascii_letters,
    C.CATEGORY_NOT_WORD: "-.:/ ",
    C.CATEGORY_NOT_SPACE: string.ascii_letters + string.digits,
}


def sample(parsed: Any, r: random.Random, groups: dict[int, str]) -> str:
    """One random string the parsed pattern matches (repeats capped at min + 8)."""
    out = []
    for op, av in parsed:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(r.choice([c for c in PRINTABLE if ord(c) != av]))
        elif op is C.ANY:
            out.append(r.choice(string.ascii_letters + string.digits))
        elif op is C.IN:
            out.append(r.choice(_charset(av)))
        elif op is C.BRANCH:
            out.append(sample(r.choice(av[1]), r, groups))
        elif op is C.SUBPATTERN:
            groups[av[0]] = sample(av[3], r, groups)
            out.append(groups[av[0]])
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            n = r.randint(lo, lo + 8 if hi == C.MAXREPEAT else min(hi, lo + 8))
            out.append("".join(sample(sub, r, groups) for _ in range(n)))
        elif op is C.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is C.ATOMIC_GROUP:
            out.append(sample(av, r, groups))
        elif op not in (C.AT, C.ASSERT, C.ASSERT_NOT):
            raise ValueError(f"cannot sample {op}")
    return "".join(out)


def _charset(items: Any) -> list[str]:
    chars: set[str] = set()
    for op, av in items:
        if op is C.LITERAL:
            chars.add(chr(av))
        elif op is C.RANGE:
            chars |= {chr(c) for c in range(av[0], min(av[1], av[0] + 200) + 1)}
        elif op is C.CATEGORY:
            chars |= set(CATEGORIES.get(av, string.ascii_letters))
    if any(op is C.NEGATE for op, _ in items):
        chars = set(PRINTABLE) - chars
    return sorted(c for c in chars if c.isprintable()) or ["x"]


FAMILY_VENDORS = {
    "chat-bot tokens": ("discord", "slack", "telegram", "twilio"),
    "mail APIs": ("mailgun", "sendgrid", "mailchimp", "postmark", "sendinblue", "mailjet",
                  "sparkpost", "resend", "mandrill"),
    "observability keys": ("datadog", "new-relic", "sentry", "honeycomb", "dynatrace",
                           "grafana", "splunk", "sumologic", "opsgenie", "pagerduty"),
    "framework secrets": ("rails", "django", "laravel", "flask", "symfony", "phoenix"),
}  # fmt: skip
"""Issue 28's families by the vendor names in the library's rule ids."""


def family_of(rule_id: str) -> str | None:
    name = rule_id.split(".", 1)[-1]
    return next((f for f, vs in FAMILY_VENDORS.items() if name.startswith(vs)), None)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--per-rule", type=int, default=3)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    from kingfisher_sdk import Rules, Scanner

    from nous.text.secrets import library

    library.configure(builtin=True)

    from nous.text.secrets import rules as own

    r = random.Random(args.seed)
    catalog = Rules(confidence="low")
    scanner = Scanner(catalog)
    sampled = unparsable = samples = caught = 0
    missed: list[str] = []
    families: dict[str, list[int]] = {f: [0, 0, 0] for f in FAMILY_VENDORS}  # rules, kept, own
    for meta in catalog.metadata():
        if not meta["visible"]:
            continue  # helpers: client ids, hosts, account names
        detail = catalog.detail(meta["id"])
        try:
            parsed = sre_parse.parse(detail.get("detection_regex") or detail["pattern"])
        except (re.error, ValueError, KeyError):
            unparsable += 1
            continue
        kept = hits = 0
        for _ in range(4 * args.per_rule):
            text = f"note: {sample(parsed, r, {})}\n"
            if not scanner.scan(text):
                continue  # the sample fails one of the rule's filters
            kept += 1
            hits += bool(own.scan(text))
            if kept == args.per_rule:
                break
        family = family_of(meta["id"])
        if kept and family:
            families[family][0] += 1
            families[family][1] += kept
            families[family][2] += hits
        if kept:
            sampled += 1
            samples += kept
            caught += hits
            if hits < kept:
                missed.append(meta["id"].split(".", 1)[-1])
    print(
        f"{sampled} visible Kingfisher rules sampled ({unparsable} patterns not parsable here), "
        f"{samples} detected samples: Nous's own rules alone flag {caught} "
        f"({caught / samples:.1%}); the library adds the other {samples - caught}."
    )
    print(f"rules with a sample the own rules miss ({len(missed)}): {', '.join(missed[:40])}, …")
    for family, (rules, kept, hits) in families.items():
        share = f"{hits / kept:.1%}" if kept else "-"
        print(f"  {family}: {rules} library rules, {kept} samples, own rules alone flag {share}")


if __name__ == "__main__":
    main()
