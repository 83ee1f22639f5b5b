"""Secret formats by provider family (issue 28): chat-bot tokens, mail APIs, observability keys
and framework secrets, each in config lines and in prose that names the key next to its value
("our datadog api key is …", "set the mailgun key to …"). `FAMILIES` maps each family to the
formats in it; `scripts/secrets-corpus` reports every family's catch rate.

The bodies follow each vendor's documented shape (the Betterleaks rules Kingfisher ships name
most of them: `datadog-api-key` 32 alphanumerics after a `datadog` keyword, `mailgun-signing-key`
`<32 hex>-<8 hex>-<8 hex>`, `sendinblue-api-token` `xkeysib-…`, …); where the library has no
rule (Discord bot tokens, Rails/Django/Laravel secrets) the shape is the framework's own
generator's (`rails secret`: 128 hex, Django's `get_random_secret_key`: 50 characters of its
alphabet, Laravel's `key:generate`: `base64:` and 32 random bytes).
"""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable

from tests.security.bodies import ALNUM, B64URL, LOWER_ALNUM, UPPER_ALNUM, Gen, Secret

Make = Callable[[Gen], str]

# Where a vendor's key is written: config lines (the env name) and prose naming the vendor.
CONTEXTS: list[Callable[[str, str, str], str]] = [
    lambda v, env, vendor: f"export {env}={v}",
    lambda v, env, vendor: f"our {vendor} api key is {v}",
    lambda v, env, vendor: f"{env.lower()}: {v}",
    lambda v, env, vendor: f"The {vendor} key: {v} (rotated last week)",
    lambda v, env, vendor: json.dumps({"service": "billing", env.lower(): v}),
    lambda v, env, vendor: f"I set the {vendor} token to {v} in prod, don't commit it",
    lambda v, env, vendor: f'{env}="{v}"',
    lambda v, env, vendor: f"{vendor.capitalize()} API key -> {v}",
    lambda v, env, vendor: f"the {vendor} secret was `{v}` until the rotation",
    lambda v, env, vendor: f"- {vendor} key = {v}",
    lambda v, env, vendor: f"new {vendor} api key {v} (staging only)",
    lambda v, env, vendor: f"{env}: '{v}'",
]


def vendor(name: str, env: str, who: str, make: Make) -> Callable[[Gen, int], Secret]:
    """A vendor's key in every context of CONTEXTS, in turn."""

    def build(g: Gen, i: int) -> Secret:
        v = make(g)
        return Secret(name, CONTEXTS[(i + len(name)) % len(CONTEXTS)](v, env, who), (v,))

    return build


def shaped(
    name: str, make: Make, shapes: list[Callable[[str], str]]
) -> Callable[[Gen, int], Secret]:
    """A value in contexts of its own (a framework's config file, a header, a URL)."""

    def build(g: Gen, i: int) -> Secret:
        v = make(g)
        return Secret(name, shapes[i % len(shapes)](v), (v,))

    return build


def discord_bot(g: Gen) -> str:
    """`base64(user id).<6>.<27 or 38>`: ids of 17 to 20 digits (2016 bots to today's)."""
    user_id = str(g.int(10**16, 10**20 - 1)).encode()
    head = base64.b64encode(user_id).decode().rstrip("=")
    return f"{head}.{g.s(6, B64URL)}.{g.s(g.length(27, 38), B64URL)}"


DJANGO = string.ascii_lowercase + string.digits + "!@#%^&*(-_=+)"


def django_key(g: Gen) -> str:
    key = g.s(50, DJANGO)
    return ("django-insecure-" + key) if g.int(0, 1) else key


