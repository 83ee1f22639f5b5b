"""A deterministic synthetic memory set that reads like a real team's memories.

Every memory is a kind template (decision, fact, procedure, episode, …) followed by detail
sentences until it reaches a target length of 20–300 tokens, filled from a software-engineering
vocabulary: components, technologies, files in the scope's language, functions, errors, commands,
people, dates and numbers. Scopes mix this project, its languages, universal, two languages the
workspace does not use and four other projects.

Each memory `i` is drawn from two seeded generators: the *shape* (kind, template, topic words,
length) from `(seed, i mod pool)` and the *identifiers* (scope, file names, functions, people,
numbers, dates, metadata) from `(seed, i)`. Below `pool` both are the same index, so every memory is
its own; above it, memory `i` is a variant of memory `i mod pool`: same skeleton and topic, new
identifiers. That is what lets a large set reuse the real embeddings of a smaller pool honestly.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from nous.memory.model import Draft
from nous.text.tokens import TokenCounter

PROJECT = "orderflow"
"""The bench workspace's project (its pyproject name); its languages are python and typescript."""
WORKSPACE_LANGUAGES = ("python", "typescript")
MIN_TOKENS, MAX_TOKENS = 20, 300

# fmt: off
SCOPES: tuple[tuple[str, int], ...] = (
    (f"project:{PROJECT}", 46), ("language:python", 14), ("language:typescript", 7),
    ("universal", 11), ("language:go", 4), ("language:rust", 2), ("project:billing-api", 6),
    ("project:mobile-checkout", 4), ("project:data-pipeline", 4), ("project:infra-platform", 2),
)
KINDS: tuple[tuple[str, int], ...] = (
    ("episode", 26), ("fact", 20), ("decision", 12), ("procedure", 9), ("convention", 9),
    ("note", 7), ("constraint", 6), ("preference", 6), ("correction", 5),
)
STATUSES: dict[str, tuple[tuple[str, int], ...]] = {
    "decision": (
        ("recorded", 45), ("reviewed", 35), ("pending", 8), ("superseded", 8), ("inactive", 4),
    ),
    "episode": (("active", 80), ("summarized", 10), ("archived", 8), ("inactive", 2)),
    "procedure": (
        ("active", 60), ("effective", 25), ("ineffective", 7), ("retired", 5), ("inactive", 3),
    ),
    "constraint": (
        ("created", 30), ("active", 55), ("escalated", 5), ("retired", 7), ("inactive", 3),
    ),
    "fact": (("new", 50), ("confirmed", 35), ("core", 8), ("superseded", 4), ("inactive", 3)),
}
OUTCOMES = (("success", 40), ("partial", 15), ("pending", 15), ("failure", 10), (None, 20))

# -- vocabulary -----------------------------------------------------------------------------------

