#!/usr/bin/env python3
"""Writes the binary bad-input models of errors.test into the given folder.

random.onnx          bytes that are no protobuf
external_shape.onnx  a Reshape whose shape is external data in a missing file
external_weight.onnx a MatMul whose weight is external data in a missing file
"""
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def external(name, array, location):
    tensor = numpy_helper.from_array(array, name)
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(array.nbytes))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    tensor.ClearField("raw_data")
    return tensor


def model(nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, "bad", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(7)
    with open(os.path.join(out, "random.onnx"), "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(4096)))

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])
    shape = external("shape", np.array([3, 4], dtype=np.int64), "missing_shape.bin")
    onnx.save(model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], [x], [y],
                    [shape]), os.path.join(out, "external_shape.onnx"))

    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 8])
    weight = external("w", np.ones((6, 8), dtype=np.float32), "missing_weight.bin")
    onnx.save(model([helper.make_node("MatMul", ["x", "w"], ["z"], name="mm")], [x], [z], [weight]),
              os.path.join(out, "external_weight.onnx"))


if __name__ == "__main__":
    main()
