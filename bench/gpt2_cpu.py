#!/usr/bin/env python3
"""CPU benchmark: a GPT-2-small-shaped model, shardrun against onnxruntime.

Generates (into a temporary folder, not the repo) a GPT-2-small-shaped ONNX
model with random weights: 12 layers, hidden 768, 12 heads, sequence 128,
batch 1, vocabulary 50257, written the way exporters write it (LayerNormalization,
MatMul+Add linears, head reshapes, scaled scores with an additive causal mask,
softmax, erf GELU spelled out, tied output projection). Then, in the same run
and with the same thread count, it times onnxruntime's CPU session and
`shardrun` on the artifact `shardc` compiled, reports the medians, their
ratio (throughput of shardrun / onnxruntime), the largest output difference,
and shardrun's planned arena against its measured peak RSS.

    .venv/bin/python bench/gpt2_cpu.py [--threads N] [--iters I] [--layers L] [--scaling]

With --scaling it also compiles --tp 2 and times, in the same run, one rank
with 1 thread, one rank with 2 threads, and the tp=2 artifact as 2 rank
threads of 1 thread each (and under mpirun -np 2 when mpirun is found):
strong scaling on two cores, as ratios of the medians.
"""
import argparse
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

REPO = pathlib.Path(__file__).resolve().parent.parent


class GraphBuilder:
    """Just enough of onnx.helper to write a transformer as exporters do."""

    def __init__(self, rng):
        self.rng, self.nodes, self.initializers, self.count = rng, [], [], 0

    def name(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def weight(self, stem, shape, scale=0.02, value=None):
        array = value if value is not None else \
            (self.rng.standard_normal(shape, dtype=np.float32) * scale)
        name = self.name(stem)
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def constant(self, array, stem="c"):
        name = self.name(stem)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, **attrs):
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def linear(self, x, n_in, n_out):
        return self.op("Add", [self.op("MatMul", [x, self.weight("w", (n_in, n_out))]),
                               self.weight("b", (n_out,))])

    def layer_norm(self, x, hidden):
        return self.op("LayerNormalization", [x, self.weight("ln_g", None, value=np.ones(hidden)),
                                              self.weight("ln_b", None, value=np.zeros(hidden))],
                       axis=-1, epsilon=1e-5)


def gpt2(layers, hidden, heads, seq, vocab, rng, batch=1):
    g = GraphBuilder(rng)
    head = hidden // heads
    wte = g.weight("wte", (vocab, hidden))
    x = g.op("Add", [g.op("Gather", [wte, "input_ids"]),
                     g.op("Gather", [g.weight("wpe", (1024, hidden)),
                                     g.constant(np.arange(seq, dtype=np.int64)[None])])])
    causal = np.triu(np.full((seq, seq), -1e9, np.float32), k=1)[None, None]
    mask = g.constant(causal, "mask")
    split_shape = g.constant(np.array([batch, seq, heads, head], np.int64))
    merge_shape = g.constant(np.array([batch, seq, hidden], np.int64))
    for _ in range(layers):
        h = g.layer_norm(x, hidden)
        q, k, v = [g.name("qkv") for _ in range(3)]
        g.nodes.append(helper.make_node("Split", [g.linear(h, hidden, 3 * hidden),
                                                  g.constant(np.array([hidden] * 3, np.int64))],
                                        [q, k, v], axis=-1))
        q = g.op("Transpose", [g.op("Reshape", [q, split_shape])], perm=[0, 2, 1, 3])
        kt = g.op("Transpose", [g.op("Reshape", [k, split_shape])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [v, split_shape])], perm=[0, 2, 1, 3])
        scores = g.op("Mul", [g.op("MatMul", [q, kt]),
                              g.constant(np.array(1 / np.sqrt(head), np.float32))])
        probs = g.op("Softmax", [g.op("Add", [scores, mask])], axis=-1)
        context = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3]),
                                   merge_shape])
        x = g.op("Add", [x, g.linear(context, hidden, hidden)])
        h = g.linear(g.layer_norm(x, hidden), hidden, 4 * hidden)
        erf = g.op("Erf", [g.op("Div", [h, g.constant(np.array(np.sqrt(2), np.float32))])])
        gelu = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, g.constant(np.array(1, np.float32))])]),
                            g.constant(np.array(0.5, np.float32))])
        x = g.op("Add", [x, g.linear(gelu, 4 * hidden, hidden)])
    logits = g.op("MatMul", [g.layer_norm(x, hidden), g.op("Transpose", [wte], perm=[1, 0])])
    graph = helper.make_graph(
        g.nodes, "gpt2_small",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [batch, seq, vocab])],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), logits


def median_ms(function, warmup, iters):
    for _ in range(warmup):
        function()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def shardrun_ms(build, artifact, inputs, outputs, threads, iters, ranks=None, mpi=False):
    """Median ms/iter that shardrun reports for `artifact` (ranks as threads, or under mpirun)."""
    command = [str(build / "bin" / "shardrun"), str(artifact), "--inputs", str(inputs),
               "--outputs", str(outputs), "--threads", str(threads), "--warmup", "2",
               "--iters", str(iters)]
    env = dict(os.environ)
    if mpi:
        command = ["mpirun", "--oversubscribe", "-np", str(ranks)] + command
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    elif ranks:
        command += ["--np", str(ranks)]
    run = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return float(re.search(r"([0-9.]+) ms/iter", run.stdout).group(1))


