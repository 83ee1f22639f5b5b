"""Tiny workspaces of our own (design §9, issue 25): a handful of memories each, where a store's own
statistics say nothing and the gate must still admit the rule that answers. Each workspace is a
few files written into a temp folder and a list of questions in the repository set's format, so
`nous eval repos --tiny` runs them through the same harness (`repos.run`)."""

from __future__ import annotations

from pathlib import Path

from nous.evaluation.data import RepoQuestion

WORKSPACES: dict[str, dict[str, str]] = {
    "tiny-checkout": {
        "AGENTS.md": """# Checkout service

Python 3.12 service that takes orders and payments.

Agents MUST NOT:
- commit secrets or .env files
- add a runtime dependency without an ADR
- edit generated migrations in `db/migrations/`; write a new migration instead

## Testing

Run `make test` before every push; it runs pytest with `-m "not integration"`.
""",
        "docs/adr/0001-use-httpx-for-outbound-http.md": """# 1. Use httpx for outbound HTTP

## Status

Accepted

## Context

The payment and tax providers are called from async request handlers. We need timeouts and
connection pooling that work with asyncio.

## Decision

We use httpx with one shared AsyncClient per process for every outbound HTTP call.

## Consequences

Blocking clients are not used inside request handlers.
""",
    },
    "tiny-webapp": {
        "CLAUDE.md": """# Web app conventions

- Never use `any` in TypeScript; use `unknown` and narrow it.
- Do not import from `src/internal/` outside the `core` package.
- Components live in `src/components/`, one component per file, named in PascalCase.
""",
        "CONTRIBUTING.md": """# Contributing

## Running the tests

Install with `pnpm install`, then run `pnpm test` for the unit tests and `pnpm e2e` for the
Playwright suite. Pull requests need one approving review.
""",
    },
    "tiny-gosvc": {
        ".github/copilot-instructions.md": """# Copilot instructions

This repository is a Go 1.22 gRPC service.

## Rules

- Do not add global variables; pass dependencies through constructors.
- Never log request payloads, they may hold personal data.
- Errors are wrapped with `fmt.Errorf("...: %w", err)`.
""",
        "docs/decisions/0001-postgres-for-ledger.md": """---
status: accepted
---
# Store the ledger in PostgreSQL

## Context and Problem Statement

The ledger needs transactions across accounts and a strict audit trail.

## Decision Outcome

Chosen option: PostgreSQL 16, because it gives serializable transactions; DynamoDB was rejected
because multi-item transactions are limited to 100 items.
""",
    },
}

QUESTIONS: list[dict[str, object]] = [
    {"repo": "tiny-checkout", "question": "can I add the requests library to speed up the HTTP client?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["add a runtime dependency without an adr"],
     "note": "prohibition, no shared words"},
    {"repo": "tiny-checkout", "question": "Is it ok if I commit my .env so the others get the same settings?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["commit secrets or .env files"], "note": "prohibition"},
    {"repo": "tiny-checkout", "question": "The generated migration has a typo in a column name, can I just fix it in place?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["edit generated migrations"], "note": "prohibition, paraphrased"},
    {"repo": "tiny-checkout", "question": "Why don't we use a blocking HTTP client for the tax provider?",
     "expected_files": ["docs/adr/0001-use-httpx-for-outbound-http.md"], "key_phrases": ["httpx"],
     "note": "why X over Y"},
    {"repo": "tiny-checkout", "question": "How do I run the tests before pushing?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["make test"], "note": "how-to"},
    {"repo": "tiny-checkout", "question": "What's our on-call rotation for weekends?", "kind": "no-answer"},
    {"repo": "tiny-checkout", "question": "thanks, that did the trick 🙏", "kind": "greeting"},
    {"repo": "tiny-webapp", "question": "Can I type this callback parameter as any to get the build green?",
     "expected_files": ["CLAUDE.md"], "key_phrases": ["never use `any`"], "note": "prohibition"},
    {"repo": "tiny-webapp", "question": "May I pull a helper from src/internal into the settings page?",
     "expected_files": ["CLAUDE.md"], "key_phrases": ["do not import from `src/internal/`"], "note": "prohibition"},
    {"repo": "tiny-webapp", "question": "how do I run the end-to-end tests?",
     "expected_files": ["CONTRIBUTING.md"], "key_phrases": ["pnpm e2e"], "note": "how-to"},
    {"repo": "tiny-webapp", "question": "Which CSS framework do we use?", "kind": "no-answer"},
    {"repo": "tiny-webapp", "question": "hey, good morning!", "kind": "greeting"},
    {"repo": "tiny-gosvc", "question": "Should I log the incoming request body to debug this?",
     "expected_files": [".github/copilot-instructions.md"], "key_phrases": ["never log request payloads"],
     "note": "prohibition, paraphrased"},
    {"repo": "tiny-gosvc", "question": "can I keep the db handle in a package-level var?",
     "expected_files": [".github/copilot-instructions.md"], "key_phrases": ["do not add global variables"],
     "note": "prohibition, no shared words"},
    {"repo": "tiny-gosvc", "question": "Should we move the ledger to DynamoDB?",
     "expected_files": ["docs/decisions/0001-postgres-for-ledger.md"], "key_phrases": ["postgresql 16"],
     "note": "why X over Y, an alternative"},
    {"repo": "tiny-gosvc", "question": "How do we deploy to Kubernetes?", "kind": "no-answer"},
]  # fmt: skip


def write(root: Path) -> list[RepoQuestion]:
    """Write every tiny workspace under `root` (one folder each); return their questions."""
    for name, files in WORKSPACES.items():
        for rel, text in files.items():
            path = root / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    out = []
    count: dict[str, int] = {}
    for q in QUESTIONS:
        repo = str(q["repo"])
        count[repo] = count.get(repo, 0) + 1
        out.append(
            RepoQuestion(
                repo=repo, id=f"{repo}-{count[repo]:02d}", question=str(q["question"]),
                kind=str(q.get("kind", "answerable")),
                expected_files=tuple(q.get("expected_files", ())),  # type: ignore[arg-type]
                key_phrases=tuple(q.get("key_phrases", ())),  # type: ignore[arg-type]
                note=str(q.get("note", "")),
            )
        )  # fmt: skip
    return out
