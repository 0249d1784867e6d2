#!/usr/bin/env python3
"""Trains a fixture with and without collective buckets: the same bits.

    bucket_check.py --shardc SHARDC --shardrun SHARDRUN --fixture test/fixtures/training/NAME
                    --mesh '--dp 2 --zero 2' [--bucket-mb N] [--np N | --mpirun 'mpirun -np 2']
                    [--steps K] --work DIR

Compiles the fixture's training step (its loss, AdamW) for the mesh twice,
with `--bucket-mb N` (default: shardc's default) and with `--bucket-mb 0`,
checks that the first plan's per-device program has buckets (`dist.bucket`)
and the second none, trains both K steps on the fixture's data with
`shardrun --train --save`, and requires every step's logged loss and
gradient norm to be equal and every file of the two checkpoints (each rank's
weights and optimizer state after the last step) to be equal byte for byte:
a bucket sums or gathers the same elements as its members, so nothing may
differ. Exit status 0 when all hold; each failure is printed.
"""
import argparse
import filecmp
import json
import os
import shlex
import subprocess
import sys


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"bucket_check: {shlex.join(command)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", required=True)
    parser.add_argument("--fixture", required=True, help="test/fixtures/training/NAME")
    parser.add_argument("--mesh", required=True, help="shardc's mesh flags")
    parser.add_argument("--bucket-mb", default=None, help="the bucketed plan's --bucket-mb")
    parser.add_argument("--np", type=int, default=1, help="ranks, as threads of shardrun")
    parser.add_argument("--mpirun", default="", help="run the ranks under MPI: the launcher's words")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()

    settings = json.load(open(args.fixture + ".json"))
    model = os.path.join(os.path.dirname(args.fixture), settings["onnx"])
    flags = [f"--dim={name}={size}" for name, size in settings.get("dims", {}).items()]
    flags += ["--train", "--loss", settings["loss"]["spec"], *shlex.split(args.mesh)]
    plans = {"buckets": [] if args.bucket_mb is None else ["--bucket-mb", args.bucket_mb],
             "none": ["--bucket-mb", "0"]}
    os.makedirs(args.work, exist_ok=True)
    failures, logs = [], {}
    for name, bucket_flags in plans.items():
        base = os.path.join(args.work, name)
        run([args.shardc, model, *flags, *bucket_flags, "--emit=partitioned", "-o", base + ".mlir"])
        buckets = open(base + ".mlir").read().count("dist.bucket")
        if (buckets > 0) != (name == "buckets"):
            failures.append(f"the plan '{name}' has {buckets} buckets")
        run([args.shardc, model, *flags, *bucket_flags, "-o", base])
        command = [args.shardrun, base, "--train", "--data", args.fixture + ".data.npz",
                   "--steps", str(args.steps), "--log", base + ".jsonl", "--save", base + ".ckpt"]
        if args.mpirun:
            command = shlex.split(args.mpirun) + command
        elif args.np > 1:
            command += ["--np", str(args.np)]
        run(command)
        logs[name] = [(entry["step"], entry["loss"], entry["grad_norm"])
                      for entry in map(json.loads, open(base + ".jsonl"))]

    if len(logs["buckets"]) != args.steps:
        failures.append(f"{len(logs['buckets'])} steps logged, expected {args.steps}")
    for got, want in zip(logs["buckets"], logs["none"]):
        if got != want:
            failures.append(f"step {got[0]}: loss, grad_norm {got[1:]} with buckets, {want[1:]} without")
    saved = [os.path.join(args.work, name + ".ckpt") for name in plans]
    files = sorted(os.listdir(saved[1]))
    if sorted(os.listdir(saved[0])) != files or not files:
        failures.append(f"the checkpoints hold different files: {os.listdir(saved[0])}, {files}")
    for file in files:
        if not filecmp.cmp(os.path.join(saved[0], file), os.path.join(saved[1], file), shallow=False):
            failures.append(f"{file} differs between the checkpoints")

    name = os.path.basename(args.fixture)
    how = f"mpirun '{args.mpirun}'" if args.mpirun else f"{args.np} threads"
    for failure in failures:
        print(f"bucket_check: {name}: {failure}")
    if failures:
        return 1
    print(f"bucket_check: {name} (mesh '{args.mesh}', {how}, {args.steps} steps): "
          f"the same losses, gradient norms and checkpoint bytes with and without buckets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
