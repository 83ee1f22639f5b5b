"""Nous's own detection rules: what the library's rule set does not catch in chat memories.

The library (Betterleaks rules) is built for repositories: several vendor formats are reported
only next to a vendor keyword or paired with a second credential, and generic values are judged
by entropy alone. Memories are short pasted text, so these rules read context instead (each one
measured on the corpus in `tests/security/`, see docs/reliability.md):

- assignments to secret-looking names in env, YAML, JSON, TOML, code, XML and HTTP headers,
  unless the value is a reference (`${DB_PASSWORD}`), a placeholder or a number, or the name is
  a setting *about* a secret (`SESSION_TOKEN_TTL`, `AUTH_PROVIDER`);
- passwords in URLs (`redis://:pass@host`) and query strings (Azure SAS `sig=`);
- command lines (`curl -u user:pass`, `mysql -ppass`, `--password x`, `sshpass -p`, `docker
  login -p`), `Authorization: Basic/Bearer …` and `.netrc` entries;
- whole private key blocks (PEM, OpenSSH, PGP including its last line);
- token shapes the library reports only with context or not at all (`shapes.py`);
- bare machine-generated strings, away from where hashes, public keys and data URIs live.

Every pattern starts with a literal, is gated by a substring check, or runs only inside long
words, so ordinary text costs a few substring searches.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from nous.text.secrets import data, shapes, values

Span = tuple[str, int, int]


_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*[A-Z0-9]+)-----")
_PUBLIC_LABELS = ("PUBLIC KEY", "CERTIFICATE", "CERTIFICATE REQUEST", "PUBLIC KEY BLOCK")
# The context patterns below run on the lower-cased text (same offsets), except the command-line
# flags, where case matters (`mysql -P3306` is a port, `-p` a password).
_URL_PASSWORD = re.compile(r"://[^\s/:@'\"`<>]*:([^\s/@'\"`<>]+)@[\w\[]")
_QUERY_SECRET = re.compile(
    r"[?&;](?:sig|signature|x-amz-signature|password|passwd|pwd|api[_-]?key|apikey"
    r"|access[_-]?token|auth[_-]?token|token|secret|client[_-]?secret|key)=([^&\s'\"`#<>]{6,})"
)
_CURL_USER = re.compile(r"curl\b[^\n]*?\s(?:-u|--user)(?:\s+|=)?([\"']?)[^\s:\"']*:([^\s\"']+)\1")
_MYSQL = re.compile(
    r"(?i:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb)\b[^\n]*?\s-p(['\"]?)([^\s'\"]+)\1"
)
_FLAG = re.compile(
    r"--(?:password|passwd|pass|pwd|token|api-key|apikey|secret|client-secret|auth-token"
    r"|access-token)(?:=|\s+)(['\"]?)([^\s'\"-][^\s'\"]*)\1"
)
_SHORT_FLAG = re.compile(
    r"(?:sshpass\s+-p|(?:docker|podman|buildah|skopeo|helm\s+registry)\s+login\b[^\n]*?\s-p"
    r"|redis-cli\b[^\n]*?\s-a|htpasswd\s+-\w*b\w*\s+\S+\s+\S+)\s*(['\"]?)([^\s'\"]+)\1"
)
_AUTH_HEADER = re.compile(
    r"authorization[\"']?\s*[:=]\s*[\"'`]?"
    r"(?:basic|bearer|token|digest|apikey|api-key|sso-key|ssws)\s+([a-z0-9+/=._~:-]{8,})"
)
_NETRC = re.compile(
    r"\b(?:machine\s+\S+|default)\s+login\s+\S+(?:\s+account\s+\S+)?\s+password\s+(\S+)"
)
_NETRC_LINE = re.compile(  # without its login: only at a line start, and credential-like
    r"(?m)^[ \t]*(?:machine\s+\S+|default)(?:\s+account\s+\S+)?\s+password\s+(\S+)"
)  # "a machine learning password generator" is prose
_PGPASS = re.compile(r"(?m)(?<!\S)[\w.*-]+:(?:\d{1,5}|\*):[^:\s]+:[^:\s]+:(\S+)[ \t]*$")
_TERRAFORM = re.compile(r'variable\s+"([^"]+)"\s*\{[^}]*?\bdefault\s*=\s*"([^"\n]{4,4096})"')
_XML_SETTING = re.compile(
    r"""(?:key|name)\s*=\s*["']([^"']{2,80})["']\s+value\s*=\s*["']([^"']{4,300})["']"""
)
_KEYWORD = re.compile(
    r"pass|pwd|secret|token|key|auth|cred|login|dsn|jwt|bearer|pat|kennwort|contrase|senha|пароль|密码"
    r"|パスワード"
)
_SEPARATOR = re.compile(
    r"""(?:\\?["'\]]|\*)*[ \t]*(?:[:=,|]|->|(?:is|was|holds|contains)[ \t]|(?:for|to|of|on)[ \t])"""
)
_AFTER_NAME = re.compile(
    r"""(\\?["']\]?|\*\*)?[ \t]*(:=|=>|==?|:|,|\||->|[ \t]+(?:is|was|to|holds|contains)[ \t]+)"""
    r"""[ \t]*(?:\*\*|__)?[ \t]*"""
    r"""(?:\\?(["'`])([^"'`\n\\]{1,4096}?)\\?\3|([^\s"'`,;)}\]<>|]{1,4096}))"""
)
_SPACED = re.compile(  # a value with a digit in it (prose after a secret word has none)
    r"[ \t]+(?=[^\s\"'`,;)}\]<>|]*\d)([^\s\"'`,;)}\]<>|]{6,200})(?=[\s\"'`,;)}\]<>|]|$)"
)
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[ \t]+\Z")
_PAIR_REST = re.compile(r"[ \t]*/[ \t]*([^\s\"'`,;)}\]<>|]{4,200})")
_PROSE_LINK = re.compile(r"[ \t]+(?:for|to|of|on)[ \t]+[\w .@/-]{1,40}?(?=[ \t]*(?::|is |was |=))")
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{32,256}={0,2}(?![A-Za-z0-9+/=_-])")
_CID = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}")


