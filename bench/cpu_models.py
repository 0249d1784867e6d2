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

    def rms_norm(self, x, hidden, eps=1e-6):
        """Llama's RMSNorm as torch exports it: w * (x * 1/sqrt(mean(x^2) + eps))."""
        mean_square = self.op("ReduceMean", [self.op("Pow", [x, self.constant(np.array(2, np.float32))])],
                              axes=[-1], keepdims=1)
        inverse = self.op("Reciprocal", [self.op("Sqrt", [
            self.op("Add", [mean_square, self.constant(np.array(eps, np.float32))])])])
        # A scale off 1 so that a norm that dropped it would show in the output.
        scale = self.weight("rms_w", None, value=1 + 0.1 * self.rng.standard_normal(hidden))
        return self.op("Mul", [scale, self.op("Mul", [x, inverse])])

    def language_model(self, name, batch, seq, vocab, logits):
        """The graph as an opset-17 model: token ids [batch, seq] in, logits out."""
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq])],
            [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [batch, seq, vocab])],
            self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


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
    return g.language_model("gpt2_small", batch, seq, vocab, logits), logits


def llama(layers, hidden, heads, kv_heads, intermediate, seq, vocab, rng, batch=1,
          max_positions=2048, theta=10000.0):
    """Llama as Hugging Face's eager modules export: RMSNorm, rotary embeddings
    in the rotate_half convention with cos/sin tables gathered at the positions,
    grouped-query attention with repeat_kv's Unsqueeze/Expand/Reshape, an
    additive causal mask, a SwiGLU MLP, no biases and an untied LM head."""
    g = GraphBuilder(rng)
    head = hidden // heads
    group = heads // kv_heads
    x = g.op("Gather", [g.weight("embed", (vocab, hidden)), "input_ids"])
    inv_freq = 1.0 / theta ** (np.arange(0, head, 2, dtype=np.float64) / head)
    angles = np.arange(max_positions, dtype=np.float64)[:, None] * inv_freq[None]
    angles = np.concatenate([angles, angles], axis=-1)  # [positions, head]
    positions = g.constant(np.arange(seq, dtype=np.int64)[None])
    over_heads = g.constant(np.array([1], np.int64))
    cos, sin = [g.op("Unsqueeze", [g.op("Gather", [g.constant(table(angles).astype(np.float32), stem),
                                                   positions]), over_heads])
                for table, stem in ((np.cos, "cos"), (np.sin, "sin"))]  # [1, 1, seq, head]
    last = g.constant(np.array([3], np.int64))
    first_half = [g.constant(np.array([0], np.int64)), g.constant(np.array([head // 2], np.int64)), last]
    second_half = [g.constant(np.array([head // 2], np.int64)),
                   g.constant(np.array([np.iinfo(np.int64).max], np.int64)), last]

    def rotary(t):  # t * cos + rotate_half(t) * sin, rotate_half(t) = [-t2, t1]
        rotated = g.op("Concat", [g.op("Neg", [g.op("Slice", [t] + second_half)]),
                                  g.op("Slice", [t] + first_half)], axis=-1)
        return g.op("Add", [g.op("Mul", [t, cos]), g.op("Mul", [rotated, sin])])

    def split_heads(t, n):  # [batch, seq, n * head] -> [batch, n, seq, head]
        return g.op("Transpose", [g.op("Reshape", [t, g.constant(np.array([batch, seq, n, head],
                                                                          np.int64))])],
                    perm=[0, 2, 1, 3])

    kv_unsqueeze = g.constant(np.array([2], np.int64))
    kv_expanded = g.constant(np.array([batch, kv_heads, group, seq, head], np.int64))
    kv_merged = g.constant(np.array([batch, heads, seq, head], np.int64))

    def repeat_kv(t):  # [batch, kv_heads, seq, head] -> [batch, heads, seq, head]
        return g.op("Reshape", [g.op("Expand", [g.op("Unsqueeze", [t, kv_unsqueeze]), kv_expanded]),
                                kv_merged])

    causal = np.triu(np.full((seq, seq), np.finfo(np.float32).min, np.float32), k=1)[None, None]
    mask = g.constant(causal, "mask")
    scale = g.constant(np.array(1 / np.sqrt(head), np.float32))
    merge_shape = g.constant(np.array([batch, seq, hidden], np.int64))
    for _ in range(layers):
        h = g.rms_norm(x, hidden)
        q = rotary(split_heads(g.op("MatMul", [h, g.weight("wq", (hidden, hidden))]), heads))
        k = rotary(split_heads(g.op("MatMul", [h, g.weight("wk", (hidden, kv_heads * head))]), kv_heads))
        v = split_heads(g.op("MatMul", [h, g.weight("wv", (hidden, kv_heads * head))]), kv_heads)
        kt = g.op("Transpose", [repeat_kv(k)], perm=[0, 1, 3, 2])
        scores = g.op("Mul", [g.op("MatMul", [q, kt]), scale])
        probs = g.op("Softmax", [g.op("Add", [scores, mask])], axis=-1)
        context = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [probs, repeat_kv(v)])],
                                        perm=[0, 2, 1, 3]), merge_shape])
        x = g.op("Add", [x, g.op("MatMul", [context, g.weight("wo", (hidden, hidden))])])
        h = g.rms_norm(x, hidden)
        gate = g.op("MatMul", [h, g.weight("w_gate", (hidden, intermediate))])
        up = g.op("MatMul", [h, g.weight("w_up", (hidden, intermediate))])
        silu = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
        x = g.op("Add", [x, g.op("MatMul", [g.op("Mul", [silu, up]),
                                             g.weight("w_down", (intermediate, hidden))])])
    logits = g.op("MatMul", [g.rms_norm(x, hidden), g.weight("lm_head", (hidden, vocab))])
    return g.language_model("llama", batch, seq, vocab, logits), logits


def moe_layer(batch, seq, hidden, experts, top_k, intermediate, rng):
    """One Mixtral-shaped mixture-of-experts block, written the way the
    dense-gate exporters spell it: RMSNorm, a softmax router, top-k gates
    renormalized and scattered into a [tokens, experts] table, every SwiGLU
    expert on every token scaled by its column, the sum added to the input.
    Returns the model, its output's name and the weights by role (for a
    reference computed outside onnxruntime)."""
    g = GraphBuilder(rng)
    tokens = batch * seq
    x = "hidden_states"
    h = g.rms_norm(x, hidden)
    rows = g.op("Reshape", [h, g.constant(np.array([tokens, hidden], np.int64))])
    router = rng.standard_normal((hidden, experts), dtype=np.float32)
    probs = g.op("Softmax", [g.op("MatMul", [rows, g.weight("router", None, value=router)])], axis=-1)
    top = g.name("topk_values"), g.name("topk_indices")
    g.nodes.append(helper.make_node("TopK", [probs, g.constant(np.array([top_k], np.int64))],
                                    list(top), axis=-1, largest=1, sorted=1))
    gates = g.op("Div", [top[0], g.op("ReduceSum", [top[0], g.constant(np.array([-1], np.int64))],
                                      keepdims=1)])
    table = g.op("ScatterElements", [g.constant(np.zeros((tokens, experts), np.float32)),
                                     top[1], gates], axis=1)
    weights = {"router": router, "rms": None, "gate": [], "up": [], "down": []}
    total = None
    for e in range(experts):
        w = {role: (rng.standard_normal(shape, dtype=np.float32) * shape[0] ** -0.5)
             for role, shape in (("gate", (hidden, intermediate)), ("up", (hidden, intermediate)),
                                 ("down", (intermediate, hidden)))}
        for role, array in w.items():
            weights[role].append(array)
        gate = g.op("MatMul", [rows, g.weight("gate", None, value=w["gate"])])
        up = g.op("MatMul", [rows, g.weight("up", None, value=w["up"])])
        silu = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
        out = g.op("MatMul", [g.op("Mul", [silu, up]), g.weight("down", None, value=w["down"])])
        column = g.op("Slice", [table, g.constant(np.array([e], np.int64)),
                                g.constant(np.array([e + 1], np.int64)),
                                g.constant(np.array([1], np.int64))])
        term = g.op("Mul", [column, out])
        total = term if total is None else g.op("Add", [total, term])
    y = g.op("Add", [x, g.op("Reshape", [total, g.constant(np.array([batch, seq, hidden], np.int64))])])
    weights["rms"] = next(numpy_helper.to_array(t) for t in g.initializers if t.name.startswith("rms_w"))
    graph = helper.make_graph(
        g.nodes, "moe_layer",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [batch, seq, hidden])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [batch, seq, hidden])],
        g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), y, weights