AREAS = (
    "payments", "orders", "inventory", "auth", "search", "notifications", "billing", "shipping",
    "reporting", "admin", "api", "workers", "storage", "cache", "pricing", "catalog", "refunds",
    "accounts", "audit", "exports",
)
MODULES = (
    "webhooks", "handlers", "models", "service", "client", "tasks", "schemas", "repository",
    "views", "routes", "retry", "export", "importer", "scheduler", "validators", "serializers",
    "middleware", "metrics", "events", "queries", "adapters", "settings", "utils", "limits",
)
COMPONENTS = (
    "payment webhook handler", "order service", "inventory sync job", "auth middleware",
    "rate limiter", "search indexer", "email notifier", "checkout API", "session cache",
    "feature-flag client", "CSV export", "admin dashboard", "retry queue", "migration runner",
    "metrics exporter", "PDF invoice renderer", "refund worker", "price calculator",
    "shipping label service", "audit log", "webhook signature check", "nightly reconciliation",
    "product catalog importer", "tax calculator", "fraud scoring call", "GraphQL gateway",
    "order state machine", "idempotency layer", "background scheduler", "currency converter",
    "customer portal", "password reset flow", "OAuth callback", "bulk discount engine",
    "warehouse API client", "report builder", "event outbox", "health check endpoint",
    "config loader", "connection pool", "file upload service", "image thumbnailer",
    "stock reservation", "cart merge logic", "coupon validator", "SLA monitor",
)
ROLES: dict[str, tuple[str, ...]] = {
    "store": (
        "PostgreSQL", "Redis", "DynamoDB", "Elasticsearch", "ClickHouse", "S3", "MinIO", "SQLite",
        "MySQL", "OpenSearch",
    ),
    "queue": (
        "Celery", "Kafka", "RabbitMQ", "SQS", "Temporal", "Dramatiq", "Redis Streams", "NATS",
        "Google Pub/Sub",
    ),
    "infra": (
        "Kubernetes", "Helm", "Argo CD", "Terraform", "nginx", "Cloudflare", "Vault",
        "GitHub Actions", "Docker", "pgbouncer", "Envoy",
    ),
    "tool": (
        "pytest", "mypy", "ruff", "Hypothesis", "tox", "pre-commit", "Playwright", "Vitest",
        "ESLint", "Sentry", "Prometheus", "Grafana", "OpenTelemetry", "structlog",
    ),
    "lib": (
        "FastAPI", "SQLAlchemy", "Alembic", "pydantic", "httpx", "aiohttp", "Jinja2", "WeasyPrint",
        "boto3", "React", "Zod", "TanStack Query", "Next.js", "Stripe SDK",
    ),
}
TECH = tuple(t for group in ROLES.values() for t in group)
LANG_TECH = {
    "python": (
        "pytest", "mypy", "ruff", "pydantic", "SQLAlchemy", "Celery", "FastAPI", "httpx",
    ),
    "typescript": (
        "React", "Vite", "Zod", "Vitest", "ESLint", "pnpm", "Next.js", "Playwright",
    ),
    "go": (
        "golangci-lint", "sqlc", "chi", "testify", "pgx", "zap", "cobra", "goreleaser",
    ),
    "rust": (
        "tokio", "serde", "sqlx", "axum", "clippy", "tracing", "anyhow", "criterion",
    ),
}
REASONS = (
    "it keeps the write path inside one transaction",
    "the team already runs it in production for two other services",
    "it removed a whole class of race conditions we kept hitting",
    "the vendor SDK was unmaintained and pinned an old urllib3",
    "latency at p95 was the bottleneck, not throughput",
    "it is the only option our security review approved",
    "it lets us replay failed events without touching the database",
    "the hosted alternative cost four times as much at our volume",
    "local development must work offline on a laptop",
    "it gives us exactly-once semantics with the outbox table",
    "on-call wanted fewer moving parts at three in the morning",
    "it makes the tests deterministic instead of sleeping",
    "migrations have to stay reversible for the blue-green deploy",
    "the old approach leaked connections under load",
    "the compliance audit requires an append-only record",
    "it halves the cold start of the container",
)
ERRORS = (
    "IntegrityError: duplicate key value violates unique constraint",
    "TimeoutError after 30 s waiting for a connection from the pool",
    "ConnectionResetError: [Errno 104] Connection reset by peer", "OOMKilled (exit code 137)",
    "deadlock detected while updating the orders table",
    "KeyError: 'currency' in the webhook payload",
    "SSL: CERTIFICATE_VERIFY_FAILED against the staging gateway",
    "429 Too Many Requests from the payment provider",
    "ModuleNotFoundError: No module named 'orderflow.settings_local'",
    "TypeError: Cannot read properties of undefined (reading 'items')",
    "flaky assertion on the order total rounding", "UnicodeDecodeError reading the supplier CSV",
    "psycopg.errors.SerializationFailure under concurrent checkouts",
    "celery worker lost heartbeat and requeued the task twice",
    "a 502 from nginx while gunicorn workers were restarting",
    "ValidationError: field required (shipping_address.postcode)",
    "signature mismatch on the incoming webhook",
    "disk full on the build runner during the Docker layer export",
)
CAUSES = (
    "a missing index on orders.customer_id", "the retry decorator retrying non-idempotent calls",
    "a timezone-naive datetime compared with an aware one", "two workers claiming the same job",
    "the connection pool being sized below the worker count", "a stale cache entry after deploy",
    "float arithmetic on money instead of Decimal", "the webhook secret rotated without a reload",
    "an N+1 query in the serializer", "the test relying on dict ordering from an old fixture",
    "an unbounded in-memory buffer in the export", "the health check hitting the database",
    "a feature flag defaulting to on in staging", "a dependency bump changing the default timeout",
)
FIXES = (
    "adding the index in a concurrent migration", "making the handler idempotent on event id",
    "moving the lock to SELECT … FOR UPDATE SKIP LOCKED", "switching money fields to Decimal",
    "sizing the pool from the worker count at startup", "invalidating the cache key on deploy",
    "streaming the export in chunks of 5,000 rows", "pinning the timeout explicitly in settings",
    "prefetching the related rows in one query", "freezing time in the test with a fixture",
    "reloading the secret from Vault on rotation", "retrying only on connection errors",
)
TASKS = (
    "run the test suite locally", "add a database migration", "release a new version",
    "rotate the webhook secret", "replay failed payment events", "rebuild the search index",
    "seed a local database", "profile a slow endpoint", "add a feature flag", "deploy to staging",
    "bump a pinned dependency", "debug a flaky test", "reindex the catalog",
    "restore a database snapshot", "onboard a new service to tracing",
)
COMMANDS = (
    "make test", "alembic upgrade head", "docker compose up -d postgres redis",
    "pytest -x -k webhook", "pnpm run build", "scripts/release --dry-run", "kubectl rollout status",
    "terraform plan -out plan.bin", "ruff check . && mypy", "python -m orderflow.tools.replay",
    "make seed", "pnpm test -- --run", "helm upgrade --install orderflow ./chart",
    "git tag -s v$(cat VERSION)", "python -m orderflow.search.rebuild --batch 500",
)
STYLES = (
    "small pull requests with one concern each", "explicit type hints on every public function",
    "dataclasses over dicts for internal records", "early returns over nested conditionals",
    "table-driven tests", "f-strings over format calls", "async handlers only at the edges",
    "named arguments for booleans", "short commit subjects in the imperative",
    "logging with structured key-value pairs", "docstrings that say why, not what",
    "one assertion per behaviour in tests", "feature flags over long-lived branches",
)
PEOPLE = (
    "Ana", "Ben", "Chen", "Dana", "Eli", "Farah", "Goran", "Hana", "Ivo", "Jonas", "Kemal", "Lena",
    "Marta", "Noor", "Oskar", "Priya", "Quentin", "Rosa", "Sami", "Tomasz", "Uma", "Viktor", "Wen",
    "Yusuf", "Zofia",
)
ENVS = (
    "staging", "production", "CI", "the preview environment", "a developer laptop",
)
VERBS = (
    "load", "save", "sync", "build", "parse", "validate", "fetch", "apply", "render", "reserve",
    "release", "compute", "merge", "refresh", "publish", "claim", "resolve",
)
NOUNS = (
    "order", "invoice", "refund", "cart", "token", "webhook", "batch", "report", "price", "payload",
    "session", "stock", "customer", "event", "label", "coupon", "export",
)
TABLES = (
    "orders", "order_items", "payments", "refunds", "customers", "stock_levels", "webhook_events",
    "audit_entries", "invoices", "coupons", "shipments", "outbox",
)
WORDS = (
    "the", "a", "new", "old", "shared", "internal", "legacy", "async", "batched",
)

