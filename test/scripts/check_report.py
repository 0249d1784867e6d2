#!/usr/bin/env python3
"""Checks a shardc --report against what a transformer plan must show.

    check_report.py REPORT.json MODEL.onnx --per-layer KIND=N [KIND=N...] [--layers L]

Asserts: the report has L layers (if given); in every layer the tensor-
parallel collectives are exactly the given kinds and counts (e.g.
all_reduce=2, or reduce_scatter=2 all_gather=2 with --sp); every collective
names as its source a node of MODEL (never a weight: weights are cut at
compile time, never gathered); every layer's traffic equals Megatron-LM's
analytic value (ratio 1.00). Prints one summary line for FileCheck.
"""
import argparse
import json
import sys

import onnx


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("report")
    parser.add_argument("model")
    parser.add_argument("--per-layer", nargs="+", required=True, metavar="KIND=N")
    parser.add_argument("--layers", type=int)
    args = parser.parse_args()
    report = json.load(open(args.report))
    model = onnx.load(args.model, load_external_data=False)
    nodes = {node.name for node in model.graph.node}
    initializers = {tensor.name for tensor in model.graph.initializer}
    expected = {kind: int(count) for kind, count in (item.split("=") for item in args.per_layer)}
    problems = []
    layers = report["layers"]
    if args.layers is not None and len(layers) != args.layers:
        problems.append(f"{len(layers)} layers, expected {args.layers}")
    for layer in layers:
        if layer["tp_collectives"] != expected:
            problems.append(f"layer {layer['layer']}: {layer['tp_collectives']}, expected {expected}")
        if abs(layer.get("ratio", 0.0) - 1.0) > 1e-9:
            problems.append(f"layer {layer['layer']}: traffic ratio to Megatron "
                            f"{layer.get('ratio')}, expected 1.00")
    for collective in report["collectives"]:
        sources = [s for s in collective["source"].split(",") if s]
        if not sources or any(s not in nodes for s in sources):
            problems.append(f"{collective['kind']} names source '{collective['source']}', "
                            "not a node of the model")
        if any(s in initializers for s in sources):
            problems.append(f"{collective['kind']} moves weight '{collective['source']}'")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(layers)} layers, each {' '.join(f'{k}={v}' for k, v in sorted(expected.items()))}, "
          f"{len(report['collectives'])} collectives in all, "
          f"{'ok' if not problems else 'FAILED'}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
