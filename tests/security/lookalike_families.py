"""Look-alike classes of issue 28, each generated in many varied instances (PER_CLASS_WIDE of
them, so a false-positive rate of 2 % is one instance in fifty): certificate and key
fingerprints, UUIDs, data URIs of images, document and share URLs without credentials, and
base64 of non-secret configuration. All must come back unredacted."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Callable

from tests.security.bodies import B64URL, WORDS, Gen

PER_CLASS_WIDE = 50


def _colons(g: Gen, nbytes: int, upper: bool = True) -> str:
    pairs = [g.hex(2) for _ in range(nbytes)]
    text = ":".join(pairs)
    return text.upper() if upper else text


def fingerprint(g: Gen, i: int) -> str:
    sha1, sha256, md5 = _colons(g, 20), _colons(g, 32), _colons(g, 16, upper=False)
    app = f"com.{g.pick(WORDS)}.{g.pick(WORDS)}"
    shapes = [
        f"Android release key SHA-1 fingerprint: {sha1}",
        f"Add the SHA1 {sha1} to the Firebase console for {app}",
        f"Certificate fingerprints:\n\t SHA1: {sha1}\n\t SHA256: {sha256}",
        f"sha256 Fingerprint={sha256}",
        f"SHA1 Fingerprint={sha1}",
        json.dumps(
            [
                {
                    "relation": ["delegate_permission/common.handle_all_urls"],
                    "target": {
                        "namespace": "android_app",
                        "package_name": app,
                        "sha256_cert_fingerprints": [sha256],
                    },
                }
            ]
        ),
        f"The key fingerprint is MD5:{md5}.",
        f"Variant: release\nConfig: release\nStore: ~/keys/{g.pick(WORDS)}.jks\n"
        f"Alias: upload\nMD5: {_colons(g, 16)}\nSHA1: {sha1}\nSHA-256: {sha256}",
        f"| build | SHA-1 |\n|---|---|\n| debug | {sha1} |",
        f"our upload key SHA1 is {sha1}",
        f"pin the server certificate ({sha256}) in network_security_config.xml",
        f"signing certificate SHA-256 = {sha256}",
        f"RSA key fingerprint is {md5}.",
        f"- debug keystore sha1: `{sha1.lower()}`",
    ]
    return shapes[(i + g.int(0, len(shapes) - 1)) % len(shapes)]


def uuids(g: Gen, i: int) -> str:
    u, v = g.uuid(), g.uuid()
    shapes = [
        f"request id {u}",
        f"X-Request-ID: {u}",
        f"AZURE_TENANT_ID={u}\nAZURE_SUBSCRIPTION_ID={v}",
        f"AZURE_CLIENT_ID={u}",
        f"metadata:\n  name: api\n  uid: {u}",
        json.dumps({"id": u, "traceId": v, "status": "done"}),
        f"the tenant id is {u}",
        f"Our project key id is {u} (the key itself is in Vault)",
        f"correlation id {u} shows the retry",
        f"GUID {{{u.upper()}}} in the registry",
        f"INSERT INTO orders (id) VALUES ('{u}');",
        f"idempotency key: {u}",
        f"see https://app.example.com/runs/{u}",
        f"api_key_id: {u}",
        f"session {u} ended with a timeout",
        f"token id {u} was revoked at 10:42",
        f"client_id: {u}",
        f"the job {u} failed on step 3",
    ]
    return shapes[(i + g.int(0, len(shapes) - 1)) % len(shapes)]


def _png(g: Gen, size: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", g.int(1, 64), g.int(1, 64), 8, 6, 0, 0, 0)
    body = zlib.compress(g.r.randbytes(size))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")
    )


def _image(g: Gen) -> tuple[str, bytes]:
    kind = g.pick(["png", "jpeg", "gif", "webp", "svg+xml"])
    size = g.int(60, 900)
    if kind == "png":
        return kind, _png(g, size)
    if kind == "jpeg":
        return kind, b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + g.r.randbytes(size)
    if kind == "gif":
        return kind, b"GIF89a" + g.r.randbytes(size)
    if kind == "webp":
        return kind, b"RIFF" + struct.pack("<I", size + 4) + b"WEBPVP8 " + g.r.randbytes(size)
    paths = " ".join(
        f"M{g.int(0, 99)} {g.int(0, 99)}L{g.int(0, 99)} {g.int(0, 99)}" for _ in range(9)
    )
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><path d="{paths}"/></svg>'
    return kind, svg.encode()


def data_uri(g: Gen, i: int) -> str:
    kind, raw = _image(g)
    b64 = base64.b64encode(raw).decode()
    uri = f"data:image/{kind};base64,{b64}"
    alt = g.pick(["diagram", "logo", "screenshot", "x", "architecture", "chart"])
    wrapped = "\n".join(base64.encodebytes(raw).decode().split())  # MIME lines of 76
    shapes = [
        f"![{alt}]({uri})",
        f"Here is the {alt}:\n\n![{alt}]({uri})\n\nas discussed.",
        f'<img src="{uri}" alt="{alt}">',
        f".{alt} {{ background-image: url({uri}); }}",
        json.dumps({"avatar": uri, "name": g.pick(WORDS)}),
        f"![{alt}](data:image/{kind};base64,\n{wrapped}\n)",
        f"[{alt}]: {uri}\n\n![{alt}][{alt}]",
        f'<img alt="{alt}" src="data:image/{kind};base64,\n{wrapped}">',
    ]
    return shapes[(i + g.int(0, len(shapes) - 1)) % len(shapes)]


def share_url(g: Gen, i: int) -> str:
    doc = "1" + g.s(43, B64URL)
    kinds = [
        f"https://docs.google.com/document/d/{doc}/edit?usp=sharing",
        f"https://docs.google.com/spreadsheets/d/{doc}/edit#gid={g.int(0, 2**31)}",
        f"https://docs.google.com/presentation/d/{doc}/edit?usp=drive_link",
        f"https://drive.google.com/file/d/{'1' + g.s(32, B64URL)}/view?usp=sharing",
        f"https://drive.google.com/drive/folders/{'1' + g.s(32, B64URL)}?usp=share_link",
        f"https://docs.google.com/forms/d/e/1FAIpQLS{g.s(48, B64URL)}/viewform",
        f"https://docs.google.com/spreadsheet/ccc?key=0A{g.s(42, B64URL)}&usp=sharing",
        f"https://www.dropbox.com/scl/fi/{g.s(25, 'abcdefghijklmnopqrstuvwxyz0123456789')}/"
        f"{g.pick(WORDS)}.pdf?rlkey={g.s(25, 'abcdefghijklmnopqrstuvwxyz0123456789')}&dl=0",
        f"https://www.figma.com/file/{g.s(22)}/{g.pick(WORDS).capitalize()}-Design?node-id=0%3A1",
        f"https://www.notion.so/{g.pick(WORDS)}/{g.pick(WORDS).capitalize()}-Spec-{g.hex(32)}",
        f"https://miro.com/app/board/{g.s(10, B64URL)}=/",
        f"https://1drv.ms/w/s!{g.s(34, B64URL)}",
        f"https://www.loom.com/share/{g.hex(32)}",
        f"https://acme.sharepoint.com/:w:/r/sites/eng/_layouts/15/Doc.aspx?sourcedoc=%7B{g.uuid().upper()}%7D",
    ]
    url = kinds[(i + g.int(0, len(kinds) - 1)) % len(kinds)]
    shapes = [
        f"The spec is at {url}",
        f"- design doc: {url}",
        f"see [the runbook]({url}) before the deploy",
        f"DOCS_URL={url}",
        f'"link": "{url}"',
        f"{url}",
    ]
    return shapes[(i + g.int(0, len(shapes) - 1)) % len(shapes)]


def _config(g: Gen) -> str:
    service = g.pick(WORDS)
    shapes = [
        json.dumps(
            {
                "service": service,
                "region": "eu-west-1",
                "replicas": g.int(1, 9),
                "features": {"darkMode": True, "beta": g.pick(WORDS)},
            }
        ),
        f"server:\n  port: {g.int(3000, 9000)}\n  host: 0.0.0.0\nlog_level: info\nname: {service}\n",
        f"[{service}]\nenabled = true\ntimeout = {g.int(1, 60)}\npath = /var/lib/{service}\n",
        f"FEATURE_FLAGS={g.pick(WORDS)},{g.pick(WORDS)}\nLOG_LEVEL=debug\nPORT={g.int(3000, 9000)}",
        json.dumps(
            {"theme": g.pick(["dark", "light"]), "locale": "en-GB", "pageSize": g.int(10, 99)}
        ),
        f"#cloud-config\nhostname: {service}-{g.int(1, 999)}\npackages:\n  - nginx\n  - git\nruncmd:\n  - systemctl enable nginx\n",
    ]
    return shapes[g.int(0, len(shapes) - 1)]


def base64_config(g: Gen, i: int) -> str:
    text = _config(g)
    one = base64.b64encode(text.encode()).decode()
    wrapped = base64.encodebytes(text.encode()).decode().strip()  # `base64` wraps at 76
    name = g.pick(["app.yaml", "settings.json", "config.ini", "flags.env", "user-data"])
    shapes = [
        f"apiVersion: v1\nkind: ConfigMap\nbinaryData:\n  {name}: {one}",
        f"echo {one} | base64 -d > {name}",
        f"$ base64 {name}\n{wrapped}",
        json.dumps({"configuration": one, "encoding": "base64"}),
        f'user_data = "{one}"',
        f"The encoded config blob is {one}",
        f"```\n{wrapped}\n```",
        f"CONFIG_B64={one}",
    ]
    return shapes[(i + g.int(0, len(shapes) - 1)) % len(shapes)]


WIDE: dict[str, Callable[[Gen, int], str]] = {
    "certificate-fingerprint": fingerprint,
    "uuid-in-context": uuids,
    "data-uri-image-markdown": data_uri,
    "document-share-url": share_url,
    "base64-non-secret-config": base64_config,
}
