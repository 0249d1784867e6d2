#!/usr/bin/env python3
"""Checks the pipeline section of a shardc --report against its own arithmetic.

    check_pipeline_report.py REPORT.json MODEL.onnx

Asserts, with the report's numbers only (each check recomputes a figure the
compiler printed, so a wrong formula or a lost stage fails it):
- totals are the sums of their parts: comm bytes, traffic and seconds over
  `collectives`; compute seconds over the stages; comm seconds over the
  stages' collectives plus the transfers;
- stage k runs on pp rank k mod P, on the P-th block of consecutive ranks
  (pp outermost), names first and last nodes of MODEL, and the stages hold
  every layer once, in order; each rank's weights and activations are its
  stages' sums;
- every transfer appears as a send and a receive in `collectives`, with its
  source node and bytes, from an earlier stage to a later one;
- the step time is the schedule's formula over the stages' compute C and
  send X: sum(C+X) + (M-1) max(C,X) for gpipe, (V*M+P-1) max(C,X)
  interleaved; the bubble formula is (P-1)/(M+P-1) or (P-1)/(V*M+P-1), the
  predicted bubble 1 - M sum(C) / (P step), never below the formula;
- the step's breakdown (its stages' pace and the idle rest) sums to the step;
- the uniform split holds every layer once and prices the same ops as ours.
Prints one summary line for FileCheck.
"""
import argparse
import json
import math
import sys

