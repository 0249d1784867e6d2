"""Writes a two-layer MLP whose nodes carry module paths the way each torch
exporter records them: TorchScript in the node name, dynamo in the node's
pkg.torch.onnx.name_scopes metadata (names like node_linear_3 say nothing).

    scoped_model.py torchscript|dynamo|plain OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    style, out = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(7)
    nodes, inits = [], []
    x = "x"
    for layer in range(2):
        for part, width in (("fc1", 8), ("fc2", 4)):
            module = f"model.layers.{layer}.mlp.{part}"
            weight = f"w{layer}{part}"
            inits.append(numpy_helper.from_array(
                rng.standard_normal((4 if part == "fc1" else 8, width)).astype(np.float32), weight))
            y = f"{module}.out"
            name = {"torchscript": "/" + module.replace(".", "/") + "/MatMul",
                    "dynamo": f"node_linear_{len(nodes)}",
                    "plain": f"matmul_{len(nodes)}"}[style]
            node = helper.make_node("MatMul", [x, weight], [y], name=name)
            if style == "dynamo":
                entry = node.metadata_props.add()
                scopes = ["", "model"] + [".".join(module.split(".")[:i])
                                          for i in range(2, len(module.split(".")) + 1)]
                entry.key = "pkg.torch.onnx.name_scopes"
                entry.value = repr(scopes + [f"linear_{len(nodes)}"])
            nodes.append(node)
            x = y
    # A final op outside the layers (the model's last norm, say).
    final = {"torchscript": "/model/norm/Relu", "dynamo": "node_relu", "plain": "relu"}[style]
    nodes.append(helper.make_node("Relu", [x], ["y"], name=final))
    x = "y"
    graph = helper.make_graph(nodes, "scoped", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2, 3, 4])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), out)


if __name__ == "__main__":
    main()
