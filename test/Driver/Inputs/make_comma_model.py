"""Writes OUT, a chain of four MatMuls named first, "a,b", "c, d" and last:
ONNX node names may hold commas (pipeline.test cuts after them)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

names = ["first", "a,b", "c, d", "last"]
nodes, weights, value = [], [], "x"
for index, name in enumerate(names):
    weight = f"w{index}"
    weights.append(numpy_helper.from_array(np.full((8, 8), 0.1, np.float32), weight))
    output = "y" if index == len(names) - 1 else f"h{index}"
    nodes.append(helper.make_node("MatMul", [value, weight], [output], name=name))
    value = output
graph = helper.make_graph(nodes, "commas", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], weights)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
