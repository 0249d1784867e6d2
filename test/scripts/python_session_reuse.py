#!/usr/bin/env python3
"""One shardc.Session, several runs: prepared once, every run's outputs its own.

Compiles MODEL (with --dim NAME=N and the --shard flags), opens one
shardc.Session on the artifact (its ranks as threads when it has several)
and runs it --runs times on different random inputs, each compared with
onnxruntime as e2e_models.py compares (max |diff| <= 1e-4 x max |ref|).
Prints one line per run, whether consecutive runs' outputs differ (so that
a run cannot pass by returning the previous one's), and how many times the
session prepared its ranks (`Session.prepares`: 0 before the first run).
With --threads N the runs go to N Python threads at once, all on the one
session (whose calls take turns), each compared with onnxruntime.
"""
import argparse
import concurrent.futures
import pathlib
import shlex
import subprocess
import sys
import tempfile

import numpy as np

import shardc
from e2e_models import compare, load_model, make_inputs, reference_outputs, reference_session


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model", type=pathlib.Path)
    parser.add_argument("--dim", action="append", default=[], help="NAME=N")
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shard", default="", help="more shardc flags, e.g. '--tp 2'")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1,
                        help="Python threads sharing the session, each running its share")
    args = parser.parse_args()
    dims = {name: int(value) for name, value in (d.split("=") for d in args.dim)}
    model = load_model(args.model)
    reference = reference_session(args.model, model)
    with tempfile.TemporaryDirectory() as tmp:
        artifact = pathlib.Path(tmp) / "artifact"
        subprocess.run([args.shardc, str(args.model), "-o", str(artifact)] +
                       [f"--dim={name}={value}" for name, value in dims.items()] +
                       shlex.split(args.shard), check=True)
        session = shardc.Session(str(artifact), ranks="threads" if args.shard else None)
        print(f"prepared {session.prepares} time(s) before running")
        if args.threads > 1:
            return run_concurrently(session, model, dims, reference, args.runs, args.threads)
        failed, previous = 0, None
        for run in range(1, args.runs + 1):
            feeds = make_inputs(model, dims, np.random.default_rng(run))
            produced = session.run(feeds)
            problems, worst = compare(reference_outputs(reference, feeds), produced)
            print(f"run {run}: {'ok' if not problems else 'FAIL'} "
                  f"max |diff| / max |ref| = {worst:.2e}")
            for problem in problems:
                print(f"     {problem}")
            failed += bool(problems)
            if previous is not None:
                same = all(np.array_equal(produced[name], previous[name]) for name in produced)
                print(f"run {run}: {'same outputs as' if same else 'differs from'} run {run - 1}")
            previous = produced
        print(f"prepared {session.prepares} time(s) for {args.runs} runs")
    return 1 if failed else 0


def run_concurrently(session, model, dims, reference, runs, threads):
    """`runs` runs of different inputs from `threads` threads at once."""
    feeds = [make_inputs(model, dims, np.random.default_rng(run)) for run in range(1, runs + 1)]
    expected = [reference_outputs(reference, feed) for feed in feeds]
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        produced = list(pool.map(session.run, feeds))
    failed = 0
    for run, (want, got) in enumerate(zip(expected, produced), 1):
        problems, worst = compare(want, got)
        failed += bool(problems)
        if problems:
            print(f"run {run}: FAIL max |diff| / max |ref| = {worst:.2e}: {problems[0]}")
    print(f"{runs} runs from {threads} threads: {runs - failed} ok, "
          f"prepared {session.prepares} time(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
