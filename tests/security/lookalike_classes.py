"""The look-alikes of the corpus: harmless text shaped like secrets (hashes, public keys, data
URIs, settings about secrets, references to secrets kept elsewhere) that must stay untouched."""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable

from tests.security.bodies import (
    HOSTS,
    USERS,
    WORDS,
    Gen,
    ssh_string,
    wrap64,
)

# -- look-alikes ------------------------------------------------------------------------------


def _ssh_pub(g: Gen, algo: str, nbytes: int) -> str:
    blob = ssh_string(algo.encode())
    if algo == "ssh-rsa":
        blob += ssh_string(b"\x01\x00\x01") + ssh_string(b"\x00" + g.r.randbytes(nbytes))
    else:
        blob += ssh_string(g.r.randbytes(nbytes))
    return f"{algo} {base64.b64encode(blob).decode()} {g.pick(USERS)}@{g.pick(['laptop', 'ci', 'build-7'])}"


def _pem_public(g: Gen, label: str, lead: str, nbytes: int) -> str:
    return "\n".join(
        [f"-----BEGIN {label}-----", *wrap64(lead + g.b64(nbytes)), f"-----END {label}-----"]
    )


def _identifier(g: Gen, snake: bool) -> str:
    parts = [
        g.pick([*WORDS, "token", "secret", "password", "key", "handler", "factory", "refresh"])
        for _ in range(9)
    ]
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
    "base64-image-field": lambda g, i: json.dumps(
        {"thumbnail": "iVBORw0KGgoAAAANSUhEUg" + g.b64(200)}
    ),
    "ssh-ed25519-public-key": lambda g, i: _ssh_pub(g, "ssh-ed25519", 32),
    "ssh-rsa-public-key": lambda g, i: _ssh_pub(g, "ssh-rsa", 256),
    "ssh-fingerprint": lambda g, i: f"ED25519 key fingerprint is SHA256:{g.b64(32, pad=False)}.",
    "pem-public-key": lambda g, i: _pem_public(
        g, "PUBLIC KEY", "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 270
    ),
    "pem-certificate": lambda g, i: _pem_public(g, "CERTIFICATE", "MIIDdzCCAl+gAwIBAgIE", 700),
    "stripe-publishable-key": lambda g, i: [
        f"STRIPE_PUBLISHABLE_KEY=pk_live_51{g.s(97)}",
        f"const stripe = Stripe('pk_test_51{g.s(97)}');",
    ][i % 2],
    "stripe-object-id": lambda g, i: (
        f"refund for {g.pick(['cus_', 'pi_', 'ch_', 'price_'])}{g.s(24)} went through"
    ),
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
    "uuid": lambda g, i: [
        f"request id {g.uuid()}",
        json.dumps({"id": g.uuid(), "traceId": g.uuid()}),
    ][i % 2],
    "hex-digest": lambda g, i: [
        f"sha256: {g.hex(64)}",
        f"{g.hex(32)}  release-{g.int(1, 9)}.tar.gz",
        f'etag: W/"{g.hex(40)}"',
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
    "aws-arn": lambda g, i: (
        f"arn:aws:iam::{g.s(12, string.digits)}:role/{g.pick(['deploy', 'ci-runner', 'lambda-exec'])}"
    ),
    "gpg-fingerprint": lambda g, i: f"gpg --recv-keys {g.hex(40).upper()}",
    "version-and-time": lambda g, i: (
        f"released v{g.int(0, 9)}.{g.int(0, 30)}.{g.int(0, 99)} on 2026-0{g.int(1, 9)}-1{g.int(0, 9)}T12:{g.int(10, 59)}:00Z"
    ),
    "base64-config-value": lambda g, i: json.dumps(
        {"checksum": g.b64(32), "digest": "sha256-" + g.b64(32)}
    ),
    # -- second round: what context rules could misread ----------------------------------
    "settings-about-secrets": lambda g, i: [
        "TOKEN_URL=https://auth.example.com/oauth/token",
        f'"token_endpoint": "https://login.example.com/{g.uuid()}/oauth2/v2.0/token"',
        "secret_name: db-credentials",
        "api_key_env: OPENAI_API_KEY\napi_key_header: X-Api-Key",
        "passwordless: true\npassword_required: false\npassword_policy: strong",
        "max_tokens: 4096\ntokenizer: cl100k_base",
    ][(i + g.int(0, 5)) % 6],
    "kubernetes-secret-reference": lambda g, i: (
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n"
        f"        name: {g.pick(WORDS)}-secret\n        key: password"
    ),
    "kubeconfig-certificate-data": lambda g, i: (
        f"    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t{g.b64(900)}"
    ),
    "code-reading-a-secret": lambda g, i: [
        "client = OpenAI(api_key=api_key)",
        "password = settings.DB_PASSWORD",
        "token = get_token(scope='repo')",
        "const apiKey = config.apiKey;",
        "password: z.string().min(8),",
        "def login(password: str, token: str | None = None) -> Session:",
        "api_key: Optional[str] = None",
        "UPDATE users SET password = :password WHERE id = :id",
        "secret_key: SECRET_KEY",
    ][(i * 2 + g.int(0, 8)) % 9],
    "yaml-tags-and-templates": lambda g, i: [
        "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
        "wifi_password: !secret wifi_password",
        "token: '$(System.AccessToken)'",
        "password: ((db-password))",
        "password: <%= ENV['DB_PASSWORD'] %>",
        f"password: ENC[AES256_GCM,data:{g.b64(12)},iv:{g.b64(16)},tag:{g.b64(16)},type:str]",
        "password: ${DB_PASSWORD:-postgres}",
    ][(i + g.int(0, 6)) % 7],
    "auth-mechanism-setting": lambda g, i: [
        "auth: oauth2",
        f"auth_method: {g.pick(['basic', 'bearer', 'mtls'])}",
        "token_signing_alg: RS256",
        "password_encoder: bcrypt",
        "auth:\n  type: oidc\n  issuer: https://login.example.com",
    ][i % 5],
    "test-results": lambda g, i: [
        f"tests pass: {g.int(10, 99)}/{g.int(100, 120)}",
        f"pass: {g.int(1, 300)}, fail: {g.int(0, 9)}",
        f"pass rate: {g.int(80, 100)}%",
        f"CI: {g.int(100, 400)} pass, {g.int(0, 5)} skipped",
    ][i % 4],
    "key-file-paths": lambda g, i: [
        "private_key: keys/dev.pem",
        "ssh_key: ~/.ssh/id_ed25519",
        f"client_key: certs/{g.pick(WORDS)}.key",
        "secret_key_file: secrets/django.txt",
        "token: .secrets/gh-token",
    ][i % 5],
    "prose-mentioning-flags": lambda g, i: [
        "run it with --password to be prompted",
        "pass --token when the registry needs it",
        f"a machine learning password generator, trained on {g.int(1, 9)}M leaks",
        "mysql -h db.internal -P3306 -u app -p",
        f"docker run -p {g.int(3000, 9000)}:80 nginx",
    ][i % 5],
    "doc-placeholder-tokens": lambda g, i: [
        "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX",
        "OPENAI_API_KEY=sk-...",
        "STRIPE_SECRET_KEY=sk_live_...",
        "Authorization: Bearer <token>",
        "postgres://user:password@localhost:5432/db",
    ][(i + g.int(0, 5)) % 6],
    "auth-headers-without-values": lambda g, i: [
        'headers["Authorization"] = f"Bearer {token}"',
        "Authorization: `Bearer ${token}`",
        'WWW-Authenticate: Basic realm="registry"',
        'curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user',
    ][i % 4],
    "npm-registry-signature": lambda g, i: json.dumps(
        {"keyid": "SHA256:" + g.b64(32, pad=False), "sig": "MEUCIQ" + g.b64(64)}
    ),
    "ipfs-cid": lambda g, i: (
        f"pinned at ipfs://Qm{g.s(44, '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz')}"
    ),
    "prose-about-credentials": lambda g, i: [
        "The token is valid for 24 hours.",
        "API key is stored in 1Password under Engineering.",
        "the secret is in Vault at secret/data/app",
        f"password was reset on 2026-0{g.int(1, 9)}-1{g.int(0, 9)} after the incident",
        "secrets.yml: holds the dev keys only",
    ][i % 5],
    "mentions-in-code-and-prose": lambda g, i: [
        "password = request.form['password']",
        "if token is None: raise AuthError",
        f"password policy: {g.int(8, 16)}+ chars, 1 digit",
        "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']",
        f"The token limit is {g.int(4, 128)}k",
        "primary key (id, tenant_id)",
        f"Token usage: {g.int(100, 9999)} prompt / {g.int(10, 999)} completion",
        "client_id: 1234567890-abc.apps.googleusercontent.com",
        "set the DB_PASSWORD env var before you start",
        "password reset v2 ships next sprint",
    ][(i * 3 + g.int(0, 9)) % 10],
}
