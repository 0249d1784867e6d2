#!/usr/bin/env python3
"""A zoo export's training step against onnxruntime: the step-1 loss.

The zoo has no torch training references, but the first step's loss depends
only on the forward and the loss: it is compared with the causal-LM
cross-entropy computed (in float64) from onnxruntime's logits on the zoo's
feeds, labels = input_ids. The step is compiled with `shardc --train` for
the given mesh and run once by `shardrun --train`; then two more steps must
lower the loss (SGD, a small learning rate) and keep it finite.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

import numpy as np
import onnxruntime as ort


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", required=True)
    parser.add_argument("--zoo", required=True, help="test/zoo")
    parser.add_argument("--model", required=True, help="a name of zoo.json, e.g. gpt2.dynamo")
    parser.add_argument("--mesh", default="")
    parser.add_argument("--np", type=int, default=1)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    entry = next(m for m in json.load(open(os.path.join(args.zoo, "zoo.json")))["models"]
                 if m["name"] == args.model)
    feeds = dict(np.load(os.path.join(args.zoo, entry["inputs"])))
    logits = ort.InferenceSession(os.path.join(args.zoo, entry["file"])).run(["logits"], feeds)[0]
    rows = logits[:, :-1].reshape(-1, logits.shape[-1]).astype(np.float64)
    labels = feeds["input_ids"][:, 1:].reshape(-1)
    top = rows.max(axis=1)
    want = float(np.mean(np.log(np.exp(rows - top[:, None]).sum(axis=1)) + top -
                         rows[np.arange(len(labels)), labels]))

    dims = [f"--dim={name}={size}" for name, size in (entry.get("dims") or {}).items()]
    artifact = os.path.join(args.work, "step")
    commands = [[args.shardc, os.path.join(args.zoo, entry["file"]), *dims, "--train", "--loss",
                 "causal-lm:logits", "--optimizer", "sgd", "--lr", "0.01",
                 *shlex.split(args.mesh), "-o", artifact]]
    data = os.path.join(args.work, "data.npz")
    np.savez(data, **{name: np.concatenate([value] * 3) for name, value in feeds.items()},
             labels=np.concatenate([feeds["input_ids"]] * 3))
    log = os.path.join(args.work, "loss.jsonl")
    run = [args.shardrun, artifact, "--train", "--data", data, "--steps", "3", "--log", log]
    commands.append(run + (["--np", str(args.np)] if args.np > 1 else []))
    for command in commands:
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"train_zoo_check: {shlex.join(command)} failed:\n{result.stderr}")
    losses = [json.loads(line)["loss"] for line in open(log)]
    failures = []
    if not abs(losses[0] - want) <= 1e-4 * abs(want):
        failures.append(f"step-1 loss {losses[0]:.8g}, onnxruntime's {want:.8g}")
    if not all(np.isfinite(losses)) or not losses[2] < losses[0]:
        failures.append(f"the loss did not fall: {losses}")
    for failure in failures:
        print(f"train_zoo_check: {args.model} (mesh '{args.mesh}'): {failure}")
    if failures:
        sys.exit(1)
    print(f"train_zoo_check: {args.model} (mesh '{args.mesh}'): step-1 loss matches "
          f"onnxruntime's, and the loss falls")


if __name__ == "__main__":
    main()
