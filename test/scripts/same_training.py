#!/usr/bin/env python3
"""Trains a fixture on two plans and checks that they train alike.

    same_training.py --shardc SHARDC --shardrun SHARDRUN --fixture test/fixtures/training/NAME
                     --plan 'A=--dp 2 --zero 2' --plan 'B=--dp 2 --zero 2 --bucket-mb 0'
                     (--exact | --rtol R) [--marker TEXT] [--np N | --mpirun 'mpirun -np 2']
                     [--steps K] --work DIR

Compiles the fixture's training step (its loss, AdamW) for each plan, trains
both K steps on the fixture's data with `shardrun --train`, and compares:
  --exact   every step's logged loss and gradient norm equal, and every file
            of the two checkpoints (`--save`: each rank's weights and
            optimizer state) equal byte for byte: for plans that must
            compute the same bits (collective buckets sum the same elements
            as their members);
  --rtol R  every logged loss and gradient norm within R relative, and every
            trained weight of the two `--export-onnx` models within R of
            the largest |weight| of its tensor: for plans that only change
            where sums are taken (ZeRO stages, hybrid sharding against plain
            data parallelism), whose orders of summation may differ.
With --marker TEXT the first plan's per-device program (--emit=partitioned)
must hold TEXT and the second's must not (`dist.bucket`: the buckets are
there to compare). Exit status 0 when all hold; each failure is printed.
"""
import argparse
import filecmp
import json
import os
import shlex
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"same_training: {shlex.join(command)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return result


def exported_weights(path):
    return {tensor.name: numpy_helper.to_array(tensor)
            for tensor in onnx.load(path).graph.initializer}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", required=True)
    parser.add_argument("--fixture", required=True, help="test/fixtures/training/NAME")
    parser.add_argument("--plan", action="append", required=True, metavar="NAME=FLAGS",
                        help="a plan's shardc flags (twice)")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--exact", action="store_true", help="the same bits")
    how.add_argument("--rtol", type=float, help="the same numbers within this relative bound")
    parser.add_argument("--marker", help="text only the first plan's partitioned program holds")
    parser.add_argument("--np", type=int, default=1, help="ranks, as threads of shardrun")
    parser.add_argument("--mpirun", default="", help="run the ranks under MPI: the launcher's words")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    if len(args.plan) != 2 or any("=" not in plan for plan in args.plan):
        parser.error("--plan NAME=FLAGS, twice")
    plans = dict(plan.split("=", 1) for plan in args.plan)

    settings = json.load(open(args.fixture + ".json"))
    model = os.path.join(os.path.dirname(args.fixture), settings["onnx"])
    flags = [f"--dim={name}={size}" for name, size in settings.get("dims", {}).items()]
    flags += ["--train", "--loss", settings["loss"]["spec"]]
    os.makedirs(args.work, exist_ok=True)
    failures, logs = [], {}
    for index, (name, plan_flags) in enumerate(plans.items()):
        base = os.path.join(args.work, name)
        plan = [args.shardc, model, *flags, *shlex.split(plan_flags)]
        if args.marker:
            run(plan + ["--emit=partitioned", "-o", base + ".mlir"])
            found = args.marker in open(base + ".mlir").read()
            if found != (index == 0):
                failures.append(f"the plan '{name}' {'holds' if found else 'lacks'} "
                                f"'{args.marker}'")
        run(plan + ["-o", base])
        command = [args.shardrun, base, "--train", "--data", args.fixture + ".data.npz",
                   "--steps", str(args.steps), "--log", base + ".jsonl"]
        command += ["--save", base + ".ckpt"] if args.exact else ["--export-onnx", base + ".onnx"]
        if args.mpirun:
            command = shlex.split(args.mpirun) + command
        elif args.np > 1:
            command += ["--np", str(args.np)]
        run(command)
        logs[name] = [(entry["step"], entry["loss"], entry["grad_norm"])
                      for entry in map(json.loads, open(base + ".jsonl"))]

    first, second = plans
    if len(logs[first]) != args.steps or len(logs[second]) != args.steps:
        failures.append(f"{len(logs[first])} and {len(logs[second])} steps logged, expected "
                        f"{args.steps}")
    for got, want in zip(logs[first], logs[second]):
        same = got == want if args.exact else np.allclose(got[1:], want[1:], rtol=args.rtol, atol=0)
        if not same:
            failures.append(f"step {got[0]}: loss, grad_norm {got[1:]} on '{first}', {want[1:]} "
                            f"on '{second}'")
    if args.exact:
        saved = [os.path.join(args.work, name + ".ckpt") for name in plans]
        files = sorted(os.listdir(saved[1]))
        if sorted(os.listdir(saved[0])) != files or not files:
            failures.append(f"the checkpoints hold different files: {os.listdir(saved[0])}, {files}")
        for file in files:
            if not filecmp.cmp(os.path.join(saved[0], file), os.path.join(saved[1], file),
                               shallow=False):
                failures.append(f"{file} differs between the checkpoints")
    else:
        weights = [exported_weights(os.path.join(args.work, name + ".onnx")) for name in plans]
        if weights[0].keys() != weights[1].keys() or not weights[0]:
            failures.append("the exported models hold different initializers")
        for tensor, value in weights[0].items():
            other = weights[1].get(tensor)
            if other is None or other.shape != value.shape:
                continue
            scale = float(np.max(np.abs(other))) if other.size else 0.0
            worst = float(np.max(np.abs(value.astype(np.float64) - other))) if other.size else 0.0
            if worst > args.rtol * scale:
                failures.append(f"trained '{tensor}' differs by {worst:.3g} (largest |w| {scale:.3g})")

    name = os.path.basename(args.fixture)
    launched = f"mpirun '{args.mpirun}'" if args.mpirun else f"{args.np} threads"
    for failure in failures:
        print(f"same_training: {name}: {failure}")
    if failures:
        return 1
    print(f"same_training: {name} ('{plans[first]}' against '{plans[second]}', {launched}, "
          f"{args.steps} steps): "
          + ("the same losses, gradient norms and checkpoint bytes" if args.exact else
             f"losses, gradient norms and trained weights within {args.rtol:g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