def scan(text: str) -> list[Span]:
    """Every span these rules find (possibly overlapping)."""
    low = text.lower()
    if len(low) != len(text):  # a few non-ASCII letters lower-case to two characters
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    spans = list(_blocks(text))
    long_words = _long_words(text)
    spans += shapes.scan(text, long_words)
    spans += _contexts(text, low)
    spans += _assignments(text, low)
    spans += _random_strings(text, low, long_words, [(s, e) for _, s, e in spans])
    return spans


def _long_words(text: str) -> list[tuple[int, int]]:
    """Spans of the whitespace-separated words of 20+ characters: every token shape and every
    random string lives inside one."""
    return [m.span() for m in _LONG_WORD.finditer(text)]


_LONG_WORD = re.compile(r"\S{20,}")
r"""`str.split`'s words of 20+ characters (`\s` is the same Unicode whitespace)."""


def _blocks(text: str) -> Iterator[Span]:
    """Whole private key blocks, BEGIN line to END line (or to the end of a cut-off text)."""
    if "PRIVATE KEY" in text:
        for start, end, label in _armored(text):
            if "PRIVATE KEY" in label:
                yield ("private-key", start, end)


def _armored(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, label) of each `-----BEGIN label-----` … `-----END …-----` block; one pass
    (a block without its END runs to the end of the text)."""
    pos = 0
    while (m := _BEGIN.search(text, pos)) is not None:
        end = text.find("-----END", m.end())
        if end == -1:
            yield m.start(), len(text), m.group(1)
            return
        close = text.find("-----", end + 8)
        pos = len(text) if close == -1 else close + 5
        yield m.start(), pos, m.group(1)


@dataclass(frozen=True)
class _How:
    """How `_contexts` reads a pattern's match."""

    cased: bool = False
    """Run on the text as written (else on the lower-cased text: same offsets)."""
    quote: int | None = None
    """The group holding the value's opening quote, if the pattern has one."""
    prose: bool = False
    """An unquoted value counts only when it looks like an assigned credential."""
    share: bool = True
    """False: a match in a document share link (its `?key=` names the document) is not one."""


_PLAIN = _How()


