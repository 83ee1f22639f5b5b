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
    # The five below were written after the three above passed, as a new user's workspaces
    # (other languages, other rule styles: a "Don'ts" heading, a table of prohibitions, a
    # `.cursorrules` file, bold "**Never**" lines, a numbered list). The first three found four
    # faults, since mended: "don't" searched as "don"; a table stored without its delimiter row,
    # and one whose header says "Don't" not read as prohibitions; "I want to …" and "ok to …?"
    # not read as asking whether one may. Two of their questions are still missed in recall
    # (vocabulary: "discount calculation" for "business logic", "screenshot" for "images").
    "tiny-rustcli": {
        "CLAUDE.md": """# ripfind

A command-line search tool written in Rust (edition 2021).

## Don'ts

* Don't use `unwrap()` or `expect()` outside tests; return a `Result` and use `anyhow` context.
* Avoid adding crates to `Cargo.toml` unless a maintainer agreed in the issue first.
* No `unsafe` blocks.

## Workflow

Run `cargo clippy --all-targets -- -D warnings` and `cargo nextest run` before opening a PR.
Release builds use `cargo build --profile dist`.
""",
        "docs/adr/002-regex-engine.md": """# ADR 2: Use the regex crate, not PCRE2

Status: Accepted

## Context
Users asked for look-around support, which the `regex` crate lacks.

## Decision
We keep the `regex` crate as the only engine. PCRE2 bindings need a C toolchain on every
platform and make static musl builds harder.

## Consequences
Look-around is not supported.
""",
    },
    "tiny-javaapi": {
        "AGENTS.md": """# Orders API (Spring Boot 3, Java 21)

## Conventions
- Controllers only map HTTP to service calls; business logic lives in `*Service` classes.
- Use constructor injection; field injection with `@Autowired` is not allowed.

## Prohibited
| Don't | Why |
|---|---|
| Call `System.out.println` | use the SLF4J logger |
| Change a published Flyway migration | Flyway checksums fail on every environment |
| Return JPA entities from controllers | map them to DTOs |

## Build
`./mvnw verify` runs unit and integration tests (Testcontainers needs Docker).
""",
    },
    "tiny-pyml": {
        ".cursorrules": """You are working on a PyTorch training codebase.

- Always set seeds through `utils.seed_everything()`, never call `torch.manual_seed` directly.
- Do not push notebooks with outputs; clear them with `nbstripout`.
- Config lives in Hydra YAML files under `conf/`; never hard-code hyperparameters.
""",
        "CONTRIBUTING.md": """# Contributing

## Tests
Run `pytest -q tests/` ; GPU tests are marked `@pytest.mark.gpu` and skipped on CI.

## Style
We format with `ruff format` and lint with `ruff check`. Type hints are required for public functions.
""",
    },
    "tiny-gomono": {
        "AGENTS.md": """# payments monorepo

Go 1.23 services and a TypeScript admin UI.

**Never** run `go mod tidy` in the root module; each service under `services/` has its own module.
**Always** regenerate protobuf code with `make proto` instead of editing `*.pb.go` files.

### Security
Secrets must never be logged, even at debug level. Card numbers are masked with `mask.PAN()`.
""",
        "services/ledger/AGENTS.md": """# Ledger service

Amounts are `int64` minor units (cents); floating point is forbidden for money.
Integration tests need `docker compose up ledger-db` first.
""",
        "docs/adr/0007-sessions-in-postgres.md": """# 7. Keep sessions in PostgreSQL

* Status: accepted
* Date: 2025-03-02

## Context and Problem Statement
The admin UI needs server-side sessions. Redis and PostgreSQL were considered.

## Considered Options
* Redis
* PostgreSQL

## Decision Outcome
Chosen option: "PostgreSQL", because we already operate it with backups and point-in-time
recovery, and the session load (about 50 writes per second) does not justify another datastore.
""",
    },
    "tiny-docsite": {
        "CONTRIBUTING.md": """# Contributing to the handbook

1. Do not commit generated HTML; `site/` is built by CI.
2. Every page needs a `title` and an `owner` in its front matter.
3. Images go in `assets/img/` and must be under 500 KB.

## Previewing
Run `npm run dev` and open http://localhost:4321.
""",
    },
    "tiny-tsapp": {  # rules in other agents' files: Windsurf, Kiro steering, Claude Code rules
        ".windsurfrules": """You are helping on a Next.js 15 storefront written in TypeScript.

- Use server components by default; add "use client" only for interactive widgets.
- Never call the payments API from the browser; go through `app/api/checkout`.
- Do not disable ESLint rules inline.
""",
        ".kiro/steering/tech.md": """# Tech stack

- Package manager: pnpm. Do not commit a package-lock.json or yarn.lock.
- Dates: use date-fns; moment.js is not allowed.
""",
        ".claude/rules/testing.md": """---
paths: "**/*.ts"
---
# Testing

- Tests live next to the code as `*.test.ts` and run with `pnpm vitest`.
- Never hit the real Stripe API in tests; use the fixtures in `test/stripe/`.
""",
    },
    "tiny-zedtool": {  # Zed's root `.rules`, Amp's AGENT.md, Junie's guidelines
        ".rules": """# Project rules

This is a Python CLI that syncs calendars.

- Never print OAuth tokens, even at debug level.
- Keep the CLI startup under 200 ms: import heavy modules lazily.
""",
        "AGENT.md": """# Working on calsync

## Commands
- `uv run pytest` runs the tests; `uv run ruff check` lints.

## Don'ts
- Don't add new top-level commands without updating `docs/cli.md`.
- Don't use `requests`; the HTTP client is `httpx`.
""",
        ".junie/guidelines.md": """# Guidelines

- Times are stored in UTC and converted only when displayed.
- Do not catch bare `Exception` in sync code; let unexpected errors reach the top-level handler.
""",
    },
    "tiny-phpapp": {  # prohibitions led by a heading, phrased as the thing not to do
        "CLAUDE.md": """# Laravel shop

## Commands
- `composer test` runs PHPUnit; `./vendor/bin/pint` formats.

## Never
- Raw SQL in controllers; use Eloquent query scopes.
- `dd()` or `dump()` left in committed code.

## Conventions
- Money is stored as integer cents, never as floats.
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
    {"repo": "tiny-rustcli", "question": "can I just call unwrap here, it can never fail",
     "expected_files": ["CLAUDE.md"], "key_phrases": ["don't use `unwrap()`"], "note": "prohibition"},
    {"repo": "tiny-rustcli", "question": "I want to pull in the itertools crate for this loop",
     "expected_files": ["CLAUDE.md"], "key_phrases": ["avoid adding crates"],
     "note": "prohibition, an action about to be taken"},
    {"repo": "tiny-rustcli", "question": "Is an unsafe block OK for this hot path?",
     "expected_files": ["CLAUDE.md"], "key_phrases": ["no `unsafe` blocks"], "note": "prohibition"},
    {"repo": "tiny-rustcli", "question": "why don't we switch to PCRE2 so we get lookahead?",
     "expected_files": ["docs/adr/002-regex-engine.md"],
     "key_phrases": ["pcre2 bindings need a c toolchain"], "note": "why not X, an alternative"},
    {"repo": "tiny-rustcli", "question": "what should I run before opening a pull request?",
     "expected_files": ["CLAUDE.md"], "key_phrases": ["cargo clippy"], "note": "how-to"},
    {"repo": "tiny-rustcli", "question": "How do we publish the Homebrew formula?", "kind": "no-answer"},
    {"repo": "tiny-javaapi", "question": "can I use @Autowired on the repository field?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["field injection"], "note": "prohibition"},
    {"repo": "tiny-javaapi", "question": "the V3 migration has a wrong column type, I'll just edit it",
     "expected_files": ["AGENTS.md"], "key_phrases": ["change a published flyway migration"],
     "note": "prohibition in a table, an action about to be taken"},
    {"repo": "tiny-javaapi", "question": "is it fine to return the Order entity straight from the controller?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["return jpa entities from controllers"],
     "note": "prohibition in a table"},
    {"repo": "tiny-javaapi", "question": "where should the discount calculation go?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["business logic lives in"],
     "note": "convention, no shared words"},
    {"repo": "tiny-javaapi", "question": "what's the Kafka topic naming scheme?", "kind": "no-answer"},
    {"repo": "tiny-pyml", "question": "I'll set torch.manual_seed(0) at the top of train.py",
     "expected_files": [".cursorrules"], "key_phrases": ["seed_everything"],
     "note": "prohibition, an action about to be taken"},
    {"repo": "tiny-pyml", "question": "can I hard-code the learning rate for this experiment?",
     "expected_files": [".cursorrules"], "key_phrases": ["never hard-code hyperparameters"],
     "note": "prohibition"},
    {"repo": "tiny-pyml", "question": "ok to commit my notebook with the plots in it?",
     "expected_files": [".cursorrules"], "key_phrases": ["nbstripout"], "note": "prohibition"},
    {"repo": "tiny-pyml", "question": "how do I skip the GPU tests locally?",
     "expected_files": ["CONTRIBUTING.md"], "key_phrases": ["pytest.mark.gpu"], "note": "how-to"},
    {"repo": "tiny-pyml", "question": "which W&B project do runs go to?", "kind": "no-answer"},
    {"repo": "tiny-gomono", "question": "should I run go mod tidy at the repo root to clean up go.sum?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["in the root module"], "note": "prohibition"},
    {"repo": "tiny-gomono", "question": "I changed the proto, can I patch the generated pb.go by hand?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["make proto"], "note": "prohibition, paraphrased"},
    {"repo": "tiny-gomono", "question": "can I add a debug log line that prints the API key?",
     "expected_files": ["AGENTS.md"], "key_phrases": ["secrets must never be logged"],
     "note": "prohibition, paraphrased"},
    {"repo": "tiny-gomono", "question": "can I store the fee as a float64?",
     "expected_files": ["services/ledger/AGENTS.md"], "key_phrases": ["floating point is forbidden"],
     "note": "prohibition, a nested instruction file"},
    {"repo": "tiny-gomono", "question": "why not use Redis for the admin sessions?",
     "expected_files": ["docs/adr/0007-sessions-in-postgres.md"],
     "key_phrases": ["does not justify another datastore"], "note": "why X over Y, an alternative"},
    {"repo": "tiny-gomono", "question": "how do I run the ledger integration tests?",
     "expected_files": ["services/ledger/AGENTS.md"], "key_phrases": ["docker compose up ledger-db"],
     "note": "how-to"},
    {"repo": "tiny-gomono", "question": "what's our SLA for the checkout API?", "kind": "no-answer"},
    {"repo": "tiny-docsite", "question": "can I commit the built site folder so reviewers can see it?",
     "expected_files": ["CONTRIBUTING.md"], "key_phrases": ["do not commit generated html"],
     "note": "prohibition, paraphrased"},
    {"repo": "tiny-docsite", "question": "what's the max size for a screenshot I add?",
     "expected_files": ["CONTRIBUTING.md"], "key_phrases": ["under 500 kb"],
     "note": "convention, no shared words"},
    {"repo": "tiny-docsite", "question": "how do I preview my changes locally?",
     "expected_files": ["CONTRIBUTING.md"], "key_phrases": ["npm run dev"], "note": "how-to"},
    {"repo": "tiny-docsite", "question": "who approves new translations?", "kind": "no-answer"},
    {"repo": "tiny-tsapp", "question": "can I call the payments API directly from the cart component?",
     "expected_files": [".windsurfrules"], "key_phrases": ["never call the payments api from the browser"],
     "note": "prohibition, a Windsurf rules file"},
    {"repo": "tiny-tsapp", "question": "I'll use moment to format the order date",
     "expected_files": [".kiro/steering/tech.md"], "key_phrases": ["moment.js is not allowed"],
     "note": "prohibition, an action about to be taken, Kiro steering"},
    {"repo": "tiny-tsapp", "question": "is it ok to use my real Stripe test key in the checkout tests?",
     "expected_files": [".claude/rules/testing.md"], "key_phrases": ["never hit the real stripe api in tests"],
     "note": "prohibition, a Claude Code rules file"},
    {"repo": "tiny-tsapp", "question": "npm install created a package-lock.json, should I commit it?",
     "expected_files": [".kiro/steering/tech.md"], "key_phrases": ["do not commit a package-lock.json"],
     "note": "prohibition, Kiro steering"},
    {"repo": "tiny-tsapp", "question": "Which CDN serves our product images?", "kind": "no-answer"},
    {"repo": "tiny-zedtool", "question": "can I log the access token while I debug the Google sync?",
     "expected_files": [".rules"], "key_phrases": ["never print oauth tokens"],
     "note": "prohibition, Zed's .rules, paraphrased"},
    {"repo": "tiny-zedtool", "question": "can I use requests for the new CalDAV call?",
     "expected_files": ["AGENT.md"], "key_phrases": ["don't use `requests`"],
     "note": "prohibition, Amp's AGENT.md"},
    {"repo": "tiny-zedtool", "question": "should I wrap the whole sync loop in try/except Exception so it never crashes?",
     "expected_files": [".junie/guidelines.md"], "key_phrases": ["do not catch bare `exception` in sync code"],
     "note": "prohibition, Junie guidelines"},
    {"repo": "tiny-zedtool", "question": "how do I run the tests?",
     "expected_files": ["AGENT.md"], "key_phrases": ["uv run pytest"], "note": "how-to"},
    {"repo": "tiny-zedtool", "question": "hi there!", "kind": "greeting"},
    {"repo": "tiny-phpapp", "question": "can I write a raw SQL query in the OrderController?",
     "expected_files": ["CLAUDE.md"], "key_phrases": ["never: raw sql in controllers"],
     "note": "prohibition led by a heading"},
    {"repo": "tiny-phpapp", "question": "I left a dd() in the job, is that fine to commit?",
     "expected_files": ["CLAUDE.md"], "key_phrases": ["left in committed code"],
     "note": "prohibition led by a heading, an action about to be taken"},
    {"repo": "tiny-phpapp", "question": "how should I store prices?",
     "expected_files": ["CLAUDE.md"], "key_phrases": ["integer cents"], "note": "convention"},
    {"repo": "tiny-phpapp", "question": "what queue driver do we use in production?", "kind": "no-answer"},
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