DETAILS = (
    "The change touched {file} and {file2}.",
    "{person} reviewed it and asked for a follow-up ticket ({ticket}).",
    "Benchmarks on {env} showed p95 going from {ms} ms to {ms2} ms.",
    "See {func}() in {file} for the entry point.",
    "It runs behind the {flag} feature flag until the next release.",
    "The {table} table has about {n},000 rows in production, so batch it.",
    "We measured it with {tool} during the load test on {date}.",
    "The {component} shares the same {store} connection settings.",
    "This came up again in the retro on {date}.",
    "The alert threshold is {pct}% error rate over five minutes.",
    "Keep the timeout at {n} seconds; lower values caused retry storms.",
    "Discussed in PR #{pr} with {person} and {person2}.",
    "The dashboard for it lives in Grafana under {area}/{module}.",
    "Nothing else reads {table}.{column} directly; go through {func}().",
    "{lib} {version} is the minimum version that works here.", "Local runs need `{cmd}` first.",
    "The tests for it are in tests/{area}/test_{module}.py.",
    "Rollback is safe: the migration only adds {table}.{column}.",
    "Ownership moved to {person} after the reorg.",
    "Expect about {n} events per second at peak on Black Friday.",
    "Messages go through {queue} with a dead-letter queue after {n} attempts.",
    "In {env} the {component} is deployed with {infra}.",
    "The error budget for the {component} was burned twice in {month}.",
    "Customers noticed: support opened {n} tickets before it was fixed.",
    "{person} wrote a short postmortem; the action items are tracked in {ticket}.",
    "A canary on {pct}% of traffic caught it before the full rollout.",
    "The fix needs a backfill of {table} for rows since {date}.",
    "{func}() is the only place that should construct a {noun}.",
    "Cache entries for it expire after {n} minutes.",
    "The contract with the {area} team is documented in docs/{area}/contract.md.",
    "Integration tests mock {lib} at the HTTP boundary, not deeper.",
    "We saw the same pattern in the {component} last quarter.",
)

