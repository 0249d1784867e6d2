#!/usr/bin/env python3
"""Writes the models of names.test into the given folder.

hostile_names.onnx      a node named with a newline and a terminal escape,
                        reading an undefined input with a 100,000-char name
duplicate_inputs.onnx   the graph input 'x' listed twice
duplicate_outputs.onnx  the graph output 'y' listed twice
input_initializer.onnx  input 'w' that is also an initializer (IR version 8,
                        where onnxruntime lets a fed input override it)
input_initializer_ir3.onnx  the same in IR version 3, where every
                        initializer must be listed as an input
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def model(nodes, inputs, outputs, initializers=(), ir_version=8):
    graph = helper.make_graph(nodes, "names", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=ir_version)


def tensor(name, shape=(2,)):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def main():
    out = sys.argv[1]
    hostile = model([helper.make_node("Add", ["x", "n" * 100000], ["y"], name="evil\n\x1b[31mred")],
                    [tensor("x")], [tensor("y")])
    save(hostile, os.path.join(out, "hostile_names.onnx"))

    add = helper.make_node("Add", ["x", "x"], ["y"], name="add")
    save(model([add], [tensor("x"), tensor("x")], [tensor("y")]),
         os.path.join(out, "duplicate_inputs.onnx"))
    save(model([add], [tensor("x")], [tensor("y"), tensor("y")]),
         os.path.join(out, "duplicate_outputs.onnx"))

    weight = numpy_helper.from_array(np.array([10, 20], np.float32), "w")
    uses_weight = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    for ir_version, name in ((8, "input_initializer.onnx"), (3, "input_initializer_ir3.onnx")):
        save(model([uses_weight], [tensor("x"), tensor("w")], [tensor("y")], [weight], ir_version),
             os.path.join(out, name))


if __name__ == "__main__":
    main()
