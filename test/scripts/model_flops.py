#!/usr/bin/env python3
"""Checks a report's model and hardware FLOPs and what it makes of them
against Narayanan et al. (SC'21) counted by hand for a GPT shape
(write_gpt3.py's): per layer 24Bsh^2 + 4Bs^2h forward (attention whole,
as published counts take it), the LM head 2BshV; a training step 3 times
the forward, and with --recompute full each stage's forward once more (the
LM head's too: eq. 3 leaves it out, so hardware = eq. 3 + 2BshV).

    model_flops.py REPORT.json --layers L --hidden H --seq S --vocab V --batch B
                   [--train] [--recompute-all] --peak FLOPS
"""
import argparse
import json
import sys


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report")
    for name in ("layers", "hidden", "seq", "vocab", "batch"):
        parser.add_argument(f"--{name}", type=int, required=True)
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--recompute-all", action="store_true")
    parser.add_argument("--peak", type=float, required=True, help="the device's peak FLOP/s")
    args = parser.parse_args()
    report = json.load(open(args.report))
    totals = report["totals"]
    b, s, h, v, l = args.batch, args.seq, args.hidden, args.vocab, args.layers
    forward = l * (24 * b * s * h * h + 4 * b * s * s * h) + 2 * b * s * h * v
    model = 3 * forward if args.train else forward
    hardware = model + (forward if args.recompute_all else 0)
    if args.recompute_all:
        eq3 = 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))
        if not close(hardware, eq3 + 2 * b * s * h * v):
            sys.exit(f"hand count {hardware} is not eq. 3 {eq3} + 2BshV")
    devices = 1
    for size in report["mesh"]["axes"].values() if "mesh" in report else []:
        devices *= size
    step = totals["est_step_seconds"]
    expected = {"model_flops": model, "hardware_flops": hardware,
                "est_tflops_per_device": hardware / (step * devices) / 1e12,
                "est_mfu": model / (step * devices * args.peak)}
    for key, value in expected.items():
        if not close(totals[key], value):
            sys.exit(f"totals.{key} = {totals[key]}, expected {value}")
    print(f"model {model:.6e} hardware {hardware:.6e} on {devices} devices: "
          f"{totals['est_tflops_per_device']:.3f} TFLOP/s, MFU {totals['est_mfu']:.4f}, ok")


if __name__ == "__main__":
    main()
