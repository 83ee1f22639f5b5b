"""The secrets corpus: true secrets over many formats and harmless look-alikes, all generated.

Every body is drawn from the alphabet and length its format uses, with one fixed seed, and set in
a realistic context (a sentence, an env/YAML/JSON line, a shell command, a Markdown code block).
Each secret names the substrings that must disappear (`values`); a look-alike must come back
untouched. Pure standard library: `scripts/secrets-corpus` runs it against other scanners too.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import string
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass

SEED = 20261124
PER_FORMAT = 4
PER_CLASS = 5

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BASE32 = string.ascii_uppercase + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
WORDS = (
    "orbit maple copper violet harbor lantern pepper falcon meadow cobalt quartz tundra saffron "
    "glacier ember willow canyon velvet thistle anchor marble juniper cricket sparrow"
).split()
USERS = ["deploy", "admin", "app", "ci-bot", "svc_backup", "root", "jenkins", "grafana"]
HOSTS = ["db.internal", "10.0.3.17", "prod-db-01.corp.example", "cache.svc.cluster.local"]


@dataclass(frozen=True)
class Secret:
    """A text holding a secret; every string in `values` must be fully redacted."""

    format: str
    text: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class LookAlike:
    """A harmless text that looks like it might hold a secret; it must come back unchanged."""

    kind: str
    text: str


@dataclass(frozen=True)
class Corpus:
    secrets: list[Secret]
    lookalikes: list[LookAlike]


class Gen:
    """Random bodies from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def s(self, n: int, alphabet: str = ALNUM) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def b64(self, nbytes: int, *, pad: bool = True, url: bool = False) -> str:
        raw = self.r.randbytes(nbytes)
        out = (base64.urlsafe_b64encode if url else base64.b64encode)(raw).decode()
        return out if pad else out.rstrip("=")

    def hex(self, n: int) -> str:
        return self.s(n, HEX)

    def pick(self, items: list[str] | tuple[str, ...]) -> str:
        return self.r.choice(items)

    def length(self, *choices: int) -> int:
        return self.r.choice(choices)

    def int(self, lo: int, hi: int) -> int:
        return self.r.randint(lo, hi)

    def password(self) -> str:
        """A human password: words, digits, a symbol — low entropy, no token shape."""
        shapes = [
            lambda: self.pick(WORDS) + str(self.int(10, 9999)),
            lambda: self.pick(WORDS).capitalize() + str(self.int(1990, 2030)) + self.pick("!#$%"),
            lambda: self.pick(WORDS) + self.pick("_-.") + self.pick(WORDS) + str(self.int(1, 99)),
            lambda: self.s(self.int(10, 18), ALNUM + "!#%^*"),
        ]
        return self.r.choice(shapes)()

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.r.getrandbits(128), version=4))


def base62(n: int, width: int) -> str:
    digits = string.digits + string.ascii_letters
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = digits[d] + out
    return out.rjust(width, "0")


def checksummed(g: Gen, prefix: str) -> str:
    """GitHub/npm style: 30 random base62 characters and a base62 CRC32 of them."""
    body = g.s(30)
    return prefix + body + base62(binascii.crc32(body.encode()), 6)


def wrap64(text: str) -> list[str]:
    return [text[i : i + 64] for i in range(0, len(text), 64)]


def ssh_string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


# -- contexts for a bare token ----------------------------------------------------------------

Context = Callable[[str, str], str]
TOKEN_CONTEXTS: list[Context] = [
    lambda v, name: f"I pasted {v} into the deploy settings yesterday, rotate it after the demo.",
    lambda v, name: f"export {name}={v}",
    lambda v, name: f"{name.lower()}: {v}",
    lambda v, name: json.dumps({"service": "billing", name.lower(): v}),
    lambda v, name: (
        f"Call the API like this:\n\n```bash\ncurl -H 'Authorization: Bearer {v}' "
        "https://api.example.com/v1/me\n```"
    ),
    lambda v, name: f'{name}="{v}"  # from the team vault',
    lambda v, name: f'client = Client(api_key="{v}", timeout=30)',
    lambda v, name: f"- The CI token is `{v}` (set in the pipeline settings)",
]


