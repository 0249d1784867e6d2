#!/usr/bin/env python3
"""Compiles models with shardc, runs them with shardrun and compares with onnxruntime.

For every fixture of test/fixtures/fixtures.json (or the models given): make
random inputs of the bound shapes (token ids below the embedding size, 0/1
masks, normal floats), run onnxruntime for the reference, compile with
`shardc MODEL -o DIR` and run `shardrun DIR`, then require
max |shardrun - onnxruntime| <= 1e-4 * max |onnxruntime| for every output.
Prints one line per model and a closing "N passed, M failed". With --model
(and --dim NAME=N), checks that one model and also prints shardc's and
shardrun's timings (make demo).

Sharded: --shard "--tp 2 --sp" is passed to shardc, and the artifact's ranks
run as threads (--launch threads: shardrun --np N) or as MPI processes
(--launch mpi: mpirun -np N shardrun), or through the Python binding
(--launch python: shardc.Session(DIR, ranks="threads").run(feeds), no
shardrun and no files in between). A fixture whose dims the mesh cannot
split (shardc says "not divisible" or "cannot split"), or that a pipeline
cannot take (fewer ops than stages, a batch the micro-batches do not cut)
is reported as skipped, with the reason, and does not count as passed.
"""
import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
from onnx import numpy_helper

TOLERANCE = 1e-4  # x max |ref|; --tolerance for reduced-precision storage (--dtype)
# shardc's one-line refusals of a configuration the model cannot take.
SKIP_REASONS = ("not divisible", "cannot split", "cannot be cut into", "does not cut into",
                "no input has a batch larger than 1")


def embedding_rows(model, input_name):
    """Rows of the table a Gather indexes with this input (the vocabulary), if any."""
    tables = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Gather" and len(node.input) > 1 and node.input[1] == input_name \
                and node.input[0] in tables:
            return int(tables[node.input[0]].dims[0])
    return None


def make_inputs(model, dims, rng):
    feeds = {}
    initializers = {t.name for t in model.graph.initializer}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else dims[d.dim_param]
                 for d in tensor.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if np.issubdtype(dtype, np.integer):
            high = embedding_rows(model, value.name) or 2
            feeds[value.name] = rng.integers(0, high, size=shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[value.name] = rng.random(size=shape) < 0.7
        else:
            feeds[value.name] = rng.standard_normal(size=shape).astype(dtype)
    return feeds


def launcher(launch, ranks, shardrun):
    """The command prefix that starts an artifact's ranks."""
    if ranks == 1:
        return [shardrun]
    if launch == "mpi":
        return ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "none", shardrun]
    return [shardrun, "--np", str(ranks)]


def run_in_python(artifact, feeds, ranks):
    """The outputs of the binding's session, or the one line it raised."""
    import shardc
    try:
        return shardc.Session(artifact, ranks="threads" if ranks > 1 else None).run(feeds), None
    except shardc.Error as error:
        return None, str(error)


def load_model(model_path):
    """The ONNX model of a binary (.onnx) or text (.onnxtext) file."""
    if pathlib.Path(model_path).suffix == ".onnxtext":
        return onnx.parser.parse_model(pathlib.Path(model_path).read_text())
    return onnx.load(str(model_path))


def reference_session(model_path, model):
    """onnxruntime's session of the model (on the CPU)."""
    return ort.InferenceSession(model.SerializeToString()
                                if pathlib.Path(model_path).suffix == ".onnxtext"
                                else str(model_path), providers=["CPUExecutionProvider"])


def reference_outputs(session, feeds):
    """onnxruntime's outputs by name."""
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


def compare(reference, produced, tolerance=TOLERANCE):
    """(problems, worst |diff| / max |ref|) of `produced` against onnxruntime's outputs."""
    problems, worst = [], 0.0
    for name, expected in reference.items():
        if name not in produced:
            problems.append(f"output '{name}' missing")
            continue
        got = produced[name]
        if got.shape != expected.shape:
            problems.append(f"output '{name}': shape {got.shape}, expected {expected.shape}")
            continue
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
        diff = float(np.max(np.abs(got.astype(np.float64) - expected.astype(np.float64)))) \
            if expected.size else 0.0
        if not np.isfinite(diff):
            problems.append(f"output '{name}' has NaN or Inf")
            continue
        worst = max(worst, diff / scale if scale else diff)
        if diff > tolerance * max(scale, 1e-30):
            problems.append(f"output '{name}': max |diff| {diff:.3e} > {tolerance} x max |ref| {scale:.3e}")
    return problems, worst


