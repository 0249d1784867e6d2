#!/usr/bin/env python3
"""Checks fp16 training's dynamic loss scaling (torch.amp.GradScaler's rule)
on the mlp fixture, whose first gradient overflows fp16 at the initial scale.

torch's fp32 first gradient of fc1.weight, times GradScaler's initial scale
65536, exceeds fp16's largest value 65504: GradScaler finds an inf and skips
that step. The script trains the fixture compiled with --dtype fp16 and
checks, from the log and from checkpoints:
  - step 1 is skipped: its gradient norm is logged non-finite (null), every
    weight is still the model's, every Adam state and the step counter
    still zero; the scale halved to 32768, the count of good steps 0;
  - step 2 (at 32768) is taken: the counter and the count of good steps 1,
    the weights moved, the scale kept;
  - after 2001 steps (step 1 skipped, 2000 good ones) the scale grew back
    to 65536 and the count restarted at 0.

    loss_scale_check.py --shardc SHARDC --shardrun SHARDRUN --fixture DIR/mlp --work DIR
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_check import initializers, read_safetensors, run  # noqa: E402

FP16_MAX = 65504.0
INITIAL_SCALE = 65536.0


def train(args, artifact, data, steps, name):
    checkpoint = os.path.join(args.work, name)
    log = os.path.join(args.work, name + ".jsonl")
    run([args.shardrun, artifact, "--train", "--data", data, "--steps", str(steps),
         "--log", log, "--save", checkpoint])
    return (read_safetensors(os.path.join(checkpoint, "rank0.safetensors")),
            [json.loads(line) for line in open(log)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", required=True)
    parser.add_argument("--fixture", required=True, help="test/fixtures/training/mlp")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    settings = json.load(open(args.fixture + ".json"))
    reference = np.load(args.fixture + ".ref.npz")
    failures = []

    overflow = float(np.abs(reference["sgd/grad/fc1.weight"]).max()) * INITIAL_SCALE
    print(f"loss_scale_check: torch's first fc1.weight gradient x 65536 = {overflow:.0f}")
    if not overflow > FP16_MAX:
        sys.exit("loss_scale_check: the fixture's first gradient does not overflow fp16 at "
                 "65536; this check needs one that does")

    artifact = os.path.join(args.work, "step")
    run([args.shardc, args.fixture + ".onnx", "--train", "--loss", settings["loss"]["spec"],
         "--dtype", "fp16", "-o", artifact])
    data = args.fixture + ".data.npz"
    model = initializers(args.fixture + ".onnx")

    state, log = train(args, artifact, data, 1, "one")
    if log[0]["grad_norm"] is not None:
        failures.append(f"step 1: gradient norm {log[0]['grad_norm']}, expected non-finite")
    for name, value in state.items():
        if name in model and not np.array_equal(value, model[name]):
            failures.append(f"step 1 was skipped but '{name}' changed")
        if name.endswith((".exp_avg", ".exp_avg_sq")) or name == "shardc.step":
            if np.any(value != 0):
                failures.append(f"step 1 was skipped but '{name}' is not zero")
    expected = {"shardc.loss_scale": 32768, "shardc.loss_scale_growth_tracker": 0}
    expected_two = {"shardc.loss_scale": 32768, "shardc.loss_scale_growth_tracker": 1,
                    "shardc.step": 1}

    def compare(state, expected, when):
        for name, want in expected.items():
            got = float(state[name]) if name in state else None
            if got != want:
                failures.append(f"{when}: '{name}' is {got}, expected {want}")

    compare(state, expected, "after step 1")
    state, log = train(args, artifact, data, 2, "two")
    compare(state, expected_two, "after step 2")
    if log[1]["grad_norm"] is None:
        failures.append("step 2 at scale 32768: non-finite gradients")
    if np.array_equal(state["fc1.weight"], model["fc1.weight"]):
        failures.append("step 2 did not change fc1.weight")

    # 2001 steps: the fixture's batches again and again.
    rows = settings["batch_size"]
    arrays = dict(np.load(data))
    repeats = -(-2001 * rows // len(next(iter(arrays.values()))))
    long_data = os.path.join(args.work, "long.npz")
    np.savez(long_data, **{k: np.concatenate([v] * repeats) for k, v in arrays.items()})
    state, log = train(args, artifact, long_data, 2001, "long")
    skipped = [entry["step"] for entry in log if entry["grad_norm"] is None]
    if skipped != [1]:
        failures.append(f"2001 steps: skipped steps {skipped[:10]}, expected [1]")
    compare(state, {"shardc.loss_scale": 65536, "shardc.loss_scale_growth_tracker": 0,
                    "shardc.step": 2000}, "after 2001 steps")

    for failure in failures:
        print(f"loss_scale_check: {failure}")
    if failures:
        sys.exit(1)
    print("loss_scale_check: the overflowing step was skipped, the scale halved, "
          "and grew back after 2000 good steps")


if __name__ == "__main__":
    main()
