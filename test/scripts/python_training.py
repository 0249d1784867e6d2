#!/usr/bin/env python3
"""Trains a training artifact from Python: shardc.Session.train_step, save, resume.

    python_training.py ARTIFACT DATA.npz EXPECTED.json CHECKPOINT [--ranks threads]

Opens one shardc.Session on ARTIFACT, takes every step DATA holds (4 rows
of each array a step, as train_artifact.py writes them), each loss within
1e-5 of EXPECTED's, saves CHECKPOINT after step 3, then opens a second
Session, resumes it from CHECKPOINT and checks that its steps 4 on give the
first session's losses bit for bit. Prints one line per check.
"""
import argparse
import json

import numpy as np

import shardc

ROWS = 4


def batch(data, step):
    return {name: data[name][(step - 1) * ROWS:step * ROWS] for name in data.files}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("artifact")
    parser.add_argument("data")
    parser.add_argument("expected")
    parser.add_argument("checkpoint")
    parser.add_argument("--ranks", default=None)
    args = parser.parse_args()
    data = np.load(args.data)
    expected = json.load(open(args.expected))["loss"]
    steps = len(data["x"]) // ROWS

    session = shardc.Session(args.artifact, ranks=args.ranks)
    losses = []
    for step in range(1, steps + 1):
        losses.append(session.train_step(batch(data, step)))
        if step == 3:
            session.save(args.checkpoint)
    if not np.allclose(losses, expected, rtol=1e-5, atol=1e-6):
        raise SystemExit(f"losses {losses}, expected {expected}")
    print(f"trained steps 1 to {steps}: numpy's losses")

    resumed = shardc.Session(args.artifact, ranks=args.ranks)
    print(f"resumed at step {resumed.resume(args.checkpoint)}")
    again = [resumed.train_step(batch(data, step)) for step in range(4, steps + 1)]
    if again != losses[3:]:
        raise SystemExit(f"resumed losses {again}, first {losses[3:]}")
    print(f"steps 4 to {steps} again: the same losses")


if __name__ == "__main__":
    main()
