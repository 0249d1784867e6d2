#!/usr/bin/env python3
"""Expert parallelism on the CPU: a Mixtral-shaped MoE layer (8 experts,
top-2, SwiGLU) compiled by shardc and run by shardrun.

Measured in one run, medians of --iters (default 10):
- one device: shardc's routed experts (each token through its 2 experts)
  against onnxruntime running the model as exported (every expert on every
  token, scaled by a gate table that is zero for 6 of 8), both on 2 threads;
- --ep 2 as 2 rank threads and as 2 MPI processes (1 thread each) against
  one rank with the experts replicated, on 1 and 2 threads;
- the all-to-all volume: the rows each rank's dispatch sent to the other
  (shardrun --profile's sent_rows, summed over ranks, x H x 4 bytes) beside
  the formula for uniform routing, T x k x H x 4 x (P-1)/P per direction,
  and shardc's report's figure;
- numerics of every run against onnxruntime (max |diff| / max |ref|).

Run on a quiet machine: `make build && .venv/bin/python bench/moe_cpu.py`.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import cpu_bench  # noqa: E402
import cpu_models  # noqa: E402


def sent_rows(trace_paths):
    """Rows all ranks' dispatches sent to other ranks in the first timed run."""
    total = 0
    for path in trace_paths:
        events = json.loads(pathlib.Path(path).read_text())
        events = events["traceEvents"] if isinstance(events, dict) else events
        total += sum(e["args"].get("sent_rows", 0) for e in events
                     if e.get("name") == "moe_dispatch" and e["args"].get("iteration") == 0)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--ffn", type=int, default=1792)
    parser.add_argument("--build", type=pathlib.Path, default=cpu_bench.REPO / "build")
    args = parser.parse_args()
    experts, top_k = 8, 2
    rng = np.random.default_rng(14)
    model, _, _ = cpu_models.moe_layer(args.batch, args.seq, args.hidden, experts, top_k,
                                       args.ffn, rng)
    x = rng.standard_normal((args.batch, args.seq, args.hidden), dtype=np.float32)
    tokens = args.batch * args.seq
    print(f"MoE layer: {experts} experts, top-{top_k}, hidden {args.hidden}, ffn {args.ffn}, "
          f"{tokens} tokens; medians of {args.iters}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model_path = tmp / "moe.onnx"
        cpu_bench.save(model, model_path)
        inputs = tmp / "in.npz"
        np.savez(inputs, hidden_states=x)

        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = 2, 1
        session = ort.InferenceSession(str(model_path), options,
                                       providers=["CPUExecutionProvider"])
        feeds = {"hidden_states": x}
        reference = session.run(None, feeds)[0]
        ort_ms = cpu_bench.median_ms(lambda: session.run(None, feeds), 2, args.iters)

        def compiled(name, flags):
            artifact = tmp / name
            subprocess.run([str(args.build / "bin" / "shardc"), str(model_path), "-o",
                            str(artifact), "--report", str(tmp / f"{name}.json"), *flags],
                           check=True)
            return artifact

        def error(outputs):
            got = np.load(outputs)
            got = got[list(got.keys())[0]]
            return float(np.abs(got - reference).max() / np.abs(reference).max())

        single, ep2 = compiled("single", []), compiled("ep2", ["--ep", "2"])
        rows = {}
        for label, artifact, threads, ranks, mpi in (
                ("1 rank x 1 thread", single, 1, None, False),
                ("1 rank x 2 threads", single, 2, None, False),
                ("ep=2 threads", ep2, 1, 2, False),
                ("ep=2 MPI", ep2, 1, 2, True)):
            outputs = tmp / f"{label.replace(' ', '_')}.npz"
            ms = cpu_bench.shardrun_ms(args.build, artifact, inputs, outputs, threads,
                                       args.iters, ranks=ranks, mpi=mpi)
            rows[label] = (ms, error(outputs))
        print(f"{'onnxruntime (dense, 2 threads)':32s} {ort_ms:8.2f} ms")
        for label, (ms, err) in rows.items():
            print(f"{label:32s} {ms:8.2f} ms   vs ort {ort_ms / ms:5.2f}x   "
                  f"max |diff| / max |ref| {err:.1e}")
        one, two = rows["1 rank x 1 thread"][0], rows["1 rank x 2 threads"][0]
        for label in ("ep=2 threads", "ep=2 MPI"):
            ms = rows[label][0]
            print(f"{label}: {one / ms:.2f}x one rank x 1 thread, {two / ms:.2f}x one rank x 2 "
                  "threads")

        # The exchange's volume: what the runtime sent against the formula.
        trace = tmp / "trace.json"
        subprocess.run([str(args.build / "bin" / "shardrun"), str(ep2), "--np", "2",
                        "--inputs", str(inputs), "--outputs", str(tmp / "t.npz"), "--warmup",
                        "0", "--iters", "1", "--profile", "--trace", str(trace)],
                       check=True, capture_output=True, env=dict(os.environ))
        measured = sent_rows([trace]) * args.hidden * 4
        formula = tokens * top_k * args.hidden * 4 * (2 - 1) // 2
        report = json.loads((tmp / "ep2.json").read_text())
        reported = sum(layer["sent_bytes_per_direction"] for layer in report["moe"]) * 2
        print(f"all-to-all per direction, both ranks: measured {measured} B, formula "
              f"T*k*H*4*(P-1)/P = {formula} B ({measured / formula:.3f}x), report {reported} B")


if __name__ == "__main__":
    main()
