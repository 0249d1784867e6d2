#!/usr/bin/env python3
"""Compares each rank's training state in a shardc report with the formula
for fp32 AdamW: 4 bytes of weight, 4 of gradient and 8 of Adam's two moments
per parameter, 16 * params / tp per rank (dp ranks hold whole copies). With
--dtype bf16|fp16 (mixed precision) the same 16: 2 of weight, 2 of gradient,
12 of optimizer state (the fp32 master and Adam's moments), each checked.
With --zero S over --dp D, ZeRO's split (Rajbhandari et al.): the optimizer
state over dp from stage 1, the gradients from 2, the weights at 3.

    training_state_bytes.py MODEL.onnx REPORT.json --tp T [--dtype bf16]
                            [--dp D --zero S]

Prints the model's parameter count, the formula, each distinct rank figure
and its ratio to the formula (of a pipeline, each stage's optimizer state
against its own parameters too), and exits 1 when one is off by more than
1%."""
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
    parser.add_argument("--dp", type=int, default=1)
    parser.add_argument("--zero", type=int, choices=[0, 1, 2, 3], default=0)
    args = parser.parse_args()
    mixed = args.dtype != "fp32"
    # Bytes per parameter of each part, and how many ways ZeRO splits it.
    parts = (("param_bytes", 2 if mixed else 4, args.dp if args.zero == 3 else 1),
             ("grad_bytes", 2 if mixed else 4, args.dp if args.zero >= 2 else 1),
             ("optimizer_bytes", 12 if mixed else 8, args.dp if args.zero >= 1 else 1))
    model = onnx.load(args.model, load_external_data=False)
    # Float initializers of more than one element are the trained weights
    # (docs/training.md).
    params = sum(math.prod(t.dims) for t in model.graph.initializer
                 if t.data_type in FLOATS and math.prod(t.dims) > 1)
    report = json.load(open(args.report))
    if "pipeline" in report:
        return check_stages(report, parts, args.tp)
    formula = sum(per * params / ways for _, per, ways in parts) / args.tp
    ranks = report["ranks"]
    states = sorted({r["param_bytes"] + r["grad_bytes"] + r["optimizer_bytes"] for r in ranks})
    terms = " + ".join(f"{per}/{ways}" if ways > 1 else f"{per}" for _, per, ways in parts)
    print(f"parameters {params}; ({terms}) * params / tp = {formula / 1e9:.2f} GB")
    worst = 0.0
    for state in states:
        ratio = state / formula
        worst = max(worst, abs(ratio - 1))
        print(f"rank state {state / 1e9:.2f} GB, ratio {ratio:.4f}")
    print("within 1%" if worst <= 0.01 else f"off by {worst:.2%}")
    split_off = False
    if mixed or args.zero:
        # Mixed precision (ZeRO's count): 2 bytes of weight and 2 of gradient
        # in the compute type; the fp32 master and Adam's moments, 4 + 8, are
        # the optimizer's. Norms and biases left whole over tp make a rank's
        # weights and gradients a little more than 1/tp: 2% for those, 1% for
        # the state.
        for key, per, ways in parts:
            bound = 0.01 if key == "optimizer_bytes" else 0.02
            split = f" / {ways}" if ways > 1 else ""
            for value in sorted({r[key] for r in ranks}):
                ratio = value / (per * params / ways / args.tp)
                off = abs(ratio - 1) > bound
                split_off |= off
                print(f"{key} {value / 1e9:.2f} GB, {per} * params{split} / tp ratio {ratio:.4f}"
                      + (f" off by more than {bound:.0%}" if off else ""))
    return 0 if worst <= 0.01 and not split_off else 1


def check_stages(report, parts, tp):
    """A pipeline's ranks hold their stage's state, Ψ the stage's
    parameters: each stage's optimizer bytes per rank against the formula."""
    _, per, ways = parts[2]
    off = False
    for stage in report["pipeline"]["stages"]:
        ratio = stage["optimizer_bytes"] / (per * stage["parameters"] / ways / tp)
        off |= abs(ratio - 1) > 0.01
        split = f" / {ways}" if ways > 1 else ""
        print(f"stage {stage['stage']}: {stage['parameters']} parameters, optimizer_bytes "
              f"{stage['optimizer_bytes'] / 1e9:.2f} GB, {per} * params{split} / tp ratio "
              f"{ratio:.4f}")
    return 1 if off else 0


if __name__ == "__main__":
    sys.exit(main())
