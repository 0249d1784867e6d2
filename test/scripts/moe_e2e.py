#!/usr/bin/env python3
"""Expert parallelism end to end on a Mixtral-shaped MoE layer.

Builds bench/cpu_models.moe_layer (8 experts, top-2, 32 tokens), compiles it
with shardc for each configuration given and runs it with shardrun (ranks as
threads, or MPI processes with --launch mpi). Per configuration it checks:

- the plan: with --ep, every graph.moe of the partitioned program has its
  experts split over ep and exchanges entries (`exchange = true`);
- the numbers: dropless, against onnxruntime; with --moe-capacity-factor F,
  against the float64 reference with docs/experts.md's drop rule (which
  onnxruntime does not know), max |diff| <= 1e-4 x max |ref|;
- the load the runtime reports (shardrun --profile --trace): every rank
  reports its expert group's dropped entries, which equal the reference's,
  and are > 0 when a capacity is given; dropless runs drop none. (With a
  capacity, configurations must not split the tokens over dp: each dp
  replica then drops by its own share, which this single reference does not
  model.)

With --report-ep P instead: the report of --ep P (shardc --report) against
figures computed here by hand: per device T/P tokens, rows for the worst
case P x T/P x min(k, E/P), the expected bytes sent each way (uniform
routing) T/P x k x H x 4 x (P-1)/P, the expert weights 3 x E/P x H x F x 4,
two all-to-alls of T/P x k rows, and comm totals equal to the sum of the
collectives.

Prints one line per configuration and "N passed, M failed".
"""
import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(pathlib.Path(__file__).parent))
import cpu_models  # noqa: E402
import e2e_models  # noqa: E402

BATCH, SEQ, HIDDEN, EXPERTS, TOP_K, FFN = 4, 8, 64, 8, 2, 128


def capacity_of(flags):
    """The per-expert capacity shardc derives from --moe-capacity-factor (0: none)."""
    if "--moe-capacity-factor" not in flags:
        return 0
    factor = float(flags[flags.index("--moe-capacity-factor") + 1])
    entries = BATCH * SEQ * TOP_K
    return min(max(math.ceil(factor * entries / EXPERTS), 1), entries)


