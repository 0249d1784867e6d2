#!/usr/bin/env python3
"""Inspect one zoo export and run it with onnxruntime against torch's outputs.

    .venv/bin/python test/zoo/ort_check.py MODEL.onnx FEEDS.npz TORCH_OUT.npz

Runs in the project venv (onnx, onnxruntime, numpy; no torch): make_zoo.py
calls it through a subprocess because the generator environments have torch
but not onnxruntime. Prints one JSON object:

  opset       the default-domain opset the file imports
  inputs      name, element type and dims of every graph input (a symbolic
              dim is its dim_param string, a fixed one its value)
  outputs     the same for the graph outputs
  ops         op-type histogram over the graph, its subgraphs and its local
              functions ("domain::Op" for ops outside the default domain)
  functions   names of the model-local functions, if any
  results     per output: shape, max|ort - torch|, max|torch|, their ratio,
              whether either side has NaN; "valid": the same over the positions
              whose attention_mask is 1 (when the output is [batch, sequence, ...])
"""

import collections
import json
import sys

import numpy as np
import onnx
import onnxruntime as ort


def _dims(value_info):
    t = value_info.type.tensor_type
    dims = []
    for d in t.shape.dim:
        if d.HasField("dim_param"):
            dims.append(d.dim_param)
        elif d.HasField("dim_value"):
            dims.append(d.dim_value)
        else:
            dims.append(None)
    return {"name": value_info.name,
            "dtype": onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name,
            "dims": dims}


def _count(nodes, hist):
    for node in nodes:
        key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
        hist[key] += 1
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _count(attr.g.node, hist)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    _count(g.node, hist)


def inspect(path):
    model = onnx.load(path)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    hist = collections.Counter()
    _count(model.graph.node, hist)
    for f in model.functions:
        _count(f.node, hist)
    return {
        "opset": opset,
        "ir_version": model.ir_version,
        "producer": f"{model.producer_name} {model.producer_version}".strip(),
        "inputs": [_dims(v) for v in model.graph.input],
        "outputs": [_dims(v) for v in model.graph.output],
        "ops": dict(sorted(hist.items())),
        "functions": [f.name for f in model.functions],
        "initializers": len(model.graph.initializer),
    }


def _stats(got, want):
    a = got.astype(np.float64)
    b = want.astype(np.float64)
    diff = np.abs(a - b)
    out = {"nan_ort": bool(np.isnan(a).any()), "nan_torch": bool(np.isnan(b).any()),
           "max_abs_diff": float(np.nanmax(diff)) if diff.size else 0.0,
           "max_abs_torch": float(np.nanmax(np.abs(b))) if b.size else 0.0}
    out["rel"] = out["max_abs_diff"] / out["max_abs_torch"] if out["max_abs_torch"] else 0.0
    return out


def compare(path, feeds_path, ref_path):
    feeds = dict(np.load(feeds_path))
    ref = dict(np.load(ref_path))
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    got = sess.run(names, feeds)
    results = []
    for name, value in zip(names, got):
        if name not in ref:
            results.append({"output": name, "error": "no torch reference"})
            continue
        want = ref[name]
        entry = {"output": name, "shape": list(value.shape)}
        if value.shape != want.shape:
            entry["error"] = f"shape {list(value.shape)} != torch {list(want.shape)}"
            results.append(entry)
            continue
        entry.update(_stats(value, want))
        mask = feeds.get("attention_mask")
        if mask is not None and value.ndim >= 2 and value.shape[:2] == mask.shape:
            # the same over the real (not padded) token positions only
            keep = mask.astype(bool)
            entry["valid"] = _stats(value[keep], want[keep])
        results.append(entry)
    return results


def main():
    model_path, feeds_path, ref_path = sys.argv[1:4]
    out = inspect(model_path)
    try:
        out["results"] = compare(model_path, feeds_path, ref_path)
    except Exception as e:  # noqa: BLE001 - reported, make_zoo.py decides
        out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
