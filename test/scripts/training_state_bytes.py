#!/usr/bin/env python3
"""Compares each rank's training state in a shardc report with the formula
for fp32 AdamW: 4 bytes of weight, 4 of gradient and 8 of Adam's two moments
per parameter, 16 * params / tp per rank (dp ranks hold whole copies). With
--dtype bf16|fp16 (mixed precision) the same 16: 2 of weight, 2 of gradient,
12 of optimizer state (the fp32 master and Adam's moments), each checked.

    training_state_bytes.py MODEL.onnx REPORT.json --tp T [--dtype bf16]

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
    parser.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32",
                        help="mixed precision: also check the split of the 16 bytes")
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
    split_off = False
    if args.dtype != "fp32":
        # Mixed precision (ZeRO's count): 2 bytes of weight and 2 of gradient
        # in the compute type; the fp32 master and Adam's moments, 4 + 8, are
        # the optimizer's. Norms and biases left whole over tp make a rank's
        # weights a little more than 1/tp: 2% for those, 1% for the state.
        for key, per, bound in (("param_bytes", 2, 0.02), ("grad_bytes", 2, 0.02),
                                ("optimizer_bytes", 12, 0.01)):
            for value in sorted({r[key] for r in ranks}):
                ratio = value / (per * params / args.tp)
                off = abs(ratio - 1) > bound
                split_off |= off
                print(f"{key} {value / 1e9:.2f} GB, {per} * params / tp ratio {ratio:.4f}"
                      + (f" off by more than {bound:.0%}" if off else ""))
    return 0 if worst <= 0.01 and not split_off else 1


if __name__ == "__main__":
    sys.exit(main())
