"""Random bodies for the secrets corpus: one seeded generator, the alphabets real tokens use,
checksums where a format has one, and the two record types (a secret, a look-alike)."""

from __future__ import annotations

import base64
import binascii
import random
import string
import struct
import uuid
from dataclasses import dataclass

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
