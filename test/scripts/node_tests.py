#!/usr/bin/env python3
"""ONNX's backend node tests through shardc (and, with --shardrun, shardrun).

Reads a folder in ONNX's node-test layout (<case>/model.onnx,
<case>/test_data_set_<k>/input_<i>.pb, output_<i>.pb), as make_node_tests.py
writes it from the installed onnx package.

Import mode (default): a case passes when `shardc model.onnx --emit=graph`
succeeds. Run mode (--shardrun): the model is compiled to an artifact, every
test_data_set is run with shardrun, and each output must match the stored one
within rtol 1e-3, atol 1e-7 (the ONNX suite's tolerances), dtype and shape
included.

shardc compiles static programs, so a graph input that an op needs as a
compile-time value (Slice's starts, TopK's k, Reshape's shape...) is fixed
from the data set with --constant-input, as a user would.

Which ops are supported is the importer's own answer, not a list here: every
case is given to shardc, and a case it rejects with its one-line
"unsupported ops: ..." error, naming only op types the case has, counts as
unsupported (so a newly imported op's cases start to count, and must pass,
without an edit here). Every other case must pass, except those an
OUT_OF_SCOPE row below names, each with its reason: cases that test what
shardc deliberately does not do. Those must fail with the row's one-line
error; one that passes is reported (NOTE) so its row can be narrowed.

Prints per tested op type its passed / failed / unsupported / out-of-scope
counts, the unsupported op types with their case counts, and a closing
"N passed, M failed, ..." line; exits 1 when any case failed.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

# shardc's error for an operand it needs at compile time names the operand
# and, unless it is a graph input itself, the graph inputs it is computed from.
NEEDS_CONSTANT = re.compile(r"input '([^']+)' must be known at compile time; "
                            r"it is computed from the model's inputs((?:,? '[^']+')*)")
SYMBOLIC_DIM = re.compile(r"input '([^']+)' dimension (\d+) is symbolic '([^']+)'")
UNSUPPORTED = re.compile(r"unsupported ops: (.*)$")
UNSUPPORTED_OP = re.compile(r"(?:^|, )(\w+) \(nodes? ")
EXPANDED = re.compile(r"^(.*)_expanded(?:_ver\d+)?$")
RTOL, ATOL = 1e-3, 1e-7

# Cases that test what shardc deliberately does not do, or an op feature it
# refuses with a one-line error rather than implements. Each row: the case
# names (a regular expression matching the whole name), the one-line error
# those cases must fail with (so another failure of theirs still fails), and
# why. Only ops the importer supports need rows: a case whose op it does not
# support is counted as unsupported by the importer's own error.
ATTENTION_REFUSAL = (r"\(Attention\): (attribute '(softcap|qk_matmul_output_mode|left_window_size|"
                     r"right_window_size)' = \S+ is not supported|input 'nonpad_kv_seqlen' is not "
                     r"supported|output 3 \('[^']*'\) is not supported)")
OUT_OF_SCOPE = [
    (r"test_cast(like)?_(no_saturate_|e8m0_)?\w*(FLOAT8|FLOAT4|INT4|INT2)\w*",
     r"unsupported element type|cannot cast to data type",
     "float8, float4, int4 and int2 (and their unsigned forms) are quantized storage formats "
     "shardc has no element type for; it stores fp32/fp16/bf16/fp64, bool and 8-64-bit integers"),
    (r"test_\w+_uint(16|32|64)(_expanded)?", r"unsupported element type UINT(16|32|64)",
     "uint16/32/64 are not shardc element types (transformer graphs index with int64/int32; "
     "uint8 is supported)"),
    (r"test_equal_string\w*", r"unsupported element type STRING",
     "string tensors: shardc compiles numeric programs"),
    (r"test_(identity_opt|identity_sequence|if_seq|loop13_seq|sequence_insert_\w+|"
     r"sequence_map_\w+|split_to_sequence_\w+)",
     r"(input|output) '[^']+' (is not a tensor|is a sequence)",
     "graphs that take or return sequences or optionals: shardc programs take and return "
     "tensors (sequences inside a graph are resolved at import)"),
    (r"test_ai_onnx_ml_\w+|test_(adagrad|adam|momentum|nesterov_momentum|gradient_of)\w*"
     r"|test_flexattention(?!\w*_expanded)\w*",
     r"imports no opset of the default ONNX domain|unknown domain",
     "ops of other domains (ai.onnx.ml classical ML, ai.onnx.preview.training optimizers "
     "and Gradient, "
     "ai.onnx.preview FlexAttention): shardc imports the default ONNX domain only "
     "(FlexAttention's expanded cases, in default-domain ops, run and pass)"),
    (r"test_nonzero_example", r"NonZero selects a number of elements known only at run time",
     "NonZero's result shape depends on the data: shardc compiles it only inside a pattern whose "
     "entries are used one by one and scattered back (MoE routing), not as a graph output"),
    (r"test_training_dropout(_default)?(_mask)?", r"\(Dropout\): training mode",
     "training-mode Dropout draws random masks: shardc compiles inference programs and refuses "
     "training_mode = true with a non-zero ratio (ratio 0 cases run and pass)"),
    (r"test_attention_\w*(softcap|soft_cap)\w*", ATTENTION_REFUSAL,
     "not implemented: Attention's softcap (tanh capping of the scores); the importer refuses it"),
    (r"test_attention_\w*qk_matmul\w*", ATTENTION_REFUSAL,
     "not implemented: Attention's optional 4th output (the scores at qk_matmul_output_mode), "
     "a debugging output; the importer refuses it"),
    (r"test_attention_(3d_)?local_window(?!_default)\w*|test_attention_bidirectional_window",
     ATTENTION_REFUSAL,
     "not implemented: sliding-window Attention (left_window_size / right_window_size); the "
     "importer refuses it"),
    (r"test_attention_\w*(nonpad|padded_kv)\w*", ATTENTION_REFUSAL,
     "not implemented: Attention's nonpad_kv_seqlen input (per-batch valid KV lengths, opset "
     "24); the importer refuses it"),
]


def out_of_scope_row(name):
    for row in OUT_OF_SCOPE:
        if re.fullmatch(row[0], name):
            return row
    return None


def op_types(graph):
    """The op types of a graph's nodes and of the subgraphs they hold (Loop, If)."""
    types = set()
    for node in graph.node:
        types.add(node.op_type)
        for attribute in node.attribute:
            for subgraph in list(attribute.graphs) + ([attribute.g] if attribute.HasField("g") else []):
                types |= op_types(subgraph)
    return types


