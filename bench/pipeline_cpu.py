#!/usr/bin/env python3
"""Pipeline benchmark on this machine: --pp 2 on two ranks against one rank.

Generates (into a temporary folder) a GPT-2-shaped model (bench/cpu_models.py's
generator) with a batch of M sequences, compiles it for one device and with
`--pp 2 --microbatches M`, and times in the same run, median of --iters:

  - one rank with one thread (the whole batch at once),
  - the pp=2 artifact as two rank threads of one thread each (shardrun --np 2),
  - the same under mpirun -np 2 (when mpirun is found).

It prints the measured throughput gain of each pp run over the one-rank run
beside the fill-drain prediction p*m/(m+p-1) and the compiler's own estimate
(the report's stage times), checks the outputs against the one-rank run, and
writes a Chrome trace (shardrun --trace) of one pp run, whose idle gaps at the
start of stage 1 and the end of stage 0 are the bubble.

    .venv/bin/python bench/pipeline_cpu.py [--microbatches 8] [--layers 6] [--iters 5]
"""
import argparse
import json
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import cpu_models  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def run_ms(command, env=None):
    """shardrun's median ms/iter and the wall time of the process."""
    run = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return float(re.search(r"([0-9.]+) ms/iter", run.stdout).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--trace", default="pipeline_trace.json",
                        help="where to write the pp=2 run's trace")
    args = parser.parse_args()
    build = REPO / "build" / "bin"
    m = args.microbatches
    import os
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model, _ = cpu_models.gpt2(args.layers, args.hidden, args.hidden // 64, args.seq, 8192,
                                   np.random.default_rng(0), batch=m)
        model_path = tmp / "gpt2.onnx"
        onnx.save_model(model, str(model_path))
        ids = np.random.default_rng(1).integers(0, 8192, size=(m, args.seq)).astype(np.int64)
        np.savez(tmp / "inputs.npz", input_ids=ids)
        subprocess.run([str(build / "shardc"), str(model_path), "-o", str(tmp / "one")],
                       check=True)
        subprocess.run([str(build / "shardc"), str(model_path), "--pp", "2", "--microbatches",
                        str(m), "-o", str(tmp / "pp2"), "--report", str(tmp / "report.json")],
                       check=True)
        common = ["--inputs", str(tmp / "inputs.npz"), "--threads", "1", "--warmup", "1",
                  "--iters", str(args.iters)]
        one = run_ms([str(build / "shardrun"), str(tmp / "one"), "--outputs",
                      str(tmp / "one.npz")] + common)
        pp_threads = run_ms([str(build / "shardrun"), str(tmp / "pp2"), "--np", "2", "--outputs",
                             str(tmp / "pp.npz")] + common)
        # One untimed-free step for the trace: with warm-up runs the ranks
        # drift into the next step and the fill and drain overlap it.
        subprocess.run([str(build / "shardrun"), str(tmp / "pp2"), "--np", "2", "--inputs",
                        str(tmp / "inputs.npz"), "--threads", "1", "--warmup", "0", "--iters",
                        "1", "--trace", args.trace], check=True, capture_output=True)
        reference, piped = np.load(tmp / "one.npz"), np.load(tmp / "pp.npz")
        worst = max(float(np.max(np.abs(reference[k] - piped[k])) / np.max(np.abs(reference[k])))
                    for k in reference.files)
        pp_mpi = None
        if shutil.which("mpirun"):
            pp_mpi = run_ms(["mpirun", "--oversubscribe", "-np", "2", str(build / "shardrun"),
                             str(tmp / "pp2")] + common, env={**os.environ, **MPI_ENV})
        report = json.loads((tmp / "report.json").read_text())

    predicted = 2 * m / (m + 2 - 1)
    print(f"GPT-2-shaped, {args.layers} layers, hidden {args.hidden}, batch {m} x {args.seq} "
          f"tokens, median of {args.iters}")
    print(f"  1 rank x 1 thread: {one:.1f} ms per batch")
    print(f"  pp=2, {m} micro-batches, 2 rank threads x 1 thread: {pp_threads:.1f} ms, "
          f"gain {one / pp_threads:.2f}x (fill-drain p*m/(m+p-1) = {predicted:.2f}x)")
    if pp_mpi:
        print(f"  pp=2 under mpirun -np 2: {pp_mpi:.1f} ms, gain {one / pp_mpi:.2f}x")
    stages = report.get("pipeline", {}).get("stages", [])
    if stages:
        times = [stage.get("seconds", 0) for stage in stages]
        print(f"  compiler's stage estimates (H100 prices): {', '.join(f'{t * 1e6:.0f} us' for t in times)}"
              f"; slowest / mean {max(times) / (sum(times) / len(times)):.3f}")
    print(f"  outputs vs one rank: max |diff| / max |ref| = {worst:.2e}")
    events = [e for e in json.loads(pathlib.Path(args.trace).read_text())["traceEvents"]
              if e.get("ph") == "X"]
    start = min(e["ts"] for e in events)
    end = max(e["ts"] + e["dur"] for e in events)
    for rank in sorted({e["tid"] for e in events}):
        busy = sum(e["dur"] for e in events if e["tid"] == rank and e["name"].startswith("forward"))
        print(f"  trace rank {rank}: computing {busy / (end - start):.0%} of the step, idle "
              f"{1 - busy / (end - start):.0%} (fill-drain bubble (p-1)/(m+p-1) = "
              f"{1 / (m + 1):.0%})")
    print(f"  trace: {args.trace}")


if __name__ == "__main__":
    main()
