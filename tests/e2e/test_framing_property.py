"""Property test of the frame reader: valid frames come out intact, in order, whatever junk sits
between them and however the bytes are split."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from nous.lsp.framing import FrameError, FrameReader


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


bodies = st.lists(
    st.dictionaries(st.text(max_size=8), st.one_of(st.integers(), st.text(max_size=30)), max_size=4).map(
        lambda d: json.dumps({"jsonrpc": "2.0", "id": 1, "params": d}).encode()
    ),
    min_size=1, max_size=6,
)  # fmt: skip
junk = st.binary(max_size=40).filter(lambda b: b"Content-Length" not in b and b"\r\n\r\n" not in b)


def drain(reader: FrameReader) -> list[bytes | FrameError]:
    out: list[bytes | FrameError] = []
    while (item := reader.next()) is not None:
        out.append(item)
    return out


@settings(max_examples=300, deadline=None)
@given(bodies=bodies, split=st.integers(1, 64))
def test_valid_frames_survive_any_split(bodies: list[bytes], split: int) -> None:
    stream = b"".join(frame(b) for b in bodies)
    reader = FrameReader()
    got: list[bytes | FrameError] = []
    for start in range(0, len(stream), split):
        reader.feed(stream[start : start + split])
        got += drain(reader)
    assert got == bodies


@settings(max_examples=300, deadline=None)
@given(bodies=bodies, junks=st.lists(junk, min_size=6, max_size=6))
def test_junk_between_frames_is_skipped_and_reported(
    bodies: list[bytes], junks: list[bytes]
) -> None:
    stream = b"".join(j + frame(b) for j, b in zip(junks, bodies, strict=False))
    reader = FrameReader()
    reader.feed(stream)
    got = drain(reader)
    assert [g for g in got if isinstance(g, bytes)] == bodies


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_never_raise_and_a_later_frame_is_read(data: bytes) -> None:
    reader = FrameReader(max_message=1000)
    reader.feed(data)
    drain(reader)
    good = json.dumps({"jsonrpc": "2.0", "id": "ok"}).encode()
    reader.feed(b"\r\n\r\n" + frame(good) + frame(good))
    got = [g for g in drain(reader) if isinstance(g, bytes)]
    assert good in got


@settings(max_examples=200, deadline=None)
@given(declared=st.integers(1001, 10**11), sent=st.integers(0, 3000), split=st.integers(1, 97))
def test_an_oversized_frame_never_swallows_the_next_one(
    declared: int, sent: int, split: int
) -> None:
    """Over the cap: the body is discarded without buffering, and a header inside the declared
    body (the length was a lie) or right after it (the length was true) resumes reading."""
    reader = FrameReader(max_message=1000)
    sent = min(sent, declared)
    good = json.dumps({"jsonrpc": "2.0", "id": "after"}).encode()
    stream = b"Content-Length: %d\r\n\r\n" % declared + b"y" * sent + frame(good)
    got: list[bytes | FrameError] = []
    for start in range(0, len(stream), split):
        reader.feed(stream[start : start + split])
        got += drain(reader)
        assert len(reader._buffer) <= 1100
    assert isinstance(got[0], FrameError) and "cap" in got[0].reason
    assert got[-1] == good


@settings(max_examples=200, deadline=None)
@given(declared=st.integers(1, 999), sent=st.binary(max_size=60), split=st.integers(1, 97))
def test_a_body_cut_short_by_the_next_frame_gives_that_frame_back(
    declared: int, sent: bytes, split: int
) -> None:
    """The lying frame's header line fits inside its declared body, whether or not enough bytes
    follow to fill it."""
    sent = sent.replace(b"\r\n", b"")
    declared = max(declared, len(sent) + 22)
    good = json.dumps({"jsonrpc": "2.0", "id": "after", "method": "nous/status"}).encode()
    stream = b"Content-Length: %d\r\n\r\n" % declared + sent + frame(good)
    reader = FrameReader(max_message=1000)
    got: list[bytes | FrameError] = []
    for start in range(0, len(stream), split):
        reader.feed(stream[start : start + split])
        got += drain(reader)
    assert good in got
