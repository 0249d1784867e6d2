"""Reads shared_packed_weights.test's shardrun summaries: the packed GEMM
weights each run's process held, and whether the dp replicas' outputs are
the single rank's. Prints one line per run for FileCheck; exits 1 when a
summary lacks the figure or holds none."""
import re
import sys

import numpy as np

RUNS = [("one rank", "one"), ("dp=2", "dp2"), ("tp=2", "tp2"), ("dp=2 x tp=2", "dptp")]


def packed_megabytes(path):
    with open(path) as summary:
        found = re.search(r"packed weights ([0-9.]+) MB", summary.read())
    if not found or float(found.group(1)) <= 0:
        sys.exit(f"{path}: no packed weights in the summary")
    return found.group(1)


def main():
    out = sys.argv[1]
    for label, name in RUNS:
        print(f"{label}: packed {packed_megabytes(f'{out}/{name}.txt')} MB")
    one = np.load(f"{out}/one.npz")
    for name in ("dp2", "dptp"):
        replicas = np.load(f"{out}/{name}.npz")
        for key in one.files:
            ref = one[key]
            diff = np.abs(replicas[key] - ref).max() / max(np.abs(ref).max(), 1e-30)
            if diff > 1e-4:
                sys.exit(f"{name}: output {key} is {diff:.2e} of max |ref| from the single rank's")
    print("shared replicas give the single rank's outputs")


if __name__ == "__main__":
    main()
