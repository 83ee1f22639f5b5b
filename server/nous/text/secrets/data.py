"""Where a random-looking string is data, not a key: hashes and public data by the marker
before them, files by their magic, base64 blocks (wrapped at 64/76 characters, or reflowed into
one paragraph as the harvest renders them) judged as one block, base64 that decodes to text with
no secret in it, and document and share links (issue 28's look-alikes). Used by `rules.py`'s
bare-random-string rule."""

from __future__ import annotations

import re
from collections.abc import Callable

from nous.text.secrets import values

DATA_MARKERS = re.compile(
    r"sha\d+[-:]|h1:|base64,|md5:|integrity|ssh-(?:rsa|dss|ed25519)|ecdsa-sha2|checksum"
    r"|digest|hash|etag|fingerprint|thumbnail|image|icon|avatar|logo|font|img|src=|data:|nonce"
    r"|pk_(?:live|test)_|\"sig\"|signature|keyid|ipfs|bafy|onion"
)
FILE_MAGIC = (
    "iVBORw0KGgo", "/9j/", "R0lGOD", "JVBERi0", "PHN2Zy", "PD94bW", "H4sI", "UEsDB", "UklGR",
    "AAAAIGZ0eXB", "AAAAHGZ0eXB", "Qk0",
)  # fmt: skip
_SHARE_URL = re.compile(
    r"https?://(?:(?:docs|drive|sheets|slides|forms)\.google\.com/"
    r"|(?:www\.)?dropbox\.com/(?:s|scl|sh)/|(?:www\.)?figma\.com/(?:file|design|board|proto)/"
    r"|(?:www\.)?notion\.so/|miro\.com/app/board/|1drv\.ms/|onedrive\.live\.com/"
    r"|[\w-]+\.sharepoint\.com/|(?:www\.)?loom\.com/share/|app\.box\.com/s/)",
    re.I,
)
"""Document and share links: their ids (`/d/1aBc…`, `?key=0A…`, `s!…`) name a document, they
grant nothing without the reader's own sign-in (issue 28's look-alikes)."""
_B64_WORD = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")


def share_url_at(text: str, pos: int) -> bool:
    """Whether `pos` is inside a document or share link (`_SHARE_URL`)."""
    lo = max(0, pos - 2048)  # a link is shorter: a bounded look back, whatever the text
    start = max(text.rfind(c, lo, pos) for c in " \t\n(\"'<`[") + 1
    url = text.find("http", start, pos)
    return url != -1 and _SHARE_URL.match(text, url) is not None


def encoded_data(
    text: str, low: str, first: int, end: int, scan: Callable[[str], list[tuple[str, int, int]]]
) -> bool:
    """Whether the base64 block text[first:end] (`block`) is data, not a key: its first word
    follows a data marker (`data:image/png;base64,`, on its line or the line before) or starts
    with a file's magic, or it decodes to text (a configuration: a ConfigMap's `binaryData`,
    `echo … | base64 -d`) in which `scan` finds nothing. Random bytes do not decode to
    text, so a key stays a key; a secret inside the decoded text is still found."""
    if text.startswith(FILE_MAGIC, first) or DATA_MARKERS.search(low, max(0, first - 48), first):
        return True
    decoded = values.decoded_text("".join(text[first:end].split()))
    return decoded is not None and not scan(decoded)


def block(text: str, start: int, end: int) -> tuple[int, int]:
    """(first, end) of the run of base64 words around the token at start..end: a wrapped block
    (lines of 64 or 76 characters), or the same block reflowed into one paragraph, as the
    harvest renders it. Neighbours count when they are 40+ base64 characters (words of prose
    are shorter); the token alone when it is no whole word."""
    if start > 0 and not text[start - 1].isspace():
        return start, end
    first = start
    while True:
        stop = first
        while stop > 0 and text[stop - 1] in " \t\n":
            stop -= 1
        if stop == first or stop == 0:
            break
        word = stop
        while word > 0 and not text[word - 1].isspace():
            word -= 1
        if stop - word < 40 or not _B64_WORD.fullmatch(text, word, stop):
            break
        first = word
    last = end
    while last < len(text) and text[last] in "=":
        last += 1
    while True:
        nxt = last
        while nxt < len(text) and text[nxt] in " \t\n":
            nxt += 1
        if nxt == last or nxt >= len(text):
            break
        word_end = nxt
        while word_end < len(text) and not text[word_end].isspace():
            word_end += 1
        m = _B64_WORD.match(text, nxt, word_end)
        if m is None or m.end() - nxt < 4:
            break
        last = m.end()
        if m.end() < word_end or word_end - nxt < 40:
            break  # the block's last, shorter line (or one closing its markup: `…AB==">`)
    return first, last
