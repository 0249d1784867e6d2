#!/usr/bin/env python3
"""Writes a model of one linear layer, x [M, K] times a weight [K, N] of
zeros: write_one_linear.py OUT.onnx M K N. Its costs can be priced by hand."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output")
    parser.add_argument("dims", type=int, nargs=3, metavar="M K N")
    args = parser.parse_args()
    m, k, n = args.dims
    weight = numpy_helper.from_array(np.zeros((k, n), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")], "one_linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [weight])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), args.output)


if __name__ == "__main__":
    main()
