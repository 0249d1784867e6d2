#!/usr/bin/env python3
"""Survey: how far shardc gets on every model of the zoo (test/zoo/zoo.json).

    .venv/bin/python test/scripts/zoo_status.py [--shardc build/bin/shardc] [--zoo test/zoo/zoo.json]
                                                [--emit graph] [--only NAME,...] [--markdown]

For every zoo entry it runs

    shardc FILE --dim NAME=N ... --emit=graph -o -

with the dims zoo.json binds, and prints one row per model: whether it imports
(and raises), the one-line error when it does not, the op types the importer
lacks with how often each occurs in the file, and, when it gets through, the
raised ops it found (attention, linear, norms, rotary, activations, mlp/moe
composites; counted anywhere in the module, composite bodies included).

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


def survey(entry, zoo_dir, shardc, emit, timeout):
    path = os.path.join(zoo_dir, entry["file"])
    cmd = [shardc, path]
    for name, value in entry.get("dims", {}).items():
        cmd += ["--dim", f"{name}={value}"]
    cmd += [f"--emit={emit}", "-o", "-"]
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
    lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
    err = next((l for l in lines if "error" in l), lines[-1] if lines else f"exit {proc.returncode}")
    err = err.replace(f"shardc: error: {path}: ", "").replace("shardc: error: ", "")
    hist = op_histogram(path)
    missing = {op: hist.get(op, 0) for op in unsupported_ops(err)}
    if missing:
        err = "unsupported ops: " + ", ".join(missing)
    row.update(ok=False, error=err, missing=missing)
    return row


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

    rows = [survey(e, zoo_dir, args.shardc, args.emit, args.timeout) for e in entries]

    if args.markdown:
        print("| model | exporter | opset | imports | error | missing ops (count in file) | raised |")
        print("|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['name'].rsplit('.', 1)[0]} | {r['exporter']} | {r['opset']} | "
                  f"{'yes' if r['ok'] else 'no'} | {r['error'] if not r['missing'] else ''} | "
                  f"{fmt_missing(r['missing'])} | {fmt_raised(r['raised']) if r['ok'] else ''} |")
    else:
        width = max([len(r["name"]) for r in rows] + [5])
        for r in rows:
            if r["ok"]:
                detail = "imports   raised: " + fmt_raised(r["raised"])
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