CHAT = [
    vendor("discord-bot-token-any-age", "DISCORD_BOT_TOKEN", "discord", discord_bot),
    shaped(
        "discord-bot-token-in-code",
        discord_bot,
        [
            lambda v: f"client.run('{v}')",
            lambda v: f"curl -H 'Authorization: Bot {v}' https://discord.com/api/v10/users/@me",
            lambda v: f"the discord bot token is {v}",
            lambda v: f'bot.login("{v}");',
        ],
    ),
    vendor(
        "slack-bot-token-prose",
        "SLACK_BOT_TOKEN",
        "slack",
        lambda g: f"xoxb-{g.s(12, string.digits)}-{g.s(13, string.digits)}-{g.s(24)}",
    ),
    vendor(
        "slack-app-token",
        "SLACK_APP_TOKEN",
        "slack",
        lambda g: f"xapp-1-A{g.s(10, UPPER_ALNUM)}-{g.s(13, string.digits)}-{g.hex(64)}",
    ),
    vendor(
        "telegram-bot-token-prose",
        "TELEGRAM_TOKEN",
        "telegram",
        lambda g: f"{g.int(10**7, 10**10 - 1)}:AA{g.s(33, B64URL)}",
    ),
    shaped(
        "telegram-bot-url",
        lambda g: f"{g.int(10**8, 10**10 - 1)}:AA{g.s(33, B64URL)}",
        [
            lambda v: f"curl https://api.telegram.org/bot{v}/getMe",
            lambda v: f"webhook set with https://api.telegram.org/bot{v}/setWebhook?url=x",
        ],
    ),
    vendor("twilio-auth-token-prose", "TWILIO_AUTH_TOKEN", "twilio", lambda g: g.hex(32)),
]

MAIL = [
    vendor("mailgun-key-prefixed", "MAILGUN_API_KEY", "mailgun", lambda g: "key-" + g.hex(32)),
    vendor(
        "mailgun-private-key",
        "MAILGUN_API_KEY",
        "mailgun",
        lambda g: f"{g.hex(32)}-{g.hex(8)}-{g.hex(8)}",
    ),
    vendor(
        "sendgrid-key-prose",
        "SENDGRID_API_KEY",
        "sendgrid",
        lambda g: f"SG.{g.s(22, B64URL)}.{g.s(43, B64URL)}",
    ),
    vendor(
        "mailchimp-api-key",
        "MAILCHIMP_API_KEY",
        "mailchimp",
        lambda g: f"{g.hex(32)}-us{g.int(1, 21)}",
    ),
    vendor("postmark-server-token", "POSTMARK_SERVER_TOKEN", "postmark", lambda g: g.uuid()),
    vendor("mailjet-secret-key", "MJ_APIKEY_PRIVATE", "mailjet", lambda g: g.hex(32)),
    vendor(
        "brevo-api-key",
        "BREVO_API_KEY",
        "brevo",
        lambda g: f"xkeysib-{g.hex(64)}-{g.s(16)}",
    ),
    vendor("sparkpost-api-key", "SPARKPOST_API_KEY", "sparkpost", lambda g: g.hex(40)),
    vendor("resend-api-key", "RESEND_API_KEY", "resend", lambda g: f"re_{g.s(8)}_{g.s(24)}"),
]

OBSERVABILITY = [
    vendor("datadog-api-key", "DD_API_KEY", "datadog", lambda g: g.hex(32)),
    vendor("datadog-app-key", "DD_APP_KEY", "datadog", lambda g: g.hex(40)),
    vendor(
        "new-relic-license-key",
        "NEW_RELIC_LICENSE_KEY",
        "new relic",
        lambda g: g.hex(36) + "NRAL",
    ),
    vendor(
        "new-relic-user-key",
        "NEW_RELIC_API_KEY",
        "newrelic",
        lambda g: "NRAK-" + g.s(27, UPPER_ALNUM),
    ),
    vendor(
        "new-relic-insert-key",
        "NEW_RELIC_INSERT_KEY",
        "newrelic",
        lambda g: "NRII-" + g.s(32, LOWER_ALNUM + "-"),
    ),
    vendor("sentry-user-token", "SENTRY_AUTH_TOKEN", "sentry", lambda g: "sntryu_" + g.hex(64)),
    vendor("sentry-auth-token-hex", "SENTRY_AUTH_TOKEN", "sentry", lambda g: g.hex(64)),
    vendor("honeycomb-api-key", "HONEYCOMB_API_KEY", "honeycomb", lambda g: g.s(22, ALNUM)),
    vendor(
        "honeycomb-ingest-key",
        "HONEYCOMB_API_KEY",
        "honeycomb",
        lambda g: "hcaik_01" + g.s(56, LOWER_ALNUM),
    ),
    vendor(
        "dynatrace-api-token",
        "DT_API_TOKEN",
        "dynatrace",
        lambda g: f"dt0c01.{g.s(24, UPPER_ALNUM)}.{g.s(64, UPPER_ALNUM)}",
    ),
    vendor(
        "grafana-cloud-token",
        "GRAFANA_CLOUD_TOKEN",
        "grafana",
        lambda g: "glc_" + g.s(g.int(60, 120)),
    ),
    vendor("splunk-hec-token", "SPLUNK_HEC_TOKEN", "splunk", lambda g: g.uuid()),
]