def token(name: str, env: str, make: Callable[[Gen], str]) -> Callable[[Gen, int], Secret]:
    def build(g: Gen, i: int) -> Secret:
        v = make(g)
        return Secret(name, TOKEN_CONTEXTS[(i * 3 + len(name)) % len(TOKEN_CONTEXTS)](v, env), (v,))

    return build


def contextual(
    name: str, make: Callable[[Gen], str], shapes: list[Callable[[str], str]]
) -> Callable[[Gen, int], Secret]:
    """A secret only recognisable from where it stands (an assignment, a header, a flag)."""

    def build(g: Gen, i: int) -> Secret:
        v = make(g)
        return Secret(name, shapes[i % len(shapes)](v), (v,))

    return build


# -- formats with their own shape -------------------------------------------------------------


def _jwt(g: Gen) -> str:
    header = {"alg": g.pick(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    claims = {"sub": g.uuid(), "iat": g.int(1_600_000_000, 1_800_000_000), "role": "admin"}
    enc = [
        base64.urlsafe_b64encode(json.dumps(p, separators=(",", ":")).encode()).decode()
        for p in (header, claims)
    ]
    return ".".join([*[e.rstrip("=") for e in enc], g.b64(32, pad=False, url=True)])


def _pem_lines(g: Gen, lead: str, nbytes: int) -> list[str]:
    return wrap64(lead + g.b64(nbytes))


def _private_key(kind: str, lead: str, nbytes: int) -> Callable[[Gen, int], Secret]:
    def build(g: Gen, i: int) -> Secret:
        lines = _pem_lines(g, lead, nbytes)
        label = f"{kind} PRIVATE KEY".strip()
        block = "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])
        shapes = [
            f"The deploy key:\n\n```\n{block}\n```",
            f"{block}\n",
            f"paste this into ~/.ssh/id_deploy:\n{block}",
            json.dumps({"type": "service_account", "private_key": block + "\n"}),
        ]
        return Secret(f"private-key-{kind.lower() or 'pkcs8'}", shapes[i % 4], tuple(lines))

    return build


def _pgp(g: Gen, i: int) -> Secret:
    lines = wrap64("lQOYBG" + g.b64(600))
    check = "=" + g.s(4, B64)
    block = "\n".join(
        ["-----BEGIN PGP PRIVATE KEY BLOCK-----", "", *lines, check]
        + ["-----END PGP PRIVATE KEY BLOCK-----"]
    )
    shapes = [f"```\n{block}\n```", f"exported with gpg --export-secret-keys:\n{block}"]
    return Secret("pgp-private-key", shapes[i % 2], (*lines, check))


def _azure_sas(g: Gen, i: int) -> Secret:
    sig = g.b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    acct = g.pick(["prodlogs", "assetsstore", "backups01"])
    url = (
        f"https://{acct}.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=o"
        f"&sp=r&se=2026-12-31T23:59:59Z&st=2026-01-01T00:00:00Z&spr=https&sig={sig}"
    )
    shapes = [f"download it from {url}", f'AZURE_EXPORT_URL="{url}"', f"curl -o r.csv '{url}'"]
    return Secret("azure-sas-signature", shapes[i % 3], (sig,))


def _azure_conn(g: Gen, i: int) -> Secret:
    key = g.b64(64)
    conn = (
        f"DefaultEndpointsProtocol=https;AccountName=prodlogs{i};AccountKey={key};"
        "EndpointSuffix=core.windows.net"
    )
    shapes = [f'AZURE_STORAGE_CONNECTION_STRING="{conn}"', f"connectionString: {conn}"]
    return Secret("azure-storage-account-key", shapes[i % 2], (key,))


def _discord(g: Gen) -> str:
    user_id = str(g.int(10**17, 10**19 - 1)).encode()
    return (
        base64.b64encode(user_id).decode().rstrip("=")
        + "."
        + g.s(6, B64URL)
        + "."
        + g.s(g.length(27, 38), B64URL)
    )


def _url_password(scheme: str, name: str, port: int, user: bool = True) -> Callable[[Gen, int], Secret]:
    def build(g: Gen, i: int) -> Secret:
        pw = g.password().replace("#", "").replace("%", "").replace("^", "")
        who = g.pick(USERS) if user else ""
        url = f"{scheme}://{who}:{pw}@{g.pick(HOSTS)}:{port}/{g.pick(['app', 'orders', '0'])}"
        shapes = [
            f"DATABASE_URL={url}",
            f"connect with `{url}`",
            f'url: "{url}"',
            f"the staging box uses {url} since Tuesday",
        ]
        return Secret(name, shapes[i % 4], (pw,))

    return build


def _basic_auth(g: Gen, i: int) -> Secret:
    cred = base64.b64encode(f"{g.pick(USERS)}:{g.password()}".encode()).decode()
    shapes = [
        f"Authorization: Basic {cred}",
        f'curl -H "Authorization: Basic {cred}" https://registry.example.com/v2/_catalog',
        f"headers = {{'Authorization': 'Basic {cred}'}}",
    ]
    return Secret("http-basic-auth", shapes[i % 3], (cred,))


def _docker_auth(g: Gen, i: int) -> Secret:
    cred = base64.b64encode(f"{g.pick(USERS)}:{g.password()}".encode()).decode()
    text = json.dumps({"auths": {"registry.example.com": {"auth": cred}}}, indent=2)
    return Secret("docker-config-auth", text, (cred,))


def _netrc(g: Gen, i: int) -> Secret:
    pw = g.password()
    host = g.pick(["api.heroku.com", "github.com", "ftp.example.org", "git.corp.example"])
    user = g.pick(USERS)
    shapes = [
        f"machine {host} login {user} password {pw}",
        f"~/.netrc:\n```\nmachine {host}\n  login {user}\n  password {pw}\n```",
    ]
    return Secret("netrc-password", shapes[i % 2], (pw,))


def _quoted_phrase(g: Gen, i: int) -> Secret:
    phrase = " ".join(g.pick(WORDS) for _ in range(g.int(3, 5)))
    shapes = [
        f'password = "{phrase}"',
        f"DB_PASSWORD='{phrase}'",
        f'smtp:\n  password: "{phrase}"',
        f'{{"passphrase": "{phrase}"}}',
    ]
    return Secret("quoted-password-with-spaces", shapes[i % 4], (phrase,))


def _mapbox(g: Gen) -> str:
    payload = base64.urlsafe_b64encode(
        json.dumps({"u": g.pick(USERS), "a": g.s(25, LOWER_ALNUM)}).encode()
    ).decode()
    return "sk." + payload.rstrip("=") + "." + g.s(22, ALNUM + "-_")


FORMATS: list[Callable[[Gen, int], Secret]] = [
    token("aws-access-key-id", "AWS_ACCESS_KEY_ID", lambda g: "AKIA" + g.s(16, BASE32)),
    contextual(
        "aws-secret-access-key",
        lambda g: g.s(40, B64),
        [
            lambda v: f"aws_secret_access_key = {v}",
            lambda v: f"export AWS_SECRET_ACCESS_KEY={v}",
            lambda v: f'{{"Credentials": {{"SecretAccessKey": "{v}", "Expiration": "2026-01-01"}}}}',
            lambda v: f"[default]\nregion = eu-west-1\naws_secret_access_key={v}",
        ],
    ),
    token("github-classic-pat", "GITHUB_TOKEN", lambda g: checksummed(g, "ghp_")),
    token("github-oauth-token", "GH_OAUTH_TOKEN", lambda g: checksummed(g, "gho_")),
    token("github-app-token", "GITHUB_APP_TOKEN", lambda g: checksummed(g, g.pick(["ghs_", "ghu_"]))),
    token(
        "github-fine-grained-pat",
        "GITHUB_PAT",
        lambda g: "github_pat_11" + g.s(20, UPPER_ALNUM) + "_" + g.s(59),
    ),
    token("gitlab-pat", "GITLAB_TOKEN", lambda g: "glpat-" + g.s(20, B64URL)),
    token(
        "openai-project-key",
        "OPENAI_API_KEY",
        lambda g: "sk-proj-" + g.s(74, B64URL) + "T3BlbkFJ" + g.s(74, B64URL),
    ),
    token("openai-legacy-key", "OPENAI_KEY", lambda g: "sk-" + g.s(20) + "T3BlbkFJ" + g.s(20)),
    token(
        "anthropic-api-key",
        "ANTHROPIC_API_KEY",
        lambda g: "sk-ant-api03-" + g.s(93, B64URL) + "AA",
    ),
    token("google-api-key", "GOOGLE_API_KEY", lambda g: "AIza" + g.s(35, B64URL)),
    token(
        "slack-bot-token",
        "SLACK_BOT_TOKEN",
        lambda g: f"xoxb-{g.s(11, string.digits)}-{g.s(13, string.digits)}-{g.s(24)}",
    ),
    token(
        "slack-user-token",
        "SLACK_TOKEN",
        lambda g: f"xoxp-{g.s(11, string.digits)}-{g.s(11, string.digits)}-{g.s(13, string.digits)}-{g.hex(32)}",
    ),
    token(
        "slack-webhook",
        "SLACK_WEBHOOK_URL",
        lambda g: f"https://hooks.slack.com/services/T{g.s(10, UPPER_ALNUM)}/B{g.s(10, UPPER_ALNUM)}/{g.s(24)}",
    ),
    token("stripe-secret-key", "STRIPE_SECRET_KEY", lambda g: "sk_live_51" + g.s(97)),
    token("stripe-restricted-key", "STRIPE_KEY", lambda g: "rk_live_51" + g.s(97)),
    token("stripe-webhook-secret", "STRIPE_WEBHOOK_SECRET", lambda g: "whsec_" + g.s(32)),
    token("jwt", "ACCESS_TOKEN", _jwt),
    _private_key("RSA", "MIIEpAIBAAKCAQEA", 1150),
    _private_key("OPENSSH", "b3BlbnNzaC1rZXktdjEAAAAA", 380),
    _private_key("EC", "MHcCAQEEI", 100),
    _private_key("", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 1180),
    _pgp,
    token("npm-token", "NPM_TOKEN", lambda g: checksummed(g, "npm_")),
    token(
        "pypi-token",
        "PYPI_TOKEN",
        lambda g: "pypi-AgEIcHlwaS5vcmcCJ" + g.s(g.int(120, 160), B64URL),
    ),
    token("twilio-api-key", "TWILIO_API_KEY", lambda g: "SK" + g.hex(32)),
    token("sendgrid-api-key", "SENDGRID_API_KEY", lambda g: f"SG.{g.s(22, B64URL)}.{g.s(43, B64URL)}"),
    token("huggingface-token", "HF_TOKEN", lambda g: "hf_" + g.s(34, string.ascii_letters)),
    token("shopify-access-token", "SHOPIFY_ACCESS_TOKEN", lambda g: "shpat_" + g.hex(32)),
    token(
        "shopify-shared-secret",
        "SHOPIFY_SECRET",
        lambda g: g.pick(["shpss_", "shpca_", "shppa_"]) + g.hex(32),
    ),
    token("mailgun-api-key", "MAILGUN_API_KEY", lambda g: "key-" + g.hex(32)),
    token("discord-bot-token", "DISCORD_BOT_TOKEN", _discord),
    token("age-secret-key", "AGE_KEY", lambda g: "AGE-SECRET-KEY-1" + g.s(58, BECH32)),
    token("digitalocean-token", "DIGITALOCEAN_TOKEN", lambda g: "dop_v1_" + g.hex(64)),
    token("vault-token", "VAULT_TOKEN", lambda g: "hvs." + g.s(95, B64URL)),
    token("databricks-token", "DATABRICKS_TOKEN", lambda g: "dapi" + g.hex(32)),
    token("linear-api-key", "LINEAR_API_KEY", lambda g: "lin_api_" + g.s(40)),
    token(
        "grafana-service-token",
        "GRAFANA_TOKEN",
        lambda g: "glsa_" + g.s(32) + "_" + g.hex(8),
    ),
    token(
        "telegram-bot-token",
        "TELEGRAM_BOT_TOKEN",
        lambda g: f"{g.int(10**8, 10**10 - 1)}:AA{g.s(33, B64URL)}",
    ),
    token("postman-api-key", "POSTMAN_API_KEY", lambda g: f"PMAK-{g.hex(24)}-{g.hex(34)}"),
    token("supabase-token", "SUPABASE_ACCESS_TOKEN", lambda g: "sbp_" + g.hex(40)),
    token("groq-api-key", "GROQ_API_KEY", lambda g: "gsk_" + g.s(52)),
    token("replicate-token", "REPLICATE_API_TOKEN", lambda g: "r8_" + g.s(37)),
    token("new-relic-key", "NEW_RELIC_API_KEY", lambda g: "NRAK-" + g.s(27, UPPER_ALNUM)),
    token("mapbox-secret-token", "MAPBOX_SECRET_TOKEN", _mapbox),
    token(
        "azure-ad-client-secret",
        "AZURE_CLIENT_SECRET",
        lambda g: g.s(3, ALNUM) + str(g.int(0, 9)) + "Q~" + g.s(34, ALNUM + "_~.-"),
    ),
    _azure_sas,
    _azure_conn,
    _url_password("postgres", "postgres-url-password", 5432),
    _url_password("mysql", "mysql-url-password", 3306),
    _url_password("mongodb+srv", "mongodb-url-password", 27017),
    _url_password("redis", "redis-url-password", 6379, user=False),
    _url_password("amqp", "amqp-url-password", 5672),
    contextual(
        "curl-user-password",
        lambda g: g.password(),
        [
            lambda v: f"curl -u admin:{v} https://jenkins.example.com/api/json",
            lambda v: f'curl --user "deploy:{v}" -X POST https://api.example.com/hooks',
            lambda v: f"```sh\ncurl -s -u ci-bot:{v} https://nexus.corp.example/service/rest\n```",
        ],
    ),
    contextual(
        "mysql-cli-password",
        lambda g: g.password().replace("!", "").replace("%", ""),
        [
            lambda v: f"mysql -u root -p{v} -h db.internal orders",
            lambda v: f"mysqldump -uroot -p'{v}' app > dump.sql",
            lambda v: f"run `mysql --user=app --password={v} app < schema.sql`",
        ],
    ),
    contextual(
        "password-cli-flag",
        lambda g: g.password(),
        [
            lambda v: f"sshpass -p '{v}' ssh deploy@10.0.3.17",
            lambda v: f"docker login -u ci-bot -p {v} registry.example.com",
            lambda v: f"PGPASSWORD={v} psql -h db.internal -U app",
            lambda v: f"./manage.py createsuperuser --password {v}",
        ],
    ),
    _netrc,
    _basic_auth,
    contextual(
        "http-bearer-token",
        lambda g: g.s(g.int(32, 48), ALNUM + "-_."),
        [
            lambda v: f"Authorization: Bearer {v}",
            lambda v: f'fetch(url, {{ headers: {{ Authorization: "Bearer {v}" }} }})',
            lambda v: f"curl -H 'X-Api-Key: {v}' https://api.example.com/v2/items",
        ],
    ),
    _docker_auth,
    _quoted_phrase,
    contextual(
        "lowercase-password-field",
        lambda g: g.password(),
        [
            lambda v: f"db_password: {v}",
            lambda v: f"smtp_password = {v}",
            lambda v: f"  redis_password: '{v}'",
            lambda v: f"admin_pass={v}",
        ],
    ),
    contextual(
        "env-password",
        lambda g: g.password(),
        [
            lambda v: f"DB_PASSWORD={v}\nDB_HOST=localhost",
            lambda v: f"POSTGRES_PASSWORD: {v}",
            lambda v: f"export MYSQL_ROOT_PASSWORD={v}",
            lambda v: f"The admin password is {v} until we move to SSO.",
        ],
    ),
    contextual(
        "hex-secret-in-json",
        lambda g: g.hex(g.length(32, 40, 64)),
        [
            lambda v: json.dumps({"app_id": "orders", "secret": v}),
            lambda v: json.dumps({"token": v, "expires": 3600}),
            lambda v: f'  "client_secret": "{v}",',
            lambda v: json.dumps({"webhook": {"signing_secret": v}}),
        ],
    ),
    contextual(
        "generic-api-key-assignment",
        lambda g: g.s(g.int(24, 40)),
        [
            lambda v: f'const apiKey = "{v}";',
            lambda v: f"API_KEY = '{v}'",
            lambda v: f"settings.secret_key = '{v}'",
            lambda v: f'<add key="ApiSecret" value="{v}" />',
        ],
    ),
    contextual(
        "hex-token-assignment",
        lambda g: g.hex(32),
        [
            lambda v: f"DD_API_KEY={v}",
            lambda v: f"TWILIO_AUTH_TOKEN={v}",
            lambda v: f"mailchimp_api_key: {v}-us14",
        ],
    ),
    contextual(
        "uuid-api-key-assignment",
        lambda g: g.uuid(),
        [
            lambda v: f"HEROKU_API_KEY={v}",
            lambda v: f'api_key: "{v}"',
            lambda v: f"export OCTOPUS_API_TOKEN={v}",
        ],
    ),
    contextual(
        "connection-string-password",
        lambda g: g.password().replace(";", ""),
        [
            lambda v: f"Server=tcp:orders.database.windows.net,1433;Database=orders;User ID=sa;Password={v};Encrypt=True;",
            lambda v: f"jdbc:postgresql://db.internal:5432/app?user=app&password={v}",
            lambda v: f"https://api.example.com/v1/report?format=csv&api_key={v}",
        ],
    ),
]

# -- look-alikes ------------------------------------------------------------------------------


def _ssh_pub(g: Gen, algo: str, nbytes: int) -> str:
    blob = ssh_string(algo.encode())
    if algo == "ssh-rsa":
        blob += ssh_string(b"\x01\x00\x01") + ssh_string(b"\x00" + g.r.randbytes(nbytes))
    else:
        blob += ssh_string(g.r.randbytes(nbytes))
    return f"{algo} {base64.b64encode(blob).decode()} {g.pick(USERS)}@{g.pick(['laptop', 'ci', 'build-7'])}"


def _pem_public(g: Gen, label: str, lead: str, nbytes: int) -> str:
    return "\n".join([f"-----BEGIN {label}-----", *wrap64(lead + g.b64(nbytes)), f"-----END {label}-----"])


def _identifier(g: Gen, snake: bool) -> str:
    parts = [g.pick(WORDS + ["token", "secret", "password", "key", "handler", "factory", "refresh"]) for _ in range(9)]
    name = "_".join(parts) if snake else parts[0] + "".join(p.capitalize() for p in parts[1:])
    return name


LOOKALIKES: dict[str, Callable[[Gen, int], str]] = {
    "npm-integrity": lambda g, i: f'      "integrity": "sha512-{g.b64(64)}",',
    "yarn-integrity": lambda g, i: f"  integrity sha1-{g.b64(20)}",
    "go-sum": lambda g, i: (
        f"github.com/{g.pick(WORDS)}/{g.pick(WORDS)} v1.{g.int(0, 30)}.{g.int(0, 9)}"
        f"{'/go.mod' if i % 2 else ''} h1:{g.b64(32)}"
    ),
    "sri-hash": lambda g, i: (
        f'<script src="https://cdn.example.com/lib-{g.int(1, 9)}.js" '
        f'integrity="sha384-{g.b64(48)}" crossorigin="anonymous"></script>'
    ),
    "pip-hash": lambda g, i: f"    --hash=sha256:{g.hex(64)} \\",
    "cargo-checksum": lambda g, i: f'checksum = "{g.hex(64)}"',
    "data-uri-image": lambda g, i: [
        f"![diagram](data:image/png;base64,iVBORw0KGgo{g.b64(240)})",
        f".icon {{ background: url(data:image/svg+xml;base64,PHN2Zy{g.b64(180)}); }}",
        f'<img src="data:image/jpeg;base64,/9j/4AAQSkZJRg{g.b64(300)}" alt="logo">',
    ][i % 3],
    "base64-image-field": lambda g, i: json.dumps({"thumbnail": "iVBORw0KGgoAAAANSUhEUg" + g.b64(200)}),
    "ssh-ed25519-public-key": lambda g, i: _ssh_pub(g, "ssh-ed25519", 32),
    "ssh-rsa-public-key": lambda g, i: _ssh_pub(g, "ssh-rsa", 256),
    "ssh-fingerprint": lambda g, i: f"ED25519 key fingerprint is SHA256:{g.b64(32, pad=False)}.",
    "pem-public-key": lambda g, i: _pem_public(g, "PUBLIC KEY", "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 270),
    "pem-certificate": lambda g, i: _pem_public(g, "CERTIFICATE", "MIIDdzCCAl+gAwIBAgIE", 700),
    "stripe-publishable-key": lambda g, i: [
        f"STRIPE_PUBLISHABLE_KEY=pk_live_51{g.s(97)}",
        f"const stripe = Stripe('pk_test_51{g.s(97)}');",
    ][i % 2],
    "stripe-object-id": lambda g, i: f"refund for {g.pick(['cus_', 'pi_', 'ch_', 'price_'])}{g.s(24)} went through",
    "long-camelcase-identifier": lambda g, i: f"call {_identifier(g, False)}() before rendering",
    "long-snake-case-identifier": lambda g, i: f"def {_identifier(g, True)}(self) -> None:",
    "ttl-setting": lambda g, i: [
        f"SESSION_TOKEN_TTL={g.pick(['86400', '3600', '900'])}",
        f"ACCESS_TOKEN_EXPIRES_IN={g.int(60, 7200)}",
        f"PASSWORD_MIN_LENGTH={g.int(8, 16)}",
        f"refresh_token_ttl: {g.int(1, 30)}d",
        f"JWT_SECRET_ROTATION_DAYS={g.int(7, 90)}",
    ][i % 5],
    "enum-setting": lambda g, i: [
        f"AUTH_PROVIDER={g.pick(['github', 'google', 'okta', 'saml'])}",
        f"SECRET_BACKEND={g.pick(['vault', 'aws-secrets-manager', 'sops'])}",
        f"token_type: {g.pick(['bearer', 'mac'])}",
        f"PASSWORD_HASHER={g.pick(['argon2', 'bcrypt', 'scrypt'])}",
        f"api_key_header: {g.pick(['X-Api-Key', 'Authorization'])}",
    ][i % 5],
    "env-reference": lambda g, i: [
        "DATABASE_URL=postgres://app:${DB_PASSWORD}@db.internal:5432/app",
        "password: $DB_PASSWORD",
        "      password: ${{ secrets.DB_PASSWORD }}",
        'api_key = os.environ["OPENAI_API_KEY"]',
        "const key = process.env.STRIPE_SECRET_KEY;",
        'password: "{{ vault_db_password }}"',
        'PGPASSWORD="$(cat /run/secrets/db_password)" psql -h db',
        "token: %(GITHUB_TOKEN)s",
    ][(i + g.int(0, 7)) % 8],
    "shell-without-secret": lambda g, i: [
        'curl -u "$API_USER:$API_TOKEN" https://api.example.com/v1/me',
        f"curl -u {g.pick(USERS)} https://jenkins.example.com/api/json  # prompts",
        f"mysql -u root -p -h {g.pick(HOSTS)} orders",
        f"mysql -h {g.pick(HOSTS)} -P 3306 -u app -p",
        "psql -h localhost -U postgres -W",
    ][i % 5],
    "commit-trailer": lambda g, i: [
        f"Co-authored-by: {g.pick(WORDS).capitalize()} Doe <{g.int(10**6, 10**8)}+{g.pick(WORDS)}@users.noreply.github.com>",
        f"Signed-off-by: {g.pick(WORDS).capitalize()} Smith <{g.pick(WORDS)}@example.com>",
        f"Reviewed-on: https://review.example.org/c/core/+/{g.int(10000, 99999)}\nChange-Id: I{g.hex(40)}",
    ][i % 3],
    "spec-path": lambda g, i: [
        f"see docs/specs/{g.int(2020, 2026)}-{g.int(1, 12):02d}-auth-token-rotation.md",
        "server/auth/password_reset_token_validator.py:142",
        "spec/requests/api/v2/secret_keys_controller_spec.rb",
        f"src/auth/{_identifier(g, False)}.ts",
        "tests/unit/test_api_key_rotation_keeps_old_key_valid_for_an_hour.py",
    ][i % 5],
    "git-sha": lambda g, i: [
        f"fixed in {g.hex(40)}",
        f"git checkout {g.hex(12)} -- src/",
        f"commit {g.hex(40)}\nAuthor: {g.pick(WORDS)} <{g.pick(WORDS)}@example.com>",
    ][i % 3],
    "uuid": lambda g, i: [f"request id {g.uuid()}", json.dumps({"id": g.uuid(), "traceId": g.uuid()})][i % 2],
    "hex-digest": lambda g, i: [
        f"sha256: {g.hex(64)}",
        f"{g.hex(32)}  release-{g.int(1, 9)}.tar.gz",
        f"etag: W/\"{g.hex(40)}\"",
    ][i % 3],
    "docker-digest": lambda g, i: f"image: ghcr.io/acme/api@sha256:{g.hex(64)}",
    "url-without-credentials": lambda g, i: [
        "postgres://localhost:5432/app",
        "redis://redis:6379/0",
        f"git clone https://{g.pick(USERS)}@github.com/acme/api.git",
        f"https://github.com/acme/api/blob/{g.hex(40)}/server/auth/token.py#L{g.int(1, 400)}",
        f"mongodb://mongo-{g.int(0, 2)}.mongo:27017/?replicaSet=rs0",
    ][i % 5],
    "prose-about-secrets": lambda g, i: [
        "the password is required for login",
        f"rotate the API token every {g.int(30, 90)} days",
        "secret: see the team vault",
        f"token budget: {g.int(100, 900)} tokens per recall",
        "Passwords are hashed with argon2id before they reach the database.",
    ][i % 5],
    "placeholder": lambda g, i: [
        "OPENAI_API_KEY=<your-api-key>",
        'token: "YOUR_TOKEN_HERE"',
        'password: "********"',
        "SECRET_KEY=xxxxxxxxxxxxxxxxxxxxxxxx",
        "api_key: [REDACTED]",
    ][i % 5],
    "aws-arn": lambda g, i: f"arn:aws:iam::{g.s(12, string.digits)}:role/{g.pick(['deploy', 'ci-runner', 'lambda-exec'])}",
    "gpg-fingerprint": lambda g, i: f"gpg --recv-keys {g.hex(40).upper()}",
    "version-and-time": lambda g, i: f"released v{g.int(0, 9)}.{g.int(0, 30)}.{g.int(0, 99)} on 2026-0{g.int(1, 9)}-1{g.int(0, 9)}T12:{g.int(10, 59)}:00Z",
    "base64-config-value": lambda g, i: json.dumps({"checksum": g.b64(32), "digest": "sha256-" + g.b64(32)}),
}


def generate(seed: int = SEED) -> Corpus:
    """The corpus for `seed`: PER_FORMAT secrets per format, PER_CLASS look-alikes per class."""
    g = Gen(seed)
    secrets = [make(g, i) for make in FORMATS for i in range(PER_FORMAT)]
    lookalikes = [LookAlike(kind, make(g, i)) for kind, make in LOOKALIKES.items() for i in range(PER_CLASS)]
    for s in secrets:
        missing = [v for v in s.values if v not in s.text]
        assert not missing, (s.format, missing)
    return Corpus(secrets, lookalikes)


def covered(text: str, spans: list[tuple[int, int]], value: str) -> bool:
    """Whether every character of every occurrence of `value` in `text` lies inside a span."""
    marks = bytearray(len(text) + 1)
    for start, end in spans:
        marks[start:end] = b"\x01" * (end - start)
    start = text.find(value)
    while start != -1:
        if not all(marks[start : start + len(value)]):
            return False
        start = text.find(value, start + 1)
    return True