TEMPLATES: dict[str, tuple[str, ...]] = {
    "decision": (
        "We decided to use {store} for the {component} instead of {store2} because {reason}.",
        "Decision: the {component} moves from {queue2} to {queue}; {reason}. Agreed with {person} on {date}.",  # noqa: E501
        "We chose to keep the {component} synchronous for now because {reason}. Revisit when traffic doubles.",  # noqa: E501
        "After comparing {lib} and {lib2}, we picked {lib} for the {component}: {reason}.",
        "ADR: store {noun} state in {table} with a version column; {reason}.",
        "We will not adopt {infra2} for the {component}; {reason}. {person} owns the follow-up.",
        "Decided to run {tool} in CI on every pull request for the {component}; {reason}.",
    ),
    "fact": (
        "The {component} talks to {store} through {func}() in {file}.",
        "The {component} runs as {n} replicas in production behind {infra}.",
        "{table}.{column} is nullable for rows created before {date}.",
        "The {component} retries {n} times with exponential backoff starting at {ms} ms.",
        "Staging uses a shared {store} instance; production has one per region.",
        "The {component} emits the {metric} metric to {tool} every {n} seconds.",
        "Webhooks from the payment provider arrive at /api/{area}/{module} and are verified in {func}().",  # noqa: E501
        "The {component} is owned by {person}; the runbook is in docs/runbooks/{area}.md.",
        "Jobs of the {component} are consumed from {queue} by {n} workers.",
    ),
    "procedure": (
        "To {task}: run `{cmd}`, then `{cmd2}`, and check the output of {func}().",
        "How to {task}: 1) `{cmd}` 2) wait for the {component} to settle 3) `{cmd2}`.",
        "Steps to {task}: start {store} with `{cmd}`; apply the fixtures; run `{cmd2}`; open {file} to verify.",  # noqa: E501
        "To {task} safely, pause the {component} first, run `{cmd}`, then resume it.",
    ),
    "episode": (
        "On {date} the {component} failed on {env} with {error}; root cause was {cause}. Fixed by {fix} (PR #{pr}).",  # noqa: E501
        "Incident {date}: {error} in the {component}. {person} traced it to {cause} and shipped {fix}.",  # noqa: E501
        "{person} spent a day on {error} in {file}; it turned out to be {cause}.",
        "Deploy on {date} rolled back: {error} from the {component}. Cause: {cause}.",
        "Load test on {date}: the {component} held {n} requests per second before {error} appeared.",  # noqa: E501
        "Migrated the {component} to {store} on {date}; no downtime, {n} million rows backfilled.",
        "Pairing session with {person}: we fixed {error} in the {component} by {fix}.",
    ),
    "constraint": (
        "Never call {lib2} directly from the {component}; go through {func}().",
        "Do not write to {table} outside a transaction: {reason}.",
        "Never log full {noun} payloads; they contain customer data.",
        "The {component} must stay under {ms} ms at p95; the checkout SLA depends on it.",
        "No new dependencies in the {component} without a security review.",
        "Money is always Decimal with two places; never float in {area} code.",
        "Never run `{cmd}` against production without a second person on the call.",
    ),
    "preference": (
        "{person} prefers {style}.",
        "Prefer {lib} over {lib2} for new {area} code.",
        "The team prefers {style} in the {component}.",
        "Prefer explicit {noun} objects over passing raw dicts around in {area}.",
        "For the {component}, prefer {tool} output in CI logs over local screenshots.",
    ),
    "correction": (
        "Correction: the {component} does not use {queue2} any more; it moved to {queue} on {date}.",  # noqa: E501
        "Correction: {func}() lives in {file}, not in the old utils module.",
        "Earlier note was wrong: the {component} retries {n} times, not forever.",
        "Correction: staging and production use different {store} clusters.",
    ),
    "convention": (
        "Name {area} event handlers on_<event>, e.g. {func}().",
        "All {area} settings live in {file} and are read once at startup.",
        "Tests for the {component} use factories from tests/factories/{module}.py, never raw SQL.",
        "Migrations are named YYYYMMDD_<verb>_<table>, e.g. {date_compact}_add_{table}.",
        "Public functions in {area} return typed results, never None on error; raise instead.",
        "Every {component} change needs a changelog entry under 'Unreleased'.",
        "Use {style} in {area} code.",
    ),
    "note": (
        "Next session: finish {func}() in {file}; tests for the {component} still fail.",
        "Left off on how to {task}; {person} is blocked until the {component} is merged.",
        "TODO: decide between {store} and {store2} for the {component} before the sprint ends.",
        "Implementation note: {func}() is half-migrated to {lib}; the old path is behind {flag}.",
    ),
}