import onnx


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("report")
    parser.add_argument("model")
    args = parser.parse_args()
    report = json.load(open(args.report))
    nodes = {node.name for node in onnx.load(args.model, load_external_data=False).graph.node}
    problems = []

    def check(ok, message):
        if not ok:
            problems.append(message)

    pipeline = report["pipeline"]
    schedule, stages, transfers = pipeline["schedule"], pipeline["stages"], pipeline["transfers"]
    p, v, m = schedule["pipeline_ranks"], schedule["virtual_stages"], schedule["microbatches"]
    collectives, totals = report["collectives"], report["totals"]

    check(totals["comm_bytes"] == sum(c["bytes"] for c in collectives), "comm_bytes is not the sum")
    check(totals["traffic_bytes"] == sum(c["traffic_bytes"] for c in collectives),
          "traffic_bytes is not the sum")
    check(close(totals["comm_seconds"], sum(c["seconds"] for c in collectives)),
          "comm_seconds is not the sum of the collectives")
    check(close(totals["compute_seconds"], sum(s["compute_seconds"] for s in stages)),
          "compute_seconds is not the sum of the stages")
    check(close(totals["comm_seconds"], sum(s["comm_seconds"] for s in stages)
                + sum(t["seconds"] for t in transfers)),
          "comm_seconds is not the stages' collectives plus the transfers")
    gathers = report["result_gathers"]
    check(close(totals["result_gather_seconds"], sum(g["seconds"] for g in gathers)),
          "result_gather_seconds is not the sum of the result gathers")
    check(close(totals["est_step_seconds"], schedule["step_seconds"] + totals["result_gather_seconds"]),
          "totals' step is not the schedule's plus the result gathers")
    breakdown = totals["breakdown"]
    parts = sum(value for key, value in breakdown.items() if key != "communication")
    check(close(parts + sum(breakdown["communication"].values()), totals["est_step_seconds"])
          and breakdown["bubble"] >= -1e-12, f"the breakdown {breakdown} does not sum to the step")

    check(len(stages) == p * v == schedule["stages"], f"{len(stages)} stages for P={p} V={v}")
    ranks = report["ranks"]
    per_stage = len(ranks) // p
    check(len(ranks) == p * per_stage, f"{len(ranks)} ranks do not divide over {p} pp ranks")
    seen_layers = []
    for k, stage in enumerate(stages):
        check(stage["stage"] == k and stage["pp_rank"] == k % p, f"stage {k} on pp {stage['pp_rank']}")
        first = k % p * per_stage
        check(stage["ranks"] == list(range(first, first + per_stage)),
              f"stage {k} on ranks {stage['ranks']}")
        for key in ("first_node", "last_node"):
            names = [n for n in stage[key].split(", ") if n]
            check(names and all(n in nodes for n in names), f"stage {k} {key} '{stage[key]}'")
        check(stage["memory_bytes"] == stage["param_bytes"] + stage["activation_bytes"],
              f"stage {k} memory is not weights + activations")
        seen_layers += stage["layers"]
    # A layer the cut splits is held by both stages around the cut.
    check(sorted(set(seen_layers)) == list(range(len(report["layers"]))),
          f"stages hold layers {seen_layers}")
    check(seen_layers == sorted(seen_layers), f"stage layers out of order: {seen_layers}")
    for rank in ranks:
        held = [s for s in stages if s["pp_rank"] == rank["rank"] // per_stage]
        check(rank["param_bytes"] == sum(s["param_bytes"] for s in held)
              and rank["peak_activation_bytes"] == sum(s["activation_bytes"] for s in held),
              f"rank {rank['rank']} memory is not its stages'")

    sends = [c for c in collectives if c["kind"] == "send"]
    receives = [c for c in collectives if c["kind"] == "recv"]
    check(len(sends) == len(receives) == len(transfers),
          f"{len(transfers)} transfers, {len(sends)} sends, {len(receives)} receives")
    for transfer, send, receive in zip(transfers, sends, receives):
        check(transfer["from_stage"] < transfer["to_stage"], f"transfer {transfer} goes backwards")
        check(transfer["source"] in nodes and send["source"] == receive["source"] == transfer["source"],
              f"transfer {transfer['transfer']} source '{transfer['source']}'")
        check(send["bytes"] == receive["bytes"] == transfer["bytes"] > 0,
              f"transfer {transfer['transfer']} bytes")

    compute = [s["seconds"] for s in stages]
    pace = max(max(s["seconds"], s["send_seconds"]) for s in stages)
    if schedule["kind"] == "interleaved":
        step = (v * m + p - 1) * pace
        formula = (p - 1) / (v * m + p - 1)
    else:
        step = sum(s["seconds"] + s["send_seconds"] for s in stages) + (m - 1) * pace
        formula = (p - 1) / (m + p - 1)
    check(close(schedule["step_seconds"], step),
          f"step {schedule['step_seconds']} but the {schedule['kind']} formula gives {step}")
    check(close(schedule["bubble_formula_value"], formula),
          f"bubble formula {schedule['bubble_formula_value']}, expected {formula}")
    bubble = 1 - m * sum(compute) / (p * schedule["step_seconds"])
    check(close(schedule["bubble"], bubble), f"bubble {schedule['bubble']}, expected {bubble}")
    check(schedule["bubble"] >= formula - 1e-12, f"bubble {schedule['bubble']} below {formula}")
    check(close(schedule["slowest_stage_seconds"], max(compute))
          and close(schedule["mean_stage_seconds"], sum(compute) / len(compute)),
          "slowest or mean stage")

    uniform = pipeline["uniform_split"]
    check(len(uniform["stages"]) == len(stages), "uniform split stage count")
    check(sum(s["layers"] for s in uniform["stages"]) == len(report["layers"]),
          "uniform split does not hold every layer once")
    ours = [s["compute_seconds"] + s["comm_seconds"] for s in stages]
    check(close(sum(s["seconds"] for s in uniform["stages"]), sum(ours)),
          "uniform split prices other ops than ours")
    check(close(uniform["slowest_seconds"], max(s["seconds"] for s in uniform["stages"]))
          and close(uniform["ours_slowest_seconds"], max(ours)), "uniform split's slowest")

    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{schedule['kind']} P={p} V={v} M={m}: {len(stages)} stages, {len(transfers)} transfers, "
          f"bubble formula {formula:.4f}, {'ok' if not problems else 'FAILED'}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
