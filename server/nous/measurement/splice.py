"""Splicing a generated section into a markdown file between two HTML-comment markers, the rest
of the file kept as written (docs/benchmarks.md holds the bench and the eval sections)."""

from __future__ import annotations

from pathlib import Path


def between(text: str, start: str, end: str) -> str | None:
    """The text between the first `start` and the `end` after it, or None."""
    if start in text and end in text.split(start, 1)[1]:
        return text.split(start, 1)[1].split(end, 1)[0]
    return None


def splice(path: Path, start: str, end: str, block: str) -> None:
    """Replace `start`…`end` in `path` with `block` (which holds the markers itself); append it
    when the markers are missing; create the file (`# Benchmarks`) when there is none."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if not current:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Benchmarks\n\n{block}\n", encoding="utf-8")
    elif between(current, start, end) is not None:
        head, rest = current.split(start, 1)
        path.write_text(head + block + rest.split(end, 1)[1], encoding="utf-8")
    else:
        path.write_text(current.rstrip() + "\n\n" + block + "\n", encoding="utf-8")