def scaling(build, model_path, tmp, iters):
    """Strong scaling on two cores: tp=2 ranks against one rank."""
    subprocess.run([str(build / "bin" / "shardc"), str(model_path), "--tp", "2", "-o",
                    str(tmp / "tp2")], check=True)
    inputs, outputs = tmp / "inputs.npz", tmp / "scaling.npz"
    one_1 = shardrun_ms(build, tmp / "artifact", inputs, outputs, 1, iters)
    one_2 = shardrun_ms(build, tmp / "artifact", inputs, outputs, 2, iters)
    tp2 = shardrun_ms(build, tmp / "tp2", inputs, outputs, 2, iters, ranks=2)
    print(f"  scaling: 1 rank x 1 thread {one_1:.1f} ms, 1 rank x 2 threads {one_2:.1f} ms, "
          f"tp=2 as 2 threads x 1 {tp2:.1f} ms")
    print(f"    tp=2 (threads) vs 1 rank x 1 thread: {one_1 / tp2:.2f}x; "
          f"vs 1 rank x 2 threads: {one_2 / tp2:.2f}x")
    if shutil.which("mpirun"):
        tp2_mpi = shardrun_ms(build, tmp / "tp2", inputs, outputs, 1, iters, ranks=2, mpi=True)
        print(f"    tp=2 under mpirun (1 thread each) {tp2_mpi:.1f} ms: vs 1 rank x 1 thread "
              f"{one_1 / tp2_mpi:.2f}x; vs 1 rank x 2 threads {one_2 / tp2_mpi:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--build", type=pathlib.Path, default=REPO / "build")
    parser.add_argument("--scaling", action="store_true",
                        help="also time --tp 2 ranks against one rank (1 and 2 threads)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    seq, vocab = 128, 50257
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model, output = gpt2(args.layers, 768, 12, seq, vocab, rng)
        model_path = tmp / "gpt2_small.onnx"
        onnx.save_model(model, str(model_path), save_as_external_data=True,
                        all_tensors_to_one_file=True, location="gpt2_small.weights",
                        size_threshold=1024)
        ids = rng.integers(0, vocab, size=(1, seq), dtype=np.int64)
        np.savez(tmp / "inputs.npz", input_ids=ids)

        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        reference = session.run(None, {"input_ids": ids})[0]
        ort_ms = median_ms(lambda: session.run(None, {"input_ids": ids}), 2, args.iters)
        del session

        start = time.perf_counter()
        subprocess.run([str(args.build / "bin" / "shardc"), str(model_path), "-o", str(tmp / "artifact")],
                       check=True)
        compile_s = time.perf_counter() - start
        run = subprocess.run([str(args.build / "bin" / "shardrun"), str(tmp / "artifact"),
                              "--inputs", str(tmp / "inputs.npz"), "--outputs", str(tmp / "out.npz"),
                              "--threads", str(args.threads), "--warmup", "2",
                              "--iters", str(args.iters), "--profile"],
                             check=True, capture_output=True, text=True)
        summary = run.stdout.splitlines()[0]
        shardrun_ms = float(re.search(r"([0-9.]+) ms/iter", summary).group(1))
        arena = re.search(r"arena ([0-9.]+) MB", summary).group(1)
        rss = re.search(r"peak RSS ([0-9.]+) MB", summary).group(1)
        got = np.load(tmp / "out.npz")[output]
        diff = float(np.max(np.abs(got - reference))) / float(np.max(np.abs(reference)))
        weights_mb = (tmp / "artifact" / "rank0.safetensors").stat().st_size / 1e6

        by_kernel = {}
        for line in run.stdout.splitlines()[2:]:
            fields = line.split()
            if len(fields) >= 3:
                by_kernel[fields[1]] = by_kernel.get(fields[1], 0.0) + float(fields[2])
        print(f"GPT-2 small shape: {args.layers} layers, hidden 768, 12 heads, seq {seq}, batch 1, "
              f"{args.threads} thread(s), median of {args.iters}")
        print(f"  onnxruntime {ort.__version__}: {ort_ms:8.2f} ms/iter")
        print(f"  shardrun:        {shardrun_ms:8.2f} ms/iter   (compile {compile_s:.1f} s)")
        print(f"  throughput ratio shardrun / onnxruntime: {ort_ms / shardrun_ms:.2f}x")
        print(f"  max |diff| / max |ref| = {diff:.2e}")
        print(f"  memory: planned arena {arena} MB + weights {weights_mb:.1f} MB, "
              f"measured peak RSS {rss} MB")
        total = sum(by_kernel.values())
        print("  where shardrun's time goes: " + ", ".join(
            f"{k} {100 * v / total:.0f}%" for k, v in sorted(by_kernel.items(), key=lambda kv: -kv[1])[:6]))
        if args.scaling:
            scaling(args.build, model_path, tmp, args.iters)
        return 0 if diff <= 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
