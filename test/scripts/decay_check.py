#!/usr/bin/env python3
"""Checks --no-decay-1d on a fixture: which parameters decay, and by how much.

Trains one step of each optimizer (AdamW, SGD) twice, with and without
--no-decay-1d, from the same weights and batch. One step of either differs
only in the decay term, so for every parameter W1(no decay) - W1(decay) is
lr * weight_decay * W0 where it has fewer than two dims (biases, norm
scales) and exactly 0 where it has two or more. Prints one line per
optimizer; exits 1 on the first parameter off by more than 1e-6 of max|W0|.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_check  # noqa: E402

LR, DECAY = 0.1, 0.5


def trained(args, optimizer, no_decay, initial):
    name = f"{optimizer}-{'no-decay-1d' if no_decay else 'decay'}"
    artifact = os.path.join(args.work, name)
    checkpoint = os.path.join(args.work, name + ".checkpoint")
    settings = train_check.json.load(open(args.fixture + ".json"))
    flags = ["--no-decay-1d"] if no_decay else []
    train_check.run([args.shardc, args.fixture + ".onnx", "--train", "--loss",
                     settings["loss"]["spec"], "--optimizer", optimizer, "--lr", str(LR),
                     "--weight-decay", str(DECAY), *flags, "-o", artifact])
    train_check.run([args.shardrun, artifact, "--train", "--data", args.fixture + ".data.npz",
                     "--steps", "1", "--save", checkpoint])
    return train_check.trained_weights(artifact, os.path.join(checkpoint, "rank0.safetensors"),
                                       initial)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", required=True)
    parser.add_argument("--fixture", required=True, help="test/fixtures/training/NAME")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    initial = train_check.initializers(args.fixture + ".onnx")
    for optimizer in ("adamw", "sgd"):
        decayed = trained(args, optimizer, False, initial)
        kept = trained(args, optimizer, True, initial)
        exempt = []
        for name, before in sorted(initial.items()):
            if name not in decayed:
                continue
            want = LR * DECAY * before if before.ndim < 2 else np.zeros_like(before)
            error = float(np.max(np.abs(kept[name] - decayed[name] - want)))
            if not error <= 1e-6 * max(float(np.max(np.abs(before))), 1.0):
                sys.exit(f"decay_check: {optimizer}: '{name}' {list(before.shape)}: no-decay minus "
                         f"decay is off lr * wd * W0 {'(1-D)' if before.ndim < 2 else '(0)'} "
                         f"by {error:.2e}")
            if before.ndim < 2:
                exempt.append(name)
        print(f"decay_check: {optimizer}: {len(exempt)} parameters exempt ({', '.join(exempt)}), "
              f"the others decayed as without the flag")


if __name__ == "__main__":
    main()