def graph_inputs(model):
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def tested_op(test, model, all_tests):
    """The op type a case tests: its single node's, or for an `_expanded`
    case (the op's function body inlined) the op of the case it expands."""
    ops = sorted({n.op_type for n in model.graph.node})
    if len(model.graph.node) == 1:
        return ops[0]
    if not ops:
        return "(no nodes)"
    expanded = EXPANDED.match(test.name)
    if expanded and expanded.group(1) in all_tests:
        base = onnx.load(str(all_tests[expanded.group(1)] / "model.onnx"),
                         load_external_data=False)
        if len(base.graph.node) == 1:
            return base.graph.node[0].op_type
    return "+".join(ops)


def compile_test(shardc, model_path, inputs, data_set, emit, output, shard=()):
    """Runs shardc, fixing inputs to the data set's values and binding symbolic
    dims to the data set's sizes, as a user would, as long as it asks."""
    fixed, dims = [], {}
    while True:
        command = [shardc, str(model_path), f"--emit={emit}", "-o", str(output)] + list(shard)
        command += [f"--constant-input={name}={data_set / f'input_{inputs.index(name)}.pb'}"
                    for name in fixed]
        command += [f"--dim={name}={size}" for name, size in dims.items()]
        run = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if run.returncode == 0:
            return run, fixed
        symbolic = SYMBOLIC_DIM.search(run.stderr)
        if symbolic and symbolic.group(1) in inputs and symbolic.group(3) not in dims:
            shape = read_tensor(data_set / f"input_{inputs.index(symbolic.group(1))}.pb").shape
            dims[symbolic.group(3)] = shape[int(symbolic.group(2))]
            continue
        needed = NEEDS_CONSTANT.search(run.stderr)
        names = (re.findall(r"'([^']+)'", needed.group(2)) or [needed.group(1)]) if needed else []
        missing = [name for name in names if name in inputs and name not in fixed]
        if not missing:
            return run, fixed
        fixed += missing


