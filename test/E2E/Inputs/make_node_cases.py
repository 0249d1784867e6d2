#!/usr/bin/env python3
"""Writes a few hand-made cases in ONNX's node-test layout, one per outcome
node_tests.py knows, so node_tests_script.test can check its verdicts:

  test_add_right            passes
  test_add_right_expanded   passes, counted under Add (the op it expands)
  test_reshape_computed     passes once the script fixes 'rows' and 'cols'
  test_add_wrong            fails: the stored output is off by one
  test_no_such_op           unsupported: the importer names NoSuchOp
  test_training_dropout     out of scope (an OUT_OF_SCOPE row)
"""
import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write(out, name, nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in inputs],
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    folder = out / name / "test_data_set_0"
    folder.mkdir(parents=True)
    (out / name / "model.onnx").write_bytes(model.SerializeToString())
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, (n, v) in enumerate(values):
            (folder / f"{kind}_{i}.pb").write_bytes(numpy_helper.from_array(v, n).SerializeToString())


def main():
    out = pathlib.Path(sys.argv[1])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((2, 3), np.float32)
    add = [helper.make_node("Add", ["x", "y"], ["z"])]
    write(out, "test_add_right", add, [("x", x), ("y", y)], [("z", x + y)])
    write(out, "test_add_right_expanded",
          [helper.make_node("Neg", ["y"], ["minus"]), helper.make_node("Sub", ["x", "minus"], ["z"])],
          [("x", x), ("y", y)], [("z", x + y)])
    write(out, "test_add_wrong", add, [("x", x), ("y", y)], [("z", x + y + 1)])
    write(out, "test_reshape_computed",
          [helper.make_node("Concat", ["rows", "cols"], ["shape"], axis=0),
           helper.make_node("Reshape", ["x", "shape"], ["r"])],
          [("x", x), ("rows", np.array([3], np.int64)), ("cols", np.array([2], np.int64))],
          [("r", x.reshape(3, 2))])
    write(out, "test_no_such_op", [helper.make_node("NoSuchOp", ["x"], ["z"])], [("x", x)],
          [("z", x)])
    write(out, "test_training_dropout",
          [helper.make_node("Dropout", ["x", "r", "t"], ["z"])],
          [("x", x), ("r", np.array(0.5, np.float32)), ("t", np.array(True))], [("z", x)], opset=22)


if __name__ == "__main__":
    main()
