#!/usr/bin/env python3
"""Trains a fixture 2 steps on one plan, resumes step 3 on another, against torch.

Compiles the fixture's training step twice (--from and --to: shardc's mesh
flags), runs 2 steps of the first with `shardrun --save`, then `shardrun
--resume` of that checkpoint in the second for step 3, and checks step 3's
loss and gradient norm within 1e-4 relative of torch's step 3 (the
fixture's reference; test/scripts/train_check.py's layout). With --steps N
the resumed run goes on to step N, and every step's loss must be torch's
(1e-4 relative up to step 3, then the curve's tolerance of train_check.py)
as if the run had not been interrupted. With --mpirun (the launcher's words
before the number of ranks, e.g. 'mpirun -np') a plan of several ranks runs
them as processes. Prints one line; exits 1 when a check fails.

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
    parser.add_argument("--steps", type=int, default=3,
                        help="the last step of the resumed run (at least 3)")
    parser.add_argument("--mpirun", default="",
                        help="run a plan's ranks under MPI: the launcher's words before the count")
    args = parser.parse_args()
    if args.steps < 3:
        parser.error("--steps: the resumed run starts at step 3")
    settings = json.load(open(args.fixture + ".json"))
    reference = np.load(args.fixture + ".ref.npz")
    os.makedirs(args.work, exist_ok=True)
    model = os.path.join(os.path.dirname(args.fixture), settings["onnx"])
    data = args.fixture + ".data.npz"
    flags = train_check.model_flags(settings, settings.get("dims", {}))
    checkpoint = os.path.join(args.work, "checkpoint")
    log = os.path.join(args.work, "resumed.jsonl")
    for name, mesh, ranks, run in (("from", args.source, args.from_np, ["--steps", "2", "--save", checkpoint]),
                                   ("to", args.target, args.to_np, ["--steps", str(args.steps), "--resume", checkpoint, "--log", log])):
        artifact = os.path.join(args.work, name)
        train_check.run([args.shardc, model, *flags, "--train", "--loss", settings["loss"]["spec"],
                         *train_check.optimizer_flags(settings, args.optimizer, False),
                         *shlex.split(mesh), "-o", artifact])
        command = [args.shardrun, artifact, "--train", "--data", data, *run]
        if ranks > 1 and args.mpirun:
            command = shlex.split(args.mpirun) + [str(ranks)] + command
        elif ranks > 1:
            command += ["--np", str(ranks)]
        train_check.run(command)
    logged = [json.loads(line) for line in open(log)]
    failures = []
    expected = list(range(3, args.steps + 1))
    curve = max(1e-3, settings["fp32_vs_fp64_loss"][args.optimizer]["max_rel"])
    if [entry["step"] for entry in logged] != expected:
        failures.append(f"the resumed run logged steps {[e['step'] for e in logged]}, "
                        f"expected {expected}")
    else:
        for entry in logged:
            step = entry["step"]
            checks = [("loss", reference[f"{args.optimizer}/losses"][step - 1])]
            if step == 3:
                checks.append(("grad_norm", reference[f"{args.optimizer}/grad_norm"][2]))
            tolerance = 1e-4 if step == 3 else curve
            for key, want in checks:
                got = float(entry[key])
                if not abs(got - want) <= tolerance * abs(want):
                    failures.append(f"step {step} {key} {got:.8g}, torch {want:.8g}")
    what = f"{os.path.basename(args.fixture)} ({args.optimizer}): saved on '{args.source}', resumed on '{args.target}'"
    for failure in failures:
        print(f"resume_check: {what}: {failure}")
    if failures:
        sys.exit(1)
    if args.steps == 3:
        print(f"resume_check: {what}: step 3 matches torch")
    else:
        print(f"resume_check: {what}: steps 3 to {args.steps} match torch")


if __name__ == "__main__":
    main()
