#!/usr/bin/env python3
"""Survey: how far shardc gets on every model of the zoo (test/zoo/zoo.json).

    .venv/bin/python test/scripts/zoo_status.py [--shardc build/bin/shardc] [--zoo test/zoo/zoo.json]
                                                [--emit graph] [--only NAME,...] [--markdown]
                                                [--tp N] [--run [--shardrun PATH]]

For every zoo entry it runs

    shardc FILE --dim NAME=N ... --emit=graph -o -

with the dims zoo.json binds, and prints one row per model: whether it imports
(and raises), the one-line error when it does not, the op types the importer
lacks with how often each occurs in the file, and, when it gets through, the
raised ops it found (attention, linear, norms, rotary, activations, mlp/moe
composites; counted anywhere in the module, composite bodies included).

With --tp N, every model that gets through is also compiled to
`--emit=partitioned --tp N --report` and the tensor-parallel collectives per
layer from the report are shown beside the Megatron-LM count zoo.json expects
(2 all-reduces per layer, 1 for a parallel-residual block).

With --run, every model that gets through is also compiled to an artifact
and run by shardrun on the stored feeds, and its outputs are compared with
the torch outputs stored beside them (max|shardrun - torch| / max|torch|, over
all positions and over the real, unpadded tokens).

It is a survey, not a test: it always exits 0 (2 only for bad arguments or a
missing shardc / zoo.json).
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

import onnx

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAISED = [("attention", r"graph\.attention\b"), ("linear", r"graph\.linear\b"),
          ("layer_norm", r"graph\.layer_norm\b"), ("rms_norm", r"graph\.rms_norm\b"),
          ("rotary", r"graph\.rotary\b"), ("gelu", r"graph\.gelu\b"), ("silu", r"graph\.silu\b"),
          ("mlp", r'graph\.composite "mlp"'), ("moe", r'graph\.composite "moe"')]


def op_histogram(path):
    hist = collections.Counter()

    def count(nodes):
        for node in nodes:
            hist[node.op_type if node.domain in ("", "ai.onnx") else
                 f"{node.domain}::{node.op_type}"] += 1
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    count(attr.g.node)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        count(g.node)

    model = onnx.load(path, load_external_data=False)
    count(model.graph.node)
    for f in model.functions:
        count(f.node)
    return hist


def unsupported_ops(message):
    """Op types named by 'unsupported ops: A (node 'x'), B (nodes 'y', 'z')'."""
    m = re.search(r"unsupported ops?: (.*)$", message)
    if not m:
        return []
    return re.findall(r"(?:^|\), |, )([A-Za-z_][\w.:]*) \(node", m.group(1))


def shardc_command(shardc, path, entry):
    """shardc on the model at `path` with the entry's --dim bindings."""
    cmd = [shardc, path]
    for name, value in entry.get("dims", {}).items():
        cmd += ["--dim", f"{name}={value}"]
    return cmd


def error_line(proc, fallback):
    """The line of a failed command's stderr that says what went wrong."""
    lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
    return next((l for l in lines if "error" in l), lines[-1] if lines else fallback)


