"""Transformer-shaped ONNX graphs with random weights for the CPU benchmarks.

Each builder writes its model the way exporters spell it (primitive ops, not
the fused ONNX ones), so that the benchmark also exercises shardc's raising
passes, and returns the model and the name of its logits output.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


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
