#!/usr/bin/env python3
"""Checks a device file shardc-calibrate wrote, and that shardc prices with it.

    check_calibration.py DEVICE.json RANKS [MODEL.onnx OUT_DIR]

The file must hold every figure the cost model reads, each a positive
number, devices_per_node RANKS and a name that says how it was measured.
Then, given a model, `shardc MODEL --tp RANKS --device DEVICE.json` must name that device in
its report and price each all-reduce by the fitted ring formula with the
file's figures: launch + 2(n-1) (latency + bytes / (n bandwidth)).
Prints one line per check so FileCheck can follow.
"""
import json
import math
import os
import subprocess
import sys

KEYS = ("peak_flops_16", "peak_flops_32", "memory_bandwidth", "memory_bytes", "devices_per_node",
        "intra_node_latency", "intra_node_bandwidth", "inter_node_latency",
        "inter_node_bandwidth", "collective_launch")


def main():
    path, ranks = sys.argv[1], int(sys.argv[2])
    device = json.load(open(path))
    assert device["base"] == "h100", device
    for key in KEYS:
        value = device[key]
        assert isinstance(value, (int, float)) and value > 0 and math.isfinite(value), (key, value)
    assert device["devices_per_node"] == ranks, device
    print("name:", device["name"])
    if len(sys.argv) < 5:
        return
    model, out = sys.argv[3], sys.argv[4]
    os.makedirs(out, exist_ok=True)
    report = f"{out}/report.json"
    subprocess.run(["shardc", model, "--tp", str(ranks), "--device", path, "-o", f"{out}/artifact",
                    "--report", report], check=True)
    priced = json.load(open(report))
    assert priced["device"] == device["name"], (priced["device"], device["name"])
    n = ranks
    reduces = [c for c in priced["collectives"] if c["kind"] == "all_reduce"]
    assert reduces, "the tp plan has no all-reduce"
    for collective in reduces:
        want = device["collective_launch"] + 2 * (n - 1) * (
            device["intra_node_latency"] + collective["bytes"] / (n * device["intra_node_bandwidth"]))
        assert math.isclose(collective["seconds"], want, rel_tol=1e-6), (collective, want)
    print(f"{len(reduces)} all-reduces priced by the calibrated ring")


if __name__ == "__main__":
    main()