QUERY_TEMPLATES: dict[str, tuple[str, ...]] = {
    "question": (
        "why do we use {store} for the {component}?",
        "how do I {task}?",
        "what did we decide about the {component}?",
        "where is the {component} configured?",
        "what is the convention for naming {area} handlers?",
        "how many retries does the {component} do?",
        "who owns the {component}?",
        "what happened last time the {component} failed on {env}?",
    ),
    "task": (
        "add retry with backoff to the {component} in {file}",
        "refactor {func} in {file} to use {lib}",
        "write tests for the {component}",
        "migrate the {component} from {queue2} to {queue}",
        "implement pagination for the {area} export endpoint",
        "add a migration that adds {table}.{column}",
    ),
    "debug": (
        "the {component} fails with {error} on {env}, any idea?",
        "{error} in {file} after the last deploy",
        "flaky test in the {component}: {error}",
        "getting {error} when I run {cmd}",
    ),
    "decision": (
        "should we move the {component} from {store2} to {store}?",
        "{lib} vs {lib2} for the {component}, which one?",
        "should we replace {queue2} with {queue} for the {component}?",
        "should we split the {component} into its own service?",
    ),
    "conversation": ("thanks, that worked", "ok, let's continue with the {component}", "hi"),
    "creative": ("brainstorm names for the new {component}",),
}
QUERY_FRAMES = (
    ("question", 35),
    ("task", 25),
    ("debug", 20),
    ("decision", 12),
    ("conversation", 5),
    ("creative", 3),
)
RECALL_TEMPLATES = (
    "{component} retries", "how to {task}", "{error}", "decision on {store} for the {component}",
    "{table} table", "{component} incidents on {env}", "conventions for {area} code",
)

