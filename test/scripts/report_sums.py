#!/usr/bin/env python3
"""Checks that a training step's report adds up: its totals are the sums of
the parts of the step (forward, backward, grad_sync, optimizer), so is its
breakdown (compute, optimizer, collectives by kind), every collective
belongs to one part, and each rank's total_bytes is the sum of
its memory figures. Prints "sums hold" or each sum that does not, and exits
1 then.

    report_sums.py REPORT.json"""
import json
import math
import sys

PARTS = ("forward", "backward", "grad_sync", "optimizer")


def main():
    report = json.load(open(sys.argv[1]))
    totals, phases = report["totals"], report["training"]["phases"]
    wrong = []

    def same(what, got, expected):
        if not math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-15):
            wrong.append(f"{what}: {got!r} != {expected!r}")

    for key in ("compute_seconds", "comm_seconds", "comm_bytes", "traffic_bytes"):
        same(f"totals.{key} against the parts", totals[key], sum(phases[p][key] for p in PARTS))
    same("totals.est_step_seconds", totals["est_step_seconds"],
         totals["compute_seconds"] + totals["comm_seconds"] + totals["result_gather_seconds"])
    breakdown = totals["breakdown"]
    same("the breakdown's compute and optimizer", breakdown["compute"] + breakdown["optimizer"],
         totals["compute_seconds"])
    same("the breakdown's optimizer", breakdown["optimizer"], phases["optimizer"]["compute_seconds"])
    same("the breakdown's communication", sum(breakdown["communication"].values()),
         totals["comm_seconds"])
    for kind, seconds in breakdown["communication"].items():
        same(f"the breakdown's {kind}", seconds,
             sum(c["seconds"] for c in report["collectives"] if c["kind"] == kind))
    same("the breakdown's result gathers", breakdown["result_gathers"],
         totals["result_gather_seconds"])
    for part in PARTS:
        listed = [c for c in report["collectives"] if c.get("phase") == part]
        same(f"{part} collectives", sum(phases[part]["collectives"].values()), len(listed))
        same(f"{part} traffic", phases[part]["traffic_bytes"],
             sum(c["traffic_bytes"] for c in listed))
    unmarked = [c["source"] for c in report["collectives"] if c.get("phase") not in PARTS]
    if unmarked:
        wrong.append(f"collectives without a part: {unmarked}")
    for rank in report["ranks"]:
        same(f"rank {rank['rank']} total_bytes", rank["total_bytes"],
             rank["param_bytes"] + rank["grad_bytes"] + rank["optimizer_bytes"] +
             rank["peak_activation_bytes"] + rank.get("gathered_param_bytes", 0))
    print("\n".join(wrong) if wrong else "sums hold")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
