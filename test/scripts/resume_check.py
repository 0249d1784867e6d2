#!/usr/bin/env python3
"""Trains a fixture 2 steps on one plan, resumes step 3 on another, against torch.

Compiles the fixture's training step twice (--from and --to: shardc's mesh
flags), runs 2 steps of the first with `shardrun --save`, then `shardrun
--resume` of that checkpoint in the second for step 3, and checks step 3's
loss and gradient norm within 1e-4 relative of torch's step 3 (the
fixture's reference; test/scripts/train_check.py's layout). Prints one line;
exits 1 when a check fails.

    resume_check.py --shardc S --shardrun R --fixture F --optimizer adamw
                    --from "--dp 2 --zero 3" --from-np 2 --to "" --to-np 1 --work W
"""
import argparse
import json
import os
import shlex
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_check  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--shardc", "--shardrun", "--fixture", "--work"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--optimizer", choices=["sgd", "adamw"], default="adamw")
    parser.add_argument("--from", dest="source", default="", help="the saving plan's mesh flags")
    parser.add_argument("--from-np", type=int, default=1)
    parser.add_argument("--to", dest="target", default="", help="the resuming plan's mesh flags")
    parser.add_argument("--to-np", type=int, default=1)
    args = parser.parse_args()
    settings = json.load(open(args.fixture + ".json"))
    reference = np.load(args.fixture + ".ref.npz")
    os.makedirs(args.work, exist_ok=True)
    model = os.path.join(os.path.dirname(args.fixture), settings["onnx"])
    data = args.fixture + ".data.npz"
    flags = train_check.model_flags(settings, settings.get("dims", {}))
    checkpoint = os.path.join(args.work, "checkpoint")
    log = os.path.join(args.work, "resumed.jsonl")
    for name, mesh, ranks, run in (("from", args.source, args.from_np, ["--steps", "2", "--save", checkpoint]),
                                   ("to", args.target, args.to_np, ["--steps", "3", "--resume", checkpoint, "--log", log])):
        artifact = os.path.join(args.work, name)
        train_check.run([args.shardc, model, *flags, "--train", "--loss", settings["loss"]["spec"],
                         *train_check.optimizer_flags(settings, args.optimizer, False),
                         *shlex.split(mesh), "-o", artifact])
        command = [args.shardrun, artifact, "--train", "--data", data, *run]
        if ranks > 1:
            command += ["--np", str(ranks)]
        train_check.run(command)
    logged = [json.loads(line) for line in open(log)]
    failures = []
    if [entry["step"] for entry in logged] != [3]:
        failures.append(f"the resumed run logged steps {[e['step'] for e in logged]}, expected [3]")
    else:
        for key, want in (("loss", reference[f"{args.optimizer}/losses"][2]),
                          ("grad_norm", reference[f"{args.optimizer}/grad_norm"][2])):
            got = float(logged[0][key])
            if not abs(got - want) <= 1e-4 * abs(want):
                failures.append(f"step 3 {key} {got:.8g}, torch {want:.8g}")
    what = f"{os.path.basename(args.fixture)} ({args.optimizer}): saved on '{args.source}', resumed on '{args.target}'"
    for failure in failures:
        print(f"resume_check: {what}: {failure}")
    if failures:
        sys.exit(1)
    print(f"resume_check: {what}: step 3 matches torch")


if __name__ == "__main__":
    main()