# fmt: on

T = TypeVar("T")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_SHAPE_SLOTS = frozenset(
    {
        "component",
        "reason",
        "error",
        "cause",
        "fix",
        "task",
        "cmd",
        "cmd2",
        "style",
        "area",
        "noun",
        "metric",
        "table",
        *ROLES,
        *(f"{role}2" for role in ROLES),
    }
)
"""Topic words: drawn from the shape generator (a variant keeps them); every other slot is an
identifier drawn from the identifier generator (a variant changes it)."""


def _pick(rng: random.Random, weighted: tuple[tuple[T, int], ...]) -> T:
    values = [v for v, _ in weighted]
    weights = [w for _, w in weighted]
    return rng.choices(values, weights)[0]


def _language_of(scope: str, rng: random.Random) -> str:
    if scope.startswith("language:"):
        return scope.split(":", 1)[1]
    if scope == "project:mobile-checkout":
        return "typescript"
    if scope == "project:infra-platform":
        return "go"
    if scope == "project:data-pipeline":
        return "python"
    return "typescript" if rng.random() < 0.25 else "python"


def _file(rng: random.Random, language: str, area: str) -> str:
    module = rng.choice(MODULES)
    if language == "typescript":
        return f"web/src/{area}/{module.capitalize()}.tsx"
    if language == "go":
        return f"internal/{area}/{module}.go"
    if language == "rust":
        return f"crates/{area}/src/{module}.rs"
    return f"src/{PROJECT}/{area}/{module}.py"


def _func(rng: random.Random, language: str) -> str:
    verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
    if language == "typescript" or language == "go":
        return f"{verb}{noun.capitalize()}"
    return f"{verb}_{noun}"


def _date(rng: random.Random) -> str:
    return f"{rng.choice((2024, 2025))}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


