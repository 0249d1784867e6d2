#!/usr/bin/env python3
"""ONNX's backend node tests through shardc (and, with --run, shardrun).

Import mode (default): a test passes when `shardc model.onnx --emit=graph`
succeeds. Run mode (--run): the model is compiled to an artifact, every
test_data_set is run with shardrun, and each output must match the stored
one within rtol 1e-3, atol 1e-7 (the ONNX suite's float tolerances).

shardc compiles static programs, so a graph input that an op needs as a
compile-time value (Slice's starts, TopK's k, Reshape's shape...) is fixed
from the data set with --constant-input, as a user would. A test whose op is
outside the importer's scope must instead fail with the one-line "unsupported
ops" error, and a test whose graph takes or returns something other than
tensors (a sequence, an optional) is outside it too: shardc's programs take
and return tensors, so it must fail with one "shardc: error:" line. Any other
failure fails this script. Prints the count per op and a closing
"N passed, M failed".
"""
import argparse
import collections
import pathlib
import re
import json
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

# The op types the foundation issue puts in scope: each of their tests must pass.
IN_SCOPE = {
    "Add", "Cast", "Concat", "Constant", "ConstantOfShape", "Div", "Equal", "Erf", "Expand",
    "Gather", "Gemm", "Greater", "Identity", "LayerNormalization", "Less", "MatMul", "Max",
    "Min", "Mul", "Neg", "Not", "Pow", "Range", "ReduceMax", "ReduceMean", "ReduceSum", "Relu",
    "Reshape", "ScatterElements", "Shape", "Sigmoid", "Slice", "Softmax", "Split", "Sqrt",
    "Squeeze", "Sub", "Tanh", "TopK", "Transpose", "Trilu", "Unsqueeze", "Where", "Gelu",
    "Attention", "RMSNormalization", "RotaryEmbedding",
    "IsNaN", "IsInf", "Floor", "Ceil", "Round", "Sign", "Mod", "GatherElements", "GatherND",
    "ScatterND", "CumSum",
    # Decomposed at import into the ops above.
    "Tile", "Pad", "OneHot", "Einsum", "Conv", "Loop", "If", "SequenceConstruct",
    "SequenceEmpty", "SequenceInsert", "SequenceAt", "SequenceLength", "SequenceErase",
    "SplitToSequence", "ConcatFromSequence",
}
NEEDS_CONSTANT = re.compile(r"input '([^']+)' must be known at compile time"
                            r"(?:; it is computed from the model's inputs((?: ?,? ?'[^']+')*))?")
SYMBOLIC_DIM = re.compile(r"input '([^']+)' dimension (\d+) is symbolic '([^']+)'")
NOT_TENSOR = re.compile(r"(input|output) '[^']+' is (not a tensor|a sequence)")
RTOL, ATOL = 1e-3, 1e-7


def op_types(graph):
    """The op types of a graph's nodes and of the subgraphs they hold (Loop, If)."""
    types = set()
    for node in graph.node:
        types.add(node.op_type)
        for attribute in node.attribute:
            for subgraph in list(attribute.graphs) + ([attribute.g] if attribute.HasField("g") else []):
                types |= op_types(subgraph)
    return types


def only_tensors(model):
    """Whether every graph input and output is a tensor."""
    values = list(model.graph.input) + list(model.graph.output)
    return all(v.type.WhichOneof("value") == "tensor_type" for v in values)


def graph_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def compile_test(shardc, model_path, inputs, data_set, emit, output, shard=()):
    """Runs shardc, fixing inputs to the data set's values (and binding symbolic
    dims to their sizes there) as long as it asks for them."""
    fixed, dims = [], {}
    while True:
        command = [shardc, str(model_path), f"--emit={emit}", "-o", str(output)] + list(shard)
        command += [f"--constant-input={name}={data_set / f'input_{inputs.index(name)}.pb'}"
                    for name in fixed]
        command += [f"--dim={name}={size}" for name, size in dims.items()]
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if run.returncode == 0:
            return run, fixed
        symbolic = SYMBOLIC_DIM.search(run.stderr)
        if symbolic and symbolic.group(1) in inputs and symbolic.group(3) not in dims:
            shape = read_tensor(data_set / f"input_{inputs.index(symbolic.group(1))}.pb").shape
            dims[symbolic.group(3)] = shape[int(symbolic.group(2))]
            continue
        needed = NEEDS_CONSTANT.search(run.stderr)
        # The value named, or the model inputs it is computed from.
        names = re.findall(r"'([^']+)'", needed.group(2) or "") if needed else []
        names = [n for n in (names or [needed.group(1)] if needed else [])
                 if n in inputs and n not in fixed]
        if not names:
            return run, fixed
        fixed += names