def check(model_path, dims, shardc, shardrun, workdir, verbose=False, shard=(), launch="threads",
          tolerance=TOLERANCE, feeds=None):
    """Compiles, runs and compares one model; `feeds` default to random inputs."""
    model = load_model(model_path)
    if feeds is None:
        feeds = make_inputs(model, dims, np.random.default_rng(20261129))
    reference = reference_outputs(reference_session(model_path, model), feeds)
    artifact = workdir / "artifact"
    inputs, outputs = workdir / "inputs.npz", workdir / "outputs.npz"
    np.savez(inputs, **feeds)
    compile_cmd = [shardc, str(model_path), "-o", str(artifact)]
    compile_cmd += [f"--dim={name}={value}" for name, value in dims.items()] + list(shard)
    run_args = [str(artifact), "--inputs", str(inputs), "--outputs", str(outputs),
                "--warmup", "1", "--iters", "5"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    for step in ("compile", "run"):
        if step == "run" and launch == "python":
            ranks = len(json.loads((artifact / "manifest.json").read_text())["ranks"])
            produced, error = run_in_python(artifact, feeds, ranks)
            if error:
                return [f"shardc.Session failed: {error}"], None
            break
        if step == "compile":
            command = compile_cmd
        else:
            ranks = len(json.loads((artifact / "manifest.json").read_text())["ranks"])
            command = launcher(launch, ranks, shardrun) + run_args
            if launch == "mpi" and ranks > 1:
                # Sanitized: OpenMPI's own allocations outlive MPI_Finalize.
                env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        start = time.perf_counter()
        run = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
        if run.returncode != 0:
            message = run.stderr.strip()
            if step == "compile" and any(reason in message for reason in SKIP_REASONS):
                return None, message.splitlines()[-1]
            return [f"{pathlib.Path(command[0]).name} failed: {message}"], None
        if verbose:
            print(f"$ {' '.join(command)}\n  ({time.perf_counter() - start:.2f} s) {run.stdout.strip()}")
    if launch != "python":
        produced = np.load(outputs)
    return compare(reference, produced, tolerance)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fixtures", type=pathlib.Path)
    parser.add_argument("--model", type=pathlib.Path, help="check this model only")
    parser.add_argument("--dim", action="append", default=[], help="NAME=N for --model")
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", required=True)
    parser.add_argument("--shard", default="",
                        help="more shardc flags, e.g. '--tp 2 --sp' or '--dtype bf16'")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help="max |diff| allowed, times max |ref| (default 1e-4)")
    parser.add_argument("--launch", choices=["threads", "mpi", "python"], default="threads")
    parser.add_argument("--feeds", type=pathlib.Path,
                        help="the inputs of --model from this .npz (the zoo's padded masks) "
                             "instead of random ones")
    args = parser.parse_args()
    if args.model:
        dims = {k: int(v) for k, v in (d.split("=") for d in args.dim)}
        entries = [{"name": args.model.name, "file": args.model.resolve(), "dims": dims}]
        root = pathlib.Path(".")
    elif args.fixtures:
        entries = json.loads((args.fixtures / "fixtures.json").read_text())
        root = args.fixtures
    else:
        parser.error("give --fixtures or --model")
    failed = skipped = 0
    for entry in entries:
        with tempfile.TemporaryDirectory() as tmp:
            problems, worst = check(root / entry["file"], entry["dims"], args.shardc,
                                    args.shardrun, pathlib.Path(tmp), verbose=bool(args.model),
                                    shard=shlex.split(args.shard), launch=args.launch,
                                    tolerance=args.tolerance,
                                    feeds=dict(np.load(args.feeds)) if args.feeds else None)
        if problems is None:
            print(f"skip {entry['name']}: {worst}")
            skipped += 1
            continue
        status = "ok  " if not problems else "FAIL"
        detail = f"max |diff| / max |ref| = {worst:.2e}" if worst is not None else ""
        print(f"{status} {entry['name']}: {detail}")
        for problem in problems:
            print(f"     {problem}")
        failed += bool(problems)
    print(f"{len(entries) - failed - skipped} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
