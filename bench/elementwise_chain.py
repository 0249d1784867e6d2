#!/usr/bin/env python3
"""Compile-time benchmark: shardc on a long chain of elementwise ops.

Writes (into a temporary folder) a model whose one input [4, 64] goes
through N elementwise nodes in a row: Add of its own constant, Mul by a
shared constant, Tanh, Neg, repeated. Every node is fusible, so the
lowering's FuseElementwise turns the chain into one kernel of N steps.

Times the whole `shardc chain.onnx -o ARTIFACT` process (import, raising,
lowering, fusion, memory plan, artifact) for each N, the median of
--repeats runs, and prints seconds per 1,000 nodes: a pass that is
quadratic in the chain shows as a per-node cost that grows with N.

    .venv/bin/python bench/elementwise_chain.py [--nodes 1000,4000,10000] [--repeats 5]
        [--shardc build/bin/shardc]
"""
import argparse
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def chain_model(nodes):
    """The model: y_0 = x, y_{i+1} = op_i(y_i), the ops cycling."""
    initializers = [numpy_helper.from_array(np.array([0.5], np.float32), "scale")]
    graph_nodes = []
    previous = "x"
    for i in range(nodes):
        out = "y" if i == nodes - 1 else f"t{i}"
        kind = i % 4
        if kind == 0:
            initializers.append(numpy_helper.from_array(np.array([i * 1e-4], np.float32), f"c{i}"))
            graph_nodes.append(helper.make_node("Add", [previous, f"c{i}"], [out], name=f"add{i}"))
        elif kind == 1:
            graph_nodes.append(helper.make_node("Mul", [previous, "scale"], [out], name=f"mul{i}"))
        elif kind == 2:
            graph_nodes.append(helper.make_node("Tanh", [previous], [out], name=f"tanh{i}"))
        else:
            graph_nodes.append(helper.make_node("Neg", [previous], [out], name=f"neg{i}"))
        previous = out
    graph = helper.make_graph(
        graph_nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 64])], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def time_compile(shardc, model, out, repeats):
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([shardc, str(model), "-o", str(out)], check=True)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="1000,4000,10000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--shardc", default="build/bin/shardc")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for nodes in [int(n) for n in args.nodes.split(",")]:
            model = pathlib.Path(folder) / f"chain{nodes}.onnx"
            onnx.save(chain_model(nodes), model)
            median = time_compile(args.shardc, model, pathlib.Path(folder) / f"out{nodes}",
                                  args.repeats)
            print(f"{nodes:6d} nodes: {median:7.3f} s (median of {args.repeats}), "
                  f"{median / nodes * 1000:.3f} s per 1,000 nodes", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
