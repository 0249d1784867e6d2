#!/usr/bin/env python3
"""Trains a fixture from Python and exports it: shardc.Session.train_step, export_onnx.

    python_export.py ARTIFACT FIXTURE OUT.onnx [--ranks threads]

ARTIFACT is FIXTURE's training step compiled with its AdamW settings. Takes
the fixture's weights_after_steps steps with Session.train_step, writes
OUT.onnx with Session.export_onnx, runs it in onnxruntime on step 1's batch
and compares the output with torch's module after the same steps
(adamw/eval_out3) within 2e-3 of max|torch's|. Prints one line.
"""
import argparse
import json

import numpy as np
import onnxruntime

import shardc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("artifact")
    parser.add_argument("fixture")
    parser.add_argument("out")
    parser.add_argument("--ranks", default=None)
    args = parser.parse_args()
    settings = json.load(open(args.fixture + ".json"))
    data = np.load(args.fixture + ".data.npz")
    reference = np.load(args.fixture + ".ref.npz")
    rows = settings["batch_size"]

    session = shardc.Session(args.artifact, ranks=args.ranks)
    for step in range(1, settings["weights_after_steps"] + 1):
        session.train_step({name: data[name][(step - 1) * rows:step * rows]
                            for name in data.files})
    session.export_onnx(args.out)

    feeds = {entry["name"]: data[entry["name"]][:rows] for entry in settings["inputs"]}
    exported = onnxruntime.InferenceSession(args.out, providers=["CPUExecutionProvider"])
    got = exported.run([settings["output"]["name"]], feeds)[0]
    want = reference["adamw/eval_out3"]
    error = float(np.max(np.abs(got - want)))
    scale = float(np.max(np.abs(want)))
    if not error <= 2e-3 * scale:
        raise SystemExit(f"the exported model's output: max |diff| {error:.2e} > 2e-3 * {scale:.3g}")
    print(f"exported after {settings['weights_after_steps']} steps: onnxruntime gives torch's output")


if __name__ == "__main__":
    main()