def _contexts(text: str, low: str) -> list[Span]:
    found: list[Span] = []

    def add(kind: str, pattern: re.Pattern[str], group: int, how: _How = _PLAIN) -> None:
        for m in pattern.finditer(text if how.cased else low):
            value = text[m.start(group) : m.end(group)]
            if values.reference(value) or values.placeholder(value):
                continue
            if not how.share and data.share_url_at(text, m.start()):
                continue  # a document link's `?key=` names the document
            quoted = how.quote is not None and bool(m.group(how.quote))
            if (
                how.prose
                and not quoted
                and not (
                    values.assigned_value(value, quoted=False) and values.credential_like(value)
                )
            ):
                continue  # "run it with --password to be prompted"
            found.append((kind, m.start(group), m.end(group)))

    if "://" in low:
        add("url-password", _URL_PASSWORD, 1)
    if "=" in low:
        add("url-secret-parameter", _QUERY_SECRET, 1, _How(share=False))
    if "curl" in low:
        add("curl-user-password", _CURL_USER, 2)
    if "mysql" in low or "mariadb" in low:
        add("mysql-password", _MYSQL, 2, _How(cased=True))
    if "--" in low:
        add("password-flag", _FLAG, 2, _How(quote=1, prose=True))
    if " -p" in text or " -a" in text or "htpasswd" in text:
        add("password-flag", _SHORT_FLAG, 2, _How(cased=True))
    if "authorization" in low:
        add("authorization-header", _AUTH_HEADER, 1)
    if "password" in low and ("machine" in low or "default" in low):
        add("netrc-password", _NETRC, 1)
        add("netrc-password", _NETRC_LINE, 1, _How(prose=True))
    if text.count(":") >= 4:
        for m in _PGPASS.finditer(text):  # not a fingerprint's `AB:CD:EF:…`
            if values.fingerprint_in(m.group()):
                continue
            value = m.group(1)
            if values.reference(value) or values.placeholder(value):
                continue
            if values.assigned_value(value, quoted=False) and values.credential_like(value):
                found.append(("pgpass-password", m.start(1), m.end(1)))
    if "variable" in low and "default" in low:
        for m in _TERRAFORM.finditer(text):
            if values.secret_name(m.group(1)) and values.assigned_value(m.group(2), quoted=True):
                found.append(("assigned-secret", m.start(2), m.end(2)))
    if "value" in low:
        for m in _XML_SETTING.finditer(low):
            name, value = text[m.start(1) : m.end(1)], text[m.start(2) : m.end(2)]
            if values.secret_name(name) and values.assigned_value(value, quoted=True):
                found.append(("assigned-secret", m.start(2), m.end(2)))
    return found


def _assignments(text: str, low: str) -> list[Span]:
    """`NAME = value` (and `:`, `:=`, `=>`, JSON `"name": "value"`, headers, `define('NAME',
    'value')`, a table row `| NAME | value |`, prose `the NAME for staging is value`) where NAME
    holds a secret word; found from the keywords out, so ordinary text costs one search."""
    found: list[Span] = []
    done = 0
    n = len(text)
    for k in _KEYWORD.finditer(low):
        if k.start() < done:
            continue
        start, end = k.start(), k.end()
        while end < n and _name_char(text[end]) and end - k.end() < 100:
            end += 1
        done = end
        spaced = None if _SEPARATOR.match(text, end) else _SPACED.match(text, end)
        if spaced is None and not _SEPARATOR.match(text, end):
            continue  # no `=`, `:`, `is`, … nor a value after the name: not an assignment
        while start > 0 and _name_char(text[start - 1]) and k.start() - start < 100:
            start -= 1
        if text[start] == "$" or text[max(0, start - 2) : start] == "${":
            continue  # `$DB_PASSWORD`, `${DB_PASSWORD:-postgres}`: a reference
        name = text[start:end].strip(".-$")
        before = _WORD_BEFORE.search(text, max(0, start - 30), start)
        if before and values.secret_name(f"{before.group(1)}_{name}"):
            name = f"{before.group(1)}_{name}"  # "the wifi key is …", "api key: …"
        secret, paired = values.secret_name(name), values.pair_name(name)
        if not (secret or paired):
            continue
        if spaced is not None:  # `password P@ssw0rd!`, `aws_secret_access_key wJalr…`
            value = spaced.group(1)
            if not secret:
                continue
            if values.assigned_value(value, quoted=False) and values.strong(value):
                found.append(("assigned-secret", spaced.start(1), spaced.end(1)))
                done = spaced.end()
            continue
        at, linked = end, _PROSE_LINK.match(text, end)
        if linked:
            at = linked.end()  # "password for staging: …", "token for the API is …"
        m = _AFTER_NAME.match(text, at)
        if m is None:
            continue
        sep, quoted = m.group(2).strip(), m.group(4) is not None
        if sep == "," and not (quoted and start > 0 and text[start - 1] in "\"'"):
            continue  # only `define('NAME', 'value')`-style pairs
        group = 4 if quoted else 5
        end = m.end(group) if quoted else _word_end(text, m.end(group))
        value = text[m.start(group) : end]
        pair = _PAIR_REST.match(text, m.end()) if not quoted else None
        if pair and values.assigned_value(pair.group(1), quoted=False):
            found.append(("assigned-secret", pair.start(1), pair.end(1)))  # "admin / Hunter2024"
            done = pair.end()
            continue
        user, slash, password = value.partition("/")
        if paired and slash and user and "/" not in password and _looks_set(password):
            at = m.start(group) + len(user) + 1  # "creds: deploy/Marble1997"
            found.append(("assigned-secret", at, at + len(password)))
            done = m.end()
            continue
        if not secret or not values.assigned_value(value, quoted=quoted):
            continue  # `login: admin` is a user name
        eol = text.find("\n", m.end())
        rest = text[m.end() : eol if eol != -1 else n].strip()
        prose = (
            bool(linked)
            or sep in ("is", "was", "to", "holds", "contains", "|", "->")
            or (sep == ":" and not quoted and rest)
        )
        if prose and not values.credential_like(value):
            continue  # "the password is required", "secret: see the team vault"
        found.append(("assigned-secret", m.start(group), end))
        done = max(m.end(), end)
    return found + _table_columns(text, low)


