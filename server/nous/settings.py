"""The one `Settings` model: every knob, each field declaring where it may come from, read once.

Sources, highest first (docs/configuration.md has the table):

1. a command-line flag (`--db`, `--team-store`, `--encoding`; `nous mcp`'s `--max-recalls` and
   `--session-cap`);
2. the client's `initializationOptions` (the VS Code extension's `nous.*` settings, camelCase;
   the field's snake_case name is accepted too);
3. the environment (`NOUS_DB`, `NOUS_TEAM_STORE`, …; an empty variable counts as unset);
4. the default here.

The workspace's `.nous/config.toml` sets none of these: it overrides the engine's data (the
168 keys of `defaults.toml`: weights, budgets, frames, profiles), per folder, through
`nous.context.config.load`, over the package's `defaults.toml`. A cloned workspace therefore
never chooses the database, the team server or the model files.

`load` is the only reader: entry points (the CLI, `nous serve`, `nous mcp`, `nous eval`, `nous
bench`) take `environment()` once at startup, call `load`, and pass the `Settings` down;
`install` hands the process-wide fields (model folder, checksum stamps, token cache, secret
engine) to the modules that load those files. No other module reads the environment.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic.alias_generators import to_camel, to_snake

from nous import assets
from nous.memory import team_url
from nous.text import tokens
from nous.text.secrets import library
from nous.text.tokens import ENCODINGS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class From:
    """Where a field may come from besides its default: the client (`initializationOptions`,
    under the field's camelCase name), an environment variable, a command-line flag."""

    client: bool = True
    env: str | None = None
    flag: str | None = None


CLIENT = From()
"""A client setting only (`nous.<camelCase>` in VS Code)."""


class Settings(BaseModel):
    """Every knob Nous has; the VS Code extension's `nous.*` settings map onto the client ones."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    python: Annotated[str | None, CLIENT] = None
    """Interpreter the VS Code extension starts the daemon with (`nous.python`); read by the
    client, recorded here so every client setting is a field."""
    db: Annotated[Path | None, From(env="NOUS_DB", flag="--db")] = None
    """Memory database; unset: `<user data dir>/nous/memory.db` (`store.default_path()`)."""
    encoding: Annotated[str, From(flag="--encoding")] = "o200k_base"
    """tiktoken encoding used to count every budget (`o200k_base` or `cl100k_base`)."""
    embedding_model: Annotated[str, CLIENT] = "all-MiniLM-L6-v2"
    """Embedding model name from the model manifest (`nous/models/manifest.json`)."""
    recall_budget: Annotated[int, CLIENT] = Field(default=500, ge=20, le=100_000)
    """Tokens per `nous/recall` answer."""
    startup_budget: Annotated[int, CLIENT] = Field(default=2000, ge=50, le=200_000)
    """Tokens of the startup injection."""
    session_cap: Annotated[int, CLIENT] = Field(default=3000, ge=50, le=1_000_000)
    """Tokens injected per chat session across startup, recalls and expands."""
    max_recalls_per_session: Annotated[int, CLIENT] = Field(default=2, ge=0, le=1000)
    """How many `nous/recall` injections one chat session may make (design §3, seed 004)."""
    agent_max_recalls: Annotated[int, From(flag="--max-recalls")] = Field(
        default=40, ge=0, le=10_000
    )
    """How many recalls one agent connection (`nous mcp`) may make: an agent runs many tasks
    on one connection (design §3), so its limit is not a chat's two."""
    agent_session_cap: Annotated[int, From(flag="--session-cap")] = Field(
        default=24_000, ge=50, le=10_000_000
    )
    """Tokens one agent connection may be given across startup contexts and recalls: room for
    `agent_max_recalls` recalls at the default recall budget and a few startup contexts."""
    model_window_share: Annotated[float, CLIENT] = Field(default=0.15, gt=0, le=1)
    """Largest share of the model's context window (`modelMaxTokens`) a turn's context takes."""

    harvest: Annotated[bool, CLIENT] = True
    """Harvest instruction files, ADRs, procedures and git history when the daemon starts."""
    watch: Annotated[bool, CLIENT] = True
    """Watch the workspace for changes (re-harvest, code-anchor checks)."""
    capture: Annotated[bool, CLIENT] = True
    """Keep each chat turn the daemon sees as an episode and draw session notes from it
    (design §10); off, nothing of a chat is stored."""

    team_store: Annotated[str | None, From(env="NOUS_TEAM_STORE", flag="--team-store")] = None
    """PostgreSQL URL of the team's shared store (design §13), e.g.
    `postgresql://nous@db.internal:5432/nous`; unset: none (local only). Never with a password
    from the client or a flag (they sync, or show in a process list): the password comes from
    `NOUS_TEAM_STORE_PASSWORD` or the OS keyring; only `NOUS_TEAM_STORE` may hold one."""
    team_timeout_ms: Annotated[int, CLIENT] = Field(default=300, ge=10, le=10_000)
    """How long an answer waits for the team store's candidates before it goes local only."""

    # -- the environment only: the process's files and secrets, never a client's to choose ----
    team_store_password: Annotated[
        SecretStr | None, From(client=False, env="NOUS_TEAM_STORE_PASSWORD")
    ] = None
    """The team store's password (else the OS keyring's entry)."""
    models_dir: Annotated[Path | None, From(client=False, env="NOUS_MODELS_DIR")] = None
    """The folder holding the model manifest and files; unset: the package's `nous/models/`."""
    verified_cache: Annotated[Path | None, From(client=False, env="NOUS_VERIFIED_CACHE")] = None
    """The file of checksum stamps (a model file already verified is not hashed again); unset:
    `<user cache dir>/nous/verified.json`."""
    token_cache: Annotated[Path | None, From(client=False, env="TIKTOKEN_CACHE_DIR")] = None
    """Where the token encodings are unpacked for tiktoken; unset: `<user cache dir>/nous/
    tiktoken`."""
    secrets_engine: Annotated[str | None, From(client=False, env="NOUS_SECRETS_ENGINE")] = None
    """`builtin`: Nous's own secret rules alone, without the detection library."""
    eval_data: Annotated[Path | None, From(client=False, env="NOUS_EVAL_DATA")] = None
    """`nous eval` / `nous bench`: the evaluation data folder (`--data` wins); unset:
    `../shared/eval` beside the repository."""
    eval_cache: Annotated[Path | None, From(client=False, env="NOUS_EVAL_CACHE")] = None
    """`nous eval scifact`: where the corpus store is cached (`--cache` wins); unset: the user
    cache dir."""

    @field_validator("team_store")
    @classmethod
    def _no_password(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or not value.strip():
            return None
        try:
            if info.context and info.context.get("source") == "env":
                return team_url.check(value)  # the environment may hold the password
            return team_url.check_synced(value)
        except team_url.BadTeamUrl as exc:
            raise ValueError(str(exc)) from None

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str) -> str:
        if value not in ENCODINGS:
            raise ValueError(f"must be one of {', '.join(ENCODINGS)}")
        return value


def sources(name: str) -> From:
    """The sources a field declares."""
    found = [m for m in Settings.model_fields[name].metadata if isinstance(m, From)]
    return found[0] if found else From(client=False)


ENV: dict[str, str] = {
    name: env for name in Settings.model_fields if (env := sources(name).env) is not None
}
"""Field → the environment variable it is read from."""


class BadFlag(ValueError):
    """A command-line flag with an unusable value: `--flag: reason` (the CLI exits 2)."""


def environment() -> dict[str, str]:
    """The variables Nous reads, copied from the process environment: the one read, made once
    by each entry point at startup."""
    return {env: os.environ[env] for env in ENV.values() if os.environ.get(env)}


def for_agent(settings: Settings) -> Settings:
    """The settings an agent's connection runs with: a chat session's fields, with the agent's
    recall limit and session cap in their place (one session policy, two sets of numbers)."""
    return settings.model_copy(
        update={
            "max_recalls_per_session": settings.agent_max_recalls,
            "session_cap": settings.agent_session_cap,
        }
    )


def _checked(name: str, value: object, source: str) -> tuple[Any, str | None]:
    """`value` validated as field `name` (from `source`): the value, or the reason it is not."""
    try:
        model = Settings.model_validate({name: value}, context={"source": source})
    except ValidationError as exc:
        return None, str(exc.errors()[0]["msg"])
    return getattr(model, name), None


def _shown(name: str, value: object) -> object:
    if name == "team_store":
        return team_url.redact(str(value))
    return "***" if name == "team_store_password" else value


def load(
    options: Mapping[str, object] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, object] | None = None,
) -> tuple[Settings, list[str]]:
    """Settings from their sources, highest first: `flags` (by field name; `None` is unset),
    `options` (a client's `initializationOptions`), `env` (`environment()`), the defaults.

    A bad option or variable is reported (one message each) and the next source down stands;
    a bad flag raises `BadFlag`. Returns the settings and the problems."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for field, env_name in ENV.items():
        raw = (env or {}).get(env_name, "")
        if not raw:
            continue
        checked, reason = _checked(field, raw, "env")
        if reason is None:
            values[field] = checked
        else:
            problems.append(f"{env_name}={_shown(field, raw)!r} is invalid ({reason}); ignored")
    for key, option in (options or {}).items():
        name = key if key in Settings.model_fields else to_snake(key)
        if name not in Settings.model_fields:
            problems.append(f"unknown setting {key!r} ignored")
            continue
        if not sources(name).client:
            problems.append(f"setting {key!r} is not a client's to set (environment only); ignored")
            continue
        checked, reason = _checked(name, option, "client")
        if reason is None:
            values[name] = checked
        else:
            shown = _shown(name, option)
            problems.append(f"setting {key!r} = {shown!r} is invalid ({reason}); default kept")
    for name, value in (flags or {}).items():
        if value is None:
            continue
        checked, reason = _checked(name, value, "flag")
        if reason is not None:
            flag = sources(name).flag or f"--{name.replace('_', '-')}"
            raise BadFlag(f"{flag}: {reason}")
        values[name] = checked
    return Settings().model_copy(update=values), problems


def client_key(name: str) -> str:
    """The `initializationOptions` key of a field (`recallBudget`)."""
    return to_camel(name)


def install(settings: Settings) -> None:
    """Hand the process-wide fields to the modules that load the model, the token encodings
    and the secret rules (the entry point's one call, before any of them loads)."""
    assets.configure(settings.models_dir, settings.verified_cache)
    tokens.configure(settings.token_cache)
    library.configure(builtin=(settings.secrets_engine or "").strip().lower() == "builtin")
