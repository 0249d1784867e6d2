#!/usr/bin/env python3
"""Runs a compiler command that must fail the way every bad input must fail.

    check_error.py [--unchanged PATH]... [--file-size-limit BYTES] COMMAND...

Asserts exit code 1 (not a crash, not a hang: 60 s limit), exactly one line on
stderr that starts with "<tool>: error: ", nothing on stdout, no file at the
command's -o path, and nothing new beside its output paths (-o, --outputs,
--report, --save) whose name holds theirs: nothing half-written, no staging left
(staging is named after its target; other tests may write in the same folder
meanwhile). Prints the error
line so FileCheck can check its text.

--unchanged PATH    PATH (a file or a folder's whole tree, symlinks not
                    followed) must be exactly as before: nothing deleted or
                    rewritten. The -o path may then exist before and after.
--file-size-limit BYTES
                    run the command with RLIMIT_FSIZE of BYTES, as on a disk
                    that fills up.
"""
import hashlib
import os
import resource
import subprocess
import sys

OUTPUT_FLAGS = ("-o", "--outputs", "--report", "--save")


def snapshot(path):
    """Every entry under path: its kind and, for files, a digest of its bytes."""
    entries = {}
    if not os.path.lexists(path):
        return entries
    stack = [path]
    while stack:
        current = stack.pop()
        if os.path.islink(current):
            entries[current] = "link " + os.readlink(current)
        elif os.path.isdir(current):
            entries[current] = "dir"
            stack.extend(os.path.join(current, name) for name in os.listdir(current))
        elif os.path.isfile(current):
            with open(current, "rb") as f:
                entries[current] = "file " + hashlib.sha256(f.read()).hexdigest()
        else:
            entries[current] = "special"
    return entries


def folder_of(path):
    return os.path.dirname(os.path.abspath(path.rstrip("/") or "/"))


def main():
    args = sys.argv[1:]
    unchanged, file_size_limit = [], None
    while args and args[0] in ("--unchanged", "--file-size-limit"):
        if args[0] == "--unchanged":
            unchanged.append(args[1])
        else:
            file_size_limit = int(args[1])
        args = args[2:]
    command = args
    output, folders = None, {}
    for i, arg in enumerate(command):
        flag, _, value = arg.partition("=")
        if flag in OUTPUT_FLAGS and not value and i + 1 < len(command):
            value = command[i + 1]
        if flag in OUTPUT_FLAGS and value and value != "-":
            name = os.path.basename(value.rstrip("/")) or value
            folders.setdefault(folder_of(value), set()).add(name)
            if flag == "-o":
                output = value
    if output and not unchanged and os.path.isfile(output):
        os.remove(output)
    before = {path: snapshot(path) for path in unchanged}
    listed = {folder: set(os.listdir(folder)) for folder in folders if os.path.isdir(folder)}

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    run = subprocess.run(command, capture_output=True, text=True, timeout=60,
                         preexec_fn=limit if file_size_limit is not None else None)
    tool = os.path.basename(command[0])
    lines = run.stderr.splitlines()
    problems = []
    if run.returncode != 1:
        problems.append(f"exit code {run.returncode}, expected 1")
    if len(lines) != 1 or not lines[0].startswith(f"{tool}: error: "):
        problems.append(f"stderr is not one '{tool}: error: ' line:\n{run.stderr}")
    if run.stdout:
        problems.append(f"unexpected stdout:\n{run.stdout[:500]}")
    if output and not unchanged and output != "-" and os.path.exists(output):
        problems.append(f"output file {output} was written")
    for folder, names in listed.items():
        targets = folders[folder]
        new = {name for name in set(os.listdir(folder)) - names
               if any(target in name for target in targets)}
        if new:
            problems.append(f"left in {folder}: {sorted(new)}")
    for path, entries in before.items():
        if snapshot(path) != entries:
            problems.append(f"{path} was changed")
    if problems:
        sys.exit("check_error: " + "; ".join(problems))
    print(lines[0])


if __name__ == "__main__":
    main()
