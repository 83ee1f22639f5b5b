"""The code cites the design by section ("design §2.5": docs/design.md's heading `2.5`); every
such reference in the repository has its heading, so a newcomer can follow each one. References
written before the design lived in the repository, spelled with the old name of the same
numbering, are held to the same rule until they are renamed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "design.md"
WHERE = ("server", "tests", "docs", "vscode-client/src")
SUFFIXES = {".py", ".md", ".ts", ".toml"}
# "design §2.5", also wrapped onto the next line of a comment or docstring ("design\n    # §2.5")
REFERENCE = re.compile(r"\b(?:design|SPEC)\s+(?:#\s*|//\s*|\*\s*)?§(\d+(?:\.\d+)?)")
HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)?)\.? ", re.MULTILINE)


def headings(text: str) -> set[str]:
    return set(HEADING.findall(text))


def references(root: Path) -> dict[str, list[str]]:
    """{section: the files citing it} over the text files below `WHERE` and the top-level docs."""
    files = [*root.glob("*.md")] + [
        path
        for part in WHERE
        for path in (root / part).rglob("*")
        if path.suffix in SUFFIXES and "node_modules" not in path.parts and path.is_file()
    ]
    cited: dict[str, list[str]] = {}
    for path in files:
        for section in REFERENCE.findall(path.read_text(encoding="utf-8", errors="replace")):
            cited.setdefault(section, []).append(str(path.relative_to(root)))
    return cited


def test_every_design_reference_has_its_heading() -> None:
    cited = references(ROOT)
    assert sum(map(len, cited.values())) >= 100  # the code cites the design everywhere
    missing = {
        s: sorted(set(files)) for s, files in cited.items() if s not in headings(DESIGN.read_text())
    }
    assert not missing, missing


def test_a_reference_without_a_heading_is_reported(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "server").mkdir()
    (tmp_path / "docs" / "design.md").write_text("# Design\n\n## 2. Pipeline\n\n### 2.5 Gate\n")
    (tmp_path / "server" / "gate.py").write_text(
        '"""The floor (design §2.5), the budget (design\n    §3) and the frame (design §2.1)."""\n'
    )
    cited = references(tmp_path)
    assert sorted(cited) == ["2.1", "2.5", "3"]
    shown = headings((tmp_path / "docs" / "design.md").read_text())
    assert sorted(s for s in cited if s not in shown) == ["2.1", "3"]
