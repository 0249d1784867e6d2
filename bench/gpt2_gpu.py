#!/usr/bin/env python3
"""GPU benchmark model: a GPT-2-medium-shaped forward, for shardrun and PyTorch.

    gpt2_gpu.py make  --out DIR [--layers 24 --hidden 1024 --heads 16 --seq 1024 --batch 8]
    gpt2_gpu.py torch --model DIR --report OUT.json [--iters 20] [--no-compile]

`make` (numpy and onnx only) writes DIR/gpt2m.onnx with its weights beside it
(external data, N(0, 0.02) matrices, norms near 1, seed 0), DIR/roles.json
(which initializer is which weight) and DIR/inputs.npz (token ids). The graph
is written the way exporters write GPT-2 (LayerNormalization, MatMul+Add
linears, fused qkv split into heads, scaled scores plus an additive causal
mask, softmax, erf GELU, tied output projection), and, as a generation
prefill does, the logits are computed for the last position only, so that
copying them out (8 x 50257 floats) costs nothing next to the forward.

`torch` (torch and numpy; it reads the weights from the external data file
by the offsets roles.json records, so it needs no onnx) builds the same
forward in PyTorch from the very same weights, in bf16 on cuda:0 (--device and
--dtype change that, to check the forward itself on a CPU), and times it like
shardrun times a run (ids
copied in, forward, logits copied out; median of --iters): eager, with
scaled_dot_product_attention (PyTorch's fastest eager attention), then
torch.compile of the same function. It also times cuBLAS (torch.matmul, bf16)
on the forward's GEMM shapes, the ceiling for the GEMMs, and writes the
figures and the eager logits (for comparing shardrun's) to OUT.json / .npy.
"""
import argparse
import json
import pathlib
import statistics
import sys
import time

import numpy as np


def flops(layers, hidden, seq, batch, vocab):
    """Model FLOPs of one forward (Megatron's count: attention in full, not halved by the
    causal mask): per layer 24·b·s·h² in the linears and 4·b·s²·h in attention, plus the
    last position's output projection."""
    gemm = layers * 24 * batch * seq * hidden ** 2 + 2 * batch * hidden * vocab
    attention = layers * 4 * batch * seq ** 2 * hidden
    return gemm, attention


# ---------------------------------------------------------------------------
# The ONNX model


