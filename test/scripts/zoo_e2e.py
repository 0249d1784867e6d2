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
and all-gathers, and nothing else, unless test/zoo/plans.json states the
plan shardc finds instead (with why it is not Megatron's): then exactly that.
A model plans.json says cannot compile must fail with that one-line error.
--write-plans prints the plans found, in plans.json's format, to review.
Prints one line per model and configuration and a closing "N passed, M
failed".
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


def expected_layer_collectives(entry, flags, plans):
    """The tp collectives per layer: plans.json's, or Megatron's for the architecture."""
    stated = plans.get(entry["name"], {}).get("configs", {}).get(flags)
    if stated is not None:
        return stated["per_layer"]
    per_layer = entry["tp_allreduces_per_layer"]
    if "--sp" in flags:
        return {"reduce_scatter": per_layer, "all_gather": per_layer}
    return {"all_reduce": per_layer}


def plan_problems(report, entry, flags, plans):
    expected = expected_layer_collectives(entry, flags, plans)
    problems = []
    layers = report["layers"]
    if len(layers) != entry["num_layers"]:
        problems.append(f"report has {len(layers)} layers, expected {entry['num_layers']}")
    for layer in layers:
        # plans.json may list each layer's collectives where they differ.
        wanted = expected[layer["layer"]] if isinstance(expected, list) else expected
        if layer["tp_collectives"] != wanted:
            problems.append(f"layer {layer['layer']}: tp collectives {layer['tp_collectives']}, "
                            f"expected {wanted}")
    return problems


def run_one(zoo, entry, flags, args, workdir, plans, found):
    feeds = dict(np.load(zoo / entry["inputs"]))
    shard = shlex.split(flags)
    report = workdir / "report.json"
    if shard:
        shard += ["--report", str(report)]
    problems, worst = e2e_models.check(zoo / entry["file"], entry["dims"], args.shardc,
                                       args.shardrun, workdir, shard=shard, launch=args.launch,
                                       feeds=feeds)
    error = plans.get(entry["name"], {}).get("error")
    if error:
        refused = [p for p in problems or [] if error in p and p.count("\n") == 0]
        if refused:
            return [], None
        return [f"expected the one-line error '{error}', got {problems or 'success'}"], worst
    if problems is None:
        return [f"shardc refused the mesh: {worst}"], None
    if not problems and flags and "--tp" in flags:
        plan = json.loads(report.read_text())
        per_layer = [layer["tp_collectives"] for layer in plan["layers"]]
        found.setdefault(entry["name"], {})[flags] = \
            per_layer[0] if all(p == per_layer[0] for p in per_layer) else per_layer
        problems += plan_problems(plan, entry, flags, plans)
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
    parser.add_argument("--write-plans", action="store_true",
                        help="print the first layer's tp collectives found per model and config")
    args = parser.parse_args()
    entries = json.loads((args.zoo / "zoo.json").read_text())["models"]
    plans_path = args.zoo / "plans.json"
    plans = json.loads(plans_path.read_text())["models"] if plans_path.exists() else {}
    found = {}
    if args.only:
        unknown = set(args.only) - {e["name"] for e in entries}
        if unknown:
            parser.error(f"not in the zoo: {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e["name"] in args.only]
    passed = failed = 0
    for entry in entries:
        for flags in args.configs:
            with tempfile.TemporaryDirectory() as tmp:
                problems, worst = run_one(args.zoo, entry, flags, args, pathlib.Path(tmp), plans,
                                          found)
            label = f"{entry['name']} [{flags or 'one device'}]"
            detail = f"max |diff| / max |ref| = {worst:.2e}" if worst is not None else ""
            print(f"{'ok  ' if not problems else 'FAIL'} {label}: {detail}")
            for problem in problems:
                print(f"     {problem}")
            failed += bool(problems)
            passed += not problems
            sys.stdout.flush()
    if args.write_plans:
        print(json.dumps(found, indent=1, sort_keys=True))
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
