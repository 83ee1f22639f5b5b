"""Rules on the daemon's edges, checked on the source itself (the layers: test_layers.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from nous import protocol

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "nous"


def test_the_engine_knows_nothing_of_the_daemon() -> None:
    for path in [
        *PACKAGE.glob("*.py"),
        *PACKAGE.glob("context/*.py"),
        *PACKAGE.glob("memory/*.py"),
    ]:
        source = path.read_text()
        assert "nous.lsp" not in source or path.name == "cli.py", path


def test_nothing_prints_to_stdout_in_the_daemon() -> None:
    for path in (PACKAGE / "lsp").glob("*.py"):
        assert not re.search(r"(?<![\w.])print\(", path.read_text()), path


def test_every_custom_method_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    methods = [v for k, v in vars(protocol).items() if k.startswith("NOUS_") and isinstance(v, str)]
    assert len(methods) >= 11
    for method in methods:
        assert f"`{method}`" in readme, f"{method} is not in the README"
        assert f'"method": "{method}"' in readme, f"{method} has no JSON example in the README"


def test_every_file_the_architecture_names_exists() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:server|tests)/[\w/.]+\.py)", text))
    assert len(named) >= 8
    assert [n for n in sorted(named) if not (ROOT / n).is_file()] == []
    assert text.count("\n1. **handler**") == 1 and "\n3. **store**" in text


MOST_PARAMETERS = 6
"""Issue 29: a function of context/ or memory/ takes at most this many (a request's state is one
`Query`; a row's text fields one tuple)."""


def long_signatures(source: str) -> list[str]:
    """The functions of `source` over `MOST_PARAMETERS` parameters (`self`/`cls` not counted)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            count = len(named) - (1 if named and named[0].arg in ("self", "cls") else 0)
            if count > MOST_PARAMETERS:
                out.append(f"{node.name} ({count})")
    return out


def test_no_function_of_context_or_memory_takes_more_than_six_parameters() -> None:
    found = {
        str(path.relative_to(PACKAGE)): long
        for folder in ("context", "memory")
        for path in sorted((PACKAGE / folder).rglob("*.py"))
        if (long := long_signatures(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_a_long_signature_is_seen() -> None:
    seven = "def f(self, a, b, c, d, e, f, g=1): ...\nasync def h(*, a, b, c, d, e, f): ..."
    assert long_signatures(seven) == ["f (7)"]


DESIGN_REFERENCE = re.compile(r"design §(\d+(?:\.\d+)?)")


def design_sections(text: str) -> set[str]:
    """The section numbers of docs/design.md (`## 8. Targets`, `### 2.5 Gate, then score`)."""
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, re.MULTILINE))


def test_every_design_reference_has_its_section_and_no_spec_reference_is_left() -> None:
    """Issue 29: the design lives in the repository (docs/design.md); the code's references
    point to its sections, and none to a SPEC the repository does not hold."""
    sections = design_sections((ROOT / "docs" / "design.md").read_text(encoding="utf-8"))
    files = [ROOT / "README.md", *(p for d in ("server", "tests", "docs")
                                   for p in (ROOT / d).rglob("*") if p.suffix in (".py", ".md"))]  # fmt: skip
    dangling, spec = set(), []
    for path in (p for p in files if p != Path(__file__)):  # this file names bad ones on purpose
        text = path.read_text(encoding="utf-8")
        dangling |= {f"{path.name}: §{n}" for n in DESIGN_REFERENCE.findall(text)
                     if n not in sections}  # fmt: skip
        if "SPEC §" in text:
            spec.append(path.name)
    assert not dangling and not spec, (sorted(dangling), spec)


def test_a_dangling_design_reference_is_seen() -> None:
    sections = design_sections("## 8. Targets\n### 2.5 Gate, then score\n")
    assert sections == {"8", "2.5"}
    assert [n for n in DESIGN_REFERENCE.findall("design §2.5, design §99") if n not in sections]