def read_tensor(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def compare(got, expected):
    """None when shardrun's output matches ONNX's, else what differs."""
    if got.dtype == np.dtype("V2") and expected.dtype.name == "bfloat16":
        # npz has no bfloat16: shardrun writes its bits as 2-byte voids.
        got = got.view(expected.dtype)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return (f"got {got.dtype}{list(got.shape)}, "
                f"expected {expected.dtype}{list(expected.shape)}")
    rtol = RTOL
    if expected.dtype.name == "bfloat16":
        # As ONNX's own runner: two bfloat16 ulps, compared in float32.
        rtol = max(RTOL, 2 ** -6)
        got, expected = got.astype(np.float32), expected.astype(np.float32)
    if np.allclose(got, expected, rtol=rtol, atol=ATOL, equal_nan=True):
        return None
    if got.size == 0:
        return "differs"
    diff = np.max(np.abs(got.astype(np.float64) - expected.astype(np.float64)))
    return f"{got.dtype}{list(got.shape)} differs, max |diff| {diff:.3e}"


def run_data_sets(args, test, model, inputs, workdir):
    """Compiles per data set (fixed inputs may differ) and compares every output.
    Returns (the failed or last process, a mismatch description or None)."""
    outputs = [o.name for o in model.graph.output]
    run = None
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
        run = subprocess.run([args.shardrun, str(artifact), "--inputs", str(workdir / "in.npz"),
                              "--outputs", str(workdir / "out.npz"), "--np", str(ranks)],
                             capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            return run, None
        produced = np.load(workdir / "out.npz")
        for i, name in enumerate(outputs):
            problem = compare(produced[name], read_tensor(data_set / f"output_{i}.pb"))
            if problem:
                return run, f"{data_set.name} output '{name}': {problem}"
    return run, None


def one_line_error(run):
    """The error line when the process failed the way every bad input must
    (exit 1, one `tool: error: ` line on stderr), else None."""
    lines = run.stderr.strip().splitlines()
    if run.returncode == 1 and len(lines) == 1 and re.match(r"\w+: error: ", lines[0]):
        return lines[0]
    return None


def check(args, test, all_tests):
    """One case: returns (op, outcome, detail) with outcome one of passed,
    failed, unsupported, out_of_scope; detail is the failure, the unsupported
    op types or the out-of-scope pattern."""
    model = onnx.load(str(test / "model.onnx"), load_external_data=False)
    op = tested_op(test, model, all_tests)
    ops = op_types(model.graph)
    inputs = graph_inputs(model)
    mismatch = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if args.shardrun:
                run, mismatch = run_data_sets(args, test, model, inputs, pathlib.Path(tmp))
            else:
                run, _ = compile_test(args.shardc, test / "model.onnx", inputs,
                                      test / "test_data_set_0", "graph", "/dev/null")
    except subprocess.TimeoutExpired as timeout:
        return op, "failed", f"timed out: {shlex.join(map(str, timeout.cmd))}"
    row = out_of_scope_row(test.name)
    if run.returncode == 0 and not mismatch:
        return op, "passed", row[0] if row else None

    error = one_line_error(run) if not mismatch else None
    unsupported = UNSUPPORTED.search(error or "")
    named = set(UNSUPPORTED_OP.findall(unsupported.group(1))) if unsupported else set()
    if unsupported and named and named <= ops and error.startswith("shardc: "):
        return op, "unsupported", sorted(named)
    if row and error and re.search(row[1], error):
        return op, "out_of_scope", row[0]
    why = f" (OUT_OF_SCOPE names it, but expects the error /{row[1]}/)" if row else ""
    if mismatch:
        return op, "failed", mismatch + why
    return op, "failed", f"exit {run.returncode}: {run.stderr.strip()[:400]}{why}"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", help="run the compiled tests (default: import only)")
    parser.add_argument("--node-tests", required=True, type=pathlib.Path)
    parser.add_argument("--shard", default="",
                        help="mesh flags for shardc (e.g. '--dp 2 --tp 2'); the ranks run as threads")
    parser.add_argument("--filter", default="",
                        help="only the cases whose name matches this regular expression")
    # A case spends much of its time starting processes and writing files
    # rather than computing: on 2 cores, 4 workers check the suite about 20%
    # faster than 2 (and 2 twice as fast as 1).
    parser.add_argument("--jobs", type=int, default=2 * (os.cpu_count() or 1),
                        help="cases checked at once (default: twice the CPU count)")
    parser.add_argument("--verbose", action="store_true",
                        help="also list the out-of-scope and unsupported cases")
    args = parser.parse_args()

    all_tests = {p.name: p for p in args.node_tests.iterdir() if (p / "model.onnx").exists()}
    tests = sorted(p for name, p in all_tests.items() if re.search(args.filter, name))
    if not tests:
        sys.exit(f"no node tests under {args.node_tests}"
                 + (f" matching '{args.filter}'" if args.filter else ""))

    def guarded(test):
        # A case this script cannot even evaluate (an output it cannot read)
        # fails alone instead of ending the run.
        try:
            return check(args, test, all_tests)
        except Exception as error:  # noqa: BLE001
            return test.name, "failed", f"{type(error).__name__}: {error}"

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(guarded, tests))

    outcomes = ("passed", "failed", "unsupported", "out_of_scope")
    per_op = collections.defaultdict(collections.Counter)
    unsupported_ops = collections.Counter()
    by_outcome = collections.defaultdict(list)
    for test, (op, outcome, detail) in zip(tests, results):
        per_op[op][outcome] += 1
        by_outcome[outcome].append((test.name, detail))
        if outcome == "unsupported":
            unsupported_ops.update(detail)

    print(f"  {'op (cases)':32s} {'passed':>6s} {'failed':>6s} {'unsup.':>6s} {'out of scope':>12s}")
    for op, counts in sorted(per_op.items()):
        print(f"  {op:32s} {counts['passed']:6d} {counts['failed']:6d} "
              f"{counts['unsupported']:6d} {counts['out_of_scope']:12d}")
    if unsupported_ops:
        print("unsupported op types (cases naming them): " + ", ".join(
            f"{op} {count}" for op, count in sorted(unsupported_ops.items())))
    scope_counts = collections.Counter(detail for _, detail in by_outcome["out_of_scope"])
    for pattern, _, reason in OUT_OF_SCOPE:
        if scope_counts[pattern]:
            print(f"out of scope: {scope_counts[pattern]:3d} x {pattern}: {reason}")
    if args.verbose:
        for name, detail in by_outcome["out_of_scope"] + by_outcome["unsupported"]:
            print(f"  {name}: {detail}")
    for name, pattern in by_outcome["passed"]:
        if pattern:
            print(f"NOTE {name} passes although OUT_OF_SCOPE lists it ({pattern})")

    counts = {outcome: len(by_outcome[outcome]) for outcome in outcomes}
    verb = "match onnx's outputs" if args.shardrun else "import"
    print(f"node tests: {counts['passed']} of {len(tests)} {verb}; {counts['unsupported']} "
          f"unsupported (one-line unsupported-op error); {counts['out_of_scope']} out of scope; "
          f"{counts['failed']} failed")
    for name, detail in by_outcome["failed"]:
        print(f"FAILED {name}: {detail}")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['unsupported']} "
          f"unsupported, {counts['out_of_scope']} out of scope")
    sys.exit(1 if counts["failed"] else 0)


if __name__ == "__main__":
    main()
