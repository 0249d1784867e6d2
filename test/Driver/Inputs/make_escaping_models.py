#!/usr/bin/env python3
"""Writes the models of external_data.test into FOLDER/model/, each a MatMul
whose weight is external data that a model must not be able to reach:

dotdot.onnx    location '../secret.bin' (the file exists, beside model/)
absolute.onnx  location FOLDER/secret.bin, an absolute path
symlink.onnx   location 'link.bin', a symlink in model/ to ../secret.bin
offset.onnx    location 'weight.bin' (inside, 192 bytes) at an offset near 2^63
inside.onnx    location 'weight.bin', the good case
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WEIGHT = np.ones((6, 8), dtype=np.float32)


def matmul(location, offset=0):
    tensor = numpy_helper.from_array(WEIGHT, "w")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)),
                       ("length", str(WEIGHT.nbytes))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    tensor.ClearField("raw_data")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 8])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["z"], name="mm")], "escape",
                              [x], [z], [tensor])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    folder = os.path.abspath(sys.argv[1])
    models = os.path.join(folder, "model")
    os.makedirs(models, exist_ok=True)
    secret = os.path.join(folder, "secret.bin")
    WEIGHT.tofile(secret)
    WEIGHT.tofile(os.path.join(models, "weight.bin"))
    link = os.path.join(models, "link.bin")
    if not os.path.lexists(link):
        os.symlink(os.path.join("..", "secret.bin"), link)
    for name, location, offset in (("dotdot", "../secret.bin", 0), ("absolute", secret, 0),
                                   ("symlink", "link.bin", 0),
                                   ("offset", "weight.bin", 2**63 - 100),
                                   ("inside", "weight.bin", 0)):
        onnx.save(matmul(location, offset), os.path.join(models, name + ".onnx"))


if __name__ == "__main__":
    main()
