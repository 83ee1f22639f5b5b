"""Secret redaction, the package's contract: planted credentials go, ordinary ids and hashes stay,
offsets survive non-ASCII text, redacting twice changes nothing, and the own rules still work
when the library is missing. The broad per-format figures are in tests/security/."""

from __future__ import annotations

import pytest

from nous.text import secrets
from nous.text.secrets import library, rules, values

PLANTED = [
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
    "sk-proj-" + "Abc123Def456Ghi789Jkl012Mno345",
    "sk-ant-" + "api03-Abc123Def456Ghi789Jkl012",
    "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "xoxb-" + "123456789012-abcdefghijkl",
]


@pytest.mark.parametrize("secret", PLANTED)
def test_named_token_formats_are_redacted(secret: str) -> None:
    text, found = secrets.redact(f"use {secret} for the deploy")
    assert secret not in text and text.startswith("use [REDACTED:")
    assert len(found) == 1 and text.endswith(" for the deploy")


def test_env_style_password_is_redacted_even_when_low_entropy() -> None:
    text, found = secrets.redact("DB_PASSWORD=hunter22\nDB_HOST=localhost")
    assert "hunter22" not in text and "localhost" in text
    assert found[0].kind == "assigned-secret"


def test_private_key_block_is_redacted_whole() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    text, _ = secrets.redact(f"key:\n{key}\nend")
    assert "MIIEowIBAAKCAQEA" not in text and text.endswith("end")


def test_url_credentials_are_redacted() -> None:
    text, _ = secrets.redact("postgres://admin:s3cretpw@db.internal:5432/app")
    assert "s3cretpw" not in text and "db.internal" in text and "admin" in text


@pytest.mark.parametrize(
    "harmless",
    [
        "commit 3e5be21f0c4d8a9b7e6f5a4b3c2d1e0f9a8b7c6d fixed it",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "sha256 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        "the token budget is 500 tokens",
        "password hashing uses argon2",
        "SESSION_TOKEN_TTL=86400",
        "AUTH_PROVIDER=github",
        "password: ${DB_PASSWORD}",
        "Co-authored-by: Jane Doe <jane@example.com>",
        "docs/specs/auth-token-rotation.md",
    ],
)
def test_ordinary_text_is_left_alone(harmless: str) -> None:
    assert secrets.redact(harmless) == (harmless, [])


def test_spans_are_character_offsets_after_non_ascii_text() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    text = f"Grüße 👋 — {token} (geheim)"
    (span,) = secrets.find(text)
    assert text[span.start : span.end] == token


def test_redacting_twice_changes_nothing() -> None:
    once, _ = secrets.redact("DB_PASSWORD=hunter22 and AKIAIOSFODNN7EXAMPLE and pw: Summer2024!")
    assert secrets.redact(once) == (once, [])
    assert secrets.scrub(once) == once


def test_overlapping_findings_merge_into_one_span() -> None:
    text = "api_key: sk-proj-Abc123Def456Ghi789Jkl012Mno345"
    found = secrets.find(text)
    assert len(found) == 1 and text[found[0].start :] == "sk-proj-Abc123Def456Ghi789Jkl012Mno345"


def test_lone_surrogates_and_empty_text_do_not_break_detection() -> None:
    assert secrets.find("") == []
    text = "bad \ud800 then DB_PASSWORD=hunter22"
    assert "hunter22" not in secrets.redact(text)[0]


def test_the_own_rules_catch_the_classics_without_the_library() -> None:
    text = "export GITHUB_TOKEN=ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert [kind for kind, _, _ in rules.scan(text)]  # the engine="builtin" fallback path


def test_the_library_is_loaded_offline_and_reported() -> None:
    assert library.available()
    assert secrets.engine().startswith("kingfisher ")


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("DB_PASSWORD", True),
        ("apiKey", True),
        ("settings.secret_key", True),
        ("X-Api-Key", True),
        ("SESSION_TOKEN_TTL", False),
        ("AUTH_PROVIDER", False),
        ("PASSWORD_MIN_LENGTH", False),
        ("api_key_header", False),
        ("tokenizer", False),
        ("author", False),
    ],
)
def test_secret_names_are_told_from_settings_about_secrets(name: str, secret: bool) -> None:
    assert values.secret_name(name) is secret


@pytest.mark.parametrize(
    "value",
    ["$DB_PASSWORD", "${DB_PASSWORD:-postgres}", "${{ secrets.TOKEN }}", "{{ vault_pw }}",
     "<your-api-key>", "********", "xxxxxxxx", "!vault", "((db-password))", ":password"],
)  # fmt: skip
def test_references_and_placeholders_are_not_values(value: str) -> None:
    assert not values.assigned_value(value, quoted=False)
