#!/usr/bin/env python3
"""Writes ONNX's backend node tests from the installed `onnx` package.

The onnx wheel ships the test generators (onnx.backend.test.case.node), not
their .pb data, so this script runs every generator and writes each case in
the layout of ONNX's own data folder, which node_tests.py reads. The
suite's "simple" model tests (onnx.backend.test.case.model: small graphs of
several nodes, sequences among them) come along; its "real" ones are
downloads and do not.

    OUT/<case>/model.onnx
    OUT/<case>/test_data_set_0/input_<i>.pb, output_<i>.pb

Input i is the model's i-th graph input, output i its i-th graph output; each
file is a serialized TensorProto (SequenceProto / OptionalProto / MapProto for
the few cases whose values are not tensors).

Deterministic: many generators draw from numpy's global random state without
seeding it, so the state is seeded once before they run (they are imported in
a fixed, alphabetical order). The same onnx and numpy versions therefore give
the same bytes. OUT/stamp records those versions, this script's digest and
the number of cases; when they match, nothing is rewritten (so `make test`
regenerates only after an onnx upgrade or a change here). The data is build
output: never commit it.
"""
import argparse
import hashlib
import pathlib
import random
import shutil
import sys
import tempfile
import warnings

import numpy as np
import onnx
from onnx import numpy_helper


def stamp_text():
    digest = hashlib.sha256(pathlib.Path(__file__).read_bytes()).hexdigest()[:16]
    return f"onnx {onnx.__version__}\nnumpy {np.__version__}\ngenerator {digest}\n"


def serialize(value, value_info):
    """One input or output value as the proto its declared type calls for."""
    kind = value_info.type.WhichOneof("value")
    if kind == "sequence_type":
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if isinstance(value, onnx.TensorProto):  # float8/int4 cases give protos, not arrays
        return value.SerializeToString()
    return numpy_helper.from_array(np.asarray(value), value_info.name).SerializeToString()


def write_case(case, folder):
    folder.mkdir()
    (folder / "model.onnx").write_bytes(case.model.SerializeToString())
    graph = case.model.graph
    for k, (inputs, outputs) in enumerate(case.data_sets):
        data_set = folder / f"test_data_set_{k}"
        data_set.mkdir()
        for i, value in enumerate(inputs):
            (data_set / f"input_{i}.pb").write_bytes(serialize(value, graph.input[i]))
        for i, value in enumerate(outputs):
            (data_set / f"output_{i}.pb").write_bytes(serialize(value, graph.output[i]))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=pathlib.Path,
                        help="the folder to (re)write, e.g. build/node-tests")
    parser.add_argument("--force", action="store_true", help="rewrite even when up to date")
    args = parser.parse_args()

    stamp = args.out / "stamp"
    if not args.force and stamp.exists():
        # The stamp's last line counts the cases written, so a folder someone
        # pruned by hand is written again too.
        *versions, count = stamp.read_text().splitlines(keepends=True)
        written = sum(1 for p in args.out.iterdir() if (p / "model.onnx").exists())
        if "".join(versions) == stamp_text() and count == f"cases {written}\n":
            print(f"{args.out}: up to date (onnx {onnx.__version__}, {written} cases)")
            return

    np.random.seed(0)
    random.seed(0)
    # Imported here, after seeding: collecting imports every generator module,
    # and some draw their data at import time.
    import onnx.backend.test.case.model as model_cases
    import onnx.backend.test.case.node as node_cases
    with warnings.catch_warnings():
        # Generators that compute infinities and NaNs on purpose say so.
        warnings.simplefilter("ignore")
        cases = [c for c in node_cases.collect_testcases() if c.kind == "node"]
        cases += [c for c in model_cases.collect_testcases() if c.kind == "simple"]
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        sys.exit("node test names are not unique")

    # Written beside OUT and renamed into place, so an interrupted run leaves
    # no half-written folder behind a valid stamp.
    args.out.parent.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix=args.out.name + ".", dir=args.out.parent))
    try:
        for case in cases:
            write_case(case, staging / case.name)
        (staging / "stamp").write_text(stamp_text() + f"cases {len(cases)}\n")
        if args.out.exists():
            shutil.rmtree(args.out)
        staging.rename(args.out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    print(f"{args.out}: wrote {len(cases)} tests (onnx {onnx.__version__})")


if __name__ == "__main__":
    main()
