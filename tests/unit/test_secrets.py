"""Secret redaction: planted credentials go, ordinary ids and hashes stay."""

from __future__ import annotations

import pytest

from nous.memory import secrets

PLANTED = [
    ("AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "github-token"),
    ("github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", "github-token"),
    ("sk-proj-" + "Abc123Def456Ghi789Jkl012Mno345", "openai-key"),
    ("sk-ant-" + "api03-Abc123Def456Ghi789Jkl012", "openai-key"),
    ("AIza" + "SyA1234567890abcdefghijklmnopqrstuv", "google-api-key"),
    ("hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345", "huggingface-token"),
    ("xoxb-" + "123456789012-abcdefghijkl", "slack-token"),
]


@pytest.mark.parametrize(("secret", "kind"), PLANTED)
def test_named_token_formats_are_redacted(secret: str, kind: str) -> None:
    text, found = secrets.redact(f"use {secret} for the deploy")
    assert secret not in text
    assert [r.kind for r in found] == [kind]


def test_env_style_password_is_redacted_even_when_low_entropy() -> None:
    text, found = secrets.redact("DB_PASSWORD=hunter22\nDB_HOST=localhost")
    assert "hunter22" not in text and "localhost" in text
    assert found[0].kind == "assigned-secret"


def test_private_key_block_is_redacted() -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    text, _ = secrets.redact(f"key:\n{key}\nend")
    assert "MIIEowIBAAKCAQEA" not in text and text.endswith("end")


def test_url_credentials_are_redacted() -> None:
    text, _ = secrets.redact("postgres://admin:s3cretpw@db.internal:5432/app")
    assert "s3cretpw" not in text and "db.internal" in text


@pytest.mark.parametrize(
    "harmless",
    [
        "commit 3e5be21f0c4d8a9b7e6f5a4b3c2d1e0f9a8b7c6d fixed it",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "sha256 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        "the token budget is 500 tokens",
        "password hashing uses argon2",
    ],
)
def test_ordinary_text_is_left_alone(harmless: str) -> None:
    assert secrets.redact(harmless) == (harmless, [])
