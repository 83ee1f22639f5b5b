"""Architecture decision records (Nygard and MADR) → decisions, status mapped to the lifecycle:
Proposed → pending, Accepted → reviewed, Deprecated/Rejected → inactive, Superseded → superseded
(linked to the ADR it names as successor)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from nous.workspace.harvest.model import Harvested

DIRS = ("docs/adr/", "doc/adr/", "docs/decisions/", "docs/architecture/decisions/")
STATUS = {
    "proposed": "pending",
    "draft": "pending",
    "accepted": "reviewed",
    "approved": "reviewed",
    "deprecated": "inactive",
    "rejected": "inactive",
    "superseded": "superseded",
}
_SECTION = re.compile(r"^#{2,3}\s+(.*\S)\s*$", re.M)
_NUMBER = re.compile(r"(\d{1,5})")


def matches(relpath: str) -> bool:
    name = PurePosixPath(relpath).name.lower()
    return (
        relpath.startswith(DIRS)
        and name.endswith(".md")
        and name not in {"readme.md", "index.md", "template.md", "adr-template.md"}
    )


def _sections(text: str) -> dict[str, str]:
    parts = _SECTION.split(text)
    out = {}
    for title, body in zip(parts[1::2], parts[2::2], strict=False):
        out[title.strip().lower()] = body.strip()
    return out


def _status(text: str, sections: dict[str, str]) -> tuple[str | None, str | None]:
    """(lifecycle status, successor reference) from a Status section or a MADR `status:` field."""
    raw = sections.get("status", "")
    front = re.search(r"^status\s*:\s*(.+)$", text, re.M | re.I)
    if front:
        raw = front.group(1) + " " + raw
    word = next((w for w in re.findall(r"[a-z]+", raw.lower()) if w in STATUS), None)
    successor = None
    if word == "superseded":
        link = re.search(r"superseded by\s*\[?([^\]\n]*)\]?(?:\(([^)]+)\))?", raw, re.I)
        if link:
            successor = (link.group(2) or link.group(1)).strip()
    return (STATUS[word] if word else None), successor


def number_of(relpath_or_ref: str) -> str | None:
    match = _NUMBER.search(PurePosixPath(relpath_or_ref).name)
    return str(int(match.group(1))) if match else None


def harvest(relpath: str, text: str) -> list[Harvested]:
    title_match = re.search(r"^#\s+(.*\S)", text, re.M)
    title = title_match.group(1) if title_match else PurePosixPath(relpath).stem
    title = re.sub(r"^(ADR[-\s]?)?\d+[.:)\s-]*", "", title, flags=re.I).strip() or title
    sections = _sections(text)
    status, successor = _status(text, sections)
    decision = sections.get("decision") or sections.get("decision outcome") or ""
    context = (
        sections.get("context")
        or sections.get("context and problem statement")
        or sections.get("problem")
        or ""
    )
    consequences = sections.get("consequences") or sections.get("positive consequences") or ""
    parts = [f"{title}."]
    if decision:
        parts.append(" ".join(decision.split()))
    if context:
        parts.append("Context: " + " ".join(context.split()))
    if consequences:
        parts.append("Consequences: " + " ".join(consequences.split()))
    number = number_of(relpath)
    return [
        Harvested(
            kind="decision", content="\n".join(parts), anchor=f"file:{relpath}#adr-{number or 0}",
            status=status, successor=successor, tags=["adr", f"adr-{number}" if number else "adr"],
            confidence=1.0, importance=0.8,
        )
    ]  # fmt: skip