def failure(cmd, timeout, prefix):
    """None when `cmd` succeeds within `timeout` seconds; else the survey's
    {"ok": False, "error": ...}: the stderr line that says what went wrong,
    without `prefix` (the model's path)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"{os.path.basename(cmd[0])} timed out after {timeout} s"}
    if proc.returncode == 0:
        return None
    return {"ok": False, "error": error_line(proc, "failed").replace(prefix, "")}


def survey(entry, zoo_dir, shardc, emit, timeout):
    path = os.path.join(zoo_dir, entry["file"])
    cmd = shardc_command(shardc, path, entry) + [f"--emit={emit}", "-o", "-"]
    row = {"name": entry["name"], "architecture": entry["architecture"],
           "exporter": entry["exporter"], "opset": entry.get("opset"), "command": cmd}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        row.update(ok=False, error=f"timed out after {timeout} s", missing={})
        return row
    if proc.returncode == 0:
        row.update(ok=True, error="", missing={},
                   raised={k: len(re.findall(rx, proc.stdout)) for k, rx in RAISED})
        return row
    err = error_line(proc, f"exit {proc.returncode}")
    err = err.replace(f"shardc: error: {path}: ", "").replace("shardc: error: ", "")
    hist = op_histogram(path)
    missing = {op: hist.get(op, 0) for op in unsupported_ops(err)}
    if missing:
        err = "unsupported ops: " + ", ".join(missing)
    row.update(ok=False, error=err, missing=missing)
    return row


def survey_tp(entry, zoo_dir, shardc, tp, timeout):
    import tempfile
    path = os.path.join(zoo_dir, entry["file"])
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        cmd = shardc_command(shardc, path, entry)
        cmd += ["--tp", str(tp), "--emit=partitioned", "-o", os.devnull, "--report", report]
        failed = failure(cmd, timeout, f"shardc: error: {path}: ")
        if failed:
            return failed
        with open(report) as f:
            rep = json.load(f)
    per_layer = [l.get("tp_collectives", {}) for l in rep.get("layers", [])]
    expected = entry.get("tp_allreduces_per_layer")
    match = bool(per_layer) and all(c == {"all_reduce": expected} for c in per_layer)
    return {"ok": True, "per_layer": per_layer, "expected": expected, "megatron": match,
            "layers_found": len(per_layer), "layers": entry.get("num_layers")}


def fmt_tp(t):
    if t is None:
        return ""
    if not t["ok"]:
        return "tp fails: " + t["error"]
    got = "; ".join(", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "none"
                    for c in t["per_layer"]) or "no layers found"
    verdict = "= Megatron" if t["megatron"] else f"(expected all_reduce {t['expected']} per layer)"
    return f"per layer: {got} {verdict}"


def survey_run(entry, zoo_dir, shardc, shardrun, timeout):
    import tempfile
    import numpy as np
    path = os.path.join(zoo_dir, entry["file"])
    with tempfile.TemporaryDirectory() as tmp:
        art = os.path.join(tmp, "artifact")
        out = os.path.join(tmp, "out.npz")
        steps = [shardc_command(shardc, path, entry) + ["-o", art],
                 [shardrun, art, "--inputs", os.path.join(zoo_dir, entry["inputs"]),
                  "--outputs", out]]
        for step in steps:
            failed = failure(step, timeout, f"{path}: ")
            if failed:
                return failed
        got = dict(np.load(out))
    want = dict(np.load(os.path.join(zoo_dir, entry["torch_outputs"])))
    feeds = dict(np.load(os.path.join(zoo_dir, entry["inputs"])))
    name = entry["output_names"][0]
    if name not in got or got[name].shape != want[name].shape:
        return {"ok": False, "error": f"output {name} missing or of another shape"}
    a, b = got[name].astype(np.float64), want[name].astype(np.float64)
    res = {"ok": True, "rel": float(np.abs(a - b).max() / np.abs(b).max())}
    mask = feeds.get("attention_mask")
    if mask is not None and a.shape[:2] == mask.shape:
        keep = mask.astype(bool)
        res["rel_real"] = float(np.abs(a[keep] - b[keep]).max() / np.abs(b[keep]).max())
    return res


def fmt_run(r):
    if r is None:
        return ""
    if not r["ok"]:
        return "run fails: " + r["error"]
    s = f"vs torch rel {r['rel']:.1e}"
    if "rel_real" in r:
        s += f" (real tokens {r['rel_real']:.1e})"
    return s


def fmt_missing(missing):
    return ", ".join(f"{op} x{n}" for op, n in missing.items())


def fmt_raised(raised):
    return ", ".join(f"{k} {v}" for k, v in raised.items() if v) or "nothing raised"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shardc", default=os.path.join(REPO, "build", "bin", "shardc"))
    ap.add_argument("--zoo", default=os.path.join(REPO, "test", "zoo", "zoo.json"))
    ap.add_argument("--emit", default="graph", help="phase to stop at (default graph)")
    ap.add_argument("--only", help="comma-separated zoo names (e.g. llama.dynamo)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per model")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--run", action="store_true",
                    help="also run the models that import with shardrun against torch's outputs")
    ap.add_argument("--shardrun", help="default: shardrun beside shardc")
    ap.add_argument("--tp", type=int, default=0,
                    help="also partition the models that import over tp=N and show their "
                         "tensor-parallel collectives per layer")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    if not os.path.exists(args.shardc):
        print(f"zoo_status.py: no shardc at {args.shardc} (build it or pass --shardc)",
              file=sys.stderr)
        return 2
    if not os.path.exists(args.zoo):
        print(f"zoo_status.py: no {args.zoo}", file=sys.stderr)
        return 2
    with open(args.zoo) as f:
        zoo = json.load(f)
    zoo_dir = os.path.dirname(os.path.abspath(args.zoo))
    entries = zoo["models"]
    if args.only:
        wanted = set(args.only.split(","))
        entries = [e for e in entries if e["name"] in wanted]

    shardrun = args.shardrun or os.path.join(os.path.dirname(args.shardc), "shardrun")
    if args.run and not os.path.exists(shardrun):
        print(f"zoo_status.py: no shardrun at {shardrun}", file=sys.stderr)
        return 2
    rows = []
    for e in entries:
        row = survey(e, zoo_dir, args.shardc, args.emit, args.timeout)
        row["tp"] = survey_tp(e, zoo_dir, args.shardc, args.tp, args.timeout) \
            if args.tp and row["ok"] else None
        row["run"] = survey_run(e, zoo_dir, args.shardc, shardrun, args.timeout) \
            if args.run and row["ok"] else None
        rows.append(row)

    if args.markdown:
        tp_col = (f" tp={args.tp} |" if args.tp else "") + (" shardrun |" if args.run else "")
        print("| model | exporter | opset | imports | error | missing ops (count in file) | raised |"
              + tp_col)
        print("|---|---|---|---|---|---|---|" + ("---|" if args.tp else "")
              + ("---|" if args.run else ""))
        for r in rows:
            print(f"| {r['name'].rsplit('.', 1)[0]} | {r['exporter']} | {r['opset']} | "
                  f"{'yes' if r['ok'] else 'no'} | {r['error'] if not r['missing'] else ''} | "
                  f"{fmt_missing(r['missing'])} | {fmt_raised(r['raised']) if r['ok'] else ''} |"
                  + (f" {fmt_tp(r['tp'])} |" if args.tp else "")
                  + (f" {fmt_run(r['run'])} |" if args.run else ""))
    else:
        width = max([len(r["name"]) for r in rows] + [5])
        for r in rows:
            if r["ok"]:
                detail = "imports   raised: " + fmt_raised(r["raised"])
                if r["tp"] is not None:
                    detail += f"\n{'':{width}s}  tp={args.tp}: " + fmt_tp(r["tp"])
                if r["run"] is not None:
                    detail += f"\n{'':{width}s}  shardrun: " + fmt_run(r["run"])
            elif r["missing"]:
                detail = "FAILS     missing: " + fmt_missing(r["missing"])
            else:
                detail = "FAILS     " + r["error"]
            print(f"{r['name']:{width}s}  opset {r['opset']!s:>2}  {detail}")
    n_ok = sum(r["ok"] for r in rows)
    print(f"\n{n_ok} of {len(rows)} import (--emit={args.emit})")
    for ex in zoo.get("excluded", []):
        print(f"not in the zoo: {ex['name']}: {ex['reason']}")
    missing_total = collections.Counter()
    for r in rows:
        for op in r["missing"]:
            missing_total[op] += 1
    if missing_total:
        print("ops missing, by number of models: " +
              ", ".join(f"{op} {n}" for op, n in missing_total.most_common()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