def plan_problems(shardc, model_path, flags):
    """What is wrong with the partitioned program's routed experts, if anything."""
    run = subprocess.run([shardc, str(model_path), "--emit=partitioned", "-o", "-", *flags],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        return [f"shardc failed: {run.stderr.strip()}"]
    layers = [line for line in run.stdout.splitlines() if "graph.moe " in line]
    if not layers:
        return ["no graph.moe in the partitioned program"]
    if "--ep" not in flags:
        return []
    return [f"a graph.moe is not split over ep with exchange: {line.strip()[:160]}"
            for line in layers if 'exchange = true' not in line or '"ep"' not in line]


def dropped_by_rank(trace_path):
    """{rank: entries its moe_dispatch steps dropped in the first timed run}."""
    events = json.loads(pathlib.Path(trace_path).read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    dropped = {}
    for event in events:
        if event.get("name") == "moe_dispatch" and event["args"].get("iteration") == 0:
            rank = (trace_path.name, event.get("tid"))
            dropped[rank] = dropped.get(rank, 0) + event["args"].get("dropped", 0)
    return dropped


def run_one(args, model_path, weights, feeds, flags, workdir):
    problems = plan_problems(args.shardc, model_path, flags)
    artifact = workdir / "artifact"
    inputs, outputs, trace = workdir / "in.npz", workdir / "out.npz", workdir / "trace.json"
    np.savez(inputs, **feeds)
    compiled = subprocess.run([args.shardc, str(model_path), "-o", str(artifact), *flags],
                              capture_output=True, text=True, timeout=300)
    if compiled.returncode != 0:
        return problems + [f"shardc failed: {compiled.stderr.strip()}"], None
    ranks = len(json.loads((artifact / "manifest.json").read_text())["ranks"])
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    command = e2e_models.launcher(args.launch, ranks, args.shardrun) + [
        str(artifact), "--inputs", str(inputs), "--outputs", str(outputs), "--warmup", "0",
        "--iters", "1", "--profile", "--trace", str(trace)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    if run.returncode != 0:
        return problems + [f"shardrun failed: {run.stderr.strip()}"], None
    produced = dict(np.load(outputs))
    capacity = capacity_of(flags)
    x = feeds["hidden_states"]
    if capacity:
        expected, dropped = cpu_models.moe_layer_reference(x, weights, TOP_K, capacity)
    else:
        session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
        expected, dropped = session.run(None, feeds)[0], 0
    name = next(iter(produced))
    found, worst = e2e_models.compare({name: expected}, produced)
    problems += found
    # Under MPI each rank writes its own trace, FILE.rank<r>.json.
    traces = [trace] if trace.exists() else sorted(workdir.glob("trace.rank*.json"))
    counted = {}
    for path in traces:
        counted.update(dropped_by_rank(path))
    if len(counted) != ranks or set(counted.values()) != {dropped} or (capacity and not dropped):
        problems.append(f"dropped {sorted(counted.values())} entries by the ranks' profiles, "
                        f"{dropped} by the reference"
                        + (" (a capacity that drops none tests nothing)" if capacity else ""))
    return problems, (worst, dropped)


def report_problems(shardc, model_path, members, workdir):
    """What the report of --ep `members` gets wrong, by hand-computed figures."""
    report_path = workdir / f"report{members}.json"
    run = subprocess.run([shardc, str(model_path), "--ep", str(members), "--emit=sharded",
                          "-o", str(workdir / "sharded.mlir"), "--report", str(report_path)],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        return [f"shardc failed: {run.stderr.strip()}"]
    report = json.loads(report_path.read_text())
    tokens = BATCH * SEQ // members
    local = EXPERTS // members
    want = {"experts": EXPERTS, "expert_axes": ["ep"], "exchange": True, "top_k": TOP_K,
            "tokens_per_device": tokens, "capacity": 0,
            "rows_per_device": members * tokens * min(TOP_K, local),
            "padding_rows": members * tokens * min(TOP_K, local) - tokens * TOP_K,
            "sent_bytes_per_direction": tokens * TOP_K * HIDDEN * 4 * (members - 1) // members,
            "expert_weight_bytes_per_device": 3 * local * HIDDEN * FFN * 4}
    problems = []
    layers = report.get("moe", [])
    if len(layers) != 1:
        return [f"{len(layers)} moe entries in the report, expected 1"]
    for key, value in want.items():
        if layers[0].get(key) != value:
            problems.append(f"moe {key} = {layers[0].get(key)}, expected {value}")
    exchanges = [c for c in report["collectives"] if c["kind"] == "all_to_all"]
    if [c["bytes"] for c in exchanges] != [tokens * TOP_K * HIDDEN * 4] * 2:
        problems.append(f"all-to-alls {[c['bytes'] for c in exchanges]}, expected two of "
                        f"{tokens * TOP_K * HIDDEN * 4} bytes")
    if report["totals"]["comm_bytes"] != sum(c["bytes"] for c in report["collectives"]):
        problems.append("comm_bytes is not the sum of the collectives' bytes")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", required=True)
    parser.add_argument("--launch", choices=("threads", "mpi"), default="threads")
    parser.add_argument("--configs", nargs="+", default=[""],
                        help='shardc flags per configuration, e.g. "--ep 2" "--ep 2 --tp 2"')
    parser.add_argument("--report-ep", type=int, nargs="+", default=[],
                        help="check the report of --ep P for each P instead of running")
    args = parser.parse_args()
    rng = np.random.default_rng(20261202)
    model, _, weights = cpu_models.moe_layer(BATCH, SEQ, HIDDEN, EXPERTS, TOP_K, FFN, rng)
    feeds = {"hidden_states": rng.standard_normal((BATCH, SEQ, HIDDEN), dtype=np.float32)}
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        model_path = pathlib.Path(tmp) / "moe_layer.onnx"
        onnx.save(model, str(model_path))
        for members in args.report_ep:
            problems = report_problems(args.shardc, model_path, members, pathlib.Path(tmp))
            print(f"FAIL report --ep {members}: " + "; ".join(problems) if problems
                  else f"ok   report --ep {members}")
            passed, failed = passed + (not problems), failed + bool(problems)
        for index, config in enumerate([] if args.report_ep else args.configs):
            workdir = pathlib.Path(tmp) / f"config{index}"
            workdir.mkdir()
            problems, figures = run_one(args, model_path, weights, feeds, config.split(), workdir)
            label = config or "one device"
            if problems:
                failed += 1
                print(f"FAIL {label}: " + "; ".join(problems))
            else:
                passed += 1
                worst, dropped = figures
                print(f"ok   {label}: max |diff| / max |ref| = {worst:.2e}, dropped {dropped}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
