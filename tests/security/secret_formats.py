"""The true secrets of the corpus: one entry per format, each placing a generated body in
realistic contexts (builders in `secret_builders.py`)."""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable

from tests.security.bodies import (
    ALNUM,
    B64,
    B64URL,
    BASE32,
    BECH32,
    UPPER_ALNUM,
    WORDS,
    Gen,
    Secret,
    checksummed,
)
from tests.security.secret_builders import (
    azure_conn,
    azure_sas,
    basic_auth,
    contextual,
    discord,
    docker_auth,
    jwt,
    mapbox,
    netrc,
    pgp,
    private_key,
    quoted_phrase,
    token,
    url_password,
)

FORMATS: list[Callable[[Gen, int], Secret]] = [
    token("aws-access-key-id", "AWS_ACCESS_KEY_ID", lambda g: "AKIA" + g.s(16, BASE32)),
    contextual(
        "aws-secret-access-key",
        lambda g: g.s(40, B64),
        [
            lambda v: f"aws_secret_access_key = {v}",
            lambda v: f"export AWS_SECRET_ACCESS_KEY={v}",
            lambda v: (
                f'{{"Credentials": {{"SecretAccessKey": "{v}", "Expiration": "2026-01-01"}}}}'
            ),
            lambda v: f"[default]\nregion = eu-west-1\naws_secret_access_key={v}",
        ],
    ),
    token("github-classic-pat", "GITHUB_TOKEN", lambda g: checksummed(g, "ghp_")),
    token("github-oauth-token", "GH_OAUTH_TOKEN", lambda g: checksummed(g, "gho_")),
    token(
        "github-app-token", "GITHUB_APP_TOKEN", lambda g: checksummed(g, g.pick(["ghs_", "ghu_"]))
    ),
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
        lambda g: (
            f"xoxp-{g.s(11, string.digits)}-{g.s(11, string.digits)}-{g.s(13, string.digits)}-{g.hex(32)}"
        ),
    ),
    token(
        "slack-webhook",
        "SLACK_WEBHOOK_URL",
        lambda g: (
            f"https://hooks.slack.com/services/T{g.s(10, UPPER_ALNUM)}/B{g.s(10, UPPER_ALNUM)}/{g.s(24)}"
        ),
    ),
    token("stripe-secret-key", "STRIPE_SECRET_KEY", lambda g: "sk_live_51" + g.s(97)),
    token("stripe-restricted-key", "STRIPE_KEY", lambda g: "rk_live_51" + g.s(97)),
    token("stripe-webhook-secret", "STRIPE_WEBHOOK_SECRET", lambda g: "whsec_" + g.s(32)),
    token("jwt", "ACCESS_TOKEN", jwt),
    private_key("RSA", "MIIEpAIBAAKCAQEA", 1150),
    private_key("OPENSSH", "b3BlbnNzaC1rZXktdjEAAAAA", 380),
    private_key("EC", "MHcCAQEEI", 100),
    private_key("", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 1180),
    pgp,
    token("npm-token", "NPM_TOKEN", lambda g: checksummed(g, "npm_")),
    token(
        "pypi-token",
        "PYPI_TOKEN",
        lambda g: "pypi-AgEIcHlwaS5vcmcCJ" + g.s(g.int(120, 160), B64URL),
    ),
    token("twilio-api-key", "TWILIO_API_KEY", lambda g: "SK" + g.hex(32)),
    token(
        "sendgrid-api-key", "SENDGRID_API_KEY", lambda g: f"SG.{g.s(22, B64URL)}.{g.s(43, B64URL)}"
    ),
    token("huggingface-token", "HF_TOKEN", lambda g: "hf_" + g.s(34, string.ascii_letters)),
    token("shopify-access-token", "SHOPIFY_ACCESS_TOKEN", lambda g: "shpat_" + g.hex(32)),
    token(
        "shopify-shared-secret",
        "SHOPIFY_SECRET",
        lambda g: g.pick(["shpss_", "shpca_", "shppa_"]) + g.hex(32),
    ),
    token("mailgun-api-key", "MAILGUN_API_KEY", lambda g: "key-" + g.hex(32)),
    token("discord-bot-token", "DISCORD_BOT_TOKEN", discord),
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
    token("mapbox-secret-token", "MAPBOX_SECRET_TOKEN", mapbox),
    token(
        "azure-ad-client-secret",
        "AZURE_CLIENT_SECRET",
        lambda g: g.s(3, ALNUM) + str(g.int(0, 9)) + "Q~" + g.s(34, ALNUM + "_~.-"),
    ),
    azure_sas,
    azure_conn,
    url_password("postgres", "postgres-url-password", 5432),
    url_password("mysql", "mysql-url-password", 3306),
    url_password("mongodb+srv", "mongodb-url-password", 27017),
    url_password("redis", "redis-url-password", 6379, user=False),
    url_password("amqp", "amqp-url-password", 5672),
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
    netrc,
    basic_auth,
    contextual(
        "http-bearer-token",
        lambda g: g.s(g.int(32, 48), ALNUM + "-_."),
        [
            lambda v: f"Authorization: Bearer {v}",
            lambda v: f'fetch(url, {{ headers: {{ Authorization: "Bearer {v}" }} }})',
            lambda v: f"curl -H 'X-Api-Key: {v}' https://api.example.com/v2/items",
        ],
    ),
    docker_auth,
    quoted_phrase,
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
            lambda v: (
                f"Server=tcp:orders.database.windows.net,1433;Database=orders;User ID=sa;Password={v};Encrypt=True;"
            ),
            lambda v: f"jdbc:postgresql://db.internal:5432/app?user=app&password={v}",
            lambda v: f"https://api.example.com/v1/report?format=csv&api_key={v}",
        ],
    ),
    # -- second round: contexts written as an attacker or a careless user would paste them --
    contextual(
        "php-define-password",
        lambda g: g.password(),
        [
            lambda v: f"define( 'DB_PASSWORD', '{v}' );",
            lambda v: f'define("AUTH_KEY", "{v}");',
        ],
    ),
    contextual(
        "pgpass-line",
        lambda g: g.password().replace(":", ""),
        [
            lambda v: f"db.internal:5432:orders:app:{v}",
            lambda v: f"~/.pgpass:\n```\n*:5432:*:postgres:{v}\n```",
        ],
    ),
    contextual(
        "prose-password-for",
        lambda g: g.password(),
        [
            lambda v: f"The password for staging is {v}, please do not share it.",
            lambda v: f"wifi password for the office: {v}",
            lambda v: f"Token for the billing API: {v}",
            lambda v: f"my github password was {v} before the reset",
        ],
    ),
    contextual(
        "markdown-table-credential",
        lambda g: g.password(),
        [
            lambda v: f"| service | user | password |\n|---|---|---|\n| db | app | {v} |",
            lambda v: f"| DB_PASSWORD | {v} |",
        ],
    ),
    contextual(
        "escaped-json-password",
        lambda g: g.password().replace("\\", ""),
        [
            lambda v: json.dumps({"body": json.dumps({"user": "app", "password": v})}),
            lambda v: f'log: "{{\\"token\\":\\"{v}\\"}}"',
        ],
    ),
    contextual(
        "non-english-password-label",
        lambda g: g.password(),
        [
            lambda v: f"Passwort: {v}",
            lambda v: f"contraseña: {v}",
            lambda v: f"senha = {v}",
            lambda v: f"пароль: {v}",
        ],
    ),
    contextual(
        "config-file-password",
        lambda g: g.password(),
        [
            lambda v: f"spring.datasource.password={v}",
            lambda v: f"[database]\nhost = db.internal\npassword = {v}",
            lambda v: f'variable "db_password" {{\n  default = "{v}"\n}}',
            lambda v: f"environment:\n  - POSTGRES_PASSWORD={v}",
            lambda v: f'conn = psycopg.connect(host="db", user="app", password="{v}")',
            lambda v: f':password => "{v}",',
        ],
    ),
    contextual(
        "libpq-conninfo-password",
        lambda g: g.password().replace("'", ""),
        [
            lambda v: f'psql "host=db.internal port=5432 user=app password={v} dbname=orders"',
            lambda v: f"dsn: host=db user=app password={v} sslmode=require",
        ],
    ),
    contextual(
        "openssl-pass-argument",
        lambda g: g.password(),
        [
            lambda v: f"openssl pkcs12 -export -in cert.pem -inkey key.pem -passout pass:{v}",
            lambda v: f"openssl rsa -in enc.key -passin pass:{v} -out plain.key",
        ],
    ),
    contextual(
        "kubernetes-secret-data",
        lambda g: base64.b64encode(g.password().encode()).decode(),
        [
            lambda v: f"apiVersion: v1\nkind: Secret\ndata:\n  password: {v}",
            lambda v: f"stringData:\n  api-token: {v}",
        ],
    ),
    url_password("smtp", "smtp-url-password", 587),
    url_password("ftp", "ftp-url-password", 21),
    contextual(
        "pip-index-url-password",
        lambda g: g.s(24),
        [
            lambda v: f"pip install --index-url https://__token__:{v}@pypi.corp.example/simple app",
            lambda v: (
                f"PIP_EXTRA_INDEX_URL=https://deploy:{v}@nexus.corp.example/repository/pypi/simple"
            ),
        ],
    ),
    contextual(
        "npmrc-auth-token",
        lambda g: g.uuid(),
        [
            lambda v: f"//registry.npmjs.org/:_authToken={v}",
            lambda v: f"//npm.pkg.github.com/:_authToken={v}\nalways-auth=true",
        ],
    ),
    token(
        "azure-devops-pat",
        "AZURE_DEVOPS_EXT_PAT",
        lambda g: g.s(52, "abcdefghijklmnopqrstuvwxyz234567"),
    ),
    token(
        "google-oauth-client-secret", "GOOGLE_CLIENT_SECRET", lambda g: "GOCSPX-" + g.s(28, B64URL)
    ),
    token("google-oauth-refresh-token", "GOOGLE_REFRESH_TOKEN", lambda g: "1//0" + g.s(99, B64URL)),
    token(
        "firebase-server-key",
        "FCM_SERVER_KEY",
        lambda g: "AAAA" + g.s(7, B64URL) + ":APA91b" + g.s(134, B64URL),
    ),
    token(
        "atlassian-api-token",
        "JIRA_API_TOKEN",
        lambda g: "ATATT3xFfGF0" + g.s(170, B64URL) + "=" + g.hex(8).upper(),
    ),
    token("doppler-token", "DOPPLER_TOKEN", lambda g: "dp.st.prd." + g.s(40)),
    token("heroku-api-key-new", "HEROKU_API_KEY", lambda g: "HRKU-AA" + g.s(58, B64URL)),
    token("stripe-test-secret-key", "STRIPE_TEST_KEY", lambda g: "sk_test_51" + g.s(97)),
    token(
        "discord-webhook",
        "DISCORD_WEBHOOK_URL",
        lambda g: f"https://discord.com/api/webhooks/{g.s(18, string.digits)}/{g.s(68, B64URL)}",
    ),
    token("aws-session-token", "AWS_SESSION_TOKEN", lambda g: "IQoJb3JpZ2luX2VjE" + g.s(300, B64)),
    contextual(
        "unlabelled-random-token",
        lambda g: g.s(g.length(32, 40, 48)),
        [
            lambda v: f"Here is what I used for the staging deploy: {v}",
            lambda v: f"```\n{v}\n```",
            lambda v: f"`{v}` worked after the rotation",
            lambda v: f"send {v} to the webhook and it answers 200",
        ],
    ),
    # -- third round: phrasings from a hand-written probe (docs/reliability.md) ---------------
    contextual(
        "space-separated-value",
        lambda g: g.pick(WORDS).capitalize() + str(g.int(10, 9999)) + g.pick("!#$%@"),
        [
            lambda v: f"ssh root@10.0.0.5 with password {v}",
            lambda v: f"aws configure set aws_secret_access_key {v}",
            lambda v: f"the vpn token {v} expires Friday",
        ],
    ),
    contextual(
        "user-slash-password",
        lambda g: g.pick(WORDS).capitalize() + str(g.int(1990, 2030)),
        [
            lambda v: f"Credentials: admin / {v}",
            lambda v: f"creds: deploy/{v}",
            lambda v: f"login: ci-bot / {v} (staging only)",
        ],
    ),
    contextual(
        "two-word-key-name",
        lambda g: " ".join(g.pick(WORDS) for _ in range(3)) + f" {g.int(1, 99)}",
        [
            lambda v: f"the wifi key is '{v}'",
            lambda v: f'api key: "{v}"',
            lambda v: f"The recovery key is '{v}', keep it offline.",
        ],
    ),
    contextual(
        "htpasswd-password",
        lambda g: g.password(),
        [
            lambda v: f"htpasswd -b .htpasswd admin {v}",
            lambda v: f"htpasswd -cb /etc/nginx/.htpasswd deploy '{v}'",
        ],
    ),
]
