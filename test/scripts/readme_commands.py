#!/usr/bin/env python3
"""Runs the commands of README.md's ```sh blocks as a user would type them.

    readme_commands.py README.md --python PYTHON --work DIR [--bin DIR]

Every line of every ```sh block (comments dropped, lines ending in '\\' joined)
runs with bash in --work, in order, with the built tools (--bin, default:
where shardc is found on PATH) first on PATH, the
repository's examples/ and a .venv holding --python beside it. `mpirun` gets
what running as root on few cores needs (allow-run-as-root, --oversubscribe),
as the README says. Stops at the first command that fails, printing it and its
output; prints each command that ran.
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys


def sh_blocks(readme):
    """The command lines of the ```sh blocks, in order."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", readme, re.S | re.M):
        pending = ""
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip() if not line.lstrip().startswith("#") else ""
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            if pending + line:
                commands.append(pending + line)
            pending = ""
    return commands


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("readme")
    parser.add_argument("--bin", default=os.path.dirname(shutil.which("shardc") or ""))
    parser.add_argument("--python", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    readme = pathlib.Path(args.readme)
    commands = sh_blocks(readme.read_text())
    if not commands:
        sys.exit("readme_commands: README.md has no ```sh block")
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    (work / "examples").symlink_to(readme.parent.resolve() / "examples")
    (work / ".venv").symlink_to(pathlib.Path(args.python).parent.parent.resolve())
    env = dict(os.environ, PATH=os.path.abspath(args.bin) + os.pathsep + os.environ["PATH"],
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # OpenMPI's own allocations outlive MPI_Finalize: under the sanitizers a
    # leak check would fail every mpirun command (the MPI unit tests do the same).
    mpi_env = dict(env, ASAN_OPTIONS=env.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    for command in commands:
        mpi = command.startswith("mpirun ")
        run = re.sub(r"^mpirun ", "mpirun --oversubscribe ", command)
        result = subprocess.run(["bash", "-c", run], cwd=work, env=mpi_env if mpi else env,
                                capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            sys.exit(f"readme_commands: `{command}` failed with exit code {result.returncode}:\n"
                     f"{result.stdout}{result.stderr}")
        print(f"ran: {command}")


if __name__ == "__main__":
    main()
