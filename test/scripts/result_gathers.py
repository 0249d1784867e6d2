#!/usr/bin/env python3
"""Checks an output the runtime gathers onto the output rank, end to end.

Compiles MODEL with the given shardc flags (an artifact and a report),
then checks what the design promises (docs/design.md, "Results gathered by
the runtime"):
  - the manifest's output entry has the whole shape and the gather
    (--gather AXES:DIM, e.g. dp:0);
  - the rank program returns the piece (the whole shape cut along DIM);
  - the report lists the gather with the bytes the output rank receives,
    (n-1)/n of the whole output (n the gather's pieces; over all
    micro-batches), and its step adds the gathers' seconds;
  - shardrun (--np, or under the given launcher) writes outputs within
    1e-4 * max|ref| of onnxruntime.

    result_gathers.py --shardc S --shardrun R --model M --out DIR --gather dp:0
        [--launch "mpirun ... -np 4"] [--ranks 4] -- SHARDC_FLAGS...
Prints "ok: OUTPUT gathered over AXES along DIM, within 1e-4".
"""
import argparse
import json
import pathlib
import shlex
import subprocess
import sys

import numpy as np
import onnxruntime as ort


def fail(message):
    sys.exit(f"result_gathers: {message}")


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--shardc", "--shardrun", "--model", "--out", "--gather"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--launch", default="")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("flags", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    flags = [f for f in args.flags if f != "--"]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    artifact, report_path = out / "artifact", out / "report.json"
    subprocess.run([args.shardc, args.model, *flags, "-o", str(artifact), "--report",
                    str(report_path)], check=True)
    manifest = json.loads((artifact / "manifest.json").read_text())
    report = json.loads(report_path.read_text())
    axes, dim = args.gather.split(":")
    axes, dim = axes.split(","), int(dim)
    pieces = int(np.prod([manifest["mesh"]["axes"][a] for a in axes]))

    output = manifest["outputs"][0]
    if output.get("gather") != {"axes": axes, "dim": dim}:
        fail(f"manifest output gather {output.get('gather')}, expected {axes} along {dim}")
    whole = output["shape"]
    piece = list(whole)
    piece[dim] //= pieces
    # A pipeline's last stage returns one micro-batch's piece (the runtime
    # checks a rank program's outputs against the piece either way).
    pipeline = manifest.get("pipeline")
    if pipeline:
        returned = next(o for o in pipeline["programs"][-1]["outputs"]
                        if o["name"] == output["name"])
        mb_dim = next(o for o in pipeline["outputs"] if o["name"] == output["name"])["microbatch_dim"]
        if mb_dim is not None:
            piece[mb_dim] //= pipeline["microbatches"]
        if returned["shape"] != piece or returned.get("gather") != output["gather"]:
            fail(f"the last stage returns {returned}, expected the piece {piece}")

    gathers = report["result_gathers"]
    itemsize = np.dtype(np.float32 if output["dtype"] == "float32" else output["dtype"]).itemsize
    expected_bytes = (pieces - 1) * int(np.prod(whole)) * itemsize // pieces
    if [(g["output"], g["axes"], g["dim"], g["bytes"]) for g in gathers] != \
            [(output["name"], axes, dim, expected_bytes)]:
        fail(f"report result_gathers {gathers}, expected {expected_bytes} bytes of "
             f"{output['name']} over {axes} along {dim}")
    totals = report["totals"]
    gather_seconds = sum(g["seconds"] for g in gathers)
    step = (report["pipeline"]["schedule"]["step_seconds"] if pipeline
            else totals["compute_seconds"] + totals["comm_seconds"])
    if abs(totals["est_step_seconds"] - (step + gather_seconds)) > 1e-12 * max(1.0, step):
        fail(f"est_step_seconds {totals['est_step_seconds']} is not {step} + {gather_seconds}")

    session = ort.InferenceSession(args.model)
    rng = np.random.default_rng(0)
    feeds = {}
    for given in manifest["inputs"]:
        if given["dtype"] == "int64":
            feeds[given["name"]] = rng.integers(0, 50, size=given["shape"]).astype(np.int64)
        else:
            feeds[given["name"]] = rng.standard_normal(given["shape"]).astype(given["dtype"])
    np.savez(out / "in.npz", **feeds)
    command = [args.shardrun, str(artifact), "--inputs", str(out / "in.npz"), "--outputs",
               str(out / "out.npz")]
    command = shlex.split(args.launch) + command if args.launch else command + ["--np",
                                                                                str(args.ranks)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    ref = session.run([output["name"]], feeds)[0]
    got = np.load(out / "out.npz")[output["name"]]
    if got.shape != ref.shape:
        fail(f"shardrun wrote {got.shape}, onnxruntime {ref.shape}")
    error = float(np.abs(got - ref).max() / np.abs(ref).max())
    if error > 1e-4:
        fail(f"max |diff| / max |ref| = {error:.2e} over 1e-4")
    print(f"ok: {output['name']} gathered over {','.join(axes)} along {dim}, within 1e-4")


if __name__ == "__main__":
    main()
