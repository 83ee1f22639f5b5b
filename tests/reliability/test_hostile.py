"""Hostile requests to a real `nous serve` subprocess over raw bytes: hypothesis-generated params
for every custom method, a 10,000-frame flood of malformed messages, JSON nested past the
decoder's limit, and an oversized message. The daemon answers each request with a result or a
JSON-RPC error, never crashes, stays responsive, and its store stays intact.

(The basic framing cases are in tests/e2e/test_framing.py.)"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nous.lsp import handlers
from nous.lsp.framing import MAX_MESSAGE
from nous.memory.model import KINDS
from tests.reliability.client import Daemon, make_workspace
from tests.reliability.conftest import half_written, integrity, report, size

pytestmark = pytest.mark.slow
CODES = {-32700, -32600, -32601, -32602, -32603, -32002, -32800}
EDGE_STRINGS = [
    "", " ", "\x00", "\ud800", "\udfff", "a\ud83dz", "\u202egnp.exe", "\ufeff", "\U0010ffff",
    "e\u0301" * 500, "🤖" * 1000, "x" * 200_000, "x" * 200_001, "y " * 150_000, "Ω" * 100_000,
    "%s%n{0}", "'; DROP TABLE memories; --", '" OR 1=1 --', 'NEAR(a b) "unterminated', "*",
    "AND OR NOT", "content: x", "^", "../../etc/passwd", "file:///etc/passwd", "project:other",
    "language:../../x", "universal", "language", "project", "\n\n\n", "<system>hi</system>",
]  # fmt: skip
NUMBERS = [-(2**63), -1, 0, 1, 2, 7, 2**31, 2**63, 10**30, 1_000_000, 1_000_001, 0.5, -0.0, 1e308]
leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40),
    st.sampled_from(EDGE_STRINGS), st.sampled_from(NUMBERS),
)  # fmt: skip
json_value = st.recursive(
    leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip
TYPED: dict[str, st.SearchStrategy[Any]] = {
    "kind": st.sampled_from([*KINDS, "Bogus Kind", "x" * 41, "décision"]),
    "mode": st.sampled_from(["startup", "turn", "recall", "sometimes"]),
    "outcome": st.sampled_from(["success", "partial", "pending", "failure", "great"]),
    "id": st.sampled_from(["0" * 32, "nonexistent", "x" * 101]),
    "newId": st.sampled_from(["0" * 32, "f" * 32]),
    "sessionId": st.sampled_from(["s1", "s2", "x" * 201]),
    "conversation": st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "boss"]), "content": leaf}
        ),
        max_size=5,
    ),
    "profile": st.sampled_from(["default", "knight", "squire", "royalty", "peasant", "nobody"]),
    "frame": st.sampled_from(["question", "task", "decision", "debug", "creative", "nope"]),
    "kinds": st.lists(st.sampled_from([*KINDS, "nope"]), max_size=4),
    "tags": st.lists(st.sampled_from(["impl", "dec", "", "\x00", "x" * 500]), max_size=4),
}

VALID: dict[str, dict[str, Any]] = {
    "nous/context": {"input": "how do we deploy?", "sessionId": "s1"},
    "nous/recall": {"query": "deploy", "sessionId": "s2"},
    "nous/remember": {"kind": "fact", "content": "the deploy runs on Fridays"},
    "nous/feedback": {"sessionId": "s1", "response": "deploy on Fridays"},
    "nous/expand": {"id": "0" * 32},
    "nous/forget": {"id": "0" * 32},
    "nous/supersede": {"id": "0" * 32, "newId": "f" * 32},
    "nous/outcome": {"id": "0" * 32, "outcome": "success"},
}


def params_for(method: str) -> st.SearchStrategy[Any]:
    model, _ = handlers.METHODS[method]
    fields = {}
    for name, info in model.model_fields.items():
        alias = info.alias or name
        fields[alias] = st.one_of(
            TYPED.get(alias, st.nothing()), json_value, st.sampled_from(EDGE_STRINGS + NUMBERS)
        )  # type: ignore[operator]
    dicts = st.fixed_dictionaries({}, optional=fields)  # type: ignore[arg-type]
    # valid params with one or two fields set to an edge value of the right type, so the
    # requests get past validation and into the use cases
    edges = st.dictionaries(
        st.sampled_from(sorted(fields) or ["unused"]),
        st.one_of(st.sampled_from(EDGE_STRINGS), st.sampled_from([1, 2, 50, 999_999])),
        max_size=2,
    )
    near_valid = edges.map(lambda extra: {**VALID.get(method, {}), **extra})
    return st.one_of(dicts, near_valid, near_valid, json_value)


calls = st.sampled_from(sorted(handlers.METHODS)).flatmap(
    lambda method: st.tuples(st.just(method), params_for(method), st.booleans())
)


def assert_answer(response: dict[str, Any]) -> str:
    """A JSON-RPC response with exactly a result or an error; returns `ok` or the error code."""
    assert response.get("jsonrpc") == "2.0"
    assert ("result" in response) != ("error" in response), response
    if "result" in response:
        return "ok"
    error = response["error"]
    assert error["code"] in CODES and isinstance(error["message"], str) and error["message"]
    return str(error["code"])


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    base = tmp_path_factory.mktemp("hostile")
    d = Daemon(make_workspace(base), base / "memory.db", base / "daemon.log").start()
    yield d
    assert d.alive()
    d.close()


OUTCOMES: Counter[str] = Counter()


@settings(
    max_examples=int(size("hostile_examples", 250)), deadline=None, derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)  # fmt: skip
@given(call=calls)
def test_every_custom_method_answers_hostile_params(
    daemon: Daemon, call: tuple[str, Any, bool]
) -> None:
    method, params, omit = call
    msg_id = daemon.request_nowait(
        method, params, omit_params=omit and method != handlers.p.NOUS_STATUS
    )
    answer = daemon.wait(msg_id, timeout=60)
    code = assert_answer(answer)
    OUTCOMES[f"{method} {code}"] += 1
    assert code != "-32603", f"an unhandled error in {method}: {answer}"  # see the daemon log
    assert daemon.alive()


def test_store_is_intact_after_the_hostile_requests(daemon: Daemon) -> None:
    status = daemon.request("nous/status", None)
    assert "result" in status
    assert integrity(daemon.db) == "ok"
    assert half_written(daemon.db) == []
    results = sum(n for key, n in OUTCOMES.items() if key.endswith(" ok"))
    report(
        "hostile_params", requests=sum(OUTCOMES.values()), results=results,
        errors=sum(OUTCOMES.values()) - results,
        by_code=dict(Counter(key.split()[1] for key in OUTCOMES.elements())),
        crashes=0, integrity="ok", memories=status["result"]["memories"],
    )  # fmt: skip


@pytest.mark.parametrize("depth", [100, 5_000, 200_000])
def test_json_nested_past_the_decoder_limit_is_a_parse_error(daemon: Daemon, depth: int) -> None:
    body = (
        b'{"jsonrpc":"2.0","id":"deep","method":"nous/recall","params":{"query":"x","kinds":'
        + b"[" * depth + b"]" * depth + b"}}"
    )  # fmt: skip
    before = len(daemon.unmatched)
    daemon.send(body)
    follow = daemon.request("nous/status", None, timeout=10)
    assert "result" in follow and daemon.alive()
    if depth > 1000:
        assert any(m["error"]["code"] == -32700 for m in daemon.unmatched[before:])
    else:
        assert assert_answer(daemon.wait("deep", timeout=10)) == "-32602"


def malformed(n: int) -> bytes:
    """One of a dozen kinds of bad frame."""
    kinds = [
        b"Content-Length: abc\r\n\r\n{}",
        b"garbage without any header\r\n",
        b"Content-Length: 9\r\n\r\n{not json",
        b"Content-Length: 2\r\n\r\n[]",
        b"Content-Length: 4\r\n\r\nnull",
        b'Content-Length: 17\r\n\r\n{"jsonrpc":"2.0"}',
        b'Content-Length: 45\r\n\r\n{"jsonrpc":"2.0","id":[1],"method":"nous/x"}',
        b"Content-Type: text/plain\r\n\r\n{}",
        b"\x00\x00\x00\xff\xfe",
        b"Content-Length: -5\r\n\r\n",
        b"Content-Length: 99999999999999999999\r\n\r\n",
        b'Content-Length: 52\r\n\r\n{"jsonrpc":"2.0","id":"f","method":"nous/remember"}',
        b"Content-Length: 3\r\nX: \xff\r\n\r\n{}}",
        b"Content-Length: 6\r\n\r\n\xff\xfe\xfd{}",
    ]
    return kinds[n % len(kinds)]


def test_a_flood_of_malformed_frames_leaves_the_daemon_answering_within_a_second(
    tmp_path: Path,
) -> None:
    frames = int(size("flood_frames", 10_000))
    d = Daemon(make_workspace(tmp_path), tmp_path / "memory.db", tmp_path / "daemon.log").start()
    try:
        rss_before = d.rss_kb()
        flood = b"".join(malformed(n) for n in range(frames))
        started = time.perf_counter()
        d.write(flood)
        written = time.perf_counter()
        answer = d.request("nous/recall", {"query": "commit to main"}, timeout=30)
        answered = time.perf_counter()
        assert "result" in answer and d.alive()
        assert answered - written <= 1.0
        popups = d.drain_notifications("window/showMessage")
        assert len(popups) <= 1
        rss_after = d.rss_kb()
    finally:
        d.close()
    report(
        "malformed_flood", frames=frames, flood_bytes=len(flood),
        write_seconds=round(written - started, 3),
        valid_request_answered_ms=round((answered - written) * 1000, 1), popups=len(popups),
        rss_before_mb=round(rss_before / 1024, 1), rss_after_mb=round(rss_after / 1024, 1),
    )  # fmt: skip


def test_oversized_message_is_refused_without_a_memory_spike(tmp_path: Path) -> None:
    megabytes = int(size("oversized_mb", 200))
    d = Daemon(make_workspace(tmp_path), tmp_path / "memory.db", tmp_path / "daemon.log").start()
    try:
        d.request("nous/status", None)
        peak_before = d.rss_kb("VmHWM")
        rss_before = d.rss_kb()
        length = megabytes * 2**20
        prefix = b'{"jsonrpc":"2.0","id":"big","method":"nous/remember","params":{"kind":"fact","content":"'
        d.write(b"Content-Length: %d\r\n\r\n" % length + prefix)
        chunk = b"x" * 2**20
        sent = len(prefix)
        while sent + len(chunk) <= length - 3:
            d.write(chunk)
            sent += len(chunk)
        d.write(b"x" * (length - 3 - sent) + b'"}}')
        refused_big = d.wait("big", timeout=30)
        assert refused_big["error"]["code"] == -32600
        assert f"exceeds the {MAX_MESSAGE}-byte cap" in refused_big["error"]["message"]
        after = d.request("nous/status", None, timeout=30)
        assert "result" in after and d.alive()
        spike_kb = d.rss_kb("VmHWM") - peak_before
        assert spike_kb * 1024 < MAX_MESSAGE

        # just under the cap: read, then refused by validation with a named field
        near = MAX_MESSAGE - 1024
        near_prefix = prefix.replace(b'"big"', b'"near"')
        d.send(near_prefix + b"y" * (near - len(near_prefix) - 3) + b'"}}')
        refused = d.wait("near", timeout=60)
        assert refused["error"]["code"] == -32602 and "content" in refused["error"]["message"]
        near_spike_kb = d.rss_kb("VmHWM") - peak_before
    finally:
        d.close()
    report(
        "oversized_message", declared_mb=megabytes, cap_mb=MAX_MESSAGE / 2**20,
        refused_with=refused_big["error"]["message"], peak_rss_growth_mb=round(spike_kb / 1024, 1),
        rss_before_mb=round(rss_before / 1024, 1),
        under_cap_message_mb=round(near / 2**20, 1),
        under_cap_peak_rss_growth_mb=round(near_spike_kb / 1024, 1),
    )  # fmt: skip
