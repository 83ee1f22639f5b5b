"""Token shapes: vendor formats recognised by their look alone, with the literal each starts
with (one regex over the anchors picks the shapes worth trying in a word).

`SHAPES` are formats the library reports only with context or not at all (a lone `AKIA…` key
id, Mailgun `key-…`, Discord and Telegram bot tokens, …); `LOOSE` are the classic vendor
prefixes with any length after them: the library wants the exact length each vendor issues, a
pasted or hand-made token is often shorter (measured on the corpus of
tests/unit/test_secrets_corpus.py: 216/221 without them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nous.text.secrets import values

Span = tuple[str, int, int]
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@dataclass(frozen=True)
class Shape:
    """A token shape: `pattern` starts with one of the literal `anchors`; `before`, when set,
    must match the text just before it (for shapes whose distinctive part is in the middle,
    like `…:AA…`); a `loose` shape's match must not read as words
    (`sk-learn-compatible-estimators`)."""

    kind: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]
    before: re.Pattern[str] | None = None
    loose: bool = False


def _shape(kind: str, pattern: str, before: str | None = None, loose: bool = False) -> Shape:
    compiled = re.compile(before + r"\Z") if before else None
    return Shape(kind, re.compile(pattern), _anchors(pattern), compiled, loose)


def _anchors(pattern: str) -> tuple[str, ...]:
    """The literal each match starts with: `gh[pousr]_…` → ("gh",); `(?:a1|b2)…` → ("a1", "b2")."""
    alternatives = [pattern]
    if pattern.startswith("(?:"):
        depth = 0
        for end, c in enumerate(pattern):
            depth += (c == "(") - (c == ")")
            if depth == 0:
                alternatives = pattern[3:end].split("|")
                break
    out = []
    for alt in alternatives:
        m = re.match(r"(?:\\[^\w]|[\w:~/-])+", alt)
        assert m, f"a shape must start with a literal: {pattern}"
        out.append(re.sub(r"\\(.)", r"\1", m.group()))
    return tuple(out)


def _by_anchor(shapes: list[Shape]) -> tuple[re.Pattern[str], dict[str, list[Shape]]]:
    """One regex for every anchor (longest first) and, per anchor, the shapes to try where it
    occurs (those whose anchor it starts with: `AIza` also tries the `A…` AWS shapes)."""
    anchors = sorted({a for shape in shapes for a in shape.anchors}, key=len, reverse=True)
    table = {a: [sh for sh in shapes if any(a.startswith(b) for b in sh.anchors)] for a in anchors}
    return re.compile("|".join(map(re.escape, anchors))), table


SHAPES = [
    _shape("aws-access-key", r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z2-7]{16}(?![A-Za-z0-9])"),
    _shape("mailgun-api-key", r"key-[0-9a-f]{32}(?![\w-])"),
    _shape(
        "discord-bot-token", r"\.[\w-]{6}\.[\w-]{27,40}(?![\w-])", r"(?<![\w-])[MNO][\w-]{23,27}"
    ),
    _shape(  # bare, or in the Bot API's URL (`https://api.telegram.org/bot<id>:AA…/getMe`)
        "telegram-bot-token", r":AA[\w-]{33}(?![\w-])", r"(?:(?<=/bot)|(?<![\w:]))\d{5,16}"
    ),
    _shape(  # Mailchimp: 32 hex and the data centre (`-us7`, `-us14`); the library wants `-us\d\d`
        "mailchimp-api-key", r"-us\d{1,2}(?![\w-])", r"(?<![\w-])[0-9a-f]{32}"
    ),
    _shape("honeycomb-ingest-key", r"hc[ax]ik_[a-z0-9]{40,}(?![\w-])"),
    _shape("new-relic-key", r"NRAK-[A-Z0-9]{27}(?![A-Za-z0-9])"),
    _shape("stripe-webhook-secret", r"whsec_[A-Za-z0-9+/]{32,}"),
    _shape("azure-ad-client-secret", r"Q~[\w~.-]{31,34}(?![\w~.-])", r"(?<![\w~.-])[\w~.]{3}\d"),
    _shape("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _shape("gitlab-token", r"gl(?:pat|dt|rt|ptt|ft|oas|cbt|imt|soat|agent)-[\w-]{20,}"),
    _shape("shopify-token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}(?![A-Za-z0-9])"),
    _shape("firebase-server-key", r":APA91b[\w-]{100,}", r"(?<![\w-])AAAA[\w-]{7}"),
    _shape("doppler-token", r"dp\.(?:st|sa|ct|scim|audit)\.[\w.-]{40,}"),
    _shape(
        "discord-webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{60,}",
    ),
    _shape("aws-session-token", r"(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9+/=]{100,}"),
]
LOOSE = [
    _shape("aws-access-key", r"A(?:KIA|SIA)(?=[A-Z]*[0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"),
    _shape("github-token", r"gh[pousr]_[A-Za-z0-9]{30,}", loose=True),
    _shape("github-token", r"github_pat_\w{30,}", loose=True),
    _shape("openai-key", r"sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}", loose=True),
    _shape("google-api-key", r"AIza[0-9A-Za-z_-]{30,}", loose=True),
    _shape("huggingface-token", r"hf_[A-Za-z0-9]{30,}", loose=True),
    _shape("slack-token", r"xox[abposr]-[A-Za-z0-9-]{10,}", loose=True),
    _shape("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}"),
    _shape("stripe-key", r"k_(?:live|test)_[A-Za-z0-9]{20,}", r"[rs]", loose=True),
    _shape("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _shape("npm-token", r"npm_[A-Za-z0-9]{30,}", loose=True),
    _shape("pypi-token", r"pypi-AgEIcHlwaS5vcmc[\w-]{30,}"),
    _shape("sendgrid-api-key", r"SG\.[\w-]{16,}\.[\w-]{30,}", loose=True),
    _shape("twilio-api-key", r"SK[0-9a-f]{32}(?![A-Za-z0-9])"),
    _shape("prefixed-token", r"(?:dop_v1_[a-f0-9]{64}|hvs\.[\w-]{90,}|dapi[a-f0-9]{32}"
           r"|lin_api_[A-Za-z0-9]{40}|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}"
           r"|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|sbp_[a-f0-9]{40}|gsk_[A-Za-z0-9]{52}"
           r"|r8_[A-Za-z0-9]{37})"),
]  # fmt: skip

_ANCHOR, _ANCHORED = _by_anchor(SHAPES + LOOSE)


def scan(text: str, words: list[tuple[int, int]]) -> list[Span]:
    """Every token shape inside the given long words (the anchors say which shapes to try)."""
    found: list[Span] = []
    for lo, hi in words:
        todo: list[Shape] = []
        for a in _ANCHOR.finditer(text, lo, hi):
            todo += [sh for sh in _ANCHORED[a.group()] if sh not in todo]
        for shape in todo:
            for m in shape.pattern.finditer(text, lo, hi):
                start = m.start()
                if shape.before is not None:
                    b = shape.before.search(text, max(lo, start - 40), start)
                    if b is None:
                        continue
                    start = b.start()
                if start > lo and text[start - 1] in _WORD and text[start - 4 : start] != "/bot":
                    continue
                if values.placeholder(text[start : m.end()]):
                    continue  # `AKIAXXXXXXXXXXXXXXXX` in a README
                if shape.loose and not values.token_body(m.group()[4:]):
                    continue
                found.append((shape.kind, start, m.end()))
    return found
