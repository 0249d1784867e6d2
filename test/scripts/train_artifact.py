#!/usr/bin/env python3
"""Writes a small training artifact by hand, for shardrun --train's tests.

It tests the runtime's training loop on its own (shardc --train's artifacts
are the compiler's): a linear model y = x . w trained on the mean squared
error by SGD with momentum, the step written as the compiler lowers one
(docs/training.md): the parameter w, its momentum_buffer and the step
counter are State buffers, updated by `copy` steps; loss and grad_norm are
the outputs; the manifest has a "training" object.

    train_artifact.py make --schema PYDIR --out DIR [--dp N] [--nan-step S] [--ballast MB]
    train_artifact.py check LOG.jsonl EXPECTED.json
    train_artifact.py same LOG_A.jsonl LOG_B.jsonl
    train_artifact.py checkpoint DIR EXPECTED.json

make writes the artifact DIR (mesh dp=N: each rank takes its share of the
batch, the gradients are summed over dp; the ranks share one weight file),
DIR.data.npz with x and target for 8 steps of 4 rows (x of step S all NaN
with --nan-step S) and DIR.expected.json, numpy's loss, grad_norm and w
after each step. --ballast adds a state of MB megabytes that no step reads
(zeros), so that saving a checkpoint takes a while. check compares a --log file with it, same two logs' common
steps bit for bit, checkpoint a checkpoint's states with numpy's w after
its step.
"""
import argparse
import json
import pathlib
import sys

import numpy as np

from mesh_artifact import ProgramWriter, crc32, write_safetensors

BATCH, FEATURES, STEPS = 4, 3, 8
LR, MOMENTUM = 0.1, 0.9
W0 = np.array([[0.5], [-0.25], [0.125]], np.float32)


def program(schema, dp, ballast):
    """One rank's training step (every rank runs the same)."""
    p = ProgramWriter(schema, version=3)
    if ballast:
        p.buffer("State", [ballast << 18], "ballast", zero_init=True)
    rows = BATCH // dp
    x = p.buffer("Input", [BATCH, FEATURES], index=0)
    target = p.buffer("Input", [BATCH, 1], index=1)
    w = p.buffer("State", [FEATURES, 1], "w")
    momentum = p.buffer("State", [FEATURES, 1], "w.momentum_buffer", zero_init=True)
    step = p.buffer("State", [], "shardc.step", zero_init=True)
    lr, mu, one = (p.buffer("Weight", [], name) for name in ("lr", "momentum", "one"))
    mean, twice_mean = p.buffer("Weight", [], "inv_batch"), p.buffer("Weight", [], "two_inv_batch")
    mesh = ["dp"] if dp > 1 else None

    def arena(shape):
        return p.buffer("Arena", shape)

    def summed(value, shape):
        """The sum over the dp replicas (nothing to sum on one rank)."""
        if dp == 1:
            return value
        total = arena(shape)
        p.step("all_reduce", [value], [total], mesh)
        return total

    xs, ts = x, target
    if dp > 1:
        xs, ts = arena([rows, FEATURES]), arena([rows, 1])
        p.step("all_slice", [x], [xs], mesh, dim=0)
        p.step("all_slice", [target], [ts], mesh, dim=0)
    pred, diff, square, sse, loss = (arena(s) for s in ([rows, 1], [rows, 1], [rows, 1], [], []))
    p.step("matmul", [xs, w], [pred], None)
    p.step("sub", [pred, ts], [diff], None)
    p.step("mul", [diff, diff], [square], None)
    p.step("reduce_sum", [square], [sse], None, axes=[0, 1], keepdims=0)
    p.step("mul", [summed(sse, []), mean], [loss], None)
    xt, partial, grad = arena([FEATURES, rows]), arena([FEATURES, 1]), arena([FEATURES, 1])
    p.step("transpose", [xs], [xt], None, perm=[1, 0])
    p.step("matmul", [xt, diff], [partial], None)
    p.step("mul", [summed(partial, [FEATURES, 1]), twice_mean], [grad], None)
    squares, norm2, norm = arena([FEATURES, 1]), arena([]), arena([])
    p.step("mul", [grad, grad], [squares], None)
    p.step("reduce_sum", [squares], [norm2], None, axes=[0, 1], keepdims=0)
    p.step("sqrt", [norm2], [norm], None)
    decayed, velocity, change, updated = (arena([FEATURES, 1]) for _ in range(4))
    p.step("mul", [momentum, mu], [decayed], None)
    p.step("add", [decayed, grad], [velocity], None)
    p.step("copy", [velocity], [momentum], None)
    p.step("mul", [momentum, lr], [change], None)
    p.step("sub", [w, change], [updated], None)
    p.step("copy", [updated], [w], None)
    counted = arena([])
    p.step("add", [step, one], [counted], None)
    p.step("copy", [counted], [step], None)
    p.output("loss", loss)
    p.output("grad_norm", norm)
    return p.bytes([("dp", dp)] if dp > 1 else [])


