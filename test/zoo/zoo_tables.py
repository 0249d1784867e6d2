#!/usr/bin/env python3
"""Render zoo.json as the Markdown tables of test/zoo/README.md.

    .venv/bin/python test/zoo/zoo_tables.py            # print the tables
    .venv/bin/python test/zoo/zoo_tables.py --update   # rewrite them in README.md

The README's generated parts sit between `<!-- BEGIN NAME -->` and
`<!-- END NAME -->` lines (NAME: architectures, files, ort); everything else
in the README is written by hand. `make zoo` runs --update after regenerating.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Ops worth pointing out: how masks, positions, attention and routing are spelled.
NOTABLE = ["ScatterND", "ScatterElements", "CumSum", "IsNaN", "GatherND", "GatherElements",
           "Trilu", "Or", "Tile", "Loop", "SplitToSequence", "SequenceEmpty", "SequenceInsert",
           "SequenceAt", "ConcatFromSequence", "NonZero", "OneHot", "TopK", "Conv", "Gemm",
           "LayerNormalization", "Gelu", "Erf", "Sin", "Cos", "Flatten"]


def _attention(a):
    s = f"{a['kind']} {a['num_heads']}q/{a['kv_heads']}kv x{a['head_dim']}"
    if a.get("sliding_window"):
        s += f", window {a['sliding_window']}"
    return s + (", causal" if a.get("causal") else "")


def _position(p):
    s = p["scheme"]
    if "rotary_dim" in p:
        s += f" ({p['rotary_dim']} of 16 dims)"
    if p["scheme"] == "relative_bias":
        s += f" ({p['buckets']} buckets)"
    if p.get("from"):
        s += f", ids = {p['from']}"
    return s


def _moe(m):
    if not m:
        return ""
    return f"{m['experts']} experts top-{m['top_k']}" + \
        (f" + {m['shared_experts']} shared" if m.get("shared_experts") else "")


def architectures(zoo):
    seen = {}
    for e in zoo["models"]:
        seen.setdefault(e["variant"], e)
    out = ["| name | class | kind | attention | position | norm | parallel residual | MoE | tp all-reduces / layer |",
           "|---|---|---|---|---|---|---|---|---|"]
    for name, e in seen.items():
        out.append(f"| {name} | {e['hf_class']} | {e['kind']} | {_attention(e['attention'])} | "
                   f"{_position(e['position'])} | {e['norm']} | "
                   f"{'yes' if e['parallel_residual'] else 'no'} | {_moe(e['moe'])} | "
                   f"{e['tp_allreduces_per_layer']} |")
    return out


def _inputs(e):
    parts = []
    for name in e["input_names"]:
        dims = ", ".join(str(d) for d in e["input_dims"][name])
        parts.append(f"{name} [{dims}]")
    return "<br>".join(parts)


def _notable(e):
    ops = e["ops"]
    return ", ".join(f"{op} {ops[op]}" for op in NOTABLE if op in ops)


def files(zoo):
    out = ["| file | opset | attention impl | inputs (dims) | KiB | notable ops (count) |",
           "|---|---|---|---|---|---|"]
    for e in zoo["models"]:
        impl = e["attn_implementation"]
        if e.get("experts_implementation", "").startswith("batched"):
            impl += ", experts batched_mm"
        if e.get("export_workaround"):
            impl += ", bitwise_or symbolic"
        out.append(f"| {e['name']} | {e['opset']} | {impl} | {_inputs(e)} | "
                   f"{e['size_bytes'] / 1024:.0f} | {_notable(e)} |")
    return out


def ort(zoo):
    out = ["| file | max\\|ort - torch\\| | max\\|torch\\| | rel (all positions) | rel (real tokens) | "
           "second shape rel | note |",
           "|---|---|---|---|---|---|---|"]
    for e in zoo["models"]:
        c = e["ort_check"]
        a = c["all"]
        valid = f"{c['valid']['rel']:.1e}" if "valid" in c else ""
        o = e["other_shape_check"]
        other = f"{o['rel']:.1e}" if "rel" in o else o.get("error", "")
        note = []
        if c["padded_positions_differ"]:
            note.append("padded positions differ")
        if o.get("padded_positions_differ"):
            note.append("(also second shape)")
        out.append(f"| {e['name']} | {a['max_abs_diff']:.2e} | {a['max_abs_torch']:.2f} | "
                   f"{a['rel']:.1e} | {valid} | {other} | {' '.join(note)} |")
    return out


TABLES = {"architectures": architectures, "files": files, "ort": ort}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zoo", default=os.path.join(HERE, "zoo.json"))
    ap.add_argument("--readme", default=os.path.join(HERE, "README.md"))
    ap.add_argument("--update", action="store_true", help="rewrite the tables in the README")
    args = ap.parse_args()
    with open(args.zoo) as f:
        zoo = json.load(f)
    if not args.update:
        for name, fn in TABLES.items():
            print(f"## {name}\n")
            print("\n".join(fn(zoo)) + "\n")
        return 0
    with open(args.readme) as f:
        text = f.read()
    for name, fn in TABLES.items():
        pattern = re.compile(rf"(<!-- BEGIN {name} -->\n).*?(<!-- END {name} -->)", re.S)
        if not pattern.search(text):
            print(f"zoo_tables.py: {args.readme} has no {name} markers", file=sys.stderr)
            return 1
        text = pattern.sub(lambda m: m.group(1) + "\n".join(fn(zoo)) + "\n" + m.group(2), text)
    with open(args.readme, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
