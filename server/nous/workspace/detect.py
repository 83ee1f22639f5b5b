"""Languages of a workspace from weighted file counts (vendored and generated trees skipped)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "typescript",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".go": "go", ".rs": "rust",
    ".java": "java", ".kt": "kotlin", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
    ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php", ".swift": "swift",
    ".lua": "lua", ".sh": "shellscript", ".sql": "sql", ".scala": "scala", ".ex": "elixir",
    ".hs": "haskell", ".ml": "ocaml", ".zig": "zig", ".dart": "dart", ".r": "r", ".jl": "julia",
}  # fmt: skip
IGNORED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "env", "__pycache__", "build",
        "dist", "target", "out", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
        "vendor", "third_party", ".next", ".idea", ".vscode-test", "site-packages", ".cache",
    }
)  # fmt: skip
MIN_SHARE = 0.15


def languages(root: Path | str, max_files: int = 20_000, active: str | None = None) -> list[str]:
    """Languages that make up at least 15% of source files (most first); the active
    document's language always leads."""
    counts: Counter[str] = Counter()
    seen = 0
    for _dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS and not d.startswith(".")]
        for name in filenames:
            language = EXTENSIONS.get(Path(name).suffix.lower())
            if language:
                counts[language] += 1
            seen += 1
        if seen >= max_files:
            break
    total = sum(counts.values())
    found = [lang for lang, n in counts.most_common() if total and n / total >= MIN_SHARE]
    if active:
        found = [active, *[lang for lang in found if lang != active]]
    return found
