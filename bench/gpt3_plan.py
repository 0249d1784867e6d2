#!/usr/bin/env python3
"""Planning benchmark: shardc on a GPT-3-175B-shaped graph, TP=8 x DP=4.

Writes (into a temporary folder) a GPT-3-shaped ONNX model: 96 layers,
hidden 12288, 96 heads, sequence 2048, vocabulary 50257, batch 8, fp16
weights as external data that is absent (shardc plans without reading
weight bytes). Each layer is what exporters write: LayerNormalization,
MatMul+Add projections (a fused QKV one), head reshapes and transposes,
Attention (opset 23, causal), tanh GELU, residual adds.

Then it times the whole `shardc gpt3.onnx --tp 8 --dp 4 --emit=partitioned
-o /dev/null --report r.json` process for 12, 24, 48 and 96 layers (median
of --repeats runs each), reports seconds per layer (planning must not grow
faster than the layer count) and, from the report, every layer's forward
tensor-parallel traffic per device against Megatron-LM's formula
(2 all-reduces of b*s*h, ring: 2(t-1)/t of it per device).

    .venv/bin/python bench/gpt3_plan.py [--layers 12,24,48,96] [--repeats 3]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto, helper

REPO = pathlib.Path(__file__).resolve().parent.parent


class Graph:
    """Nodes plus initializers (fp16 unless told) that point into an absent weight file."""

    def __init__(self, weight_type=TensorProto.FLOAT16):
        self.nodes, self.initializers, self.count, self.offset = [], [], 0, 0
        self.weight_type = weight_type

    def name(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def weight(self, stem, shape):
        tensor = TensorProto(name=self.name(stem), data_type=self.weight_type, dims=shape,
                             data_location=TensorProto.EXTERNAL)
        length = 2 if self.weight_type == TensorProto.FLOAT16 else 4
        for dim in shape:
            length *= dim
        for key, value in (("location", "gpt3.weights"), ("offset", str(self.offset)),
                           ("length", str(length))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        self.offset += length
        self.initializers.append(tensor)
        return tensor.name

    def constant(self, values):
        name = self.name("shape")
        self.initializers.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name

    def op(self, op_type, inputs, outputs=1, **attrs):
        names = [self.name(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, names, name=names[0], **attrs))
        return names[0] if outputs == 1 else names

    def linear(self, x, n_in, n_out):
        return self.op("Add", [self.op("MatMul", [x, self.weight("w", [n_in, n_out])]),
                               self.weight("b", [n_out])])

    def layer_norm(self, x, hidden):
        return self.op("LayerNormalization",
                       [x, self.weight("ln_g", [hidden]), self.weight("ln_b", [hidden])],
                       axis=-1, epsilon=1e-5)


def gpt3(layers, hidden=12288, heads=96, seq=2048, vocab=50257, batch=8,
         weight_type=TensorProto.FLOAT16):
    """The model; its logits are the output `logits`."""
    g = Graph(weight_type)
    head = hidden // heads
    positions = g.name("positions")
    g.initializers.append(helper.make_tensor(positions, TensorProto.INT64, [1, seq],
                                             list(range(seq))))
    x = g.op("Add", [g.op("Gather", [g.weight("wte", [vocab, hidden]), "input_ids"]),
                     g.op("Gather", [g.weight("wpe", [seq, hidden]), positions])])
    split_shape = g.constant([batch, seq, heads, head])
    merge_shape = g.constant([batch, seq, hidden])
    sizes = g.constant([hidden] * 3)
    for _ in range(layers):
        q, k, v = g.op("Split", [g.linear(g.layer_norm(x, hidden), hidden, 3 * hidden), sizes],
                       outputs=3, axis=-1)
        q, k, v = (g.op("Transpose", [g.op("Reshape", [t, split_shape])], perm=[0, 2, 1, 3])
                   for t in (q, k, v))
        context = g.op("Attention", [q, k, v], is_causal=1)
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merge_shape])
        x = g.op("Add", [x, g.linear(context, hidden, hidden)])
        h = g.op("Gelu", [g.linear(g.layer_norm(x, hidden), hidden, 4 * hidden)],
                 approximate="tanh")
        x = g.op("Add", [x, g.linear(h, 4 * hidden, hidden)])
    g.nodes.append(helper.make_node(
        "MatMul", [g.layer_norm(x, hidden), g.weight("lm_head", [hidden, vocab])], ["logits"],
        name="lm_head"))
    graph = helper.make_graph(
        g.nodes, "gpt3_175b",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info("logits", weight_type, [batch, seq, vocab])],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", default="12,24,48,96")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shardc", default=str(REPO / "build" / "bin" / "shardc"))
    args = parser.parse_args()
    counts = [int(n) for n in args.layers.split(",")]
    rows, report = [], None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for layers in counts:
            model_path = tmp / f"gpt3_{layers}.onnx"
            onnx.save_model(gpt3(layers), str(model_path))
            report_path = tmp / f"report_{layers}.json"
            command = [args.shardc, str(model_path), "--tp", "8", "--dp", "4",
                       "--emit=partitioned", "-o", "/dev/null", "--report", str(report_path)]
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                run = subprocess.run(command, capture_output=True, text=True)
                times.append(time.perf_counter() - start)
                if run.returncode != 0:
                    sys.exit(f"shardc failed on {layers} layers: {run.stderr.strip()}")
            rows.append((layers, statistics.median(times)))
            report = json.loads(report_path.read_text())

    print("layers  plan seconds (whole process, median)  seconds/layer")
    for layers, seconds in rows:
        print(f"{layers:6d}  {seconds:10.2f}  {seconds / layers:10.4f}")
    first, last = rows[0], rows[-1]
    growth = (last[1] / first[1]) / (last[0] / first[0])
    print(f"growth from {first[0]} to {last[0]} layers: time x{last[1] / first[1]:.2f} for "
          f"layers x{last[0] / first[0]:.0f} ({growth:.2f} of linear)")

    layers = report["layers"]
    ratios = [layer.get("ratio", 0.0) for layer in layers]
    kinds = {json.dumps(layer["tp_collectives"], sort_keys=True) for layer in layers}
    print(f"{len(layers)}-layer plan: per-layer tp collectives {', '.join(sorted(kinds))}; "
          f"traffic per device {layers[0]['tp_traffic_bytes'] / 2**20:.1f} MiB, Megatron "
          f"{layers[0]['megatron_traffic_bytes'] / 2**20:.1f} MiB, ratio min {min(ratios):.2f} "
          f"max {max(ratios):.2f}")
    totals = report["totals"]
    rank = report["ranks"][0]
    print(f"per device: {rank['param_bytes'] / 2**30:.2f} GiB weights, "
          f"{rank['peak_activation_bytes'] / 2**30:.2f} GiB peak activations; "
          f"estimated step {totals['est_step_seconds'] * 1e3:.1f} ms "
          f"({totals['compute_seconds'] * 1e3:.1f} compute + {totals['comm_seconds'] * 1e3:.1f} comm)")
    if last[1] > 10:
        print(f"NOTE: {last[0]} layers took {last[1]:.1f} s, over the 10 s target")


if __name__ == "__main__":
    main()
