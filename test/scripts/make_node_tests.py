#!/usr/bin/env python3
"""Writes ONNX backend tests of chosen op types from the installed onnx package.

    make_node_tests.py OUT_DIR --ops Tile,Pad,...

The onnx wheel carries the backend suite's test cases as Python (models with
inputs and expected outputs computed by numpy), not their data files. This
writes every node test, and every "simple" model test, whose graph uses one
of the given op types, in the layout of ../shared/onnx-node-tests:
OUT_DIR/<test>/model.onnx and test_data_set_<k>/input_<i>.pb, output_<i>.pb
(serialized TensorProto; a sequence as a SequenceProto). node_tests.py then
runs them like the shared ones. Prints how many tests were written.
"""
import argparse
import pathlib
import shutil
import warnings

import numpy as np
from onnx import TensorProto, numpy_helper


def uses(graph, ops):
    """Whether the graph or one of its subgraphs has a node of these op types."""
    for node in graph.node:
        if node.op_type in ops:
            return True
        for attribute in node.attribute:
            subgraphs = list(attribute.graphs) + ([attribute.g] if attribute.HasField("g") else [])
            if any(uses(g, ops) for g in subgraphs):
                return True
    return False


def serialize(value, info):
    """A data set value as the protobuf bytes the suite stores for its type."""
    kind = info.type.WhichOneof("value")
    if kind == "sequence_type":
        return numpy_helper.from_list(value, info.name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(np.asarray(value), info.name).SerializeToString()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--ops", required=True, help="comma-separated ONNX op types")
    args = parser.parse_args()
    ops = set(args.ops.split(","))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the suite's own generators warn (overflow in casts)
        import onnx.backend.test.case.model as model_cases
        import onnx.backend.test.case.node as node_cases
        cases = node_cases.collect_testcases(None) + [
            case for case in model_cases.collect_testcases() if case.kind == "simple"]
    if args.out.exists():
        shutil.rmtree(args.out)
    written = 0
    for case in cases:
        if not case.model or not uses(case.model.graph, ops):
            continue
        folder = args.out / case.name
        folder.mkdir(parents=True)
        (folder / "model.onnx").write_bytes(case.model.SerializeToString())
        for index, (inputs, outputs) in enumerate(case.data_sets):
            data = folder / f"test_data_set_{index}"
            data.mkdir()
            for i, value in enumerate(inputs):
                (data / f"input_{i}.pb").write_bytes(serialize(value, case.model.graph.input[i]))
            for i, value in enumerate(outputs):
                (data / f"output_{i}.pb").write_bytes(serialize(value, case.model.graph.output[i]))
        written += 1
    print(f"{written} tests written to {args.out}")


if __name__ == "__main__":
    main()
