#!/usr/bin/env python3
"""Compiles every fixture of test/fixtures/fixtures.json and checks the result.

For each model: `shardc MODEL --emit=graph -o -` with its dims bound succeeds;
the output re-parses and verifies with shardc-opt; no op is left computing on
constants only (shape arithmetic folded away); and raising found exactly the
expected number of each pattern. Prints one line per model and a closing
"N passed, M failed" line.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

PATTERNS = {
    "attention": r"graph\.attention\b", "layer_norm": r"graph\.layer_norm\b",
    "rms_norm": r"graph\.rms_norm\b", "gelu": r"graph\.gelu\b", "silu": r"graph\.silu\b",
    "rotary": r"graph\.rotary\b", "linear": r"graph\.linear\b",
    "mlp": r'graph\.composite "mlp"', "moe": r'graph\.moe |graph\.composite "moe"',
}
OP_LINE = re.compile(r"^\s*(%[\w#:]+(?:, %[\w#]+)*) = (graph\.\w+)(.*)$")


def constant_only_ops(mlir):
    """Ops (other than sources) whose operands are all graph.constant results."""
    constants, offenders = set(), []
    for line in mlir.splitlines():
        match = OP_LINE.match(line)
        if not match:
            continue
        results, op, rest = match.groups()
        if op == "graph.constant":
            constants.add(results.split(":")[0])
            continue
        operands = re.findall(r"%[\w]+", rest.split(" : ")[0].split(" {")[0])
        if op not in ("graph.weight", "graph.composite") and operands and \
                all(o in constants for o in operands):
            offenders.append(line.strip()[:120])
    return offenders


def check(entry, fixtures, shardc, shardc_opt):
    model = fixtures / entry["file"]
    command = [shardc, str(model), "--emit=graph", "-o", "-"]
    command += [f"--dim={name}={value}" for name, value in entry["dims"].items()]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        return [f"shardc failed: {run.stderr.strip()}"]
    problems = []
    reparse = subprocess.run([shardc_opt, "-", "-o", "/dev/null"], input=run.stdout,
                             capture_output=True, text=True, timeout=300)
    if reparse.returncode != 0:
        problems.append(f"shardc-opt rejects the output: {reparse.stderr.strip()[:300]}")
    for line in constant_only_ops(run.stdout):
        problems.append(f"unfolded constant computation: {line}")
    found = {kind: len(re.findall(pattern, run.stdout)) for kind, pattern in PATTERNS.items()}
    for kind, expected in entry["expect"].items():
        if found[kind] != expected:
            problems.append(f"{kind}: expected {expected}, found {found[kind]}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fixtures", required=True, type=pathlib.Path)
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardc-opt", required=True)
    args = parser.parse_args()
    entries = json.loads((args.fixtures / "fixtures.json").read_text())
    failed = 0
    for entry in entries:
        problems = check(entry, args.fixtures, args.shardc, args.shardc_opt)
        counts = ", ".join(f"{k} {v}" for k, v in entry["expect"].items() if v)
        print(f"{'ok  ' if not problems else 'FAIL'} {entry['name']}: {counts}")
        for problem in problems:
            print(f"     {problem}")
        failed += bool(problems)
    print(f"{len(entries) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