def _word_end(text: str, end: int) -> int:
    """An unquoted value stops at `)`, `]` or `}` (`connect(password=x)`), unless more of it
    follows in the same word: Django's generated keys hold brackets (`edw7w=sm)jz(0!f…`)."""
    if end >= len(text) or text[end] not in ")]}":
        return end
    stop = end
    while stop < len(text) and not text[stop].isspace():
        stop += 1
    tail = text[end:stop].rstrip(")]},;.:'\"`")
    return end + len(tail) if len(tail) > 1 else end


def _name_char(c: str) -> bool:
    return c.isalnum() or c in "_.-$"


def _looks_set(password: str) -> bool:
    """The password half of `user/password`: a value with a digit in it, not a file."""
    return any(c.isdigit() for c in password) and values.assigned_value(password, quoted=False)


def _table_columns(text: str, low: str) -> list[Span]:
    """A Markdown table whose header names a secret column (`| user | password |`): that
    column's cells."""
    found: list[Span] = []
    if "|" not in text or not ("pass" in low or "secret" in low or "token" in low or "key" in low):
        return found
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for i, line in enumerate(lines[:-1]):
        if not line.lstrip().startswith("|") or (i > 0 and lines[i - 1].lstrip().startswith("|")):
            continue  # a table starts here
        if set(lines[i + 1].strip()) <= set("|:- "):
            rows = i + 2
        elif lines[i + 1].lstrip().startswith("|"):
            rows = i + 1  # rendered without its delimiter row (the harvest's records)
        else:
            continue
        header = [c.strip() for c in line.strip().strip("|").split("|")]
        secret_cols = {j for j, c in enumerate(header) if values.secret_name(c)}
        for k in range(rows, len(lines)):
            row = lines[k]
            if not row.lstrip().startswith("|"):
                break
            pos = offsets[k] + row.index("|") + 1
            for j, cell in enumerate(row.strip().strip("|").split("|")):
                value = cell.strip()
                if (
                    j in secret_cols
                    and values.assigned_value(value, quoted=False)
                    and values.credential_like(value)
                ):
                    at = text.index(value, pos)
                    found.append(("table-secret", at, at + len(value)))
                pos += len(cell) + 1
    return found


def _random_strings(
    text: str, low: str, words: list[tuple[int, int]], known: list[tuple[int, int]]
) -> list[Span]:
    """Bare machine-generated strings, except where hashes, public keys and data live."""
    found: list[Span] = []
    covered = _Intervals(known)
    public: _Intervals | None = None
    block = (0, 0, False)  # the last base64 block judged: (first, end, is data); one per block
    for lo, hi in words:
        if hi - lo < 32:
            continue
        for m in _CANDIDATE.finditer(text, lo, hi):
            token = m.group()
            if token.startswith(data.FILE_MAGIC) or _CID.fullmatch(token):
                continue
            if covered.contains(m.start(), m.end()) or not values.random_token(token):
                continue
            line_start = low.rfind("\n", 0, m.start()) + 1
            if data.DATA_MARKERS.search(low, max(line_start, m.start() - 48), m.start() + 8):
                continue
            if data.share_url_at(text, m.start()):
                continue
            if not block[0] <= m.start() < block[1]:
                first, end = data.block(text, m.start(), m.end())
                block = (first, end, data.encoded_data(text, low, first, end, scan))
            if block[2]:
                continue
            if public is None:
                public = _Intervals(
                    [(s, e) for s, e, label in _armored(text) if label in _PUBLIC_LABELS]
                )
            if public.contains(m.start(), m.start() + 1):
                continue
            found.append(("high-entropy", m.start(), m.end()))
    return found


class _Intervals:
    """Merged, sorted intervals: is [start, end) inside one of them? (bisect, not a scan)."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        merged: list[list[int]] = []
        for s, e in sorted(spans):
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        self.starts = [s for s, _ in merged]
        self.ends = [e for _, e in merged]

    def contains(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self.starts, start) - 1
        return i >= 0 and end <= self.ends[i]
