#!/usr/bin/env python3
"""Writes batch_mixing.onnx into the given folder: y = softmax(x @ w, axis=0) @ w.

The softmax runs across the batch: every row of y depends on every row of
x, so the step cannot run in micro-batches (each sees only its own rows).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    weight = numpy_helper.from_array(np.eye(8, dtype=np.float32), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="project"),
        helper.make_node("Softmax", ["h"], ["s"], axis=0, name="mix_rows"),
        helper.make_node("MatMul", ["s", "w"], ["y"], name="project_again"),
    ]
    graph = helper.make_graph(
        nodes, "batch_mixing", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out, "batch_mixing.onnx"))


if __name__ == "__main__":
    main()
