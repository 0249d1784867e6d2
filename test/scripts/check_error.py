#!/usr/bin/env python3
"""Runs a compiler command that must fail the way every bad input must fail.

    check_error.py COMMAND...

Asserts exit code 1 (not a crash, not a hang: 60 s limit), exactly one line on
stderr that starts with "<tool>: error: ", nothing on stdout, and no file at
the command's -o path. Prints the error line so FileCheck can check its text.
"""
import os
import subprocess
import sys


def main():
    command = sys.argv[1:]
    output = None
    for i, arg in enumerate(command):
        if arg == "-o" and i + 1 < len(command):
            output = command[i + 1]
        elif arg.startswith("-o="):
            output = arg[3:]
    if output and output != "-" and os.path.exists(output):
        os.remove(output)
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    tool = os.path.basename(command[0])
    lines = run.stderr.splitlines()
    problems = []
    if run.returncode != 1:
        problems.append(f"exit code {run.returncode}, expected 1")
    if len(lines) != 1 or not lines[0].startswith(f"{tool}: error: "):
        problems.append(f"stderr is not one '{tool}: error: ' line:\n{run.stderr}")
    if run.stdout:
        problems.append(f"unexpected stdout:\n{run.stdout[:500]}")
    if output and output != "-" and os.path.exists(output):
        problems.append(f"output file {output} was written")
    if problems:
        sys.exit("check_error: " + "; ".join(problems))
    print(lines[0])


if __name__ == "__main__":
    main()
