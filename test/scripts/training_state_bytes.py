#!/usr/bin/env python3
"""Compares each rank's training state in a shardc report with the formula
for fp32 AdamW: 4 bytes of weight, 4 of gradient and 8 of Adam's two moments
per parameter, 16 * params / tp per rank (dp ranks hold whole copies).

    training_state_bytes.py MODEL.onnx REPORT.json --tp T

Prints the model's parameter count, the formula, each distinct rank figure
and its ratio to the formula, and exits 1 when one is off by more than 1%."""
import argparse
import json
import math
import sys

import onnx

FLOATS = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model")
    parser.add_argument("report")
    parser.add_argument("--tp", type=int, required=True)
    args = parser.parse_args()
    model = onnx.load(args.model, load_external_data=False)
    # Float initializers of more than one element are the trained weights
    # (docs/training.md).
    params = sum(math.prod(t.dims) for t in model.graph.initializer
                 if t.data_type in FLOATS and math.prod(t.dims) > 1)
    formula = 16 * params / args.tp
    ranks = json.load(open(args.report))["ranks"]
    states = sorted({r["param_bytes"] + r["grad_bytes"] + r["optimizer_bytes"] for r in ranks})
    print(f"parameters {params}; 16 * params / tp = {formula / 1e9:.2f} GB")
    worst = 0.0
    for state in states:
        ratio = state / formula
        worst = max(worst, abs(ratio - 1))
        print(f"rank state {state / 1e9:.2f} GB, ratio {ratio:.4f}")
    print("within 1%" if worst <= 0.01 else f"off by {worst:.2%}")
    return 0 if worst <= 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