def make(args):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    b, s, h, heads, vocab = args.batch, args.seq, args.hidden, args.heads, args.vocab
    head = h // heads
    nodes, initializers, roles = [], [], {"layers": []}
    count = [0]

    def name(stem):
        count[0] += 1
        return f"{stem}_{count[0]}"

    def tensor(stem, array):
        n = name(stem)
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), n))
        return n

    def weight(stem, shape, scale=0.02):
        return tensor(stem, (rng.standard_normal(shape, dtype=np.float32) * scale))

    def norm(stem):
        gamma = 1 + 0.02 * rng.standard_normal(h, dtype=np.float32)
        return tensor(stem + "_g", gamma), tensor(stem + "_b", 0.02 * rng.standard_normal(
            h, dtype=np.float32))

    def op(op_type, inputs, **attrs):
        o = name(op_type.lower())
        nodes.append(helper.make_node(op_type, inputs, [o], name=o, **attrs))
        return o

    def linear(x, w, bias):
        return op("Add", [op("MatMul", [x, w]), bias])

    def layer_norm(x, g, beta):
        return op("LayerNormalization", [x, g, beta], axis=-1, epsilon=1e-5)

    roles["wte"] = weight("wte", (vocab, h))
    roles["wpe"] = weight("wpe", (s, h))
    x = op("Add", [op("Gather", [roles["wte"], "input_ids"]),
                   op("Gather", [roles["wpe"], tensor("positions",
                                                      np.arange(s, dtype=np.int64)[None])])])
    mask = tensor("mask", np.triu(np.full((s, s), -1e9, np.float32), k=1)[None, None])
    split_shape = tensor("split_shape", np.array([b, s, heads, head], np.int64))
    merge_shape = tensor("merge_shape", np.array([b, s, h], np.int64))
    scale = tensor("scale", np.array(1 / np.sqrt(head), np.float32))
    for _ in range(args.layers):
        layer = {}
        layer["ln1_g"], layer["ln1_b"] = norm("ln1")
        layer["qkv_w"], layer["qkv_b"] = weight("qkv_w", (h, 3 * h)), weight("qkv_b", (3 * h,))
        layer["proj_w"], layer["proj_b"] = weight("proj_w", (h, h)), weight("proj_b", (h,))
        layer["ln2_g"], layer["ln2_b"] = norm("ln2")
        layer["fc_w"], layer["fc_b"] = weight("fc_w", (h, 4 * h)), weight("fc_b", (4 * h,))
        layer["fc2_w"], layer["fc2_b"] = weight("fc2_w", (4 * h, h)), weight("fc2_b", (h,))
        roles["layers"].append(layer)
        hidden = layer_norm(x, layer["ln1_g"], layer["ln1_b"])
        q, k, v = name("q"), name("k"), name("v")
        nodes.append(helper.make_node(
            "Split", [linear(hidden, layer["qkv_w"], layer["qkv_b"]),
                      tensor("split", np.array([h] * 3, np.int64))], [q, k, v], axis=-1))
        q = op("Transpose", [op("Reshape", [q, split_shape])], perm=[0, 2, 1, 3])
        kt = op("Transpose", [op("Reshape", [k, split_shape])], perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [v, split_shape])], perm=[0, 2, 1, 3])
        scores = op("Mul", [op("MatMul", [q, kt]), scale])
        probs = op("Softmax", [op("Add", [scores, mask])], axis=-1)
        context = op("Reshape", [op("Transpose", [op("MatMul", [probs, v])], perm=[0, 2, 1, 3]),
                                 merge_shape])
        x = op("Add", [x, linear(context, layer["proj_w"], layer["proj_b"])])
        fc = linear(layer_norm(x, layer["ln2_g"], layer["ln2_b"]), layer["fc_w"], layer["fc_b"])
        erf = op("Erf", [op("Div", [fc, tensor("sqrt2", np.array(np.sqrt(2), np.float32))])])
        gelu = op("Mul", [op("Mul", [fc, op("Add", [erf, tensor("one", np.array(1, np.float32))])]),
                          tensor("half", np.array(0.5, np.float32))])
        x = op("Add", [x, linear(gelu, layer["fc2_w"], layer["fc2_b"])])
    last = op("Slice", [x, tensor("starts", np.array([-1], np.int64)),
                        tensor("ends", np.array([np.iinfo(np.int64).max], np.int64)),
                        tensor("axes", np.array([1], np.int64))])
    roles["lnf_g"], roles["lnf_b"] = norm("lnf")
    logits = op("MatMul", [layer_norm(last, roles["lnf_g"], roles["lnf_b"]),
                           op("Transpose", [roles["wte"]], perm=[1, 0])])
    graph = helper.make_graph(
        nodes, "gpt2_medium",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [b, s])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [b, 1, vocab])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save_model(model, str(out / "gpt2m.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="gpt2m.weights", size_threshold=1024)
    roles.update(output=logits, layers_count=args.layers, hidden=h, heads=heads, seq=s, batch=b,
                 vocab=vocab, tensors={})
    # Where each weight lies in the external data file, for readers without onnx.
    wanted = {roles["wte"], roles["wpe"], roles["lnf_g"], roles["lnf_b"]}
    wanted.update(n for layer in roles["layers"] for n in layer.values())
    saved = onnx.load(str(out / "gpt2m.onnx"), load_external_data=False)
    for t in saved.graph.initializer:
        if t.name not in wanted:
            continue
        where = {e.key: e.value for e in t.external_data}
        if "length" in where:
            roles["tensors"][t.name] = {"offset": int(where.get("offset", 0)),
                                        "length": int(where["length"]), "shape": list(t.dims)}
        else:  # under the size threshold, kept in the graph (small test models only)
            roles["tensors"][t.name] = {"values": numpy_helper.to_array(t).ravel().tolist(),
                                        "shape": list(t.dims)}
    (out / "roles.json").write_text(json.dumps(roles))
    ids = rng.integers(0, vocab, size=(b, s), dtype=np.int64)
    np.savez(out / "inputs.npz", input_ids=ids)
    print(f"wrote {out / 'gpt2m.onnx'}: {args.layers} layers, hidden {h}, {heads} heads, "
          f"seq {s}, batch {b}, vocab {vocab}")


# ---------------------------------------------------------------------------
# PyTorch on the same weights


def torch_bench(args):
    import torch
    import torch.nn.functional as F

    directory = pathlib.Path(args.model)
    roles = json.loads((directory / "roles.json").read_text())
    device = torch.device(args.device)
    dtype = getattr(torch, args.dtype)
    data = np.memmap(directory / "gpt2m.weights", dtype=np.uint8, mode="r")
    weights = {}
    for name, where in roles["tensors"].items():
        if "values" in where:
            array = np.array(where["values"], np.float32).reshape(where["shape"])
        else:
            raw = data[where["offset"]:where["offset"] + where["length"]]
            array = np.frombuffer(raw, dtype=np.float32).reshape(where["shape"])
        weights[name] = torch.from_numpy(array.copy()).to(device=device, dtype=dtype)
    del data
    b, s, h, heads = roles["batch"], roles["seq"], roles["hidden"], roles["heads"]
    vocab, layers = roles["vocab"], roles["layers"]
    W = lambda key: weights[key]  # noqa: E731

    def attention(q, k, v):
        if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scores = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
        causal = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        return scores.masked_fill(causal, float("-inf")).softmax(-1) @ v

    def forward(ids):
        x = W(roles["wte"])[ids] + W(roles["wpe"])[:s]
        for layer in layers:
            y = F.layer_norm(x, (h,), W(layer["ln1_g"]), W(layer["ln1_b"]), 1e-5)
            q, k, v = (y @ W(layer["qkv_w"]) + W(layer["qkv_b"])).split(h, dim=-1)
            q, k, v = (t.view(b, s, heads, h // heads).transpose(1, 2) for t in (q, k, v))
            context = attention(q, k, v)
            context = context.transpose(1, 2).reshape(b, s, h)
            x = x + context @ W(layer["proj_w"]) + W(layer["proj_b"])
            y = F.layer_norm(x, (h,), W(layer["ln2_g"]), W(layer["ln2_b"]), 1e-5)
            y = F.gelu(y @ W(layer["fc_w"]) + W(layer["fc_b"]))
            x = x + y @ W(layer["fc2_w"]) + W(layer["fc2_b"])
        last = F.layer_norm(x[:, -1:, :], (h,), W(roles["lnf_g"]), W(roles["lnf_b"]), 1e-5)
        return last @ W(roles["wte"]).t()

    ids_host = torch.from_numpy(np.load(directory / "inputs.npz")["input_ids"])

    def timed(function, warmup, iters):
        """Median seconds of: ids in, forward, logits out (as shardrun's run)."""
        with torch.inference_mode():
            for _ in range(warmup):
                function(ids_host.to(device)).float().cpu()
            synchronize()
            times = []
            for _ in range(iters):
                start = time.perf_counter()
                function(ids_host.to(device)).float().cpu()
                times.append(time.perf_counter() - start)
        return statistics.median(times)

    def synchronize():
        if device.type == "cuda":
            torch.cuda.synchronize()

    report = {"torch": torch.__version__, "cuda": torch.version.cuda,
              "device": torch.cuda.get_device_name(0) if device.type == "cuda" else args.device}
    with torch.inference_mode():
        logits = forward(ids_host.to(device)).float().cpu().numpy()
    np.save(directory / "torch_logits.npy", logits)
    report["eager_s"] = timed(forward, 3, args.iters)
    print(f"torch eager: {report['eager_s'] * 1e3:.3f} ms", flush=True)
    write(args.report, report)
    if device.type != "cuda":
        return 0

    # cuBLAS on the forward's GEMMs: the ceiling for shardrun's (and torch's) linears.
    shapes = {"qkv": (b * s, h, 3 * h), "proj": (b * s, h, h), "fc": (b * s, h, 4 * h),
              "fc2": (b * s, 4 * h, h)}
    gemms = {}
    for key, (m, k, n) in shapes.items():
        a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
        bmat = torch.randn(k, n, device=device, dtype=torch.bfloat16)
        for _ in range(3):
            torch.matmul(a, bmat)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(20):
            torch.matmul(a, bmat)
        end.record()
        torch.cuda.synchronize()
        seconds = start.elapsed_time(end) / 1e3 / 20
        gemms[key] = {"m": m, "k": k, "n": n, "seconds": seconds,
                      "tflops": 2 * m * k * n / seconds / 1e12}
    layer_flops = sum(2 * g["m"] * g["k"] * g["n"] for g in gemms.values())
    layer_seconds = sum(g["seconds"] for g in gemms.values())
    report["cublas"] = {"shapes": gemms, "layer_tflops": layer_flops / layer_seconds / 1e12}
    print(f"cuBLAS GEMMs of a layer: {report['cublas']['layer_tflops']:.0f} TFLOP/s", flush=True)
    write(args.report, report)

    if not args.no_compile:
        compiled = torch.compile(forward)
        start = time.perf_counter()
        with torch.inference_mode():
            compiled(ids_host.to(device)).float().cpu()
        report["compile_build_s"] = time.perf_counter() - start
        report["compiled_s"] = timed(compiled, 2, args.iters)
        print(f"torch.compile: {report['compiled_s'] * 1e3:.3f} ms "
              f"(compiled in {report['compile_build_s']:.0f} s)", flush=True)
        write(args.report, report)
    return 0


def write(path, report):
    pathlib.Path(path).write_text(json.dumps(report, indent=2) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("make")
    m.add_argument("--out", required=True)
    m.add_argument("--layers", type=int, default=24)
    m.add_argument("--hidden", type=int, default=1024)
    m.add_argument("--heads", type=int, default=16)
    m.add_argument("--seq", type=int, default=1024)
    m.add_argument("--batch", type=int, default=8)
    m.add_argument("--vocab", type=int, default=50257)
    t = commands.add_parser("torch")
    t.add_argument("--model", required=True)
    t.add_argument("--report", required=True)
    t.add_argument("--iters", type=int, default=20)
    t.add_argument("--no-compile", action="store_true")
    t.add_argument("--device", default="cuda:0")
    t.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    args = parser.parse_args()
    return make(args) if args.command == "make" else torch_bench(args)


if __name__ == "__main__":
    sys.exit(main())