def moe_layer_reference(x, weights, top_k, capacity=0):
    """moe_layer in float64 numpy, with docs/experts.md's keep rule: per
    expert, entries in (token, slot) order, the first `capacity` kept (0:
    all). Returns the output and the number of entries dropped."""
    x = x.astype(np.float64)
    batch, seq, hidden = x.shape
    rows = x.reshape(-1, hidden)
    normed = rows / np.sqrt((rows ** 2).mean(-1, keepdims=True) + 1e-6) * weights["rms"]
    logits = normed @ weights["router"]
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    indices = np.argsort(-probs, axis=-1, kind="stable")[:, :top_k]
    values = np.take_along_axis(probs, indices, -1)
    gates = values / values.sum(-1, keepdims=True)
    taken = {}
    out = np.zeros_like(rows)
    dropped = 0
    for t in range(rows.shape[0]):
        for j in range(top_k):
            e = int(indices[t, j])
            taken[e] = taken.get(e, 0) + 1
            if capacity and taken[e] > capacity:
                dropped += 1
                continue
            gate = normed[t] @ weights["gate"][e]
            up = normed[t] @ weights["up"][e]
            hidden_units = gate / (1 + np.exp(-gate)) * up
            out[t] += gates[t, j] * (hidden_units @ weights["down"][e])
    return (rows + out).reshape(batch, seq, hidden), dropped