def reference(x, target):
    """numpy's steps in float32: the loss and gradient norm before each
    update, and w after it."""
    w, momentum = W0.copy(), np.zeros_like(W0)
    losses, norms, ws = [], [], []
    for step in range(STEPS):
        xs, ts = x[step * BATCH:(step + 1) * BATCH], target[step * BATCH:(step + 1) * BATCH]
        diff = xs @ w - ts
        grad = (xs.T @ diff) * np.float32(2 / BATCH)
        losses.append(float(np.sum(diff * diff) * np.float32(1 / BATCH)))
        norms.append(float(np.sqrt(np.sum(grad * grad))))
        momentum = momentum * np.float32(MOMENTUM) + grad
        w = w - momentum * np.float32(LR)
        ws.append(w.ravel().tolist())
    return {"loss": losses, "grad_norm": norms, "w": ws}


def make(args):
    sys.path.insert(0, args.schema)
    import shardc.schema.Buffer, shardc.schema.DType, shardc.schema.MeshAxis  # noqa: F401
    import shardc.schema.Output, shardc.schema.Param, shardc.schema.Program  # noqa: F401
    import shardc.schema.Step, shardc.schema.Storage  # noqa: F401
    import shardc.schema as schema
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dp = args.dp
    mesh = {"dp": dp} if dp > 1 else {}
    scalar = lambda value: np.array(value, np.float32)  # noqa: E731
    weights = {"w": W0, "lr": scalar(LR), "momentum": scalar(MOMENTUM), "one": scalar(1),
               "inv_batch": scalar(1 / BATCH), "two_inv_batch": scalar(2 / BATCH)}
    # The replicas hold the same weights: one file, read by every rank.
    write_safetensors(out / "rank0.safetensors", weights,
                      {"mesh": ", ".join(f"{n}={s}" for n, s in mesh.items()),
                       "ranks": ",".join(str(r) for r in range(dp))})
    ranks, files = [], {"rank0.safetensors": None}
    for rank in range(dp):
        (out / f"rank{rank}.program").write_bytes(program(schema, dp, args.ballast))
        files[f"rank{rank}.program"] = None
        ranks.append({"rank": rank, "coords": {"dp": rank} if dp > 1 else {},
                      "program": f"rank{rank}.program", "weights": "rank0.safetensors",
                      "arena_bytes": 0})
    for name in files:
        files[name] = {"bytes": (out / name).stat().st_size, "crc32": crc32(out / name)}
    manifest = {
        "format": "shardc-artifact", "version": 2, "target": "cpu", "cuda_arch": None,
        "model": "train_artifact.py", "mesh": {"axes": mesh}, "ranks": ranks, "files": files,
        "inputs": [{"name": "x", "dtype": "float32", "shape": [BATCH, FEATURES]},
                   {"name": "target", "dtype": "float32", "shape": [BATCH, 1]}],
        "outputs": [{"name": "loss", "dtype": "float32", "shape": []},
                    {"name": "grad_norm", "dtype": "float32", "shape": []}],
        "training": {"loss": "loss", "grad_norm": "grad_norm",
                     "optimizer": {"name": "sgd", "lr": LR, "momentum": MOMENTUM},
                     "batch_inputs": ["x"]}}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((STEPS * BATCH, FEATURES)).astype(np.float32)
    target = (x @ np.array([[1.0], [2.0], [-1.0]], np.float32)
              + 0.1 * rng.standard_normal((STEPS * BATCH, 1)).astype(np.float32))
    if args.nan_step:
        x[(args.nan_step - 1) * BATCH:args.nan_step * BATCH] = np.nan
    np.savez(out.parent / f"{out.name}.data.npz", x=x, target=target)
    (out.parent / f"{out.name}.expected.json").write_text(json.dumps(reference(x, target)))


