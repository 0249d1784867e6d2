#!/usr/bin/env python3
"""`make demo`: compile the shipped example, run it, compare with onnxruntime.

Compiles examples/gpt2_tiny.onnx (batch 2, sequence 32) with shardc for one
CPU device and for a mesh of dp=2 x tp=2 (the plan printed), runs both
artifacts with shardrun (the 4 ranks as threads) on the same random token
ids, and compares every output with onnxruntime's: max |shardrun -
onnxruntime| must be within 1e-4 x max |onnxruntime|. The artifacts and
the inputs stay in BUILD/demo/, and the commands to run them again are
printed. Exit code 1 when a step fails or an output differs.

    .venv/bin/python examples/demo.py [--build build]
"""
import argparse
import pathlib
import shlex
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

MODEL = pathlib.Path(__file__).parent / "gpt2_tiny.onnx"
DIMS = {"batch": 2, "seq": 32}
TOLERANCE = 1e-4  # x max |onnxruntime|
CONFIGURATIONS = [("one CPU device", "gpt2_tiny", [], 1),
                  ("mesh dp=2 x tp=2, 4 ranks as threads", "gpt2_tiny_dp2_tp2",
                   ["--dp", "2", "--tp", "2"], 4)]


def run(command):
    """Runs a step; on failure prints its output and exits."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"make demo: `{shlex.join(command)}` failed:\n{result.stdout}{result.stderr}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    args = parser.parse_args()
    build = pathlib.Path(args.build)
    shardc, shardrun = str(build / "bin" / "shardc"), str(build / "bin" / "shardrun")
    demo = build / "demo"
    demo.mkdir(parents=True, exist_ok=True)

    model = onnx.load(str(MODEL))
    vocabulary = next(t.dims[0] for t in model.graph.initializer if t.name == "wte.weight")
    layers = sum(n.op_type == "LayerNormalization" for n in model.graph.node) // 2  # 2 per block
    rng = np.random.default_rng(20261201)
    feeds = {"input_ids": rng.integers(0, vocabulary, size=(DIMS["batch"], DIMS["seq"]))}
    inputs = demo / "inputs.npz"
    np.savez(inputs, **feeds)
    ort.set_default_logger_severity(3)  # its graph-optimizer notes are not the demo's
    session = ort.InferenceSession(str(MODEL), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    reference = dict(zip(names, session.run(names, feeds)))

    dims = [f"--dim={name}={value}" for name, value in DIMS.items()]
    print(f"shardc compiled {MODEL.relative_to(MODEL.parent.parent)} (GPT-2 style, {layers} layers, vocabulary {vocabulary}) "
          f"for batch {DIMS['batch']} x sequence {DIMS['seq']}:")
    rerun, matched = [], True
    for label, name, mesh, ranks in CONFIGURATIONS:
        artifact = demo / name
        compiled = run([shardc, str(MODEL), *dims, *mesh, "-o", str(artifact)]
                       + (["--verbose"] if mesh else []))
        outputs = demo / f"{name}.outputs.npz"
        command = [shardrun] + (["--np", str(ranks)] if ranks > 1 else []) + [
            str(artifact), "--inputs", str(inputs), "--outputs", str(outputs)]
        timing = run(command).stdout.strip()
        produced = np.load(outputs)
        print(f"\n  {label} -> {artifact}/")
        for line in compiled.stderr.splitlines():
            print(f"    {line.strip()}")
        print(f"    shardrun: {timing.removeprefix('shardrun: ')}")
        for output, expected in reference.items():
            scale = float(np.abs(expected).max())
            error = float(np.abs(produced[output].astype(np.float64) - expected).max())
            ok = error <= TOLERANCE * scale
            matched &= ok
            print(f"    '{output}' {list(expected.shape)} vs onnxruntime: max difference "
                  f"{error:.1e}, {'within' if ok else 'OVER'} the tolerance {TOLERANCE:g} x "
                  f"max |output| = {TOLERANCE * scale:.1e}: {'same result' if ok else 'DIFFERS'}")
        rerun.append(shlex.join(command))
    print("\nRun them again (the inputs are random token ids):")
    for command in rerun:
        print(f"  {command}")
    return 0 if matched else 1


if __name__ == "__main__":
    sys.exit(main())
