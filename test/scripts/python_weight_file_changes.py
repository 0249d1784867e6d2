#!/usr/bin/env python3
"""A shardc.Session whose weight files change under it: no crash, no wrong weights.

    python_weight_file_changes.py MODEL [--dim NAME=N]... --shardc SHARDC [--shard FLAGS]

Compiles MODEL once, then for each case copies the artifact, opens a
shardc.Session on the copy (ranks as threads where it has several), and has
another process truncate or rewrite (same size, other bytes) every weight
file of the copy: after the load and before the first run (which prepares
the ranks from the weights), or between two runs. Each run after the change must match onnxruntime as e2e_models.py compares; a
session that read the file again would die of SIGBUS (truncated) or compute
with the new bytes (rewritten). Changed before the load, the file must be
refused with shardc.Error, one line naming it.

Then the weights the session let go once packed are needed again: a run
fails (token ids out of range), so the next one prepares the ranks anew
from the weight files. Changed since the load (before the failed run), that
prepare must fail with shardc.Error, one line naming the file, not read the
changed bytes; unchanged, the run must match onnxruntime. Prints one line
per case.
"""
import argparse
import pathlib
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import shardc
from e2e_models import compare, load_model, make_inputs, reference_outputs, reference_session

# Run by another process: what a user's `truncate` or `cp` over the file does.
TRUNCATE = "import os, sys; os.truncate(sys.argv[1], os.path.getsize(sys.argv[1]) // 3)"
REWRITE = ("import os, sys; n = os.path.getsize(sys.argv[1]); "
           "f = open(sys.argv[1], 'r+b'); f.write(bytes([0x5a]) * n); f.close()")


def out_of_range(feed):
    """`feed` with every integer input far past any embedding's rows."""
    return {name: np.full_like(value, 10**9) if np.issubdtype(value.dtype, np.integer) else value
            for name, value in feed.items()}


def change(artifact, how):
    for weights in sorted(artifact.glob("*.safetensors")):
        subprocess.run([sys.executable, "-c", how, str(weights)], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model", type=pathlib.Path)
    parser.add_argument("--dim", action="append", default=[], help="NAME=N")
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shard", default="", help="more shardc flags, e.g. '--tp 2'")
    args = parser.parse_args()
    dims = {name: int(value) for name, value in (d.split("=") for d in args.dim)}
    model = load_model(args.model)
    reference = reference_session(args.model, model)
    feeds = [make_inputs(model, dims, np.random.default_rng(run)) for run in (1, 2)]
    expected = [reference_outputs(reference, feed) for feed in feeds]
    ranks = "threads" if args.shard else None
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        compiled = pathlib.Path(tmp) / "compiled"
        subprocess.run([args.shardc, str(args.model), "-o", str(compiled)] +
                       [f"--dim={name}={value}" for name, value in dims.items()] +
                       shlex.split(args.shard), check=True)

        def fresh(name):
            artifact = pathlib.Path(tmp) / name
            shutil.copytree(compiled, artifact)
            return artifact

        def check(case, session, run):
            nonlocal failed
            problems, worst = compare(expected[run], session.run(feeds[run]))
            failed += bool(problems)
            print(f"{case}: {'ok' if not problems else 'FAIL'} "
                  f"max |diff| / max |ref| = {worst:.2e}")

        for how, verb in ((TRUNCATE, "truncated"), (REWRITE, "rewritten")):
            artifact = fresh(f"{verb}-loaded")
            session = shardc.Session(str(artifact), ranks=ranks)
            change(artifact, how)
            check(f"{verb} after the load", session, 0)
            check(f"{verb} after the load, second run", session, 1)

            artifact = fresh(f"{verb}-ran")
            session = shardc.Session(str(artifact), ranks=ranks)
            check(f"{verb} between runs, before", session, 0)
            change(artifact, how)
            check(f"{verb} between runs, after", session, 1)

            artifact = fresh(f"{verb}-before")
            change(artifact, how)
            try:
                shardc.Session(str(artifact), ranks=ranks)
                failed += 1
                print(f"{verb} before the load: FAIL, loaded")
            except shardc.Error as error:
                print(f"{verb} before the load: shardc.Error: {error}")

        def fail_a_run(case, session):
            nonlocal failed
            try:
                session.run(out_of_range(feeds[1]))
                failed += 1
                print(f"{case}: FAIL, out-of-range ids ran")
            except shardc.Error:
                pass

        for how, verb in ((None, "unchanged"), (TRUNCATE, "truncated"), (REWRITE, "rewritten")):
            artifact = fresh(f"{verb}-prepared-again")
            session = shardc.Session(str(artifact), ranks=ranks)
            check(f"{verb}, prepared again: first run", session, 0)
            if how:
                change(artifact, how)
            fail_a_run(f"{verb}, prepared again", session)
            case = f"{verb}, prepared again after a failed run"
            if not how:
                check(case, session, 1)
                print(f"{case}: prepared {session.prepares} times")
                continue
            try:
                session.run(feeds[1])
                failed += 1
                print(f"{case}: FAIL, ran on the changed file")
            except shardc.Error as error:
                failed += "\n" in str(error)
                print(f"{case}: shardc.Error: {error}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
