"""Sentence embeddings: all-MiniLM-L6-v2 as int8 ONNX, run with onnxruntime + tokenizers only.

Mean pooling over the attention mask, then L2 normalisation, so a dot product is a cosine.
`Embedder.embed_batch` is the one method an embedder implements; the rest derive from it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from nous import assets
from nous.errors import AssetError
from nous.text.words import split

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BATCH_TOKENS = 1024
"""Texts × padded width per model run, whatever the caller's batch: the run's tensors (attention
is batch × 12 heads × width²) then stay a few tens of MB, which onnxruntime's arena keeps for the
next run instead of the heap fragmenting under them."""
Vector = npt.NDArray[np.float32]


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors of `dimension` values."""

    name: str
    dimension: int

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One row per text, each L2-normalised."""

    recent_limit = 32
    """How many single-text vectors `embed` keeps (one chat turn embeds its input up to three
    times: the refresh check, the search, the session topic)."""
    _recent: dict[str, Vector] | None = None

    def embed(self, text: str) -> Vector:
        """One text's vector, read-only: a recent one is handed out again, not recomputed."""
        if self._recent is None:
            self._recent = {}
        vector = self._recent.get(text)
        if vector is None:
            vector = self.embed_batch([text])[0]
            vector.setflags(write=False)
            if len(self._recent) >= self.recent_limit:
                del self._recent[next(iter(self._recent))]
            self._recent[text] = vector
        return vector

    def embed_many(self, texts: Sequence[str], batch_size: int = 32) -> npt.NDArray[np.float32]:
        """Embeds in batches of similar length (less padding), returned in input order."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out[chunk] = self.embed_batch([texts[i] for i in chunk])
        return out


class OnnxEmbedder(Embedder):
    """The real model from `models/` (checksums verified at load)."""

    def __init__(self, model: str = DEFAULT_MODEL, threads: int = 2) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        entry = assets.manifest_entry("embedding", model)
        model_file = assets.asset("embedding", model, "model")
        tokenizer_file = assets.asset("embedding", model, "tokenizer")
        self.name = model
        self.dimension = int(entry["dimension"])
        self.max_tokens = int(entry.get("max_tokens", 256))
        try:
            self._tokenizer = Tokenizer.from_file(str(tokenizer_file.path))
        except Exception as exc:
            raise AssetError(f"cannot load tokenizer {tokenizer_file.path}: {exc}") from exc
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=self.max_tokens)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # onnxruntime's arena keeps one run's tensors for the next (runs are capped at
        # BATCH_TOKENS). Without it the heap fragmented under them: one batch of 32 long texts
        # left a process at 0.9–1.3 GB resident, harvesting a real repository peaked at 1.5 GB.
        options.enable_cpu_mem_arena = True
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # prepacked weights are a second copy of the int8 matrices (7 MB) for no measured speed
        options.add_session_config_entry("session.disable_prepacking", "1")
        try:
            self._session = ort.InferenceSession(
                str(model_file.path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise AssetError(f"cannot load ONNX model {model_file.path}: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()

    def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        chunk: list[int] = []
        # sorted by length, a run's width is its last text's: add while texts × width fit
        for i in sorted(range(len(texts)), key=lambda i: len(encodings[i].ids)):
            if chunk and (len(chunk) + 1) * len(encodings[i].ids) > BATCH_TOKENS:
                out[chunk] = self._run([encodings[j] for j in chunk])
                chunk = []
            chunk.append(i)
        out[chunk] = self._run([encodings[j] for j in chunk])
        return out

    def _run(self, encodings: Sequence[Any]) -> npt.NDArray[np.float32]:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._lock:
            hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalise(pooled.astype(np.float32))


class HashEmbedder(Embedder):
    """A deterministic bag-of-words stand-in for fast unit tests of pure logic; not a model."""

    def __init__(self, dimension: int = 384) -> None:
        self.name = "hash-bow"
        self.dimension = dimension

    def embed_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in split(text):
                slot = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest())
                out[row, slot % self.dimension] += 1.0
        return normalise(out)


def normalise(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


@cache
def default_embedder(model: str = DEFAULT_MODEL) -> OnnxEmbedder:
    """The process-wide real embedder (loaded once)."""
    return OnnxEmbedder(model)