FRAMEWORK = [
    shaped(
        "rails-secret-key-base",
        lambda g: g.hex(128),
        [
            lambda v: f"production:\n  secret_key_base: {v}",
            lambda v: f"SECRET_KEY_BASE={v}",
            lambda v: f'config.secret_key_base = "{v}"',
            lambda v: f"the rails secret_key_base is {v}",
            lambda v: (
                f"$ bin/rails credentials:show\nsecret_key_base: {v}\naws:\n  region: eu-west-1"
            ),
            lambda v: f"heroku config:set SECRET_KEY_BASE={v}",
        ],
    ),
    shaped(
        "rails-master-key",
        lambda g: g.hex(32),
        [
            lambda v: f"RAILS_MASTER_KEY={v}",
            lambda v: f"the rails master key is {v}",
            lambda v: f"config/master.key holds {v}",
        ],
    ),
    shaped(
        "django-secret-key",
        django_key,
        [
            lambda v: f"SECRET_KEY = '{v}'",
            lambda v: f'DJANGO_SECRET_KEY="{v}"',
            lambda v: f"our django SECRET_KEY is '{v}'",
            lambda v: f"environment:\n  - DJANGO_SECRET_KEY={v}",
        ],
    ),
    shaped(
        "laravel-app-key",
        lambda g: g.b64(32),  # the key material; `base64:` is Laravel's public prefix
        [
            lambda v: f"APP_KEY=base64:{v}",
            lambda v: f"the laravel APP_KEY is base64:{v}",
            lambda v: f"php artisan key:generate gave base64:{v}",
            lambda v: f"'key' => env('APP_KEY', 'base64:{v}'),",
        ],
    ),
    shaped(
        "flask-secret-key",
        lambda g: g.hex(g.length(32, 48, 64)),
        [
            lambda v: f"app.secret_key = '{v}'",
            lambda v: f"app.config['SECRET_KEY'] = \"{v}\"",
            lambda v: f"FLASK_SECRET_KEY={v}",
        ],
    ),
    shaped(
        "symfony-app-secret",
        lambda g: g.hex(32),
        [lambda v: f"APP_SECRET={v}", lambda v: f"framework:\n    secret: '{v}'"],
    ),
    shaped(
        "phoenix-secret-key-base",
        lambda g: g.s(64, ALNUM + "+/"),
        [
            lambda v: f'config :app, AppWeb.Endpoint,\n  secret_key_base: "{v}"',
            lambda v: f"SECRET_KEY_BASE={v}",
        ],
    ),
    shaped(
        "nextauth-secret",
        lambda g: g.b64(32),
        [lambda v: f"NEXTAUTH_SECRET={v}", lambda v: f'AUTH_SECRET="{v}"'],
    ),
    shaped(
        "session-secret-in-code",
        lambda g: g.s(g.int(24, 40), ALNUM),
        [
            lambda v: f"app.use(session({{ secret: '{v}', resave: false }}))",
            lambda v: f"jwt.secret={v}",
            lambda v: f'JWT_SECRET="{v}"',
        ],
    ),
]

FAMILY_MAKERS: dict[str, list[Callable[[Gen, int], Secret]]] = {
    "chat-bot tokens": CHAT,
    "mail APIs": MAIL,
    "observability keys": OBSERVABILITY,
    "framework secrets": FRAMEWORK,
}
FORMATS = [make for makers in FAMILY_MAKERS.values() for make in makers]
EARLIER = {
    "chat-bot tokens": [
        "discord-bot-token", "discord-webhook", "slack-bot-token", "slack-user-token",
        "slack-webhook", "telegram-bot-token", "twilio-api-key",
    ],
    "mail APIs": ["mailgun-api-key", "sendgrid-api-key"],
    "observability keys": ["new-relic-key", "grafana-service-token", "hex-token-assignment"],
    "framework secrets": ["generic-api-key-assignment"],
}  # fmt: skip
"""Formats of the issue-13 corpus that belong to a family too."""
FAMILIES: dict[str, list[str]] = {
    family: sorted({make(Gen(0), 0).format for make in makers} | set(EARLIER[family]))
    for family, makers in FAMILY_MAKERS.items()
}
"""Family → the corpus formats in it."""