def read_tensor(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def run_data_sets(args, test, model, inputs, workdir):
    """Compiles per data set (fixed inputs may differ) and compares every output."""
    outputs = [o.name for o in model.graph.output]
    for data_set in sorted(test.glob("test_data_set_*")):
        artifact = workdir / f"artifact_{data_set.name}"
        run, fixed = compile_test(args.shardc, test / "model.onnx", inputs, data_set,
                                  "artifact", artifact, shlex.split(args.shard))
        if run.returncode != 0:
            return run, None
        ranks = len(json.loads((artifact / "manifest.json").read_text())["ranks"])
        feeds = {name: read_tensor(data_set / f"input_{i}.pb")
                 for i, name in enumerate(inputs) if name not in fixed}
        np.savez(workdir / "in.npz", **feeds)
        result = subprocess.run([args.shardrun, str(artifact), "--inputs", str(workdir / "in.npz"),
                                 "--outputs", str(workdir / "out.npz"), "--np", str(ranks)],
                                capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            return result, None
        produced = np.load(workdir / "out.npz")
        for i, name in enumerate(outputs):
            expected = read_tensor(data_set / f"output_{i}.pb")
            got = produced[name]
            if got.dtype == np.dtype("V2") and expected.dtype.itemsize == 2:
                # numpy has no bfloat16: npz files hold it as 2-byte void.
                got = got.view(expected.dtype)
            if got.shape != expected.shape or got.dtype != expected.dtype or not np.allclose(
                    got, expected, rtol=RTOL, atol=ATOL, equal_nan=True):
                diff = np.max(np.abs(got.astype(np.float64) - expected.astype(np.float64))) \
                    if got.shape == expected.shape and got.size else float("nan")
                return None, (f"{data_set.name} output '{name}': got {got.dtype}{list(got.shape)}, "
                              f"expected {expected.dtype}{list(expected.shape)}, max |diff| {diff:.3e}")
    return run, None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", help="run the compiled tests (default: import only)")
    parser.add_argument("--node-tests", required=True, type=pathlib.Path)
    parser.add_argument("--shard", default="",
                        help="mesh flags for shardc (e.g. '--dp 2 --tp 2'); the ranks run as threads")
    args = parser.parse_args()

    per_op = collections.defaultdict(lambda: [0, 0])  # op -> [passed, total]
    failures, unsupported = [], []
    tests = sorted(p for p in args.node_tests.iterdir() if (p / "model.onnx").exists())
    if not tests:
        sys.exit(f"no node tests under {args.node_tests}")
    for test in tests:
        model = onnx.load(str(test / "model.onnx"), load_external_data=False)
        ops = op_types(model.graph)
        op = "+".join(sorted(ops))
        per_op[op][1] += 1
        inputs = graph_inputs(model)
        mismatch = None
        with tempfile.TemporaryDirectory() as tmp:
            if args.shardrun:
                run, mismatch = run_data_sets(args, test, model, inputs, pathlib.Path(tmp))
            else:
                run, _ = compile_test(args.shardc, test / "model.onnx", inputs,
                                      test / "test_data_set_0", "graph", "/dev/null")
        if mismatch:
            failures.append(f"{test.name}: {mismatch}")
            continue
        if run.returncode == 0:
            per_op[op][0] += 1
            continue
        lines = run.stderr.strip().splitlines()
        one_line = len(lines) == 1 and run.returncode == 1 and lines[0].startswith("shardc: error: ")
        if one_line and "unsupported ops: " in lines[0] and not ops <= IN_SCOPE:
            unsupported.append(test.name)
        elif one_line and not only_tensors(model) and NOT_TENSOR.search(lines[0]):
            unsupported.append(test.name)
        else:
            failures.append(f"{test.name}: exit {run.returncode}: {run.stderr.strip()[:300]}")

    for op, (passed, total) in sorted(per_op.items()):
        print(f"  {op:28s} {passed}/{total}")
    passed = sum(p for p, _ in per_op.values())
    verb = "match onnx's outputs" if args.shardrun else "import"
    print(f"node tests: {passed} of {len(tests)} {verb}; {len(unsupported)} out of scope "
          f"(one-line unsupported-op error); {len(failures)} failed")
    for failure in failures:
        print("FAILED", failure)
    print(f"{passed + len(unsupported)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
