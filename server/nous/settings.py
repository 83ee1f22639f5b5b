"""The one `Settings` model: defaults, overridable by the CLI, the environment and the client."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_snake

from nous.memory import team_url
from nous.memory.tokens import ENCODINGS


class Settings(BaseModel):
    """Every knob Nous has; the VS Code extension's `nous.*` settings map onto these fields."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    python: str | None = None
    """Interpreter the VS Code extension starts the daemon with (`nous.python`); read by the
    client, recorded here so every client setting is a field."""
    db: Path | None = None
    """Memory database; default `NOUS_DB`, else the per-user data directory."""
    encoding: str = "o200k_base"
    """tiktoken encoding used to count every budget (`o200k_base` or `cl100k_base`)."""
    embedding_model: str = "all-MiniLM-L6-v2"
    """Embedding model name from the model manifest (`nous/models/manifest.json`)."""
    recall_budget: int = Field(default=500, ge=20, le=100_000)
    """Tokens per `nous/recall` answer."""
    startup_budget: int = Field(default=2000, ge=50, le=200_000)
    """Tokens of the startup injection."""
    session_cap: int = Field(default=3000, ge=50, le=1_000_000)
    """Tokens injected per chat session across startup, recalls and expands."""
    max_recalls_per_session: int = Field(default=2, ge=0, le=1000)
    """How many `nous/recall` injections one chat session may make (design §3, seed 004)."""
    agent_max_recalls: int = Field(default=40, ge=0, le=10_000)
    """How many recalls one agent connection (`nous mcp`) may make: an agent runs many tasks
    on one connection (design §3), so its limit is not a chat's two."""
    agent_session_cap: int = Field(default=24_000, ge=50, le=10_000_000)
    """Tokens one agent connection may be given across startup contexts and recalls: room for
    `agent_max_recalls` recalls at the default recall budget and a few startup contexts."""
    model_window_share: float = Field(default=0.15, gt=0, le=1)
    """Largest share of the model's context window (`modelMaxTokens`) a turn's context takes."""

    harvest: bool = True
    """Harvest instruction files, ADRs, procedures and git history when the daemon starts."""
    watch: bool = True
    """Watch the workspace for changes (re-harvest, code-anchor checks)."""
    capture: bool = True
    """Keep each chat turn the daemon sees as an episode and draw session notes from it
    (design §10); off, nothing of a chat is stored."""

    team_store: str | None = None
    """PostgreSQL URL of the team's shared store (design §13), e.g.
    `postgresql://nous@db.internal:5432/nous`; default `NOUS_TEAM_STORE`, else none (local only).
    Never with a password: that comes from `NOUS_TEAM_STORE_PASSWORD` or the OS keyring."""
    team_timeout_ms: int = Field(default=300, ge=10, le=10_000)
    """How long an answer waits for the team store's candidates before it goes local only."""

    @field_validator("team_store")
    @classmethod
    def _no_password(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            return team_url.check_synced(value)
        except team_url.BadTeamUrl as exc:
            raise ValueError(str(exc)) from None

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str) -> str:
        if value not in ENCODINGS:
            raise ValueError(f"must be one of {', '.join(ENCODINGS)}")
        return value


def for_agent(settings: Settings) -> Settings:
    """The settings an agent's connection runs with: a chat session's fields, with the agent's
    recall limit and session cap in their place (one session policy, two sets of numbers)."""
    return settings.model_copy(
        update={
            "max_recalls_per_session": settings.agent_max_recalls,
            "session_cap": settings.agent_session_cap,
        }
    )


def load(options: dict[str, object] | None) -> tuple[Settings, list[str]]:
    """Settings from a dict (e.g. `initializationOptions`); a bad value is reported and its
    default kept, the rest still apply. Returns the settings and one message per problem."""
    settings = Settings()
    problems: list[str] = []
    for key, value in (options or {}).items():
        name = key if key in Settings.model_fields else to_snake(key)
        if name not in Settings.model_fields:
            problems.append(f"unknown setting {key!r} ignored")
            continue
        try:
            setattr(settings, name, value)
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"]
            shown = team_url.redact(str(value)) if name == "team_store" else value
            problems.append(f"setting {key!r} = {shown!r} is invalid ({reason}); default kept")
    return settings, problems
