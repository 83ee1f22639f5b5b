"""Judging a candidate value and the name it is assigned to: what is a secret, what only looks
like one (references, placeholders, settings about secrets, hashes, public data).

Pure functions over strings; the rules in `rules.py` call them.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from collections import Counter

# -- names ------------------------------------------------------------------------------------

_SPLIT = re.compile(r"[_.\-$\s]+|(?<=[a-z0-9])(?=[A-Z])")
_SECRET_PARTS = (
    "password", "passwd", "passphrase", "secret", "credential",
    "passwort", "kennwort", "contraseña", "contrasena", "senha", "пароль", "密码", "パスワード",
)  # fmt: skip
_SECRET_WORDS = frozenset(
    "pwd pass pw pat token auth apikey creds bearer jwt accesstoken authtoken refreshtoken "
    "bottoken privatekey secretkey accesskey signingkey masterkey sessionkey encryptionkey "
    "sastoken dsn".split()
)
_KEY_OWNERS = frozenset(
    "api access secret private master signing encryption license app client service account "
    "storage subscription admin auth webhook deploy shared session consumer wifi wpa wpa2 psk "
    "recovery backup aes hmac activation".split()
) | frozenset(  # vendors whose keys are named after them ("the mailjet key: …", issue 28)
    "datadog dd twilio mailgun mailjet mj sendgrid mailchimp postmark sparkpost brevo "
    "sendinblue resend mandrill honeycomb sentry splunk hec relic newrelic dynatrace grafana "
    "discord slack telegram bot stripe github gitlab openai anthropic rails django laravel "
    "flask symfony phoenix nextauth".split()
)
_META = frozenset(
    "ttl expiry expires expire expiration timeout length len min max lifetime interval days "
    "hours minutes seconds secs sec ms age count limit size rotation provider providers type "
    "types backend hasher hashing hash algorithm alg algo mode header headers name names id ids "
    "url uri urls endpoint host hostname port path file filename dir env var field param prefix "
    "suffix format policy strategy enabled enable disabled required version label description "
    "scope scopes kind store manager location source ref hint regex pattern budget usage cost "
    "rate ratio retries attempts method scheme issuer audience claim claims grant flow cache "
    "lookup validator validation strength complexity rules changed updated date created reset "
    "field fields input placeholder help text title message prompt".split()
)


def words(name: str) -> list[str]:
    """`DB_PASSWORD` → [db, password]; `apiKey` → [api, key]; `settings.secret_key` → 3 words."""
    return [w.lower() for w in _SPLIT.split(name) if w]


@functools.lru_cache(maxsize=4096)
def secret_name(name: str) -> bool:
    """A name that holds a secret: a secret word in it, and not a setting *about* the secret
    (`SESSION_TOKEN_TTL`, `AUTH_PROVIDER`, `PASSWORD_MIN_LENGTH`, `api_key_header`)."""
    parts = words(name)
    if not parts or parts[-1] in _META:
        return False
    for i, w in enumerate(parts):
        if any(p in w for p in _SECRET_PARTS) or w in _SECRET_WORDS:
            return True
        if w.endswith("token") and w not in ("tokens",) and len(w) <= 16:
            return True
        if w == "key" and i > 0 and parts[i - 1] in _KEY_OWNERS:
            return True
    return False


_PAIR_NAMES = frozenset("login logins creds credential credentials userpass".split())


def pair_name(name: str) -> bool:
    """A name whose value is `user / password` (`Credentials: admin / …`, `login: a/b`)."""
    parts = words(name)
    return bool(parts) and parts[-1] in _PAIR_NAMES


# -- values -----------------------------------------------------------------------------------

_REFERENCE = re.compile(
    r"""^(?:
        \$[A-Za-z_][\w.]*                  # $VAR $VAR.x
      | \$\{[^}]*\}?                       # ${VAR} ${VAR:-default}
      | \$\{\{.*\}\}?                      # ${{ secrets.X }}
      | \(\(.*                             # ((concourse-var))
      | !!?(?i:vault|secret|ref|sub|getatt|importvalue|env|env_var|include|reference|join
           |select|findinmap|base64|binary|cmd|file|encrypted)(?:\s.*)?   # YAML tags
      | ENC\[.*                            # sops-encrypted value
      | [:@?][A-Za-z_]\w*                  # SQL bind parameters :password @token ?name
      | \$\(.*                             # $(command)
      | \{\{.*\}\}?                        # {{ template }}
      | \{[A-Za-z_][\w.]*\}                # {name} format field
      | %\(?[A-Za-z_]\w*\)?[sd%]?          # %(NAME)s %NAME%
      | @[A-Za-z_]\w*@                     # @VAR@
      | <[^>]*>?                           # <your-key>
      | (?:os\.)?(?:environ|getenv)\b.*    # os.environ[...] getenv(...)
      | process\.env\b.*                   # process.env.X
      | (?:ENV|env)\s*[\[(.].*             # ENV["X"] env("X")
      | System\.getenv.*
    )$""",
    re.VERBOSE,
)
_PLACEHOLDER_WORDS = frozenset(
    "none null nil true false yes no on off required optional empty missing hashed redacted "
    "changeme example sample dummy test todo tbd fixme secret password passwd token string str "
    "int bool any undefined default unset omitted hidden masked value your_token your_password "
    "your_api_key password123 xxx n/a na tba foo bar baz blank same see "
    # mechanisms, not values: `auth: oauth2`, `password_encoder: bcrypt`
    "basic bearer oauth oauth1 oauth2 oidc saml saml2 jwt apikey api_key ldap kerberos ntlm "
    "digest mtls tls iam sso cookie header query hmac rsa ecdsa ed25519 hs256 hs512 rs256 rs512 "
    "es256 plain plaintext md5 sha1 sha256 sha512 argon2 argon2id bcrypt scrypt pbkdf2".split()
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\[.*\]?|x{3,}.*|.*x{6,}.*|\*{3,}.*|.*\.{3}.*|…|(?:your|my|the|insert|enter|put|add)"
    r"[-_ ].*|.*[-_ ]here|.*placeholder.*|redacted.*|<.*)$"
)
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?(?:[smhdw%]|ms|min|days?|hours?|/\d+)?$")
_PATH = re.compile(r"^(?:~|\.{1,2}|[A-Za-z]:)?[/\\](?:[\w.@-]+[/\\])*[\w.@-]*$")
_RELATIVE_PATH = re.compile(r"^\.?[\w-]+(?:/[\w.-]+)+$")
_KEY_FILE = re.compile(
    r"^[\w.-]+\.(?:pem|key|crt|cer|der|p12|pfx|jks|json|txt|env|ya?ml|toml|ini|conf|gpg|asc|pub)$"
)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CALL = re.compile(r"^[A-Za-z_][\w.]*[(\[].*$")
_ATTRIBUTE = re.compile(r"^([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)+$")
_CODE_OBJECTS = frozenset(
    "self this cls config cfg conf settings env os process args opts options params request req "
    "ctx context app secrets vault creds credentials keys props values data user auth client "
    "session st window document module exports import".split()
)


def code_reference(value: str) -> bool:
    """`get_password()`, `settings.DB_PASSWORD`, `self.token`: code that reads a secret, not a
    secret (`ember.canyon11` is a password, not an attribute)."""
    if _CALL.match(value):  # a generated key may start like one: Django's `qe(0pb=10n2j_!zi…`
        return entropy(value) < 4.5
    m = _ATTRIBUTE.match(value)
    if m is None or random_token(value):
        return False
    return m.group(1) in _CODE_OBJECTS or bool(re.search(r"\.[A-Z][A-Z0-9]*_[A-Z0-9_]+$", value))


def reference(value: str) -> bool:
    """A reference to a secret kept elsewhere (`$DB_PASSWORD`, `${{ secrets.X }}`, a template)."""
    return bool(_REFERENCE.match(value.strip()))


def placeholder(value: str) -> bool:
    v = value.strip().strip("\"'`")
    return v.lower() in _PLACEHOLDER_WORDS or bool(_PLACEHOLDER.match(v))


_PATH_SEGMENT = re.compile(r"^(?:[a-z0-9._-]+|[A-Z]?[a-z0-9]+(?:[A-Z][a-z0-9]+)*(?:\.[a-z0-9]+)?)$")


def path(value: str) -> bool:
    """`/run/secrets/db`, `keys/dev.pem`, `~/.ssh/id_ed25519`: where a secret is kept (a
    relative path's parts are lower-case or CamelCase words, not `wJalrXUtnFEMI/K7MDENG`)."""
    if _PATH.match(value) or _KEY_FILE.match(value):
        return True
    if not _RELATIVE_PATH.match(value):
        return False
    return all(_PATH_SEGMENT.match(part) for part in value.split("/") if part)


def _variable(value: str) -> bool:
    """Shaped like a variable name (`api_key`, `SECRET_KEY`, `apiKey`), not a word (`pass`)."""
    if not _IDENTIFIER.match(value) or any(c.isdigit() for c in value):
        return False
    return "_" in value or value.isupper() or value[1:] != value[1:].lower()


def assigned_value(value: str, *, quoted: bool) -> bool:
    """Whether a value assigned to a secret-looking name is itself a secret."""
    v = value.strip()
    if len(v) < 4 or reference(v) or placeholder(v) or _NUMBER.match(v):
        return False
    if not quoted and (path(v) or code_reference(v)):
        return False  # `PWD=/home/me`, `password = settings.DB_PASSWORD`, `token = get()`
    if not quoted and _variable(v) and secret_name(v):
        return False  # `api_key=api_key`, `secret_key: SECRET_KEY`: a variable, not a value
    return not v.startswith("[REDACTED")


_HEX_KEY = re.compile(r"[0-9a-fA-F-]{32,}(?:-[0-9A-Za-z]{2,12})?")
"""Hex keys, UUIDs, and hex keys with a suffix (Mailchimp's `…-us14`)."""
_FINGERPRINT = re.compile(r"[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){3,}")


def fingerprint_in(text: str) -> bool:
    """Hex bytes joined by colons in it: a certificate or key fingerprint (`AB:CD:…`), public
    (a `.pgpass` line `host:5432:db:user:pw` has none)."""
    return _FINGERPRINT.search(text) is not None


def strong(value: str) -> bool:
    """A value standing after a secret's name with only a space between (`password P@ssw0rd!`):
    it must look generated or like a real password (digits and mixed-case letters), not prose
    or a name (`password reset`, `token 500`, `password argon2id`, `token gpt-4o-2024-08-06`)."""
    if random_token(value) or (len(value) >= 32 and _HEX_KEY.fullmatch(value)):
        return True
    digits = any(c.isdigit() for c in value)
    mixed = value != value.lower() and value != value.upper()
    return digits and mixed and not path(value)


def credential_like(value: str) -> bool:
    """In prose ("the password is …", "secret: see the vault"), a value counts only when it has
    a digit or symbol, or mixed case."""
    if re.search(r"[0-9!@#$%^&*+/_=~-]", value):
        return True
    return len(value) >= 8 and value != value.lower() and value != value.upper()


# -- randomness -------------------------------------------------------------------------------


def entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_WORDY = re.compile(r"[A-Za-z][a-z]{3,}|[A-Z]{4,}")
_VOWELS = frozenset("aeiouyAEIOUY")


def wordy(token: str) -> bool:
    """Made of words: most of it in letter runs, with the vowels words have (random letters are
    ~23 % vowels, English words ~40 %)."""
    runs = [m.group() for m in _WORDY.finditer(token)]
    letters = sum(map(len, runs))
    if letters < 0.5 * len(token):
        return False
    vowels = sum(c in _VOWELS for run in runs for c in run)
    return vowels >= 0.3 * letters


def token_body(token: str) -> bool:
    """A prefixed token's characters are generated: digits or both cases, not words."""
    has_digit = any(c.isdigit() for c in token)
    mixed = any(c.isupper() for c in token) and any(c.islower() for c in token)
    return (has_digit or mixed) and not wordy(token)


def random_token(token: str) -> bool:
    """A bare string that looks machine-generated: long, mixed upper/lower/digits (or 40+
    lower-case base32-like characters with many digits), high entropy, and not made of words
    (identifiers, paths) or hex/UUID digests."""
    core = token.rstrip("=")
    if len(core) < 32:
        return False
    if re.fullmatch(r"[0-9a-fA-F-]+", core):
        return False  # git SHAs, UUIDs, hex digests
    upper = sum(c.isupper() for c in core)
    lower = sum(c.islower() for c in core)
    digits = sum(c.isdigit() for c in core)
    n = len(core)
    mixed = upper >= 2 and lower >= 2 and (digits >= 2 or min(upper, lower) >= 0.2 * n)
    one_case = upper == 0 and n >= 40 and digits >= 0.12 * n and core.isalnum()
    if not (mixed or one_case):  # one_case: base32 tokens (Azure DevOps), not URL paths
        return False
    if wordy(core):
        return False  # long identifiers and paths
    return entropy(core) >= 4.0


def decoded_text(token: str) -> str | None:
    """The text a base64 (or base64url) token encodes, when it encodes text (UTF-8, nearly all
    printable); None for random bytes, binary data or what is not base64."""
    core = token.rstrip("=")
    if len(core) < 16:
        return None
    padded = core + "=" * (-len(core) % 4)
    try:
        if "-" in core or "_" in core:
            raw = base64.urlsafe_b64decode(padded)
        else:
            raw = base64.b64decode(padded, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in text)
    return text if text and printable >= 0.97 * len(text) else None
