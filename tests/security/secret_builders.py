"""Builders for the corpus's true secrets: a bare token in rotating contexts (sentence, export,
YAML, JSON, curl header, .env, code, Markdown), a value only its context reveals, and the formats
with a shape of their own (JWTs, key blocks, SAS URLs, URLs with passwords, Basic auth, …)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

from tests.security.bodies import (
    ALNUM,
    B64,
    B64URL,
    HOSTS,
    LOWER_ALNUM,
    USERS,
    WORDS,
    Gen,
    Secret,
    wrap64,
)

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


def jwt(g: Gen) -> str:
    header = {"alg": g.pick(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    claims = {"sub": g.uuid(), "iat": g.int(1_600_000_000, 1_800_000_000), "role": "admin"}
    enc = [
        base64.urlsafe_b64encode(json.dumps(p, separators=(",", ":")).encode()).decode()
        for p in (header, claims)
    ]
    return ".".join([*[e.rstrip("=") for e in enc], g.b64(32, pad=False, url=True)])


def pem_lines(g: Gen, lead: str, nbytes: int) -> list[str]:
    return wrap64(lead + g.b64(nbytes))


def private_key(kind: str, lead: str, nbytes: int) -> Callable[[Gen, int], Secret]:
    def build(g: Gen, i: int) -> Secret:
        lines = pem_lines(g, lead, nbytes)
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


def pgp(g: Gen, i: int) -> Secret:
    lines = wrap64("lQOYBG" + g.b64(600))
    check = "=" + g.s(4, B64)
    block = "\n".join(
        [
            "-----BEGIN PGP PRIVATE KEY BLOCK-----",
            "",
            *lines,
            check,
            "-----END PGP PRIVATE KEY BLOCK-----",
        ]
    )
    shapes = [f"```\n{block}\n```", f"exported with gpg --export-secret-keys:\n{block}"]
    return Secret("pgp-private-key", shapes[i % 2], (*lines, check))


def azure_sas(g: Gen, i: int) -> Secret:
    sig = g.b64(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    acct = g.pick(["prodlogs", "assetsstore", "backups01"])
    url = (
        f"https://{acct}.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=o"
        f"&sp=r&se=2026-12-31T23:59:59Z&st=2026-01-01T00:00:00Z&spr=https&sig={sig}"
    )
    shapes = [f"download it from {url}", f'AZURE_EXPORT_URL="{url}"', f"curl -o r.csv '{url}'"]
    return Secret("azure-sas-signature", shapes[i % 3], (sig,))


def azure_conn(g: Gen, i: int) -> Secret:
    key = g.b64(64)
    conn = (
        f"DefaultEndpointsProtocol=https;AccountName=prodlogs{i};AccountKey={key};"
        "EndpointSuffix=core.windows.net"
    )
    shapes = [f'AZURE_STORAGE_CONNECTION_STRING="{conn}"', f"connectionString: {conn}"]
    return Secret("azure-storage-account-key", shapes[i % 2], (key,))


def discord(g: Gen) -> str:
    user_id = str(g.int(10**17, 10**19 - 1)).encode()
    return (
        base64.b64encode(user_id).decode().rstrip("=")
        + "."
        + g.s(6, B64URL)
        + "."
        + g.s(g.length(27, 38), B64URL)
    )


def url_password(
    scheme: str, name: str, port: int, user: bool = True
) -> Callable[[Gen, int], Secret]:
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


def basic_auth(g: Gen, i: int) -> Secret:
    cred = base64.b64encode(f"{g.pick(USERS)}:{g.password()}".encode()).decode()
    shapes = [
        f"Authorization: Basic {cred}",
        f'curl -H "Authorization: Basic {cred}" https://registry.example.com/v2/_catalog',
        f"headers = {{'Authorization': 'Basic {cred}'}}",
    ]
    return Secret("http-basic-auth", shapes[i % 3], (cred,))


def docker_auth(g: Gen, i: int) -> Secret:
    cred = base64.b64encode(f"{g.pick(USERS)}:{g.password()}".encode()).decode()
    text = json.dumps({"auths": {"registry.example.com": {"auth": cred}}}, indent=2)
    return Secret("docker-config-auth", text, (cred,))


def netrc(g: Gen, i: int) -> Secret:
    pw = g.password()
    host = g.pick(["api.heroku.com", "github.com", "ftp.example.org", "git.corp.example"])
    user = g.pick(USERS)
    shapes = [
        f"machine {host} login {user} password {pw}",
        f"~/.netrc:\n```\nmachine {host}\n  login {user}\n  password {pw}\n```",
    ]
    return Secret("netrc-password", shapes[i % 2], (pw,))


def quoted_phrase(g: Gen, i: int) -> Secret:
    phrase = " ".join(g.pick(WORDS) for _ in range(g.int(3, 5)))
    shapes = [
        f'password = "{phrase}"',
        f"DB_PASSWORD='{phrase}'",
        f'smtp:\n  password: "{phrase}"',
        f'{{"passphrase": "{phrase}"}}',
    ]
    return Secret("quoted-password-with-spaces", shapes[i % 4], (phrase,))


def mapbox(g: Gen) -> str:
    payload = base64.urlsafe_b64encode(
        json.dumps({"u": g.pick(USERS), "a": g.s(25, LOWER_ALNUM)}).encode()
    ).decode()
    return "sk." + payload.rstrip("=") + "." + g.s(22, ALNUM + "-_")
