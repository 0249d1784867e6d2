#!/usr/bin/env python3
"""Imports every ONNX backend node test with shardc and reports the count per op.

A test passes when `shardc model.onnx --emit=graph` succeeds. shardc compiles
static programs, so a graph input that an op needs as a compile-time value
(Slice's starts, TopK's k, Reshape's shape...) is fixed from the test's own
data with --constant-input, as a user would. A test whose op is outside the
importer's scope must instead fail with the one-line "unsupported ops"
error. Any other failure fails this script.
"""
import argparse
import collections
import pathlib
import re
import subprocess
import sys

import onnx

# The op types the foundation issue puts in scope: each of their tests must import.
IN_SCOPE = {
    "Add", "Cast", "Concat", "Constant", "ConstantOfShape", "Div", "Equal", "Erf", "Expand",
    "Gather", "Gemm", "Greater", "Identity", "LayerNormalization", "Less", "MatMul", "Max",
    "Min", "Mul", "Neg", "Not", "Pow", "Range", "ReduceMax", "ReduceMean", "ReduceSum", "Relu",
    "Reshape", "ScatterElements", "Shape", "Sigmoid", "Slice", "Softmax", "Split", "Sqrt",
    "Squeeze", "Sub", "Tanh", "TopK", "Transpose", "Trilu", "Unsqueeze", "Where", "Gelu",
    "Attention", "RMSNormalization", "RotaryEmbedding",
}


NEEDS_CONSTANT = re.compile(r"input '([^']+)' must be known at compile time")


def import_test(shardc, test, model):
    """Runs shardc, fixing graph inputs to the test data's values as long as it asks for them."""
    inputs = [i.name for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    data = test / "test_data_set_0"
    fixed = []
    while True:
        command = [shardc, str(test / "model.onnx"), "--emit=graph", "-o", "/dev/null"]
        command += [f"--constant-input={name}={data / f'input_{inputs.index(name)}.pb'}"
                    for name in fixed]
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        needed = NEEDS_CONSTANT.search(run.stderr)
        if run.returncode == 0 or not needed or needed.group(1) not in inputs \
                or needed.group(1) in fixed:
            return run
        fixed.append(needed.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--node-tests", required=True, type=pathlib.Path)
    args = parser.parse_args()

    per_op = collections.defaultdict(lambda: [0, 0])  # op -> [imported, total]
    failures, unsupported = [], []
    tests = sorted(p for p in args.node_tests.iterdir() if (p / "model.onnx").exists())
    if not tests:
        sys.exit(f"no node tests under {args.node_tests}")
    for test in tests:
        model = onnx.load(str(test / "model.onnx"), load_external_data=False)
        op = model.graph.node[0].op_type if len(model.graph.node) == 1 else \
            "+".join(sorted({n.op_type for n in model.graph.node}))
        run = import_test(args.shardc, test, model)
        per_op[op][1] += 1
        if run.returncode == 0:
            per_op[op][0] += 1
            continue
        lines = run.stderr.strip().splitlines()
        one_line = len(lines) == 1 and run.returncode == 1 and lines[0].startswith("shardc: error: ")
        ops = {n.op_type for n in model.graph.node}
        if one_line and "unsupported ops: " in lines[0] and not ops <= IN_SCOPE:
            unsupported.append(test.name)
        else:
            failures.append(f"{test.name}: exit {run.returncode}: {run.stderr.strip()[:300]}")

    for op, (imported, total) in sorted(per_op.items()):
        print(f"  {op:28s} {imported}/{total}")
    imported = sum(i for i, _ in per_op.values())
    print(f"node tests: {imported} of {len(tests)} import; {len(unsupported)} out of scope "
          f"(one-line unsupported-op error); {len(failures)} failed")
    for failure in failures:
        print("FAILED", failure)
    print(f"{imported + len(unsupported)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
