"""Where the team store is (design §13): its connection URL and, apart from it, its password.

Pure functions, no driver import. The URL comes from the `teamStore` setting, the `--team-store`
flag or `NOUS_TEAM_STORE`; the password never sits in settings that sync (VS Code settings, the
command line a process list shows): it comes from `NOUS_TEAM_STORE_PASSWORD` or the OS keyring
(`keyring`, when installed, service `nous-team-store`, user `<user>@<host>/<database>`).
"""

from __future__ import annotations

import os
from urllib.parse import SplitResult, urlsplit, urlunsplit

URL_ENV = "NOUS_TEAM_STORE"
PASSWORD_ENV = "NOUS_TEAM_STORE_PASSWORD"
KEYRING_SERVICE = "nous-team-store"
SCHEMES = ("postgresql", "postgres")


class BadTeamUrl(ValueError):
    """A team store URL that cannot be used (named, never echoed with its password)."""


def _split(url: str) -> SplitResult:
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError as exc:
        raise BadTeamUrl(f"not a URL: {exc}") from exc
    if parts.scheme not in SCHEMES:
        raise BadTeamUrl("must start with postgresql://")
    return parts


def has_password(url: str) -> bool:
    """Whether the URL carries a non-empty password (user:secret@host) or `password=` option."""
    parts = _split(url)
    return bool(parts.password) or "password=" in parts.query.lower()


def check_synced(url: str) -> str:
    """The URL as a synced setting or a command-line flag may hold it: a password there is
    refused (`BadTeamUrl` telling where it goes instead)."""
    if has_password(url):
        raise BadTeamUrl(
            f"holds a password: remove it from the URL ({redact(url)}) and set {PASSWORD_ENV} "
            "or store it in the OS keyring (service 'nous-team-store')"
        )
    return url.strip()


def redact(url: str) -> str:
    """The URL with any password replaced by `***` (what status and logs show)."""
    try:
        parts = _split(url)
    except BadTeamUrl:
        return "<invalid URL>"
    netloc = parts.netloc
    if parts.password:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    query = "&".join(
        "password=***" if q.lower().startswith("password=") else q
        for q in parts.query.split("&")
        if q
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def keyring_user(url: str) -> str:
    """Who the keyring entry is for: `<user>@<host>/<database>`."""
    parts = _split(url)
    return f"{parts.username or ''}@{parts.hostname or ''}/{parts.path.lstrip('/')}"


def resolve(setting: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The URL in force: the setting (or flag), else `NOUS_TEAM_STORE`; `None` when neither."""
    env = os.environ if environ is None else environ
    url = (setting or "").strip() or env.get(URL_ENV, "").strip()
    if not url:
        return None
    _split(url)
    return url


def password(url: str, environ: dict[str, str] | None = None) -> str | None:
    """The password to connect with: the URL's own (from the environment only), else
    `NOUS_TEAM_STORE_PASSWORD`, else the OS keyring's entry, else none."""
    env = os.environ if environ is None else environ
    if _split(url).password:
        return None  # psycopg reads it from the URL
    if env.get(PASSWORD_ENV):
        return env[PASSWORD_ENV]
    try:
        import keyring
    except ImportError:
        return None
    try:
        found = keyring.get_password(KEYRING_SERVICE, keyring_user(url))
    except Exception:  # a keyring without a backend raises its own errors
        return None
    return str(found) if found else None