def read_log(path):
    return {entry["step"]: entry for entry in map(json.loads, pathlib.Path(path).read_text()
                                                  .splitlines())}


def check(args):
    expected, log = json.loads(pathlib.Path(args.expected).read_text()), read_log(args.log)
    for step, entry in sorted(log.items()):
        for key in ("loss", "grad_norm"):
            want = expected[key][step - 1]
            if not np.isclose(entry[key], want, rtol=1e-5, atol=1e-6):
                sys.exit(f"step {step}: {key} {entry[key]}, expected {want}")
    print(f"match: steps {min(log)} to {max(log)}")


def same(args):
    a, b = read_log(args.log_a), read_log(args.log_b)
    common = sorted(set(a) & set(b))
    for step in common:
        for key in ("loss", "grad_norm"):
            if a[step][key] != b[step][key]:
                sys.exit(f"step {step}: {key} {a[step][key]} in one log, {b[step][key]} in the "
                         "other")
    print(f"same: steps {common[0]} to {common[-1]}")


def read_safetensors(path):
    raw = path.read_bytes()
    length = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    tensors = {}
    for name, entry in header.items():
        if name != "__metadata__":
            begin, end = entry["data_offsets"]
            tensors[name] = np.frombuffer(data[begin:end], np.float32).reshape(entry["shape"])
    return header.get("__metadata__", {}), tensors


def checkpoint(args):
    folder = pathlib.Path(args.folder)
    manifest = json.loads((folder / "checkpoint.json").read_text())
    expected = json.loads(pathlib.Path(args.expected).read_text())
    step = manifest["step"]
    if sorted(p.name for p in folder.iterdir()) != sorted(["checkpoint.json", *manifest["files"]]):
        sys.exit(f"{folder} holds {sorted(p.name for p in folder.iterdir())}")
    for rank in range(manifest["ranks"]):
        metadata, states = read_safetensors(folder / f"rank{rank}.safetensors")
        if not {"shardc.step", "w", "w.momentum_buffer"} <= set(states):
            sys.exit(f"rank {rank} saved {sorted(states)}")
        if metadata["step"] != str(step) or float(states["shardc.step"]) != step:
            sys.exit(f"rank {rank}: step {metadata['step']}, counter {states['shardc.step']}")
        if not np.allclose(states["w"].ravel(), expected["w"][step - 1], rtol=1e-5, atol=1e-6):
            sys.exit(f"rank {rank}: w {states['w'].ravel()}, expected {expected['w'][step - 1]}")
    print(f"checkpoint: step {step}, {manifest['ranks']} rank(s), w matches")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("make")
    m.add_argument("--schema", required=True, help="where flatc --python wrote the schema")
    m.add_argument("--out", required=True)
    m.add_argument("--dp", type=int, default=1)
    m.add_argument("--nan-step", type=int, default=0)
    m.add_argument("--ballast", type=int, default=0)
    c = commands.add_parser("check")
    c.add_argument("log")
    c.add_argument("expected")
    s = commands.add_parser("same")
    s.add_argument("log_a")
    s.add_argument("log_b")
    k = commands.add_parser("checkpoint")
    k.add_argument("folder")
    k.add_argument("expected")
    args = parser.parse_args()
    {"make": make, "check": check, "same": same, "checkpoint": checkpoint}[args.command](args)


if __name__ == "__main__":
    main()
