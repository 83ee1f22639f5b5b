"""Harvesters: memories the workspace already holds (instruction files, ADRs, procedures, git).

Each harvester is a pure function `(relpath, text) -> list[Harvested]`; `sync` in `harvest.run`
writes them, keeps source anchors, and retires what a changed or removed source no longer says.
"""
