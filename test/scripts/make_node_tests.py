#!/usr/bin/env python3
"""Writes ONNX backend node tests of some op types from the installed onnx package.

    make_node_tests.py --out DIR --ops IsNaN,IsInf,...

../shared/onnx-node-tests holds the stored conformance data of the ops it was
chosen for; the onnx package (requirements.txt) still carries the generators
of every node test (onnx/backend/test/case/node), which compute the expected
outputs with numpy. This writes, in the same layout (<test>/model.onnx,
<test>/test_data_set_<k>/input_<i>.pb, output_<i>.pb), every generated test
whose nodes are all of the given op types, for node_tests.py to run.
Tests whose inputs or outputs have an element type shardc does not support
(README, "Supported ONNX": uint16, uint32, uint64, strings, ...) are not
written but listed, as the shared set leaves them out. Prints the number of
tests written and the ones skipped.
"""
import argparse
import pathlib
import shutil
import sys
import warnings

from onnx import TensorProto, numpy_helper

# The element types shardc compiles (README, "Supported ONNX").
SUPPORTED_TYPES = {TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT,
                   TensorProto.DOUBLE, TensorProto.BOOL, TensorProto.INT8, TensorProto.UINT8,
                   TensorProto.INT16, TensorProto.INT32, TensorProto.INT64}


def unsupported_types(model):
    """Names of the graph's input/output element types shardc does not support."""
    values = list(model.graph.input) + list(model.graph.output)
    return sorted({TensorProto.DataType.Name(v.type.tensor_type.elem_type) for v in values
                   if v.type.tensor_type.elem_type not in SUPPORTED_TYPES})


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    parser.add_argument("--ops", required=True, help="comma-separated ONNX op types")
    args = parser.parse_args()
    ops = set(args.ops.split(","))

    # The generators warn about the numpy edge cases they compute on purpose.
    warnings.simplefilter("ignore")
    import onnx.backend.test.case.node as node_cases

    if args.out.exists():
        shutil.rmtree(args.out)
    written, skipped = 0, []
    for case in node_cases.collect_testcases():
        if case.model is None or not {n.op_type for n in case.model.graph.node} <= ops:
            continue
        if unsupported_types(case.model):
            skipped.append(f"{case.name} ({', '.join(unsupported_types(case.model)).lower()})")
            continue
        directory = args.out / case.name
        directory.mkdir(parents=True)
        (directory / "model.onnx").write_bytes(case.model.SerializeToString())
        for k, (inputs, outputs) in enumerate(case.data_sets):
            data_set = directory / f"test_data_set_{k}"
            data_set.mkdir()
            for kind, values, infos in (("input", inputs, case.model.graph.input),
                                        ("output", outputs, case.model.graph.output)):
                for i, value in enumerate(values):
                    tensor = numpy_helper.from_array(value, infos[i].name)
                    (data_set / f"{kind}_{i}.pb").write_bytes(tensor.SerializeToString())
        written += 1
    if not written:
        sys.exit(f"no node tests of {sorted(ops)} in the onnx package")
    print(f"{written} node tests written")
    if skipped:
        print(f"{len(skipped)} skipped for element types shardc does not support: "
              + ", ".join(skipped))


if __name__ == "__main__":
    main()
