#!/usr/bin/env python3
"""The model zoo (test/zoo) through shardc and shardrun, against onnxruntime.

For every zoo.json entry (or those named with --only): compile with its dims
bound and each configuration of --configs, run the artifact's ranks as
threads (or MPI with --launch mpi) on the exact feeds stored beside the model
(padded attention masks included), and require max |shardrun - onnxruntime|
<= 1e-4 x max |onnxruntime| for every output. For a sharded configuration
the plan's report must also show, in every layer, the tensor-parallel
collectives Megatron-LM's plan has for the architecture: the entry's
`tp_allreduces_per_layer` all-reduces, or with --sp that many reduce-scatters
and all-gathers, and nothing else. Prints one line per model and
configuration and a closing "N passed, M failed".
"""
import argparse
import json
import pathlib
import shlex
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import e2e_models  # noqa: E402

CONFIGS = ["", "--tp 2", "--tp 4", "--dp 2 --tp 2", "--tp 2 --sp"]


def expected_layer_collectives(entry, flags):
    """Megatron's tp collectives per layer for this architecture and flags."""
    per_layer = entry["tp_allreduces_per_layer"]
    if "--sp" in flags:
        return {"reduce_scatter": per_layer, "all_gather": per_layer}
    return {"all_reduce": per_layer}


def plan_problems(report_path, entry, flags):
    report = json.loads(report_path.read_text())
    expected = expected_layer_collectives(entry, flags)
    problems = []
    layers = report["layers"]
    if len(layers) != entry["num_layers"]:
        problems.append(f"report has {len(layers)} layers, expected {entry['num_layers']}")
    for layer in layers:
        if layer["tp_collectives"] != expected:
            problems.append(f"layer {layer['layer']}: tp collectives {layer['tp_collectives']}, "
                            f"expected {expected}")
    return problems


def run_one(zoo, entry, flags, args, workdir):
    feeds = dict(np.load(zoo / entry["inputs"]))
    shard = shlex.split(flags)
    report = workdir / "report.json"
    if shard:
        shard += ["--report", str(report)]
    problems, worst = e2e_models.check(zoo / entry["file"], entry["dims"], args.shardc,
                                       args.shardrun, workdir, shard=shard, launch=args.launch,
                                       feeds=feeds)
    if problems is None:
        return [f"shardc refused the mesh: {worst}"], None
    if not problems and flags and "--tp" in flags:
        problems += plan_problems(report, entry, flags)
    return problems, worst


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--zoo", type=pathlib.Path, default=pathlib.Path("test/zoo"))
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", required=True)
    parser.add_argument("--only", nargs="*", help="zoo entry names (e.g. gpt2.torchscript)")
    parser.add_argument("--configs", nargs="*", default=CONFIGS,
                        help="shardc flag sets; '' is one device")
    parser.add_argument("--launch", choices=["threads", "mpi"], default="threads")
    args = parser.parse_args()
    entries = json.loads((args.zoo / "zoo.json").read_text())["models"]
    if args.only:
        unknown = set(args.only) - {e["name"] for e in entries}
        if unknown:
            parser.error(f"not in the zoo: {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e["name"] in args.only]
    passed = failed = 0
    for entry in entries:
        for flags in args.configs:
            with tempfile.TemporaryDirectory() as tmp:
                problems, worst = run_one(args.zoo, entry, flags, args, pathlib.Path(tmp))
            label = f"{entry['name']} [{flags or 'one device'}]"
            detail = f"max |diff| / max |ref| = {worst:.2e}" if worst is not None else ""
            print(f"{'ok  ' if not problems else 'FAIL'} {label}: {detail}")
            for problem in problems:
                print(f"     {problem}")
            failed += bool(problems)
            passed += not problems
            sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