class Filler:
    """Fills `{slot}`s: topic slots from `shape` (memoised per text), identifiers from `ident`."""

    def __init__(self, shape: random.Random, ident: random.Random, language: str) -> None:
        self.shape = shape
        self.ident = ident
        self.language = language
        self.topic: dict[str, str] = {}

    def _role(self, role: str, rng: random.Random) -> str:
        own = [t for t in LANG_TECH.get(self.language, ()) if role in ("tool", "lib")]
        if own and rng.random() < 0.4:
            return rng.choice(own)
        return rng.choice(ROLES[role])

    def topic_value(self, name: str) -> str:
        if name not in self.topic:
            rng = self.shape
            role = name.rstrip("2")
            if role in ROLES:
                value = self._role(role, rng)
                other = self.topic.get(role if name != role else f"{role}2")
                while value == other:
                    value = rng.choice(ROLES[role])
                self.topic[name] = value
                return value
            makers: dict[str, Callable[[], str]] = {
                "component": lambda: rng.choice(COMPONENTS),
                "reason": lambda: rng.choice(REASONS),
                "error": lambda: rng.choice(ERRORS),
                "cause": lambda: rng.choice(CAUSES),
                "fix": lambda: rng.choice(FIXES),
                "task": lambda: rng.choice(TASKS),
                "cmd": lambda: rng.choice(COMMANDS),
                "cmd2": lambda: rng.choice(COMMANDS),
                "style": lambda: rng.choice(STYLES),
                "area": lambda: rng.choice(AREAS),
                "noun": lambda: rng.choice(NOUNS),
                "metric": lambda: f"{rng.choice(AREAS)}_{rng.choice(NOUNS)}_total",
                "table": lambda: rng.choice(TABLES),
            }
            self.topic[name] = makers[name]()
        return self.topic[name]

    def ident_value(self, name: str) -> str:
        rng = self.ident
        area = self.topic_value("area")
        base = name.rstrip("0123456789")
        if base == "file":
            return _file(rng, self.language, area if rng.random() < 0.6 else rng.choice(AREAS))
        if base == "func":
            return _func(rng, self.language)
        if base == "person":
            return rng.choice(PEOPLE)
        if base == "date":
            return _date(rng)
        if base == "date_compact":
            return _date(rng).replace("-", "")
        if base == "ms":
            return str(rng.choice((12, 35, 80, 120, 250, 400, 900, 1500)) + rng.randint(0, 9))
        if base == "pct":
            return str(rng.choice((1, 2, 5, 10)))
        if base == "n":
            return str(rng.randint(2, 60))
        if base == "pr":
            return str(rng.randint(100, 4999))
        if base == "ticket":
            return f"{PROJECT[:3].upper()}-{rng.randint(100, 2999)}"
        if base == "flag":
            return f"{area}_{rng.choice(VERBS)}_v{rng.randint(2, 4)}"
        if base == "version":
            return f"{rng.randint(1, 5)}.{rng.randint(0, 20)}"
        if base == "month":
            return rng.choice(("January", "March", "May", "July", "September", "November"))
        if base == "env":
            return rng.choice(ENVS)
        if base == "module":
            return rng.choice(MODULES)
        if base == "column":
            return f"{rng.choice(NOUNS)}_{rng.choice(('id', 'at', 'status', 'total', 'ref'))}"
        raise KeyError(name)

    def fill(self, template: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in _SHAPE_SLOTS:
                return self.topic_value(name)
            return self.ident_value(name)

        text = _PLACEHOLDER.sub(one, template)
        if template.startswith(("{func", "{table")):
            return text
        return text[0].upper() + text[1:]


@dataclass(frozen=True)
class Spec:
    """One memory to write, with the metadata the store cannot take from a draft."""

    index: int
    base: int
    """The pool index whose shape (and, for bulk, real embedding) this memory shares."""
    draft: Draft
    age_days: float
    tokens: int


class Corpus:
    """The deterministic memory set: `spec(i)` is memory `i` of any size."""

    def __init__(self, counter: TokenCounter, seed: int = 7, pool: int = 10_000) -> None:
        self.counter = counter
        self.seed = seed
        self.pool = pool

    def spec(self, index: int) -> Spec:
        base = index % self.pool
        shape = random.Random(f"{self.seed}:shape:{base}")
        ident = random.Random(f"{self.seed}:ident:{index}")
        kind = _pick(shape, KINDS)
        target = self._target(shape)
        scope = _pick(ident, SCOPES)
        filler = Filler(shape, ident, _language_of(scope, ident))
        sentences = [filler.fill(shape.choice(TEMPLATES[kind]))]
        total = self.counter.count(sentences[0])
        details = list(DETAILS)
        shape.shuffle(details)
        for template in details:
            if total >= target:
                break
            sentence = filler.fill(template)
            total += self.counter.count(sentence) + 1
            sentences.append(sentence)
        # A variant names its own ticket, so it is never the same text as another memory.
        suffix = f" (seen again in {PROJECT[:3].upper()}-{index})" if index >= self.pool else ""
        text = " ".join(sentences) + suffix
        tokens = self.counter.count(text)
        while tokens > MAX_TOKENS and len(sentences) > 1:
            sentences.pop()
            text = " ".join(sentences) + suffix
            tokens = self.counter.count(text)
        if tokens > MAX_TOKENS:
            text = self.counter.truncate(text, MAX_TOKENS)
            tokens = self.counter.count(text)
        return Spec(
            index, base, self._draft(kind, scope, text, ident, filler), self._age(ident), tokens
        )

    def specs(self, start: int, stop: int) -> Iterator[Spec]:
        for i in range(start, stop):
            yield self.spec(i)

    @staticmethod
    def _target(rng: random.Random) -> int:
        r = rng.random()
        if r < 0.45:
            return rng.randint(MIN_TOKENS, 60)
        if r < 0.8:
            return rng.randint(60, 140)
        return rng.randint(140, MAX_TOKENS - 20)

    @staticmethod
    def _age(rng: random.Random) -> float:
        return 540.0 * rng.random() ** 2

    @staticmethod
    def _draft(kind: str, scope: str, text: str, rng: random.Random, filler: Filler) -> Draft:
        family = kind if kind in STATUSES else "fact"
        status = _pick(rng, STATUSES[family])
        outcome = _pick(rng, OUTCOMES) if kind in ("decision", "procedure") else None
        importance = round(
            rng.uniform(0.7, 1.0)
            if kind == "constraint"
            else min(1.0, rng.betavariate(2, 3) + 0.1),
            2,
        )
        tags = sorted(
            {
                filler.topic_value("area"),
                *rng.sample(
                    [
                        filler.topic_value("noun"),
                        filler.topic_value("lib").lower().replace(" ", "-"),
                    ],
                    rng.randint(0, 2),
                ),
            }
        )
        if kind == "note":
            tags.append(rng.choice(("impl", "dec", "next")))
        if kind == "episode" and rng.random() < 0.4:
            source = f"git:{rng.getrandbits(160):040x}"
        elif kind == "decision" and rng.random() < 0.3:
            number = rng.randint(1, 60)
            source = f"file:docs/adr/{number:04d}-{filler.topic_value('area')}.md#adr-{number}"
        else:
            source = rng.choice(("chat", "chat", "manual", "import"))
        return Draft(
            kind=kind,
            content=text,
            scope=scope,
            tags=tags,
            confidence=round(rng.uniform(0.6, 1.0), 2),
            importance=importance,
            outcome=outcome,
            source=source,
            status=status,
        )


@dataclass(frozen=True)
class Query:
    text: str
    frame: str
    active_file: str | None


def queries(count: int, seed: int = 11) -> list[Query]:
    """`count` chat inputs over the same vocabulary, mixed frames, deterministic."""
    rng = random.Random(f"{seed}:queries")
    out = []
    for _ in range(count):
        frame = _pick(rng, QUERY_FRAMES)
        language = "typescript" if rng.random() < 0.25 else "python"
        filler = Filler(rng, rng, language)
        text = filler.fill(rng.choice(QUERY_TEMPLATES[frame]))
        text = text[0].lower() + text[1:] if frame != "debug" else text
        active = _file(rng, language, rng.choice(AREAS)) if rng.random() < 0.7 else None
        out.append(Query(text, frame, active))
    return out


def recall_queries(count: int, seed: int = 13) -> list[str]:
    """`count` short `nous/recall` queries, deterministic."""
    rng = random.Random(f"{seed}:recall")
    out = []
    for _ in range(count):
        filler = Filler(rng, rng, "python")
        out.append(filler.fill(rng.choice(RECALL_TEMPLATES)))
    return out


def active_files(count: int, seed: int = 17) -> list[str]:
    """Files a startup request might come from (the startup query is built from them)."""
    rng = random.Random(f"{seed}:files")
    return [_file(rng, rng.choice(WORKSPACE_LANGUAGES), rng.choice(AREAS)) for _ in range(count)]


def make_workspace(root: Path) -> Path:
    """The bench workspace: project `orderflow`, python with some typescript."""
    ws = root / PROJECT
    (ws / "src" / PROJECT).mkdir(parents=True, exist_ok=True)
    (ws / "web" / "src").mkdir(parents=True, exist_ok=True)
    (ws / "pyproject.toml").write_text(f'[project]\nname = "{PROJECT}"\n')
    for name in ("app", "models", "payments", "orders", "inventory", "auth", "workers", "api"):
        (ws / "src" / PROJECT / f"{name}.py").write_text(f'"""{name}."""\n')
    for name in ("App", "Checkout"):
        (ws / "web" / "src" / f"{name}.tsx").write_text("export {}\n")
    return ws
