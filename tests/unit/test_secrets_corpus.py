"""Secret detection on the first generated corpus (issue 5): planted secrets and benign
look-alikes (git SHAs, UUIDs, digests, identifiers, prose). Written before the current rules and
kept as a second, independent corpus; the broad one is tests/security/. Prints the rates."""

from __future__ import annotations

import base64
import hashlib
import random
import string
import uuid

from nous.text import secrets

R = random.Random(20261122)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def b64url(n: int) -> str:
    return base64.urlsafe_b64encode(R.randbytes(n)).decode().rstrip("=")


PLANTED = [
    lambda: "AKIA" + rand(16, string.ascii_uppercase + string.digits),
    lambda: "ghp_" + rand(36),
    lambda: "github_pat_" + rand(22) + "_" + rand(59),
    lambda: "sk-" + rand(48),
    lambda: "sk-proj-" + rand(40, ALNUM + "-_"),
    lambda: "sk-ant-api03-" + rand(60, ALNUM + "-_"),
    lambda: "AIza" + rand(35, ALNUM + "-_"),
    lambda: "hf_" + rand(34),
    lambda: "xoxb-" + rand(12, string.digits) + "-" + rand(24),
    lambda: "eyJ" + b64url(18) + ".eyJ" + b64url(30) + "." + b64url(32),
    lambda: (
        "-----BEGIN PRIVATE KEY-----\n"
        + base64.b64encode(R.randbytes(96)).decode()
        + "\n-----END PRIVATE KEY-----"
    ),
    lambda: "DB_PASSWORD=" + R.choice(["hunter22", "letmein99", "Summer2024!", "correcthorse"]),
    lambda: "SECRET_KEY=" + rand(24),
    lambda: "postgres://app:" + rand(10) + "@db.internal:5432/app",
    lambda: "api_key: " + rand(40),
    lambda: "client_secret = '" + rand(32) + "'",
    lambda: rand(40, ALNUM + "+/"),
]
BENIGN = [
    lambda: hashlib.sha1(R.randbytes(8)).hexdigest(),
    lambda: hashlib.sha256(R.randbytes(8)).hexdigest(),
    lambda: str(uuid.UUID(int=R.getrandbits(128))),
    lambda: "sha256:" + hashlib.sha256(R.randbytes(8)).hexdigest(),
    lambda: (
        "test_"
        + "_".join(
            R.choice(["unchanged", "file", "is", "not", "re", "embedded", "store"])
            for _ in range(6)
        )
    ),
    lambda: "".join(
        w.capitalize()
        for w in R.sample(["abstract", "singleton", "proxy", "factory", "bean", "manager"], 5)
    ),
    lambda: "src/" + "/".join(R.sample(["nous", "memory", "context", "store", "lsp"], 3)) + ".py",
    lambda: f"v{R.randint(0, 9)}.{R.randint(0, 30)}.{R.randint(0, 99)}",
    lambda: (
        "https://example.com/"
        + R.choice(["docs", "api/v2", "blog"])
        + "/"
        + str(R.randint(1, 9999))
    ),
    lambda: "the password is required for login",
    lambda: "token budget: 500 tokens per recall",
    lambda: "passwords are hashed with argon2id",
    lambda: "set the api_key in your environment, never in code",
    lambda: "commit " + hashlib.sha1(R.randbytes(4)).hexdigest()[:12] + " fixed the flaky test",
    lambda: "secret: see the team vault",
]


def test_catch_rate_and_false_positives() -> None:
    planted = [f"note: {make()} (from the deploy notes)" for make in PLANTED for _ in range(13)]
    benign = [f"note: {make()} (from the deploy notes)" for make in BENIGN for _ in range(15)]
    assert len(planted) >= 200 and len(benign) >= 200
    caught = sum(bool(secrets.find(text)) for text in planted)
    missed = [t for t in planted if not secrets.find(t)]
    flagged = [t for t in benign if secrets.find(t)]
    catch_rate = caught / len(planted)
    fp_rate = len(flagged) / len(benign)
    print(
        f"\nsecrets: caught {caught}/{len(planted)} ({catch_rate:.1%}), false positives {len(flagged)}/{len(benign)} ({fp_rate:.1%})"
    )
    assert catch_rate >= 0.99, missed[:5]
    assert fp_rate <= 0.02, flagged[:5]


def test_redacted_text_keeps_no_trace_of_the_secret() -> None:
    for make in PLANTED:
        secret = make()
        text, found = secrets.redact(f"before {secret} after")
        value = secret.split("=", 1)[-1].split(": ", 1)[-1].strip("'")
        if secret.startswith("postgres://"):
            value = secret.split(":")[2].split("@")[0]
        assert found and value not in text and text.startswith("before") and text.endswith("after")
