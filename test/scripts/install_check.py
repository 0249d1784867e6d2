#!/usr/bin/env python3
"""Installs a build into a fresh prefix and runs README.md's example from there.

    install_check.py --build DIR --python PYTHON

`cmake --install` of the built tree (nothing is rebuilt) into a prefix in a
temporary folder outside both trees (removed at the end),
then checks that no installed file names the build or source tree (RPATHs,
embedded paths) and that every installed binary finds its libraries. A new
venv beside it gets the installed Python module through a .pth file and
the third-party packages (numpy, onnxruntime) of PYTHON's venv through
another; `shardc --version` and shardc.__version__ must agree. Then the
installed README.md's ```sh blocks run (readme_commands.py) with the
prefix's bin/ as the only shardc on PATH, the installed example model, the
new venv as .venv, and no PATH, PYTHONPATH or LD_LIBRARY_PATH entry in the
build or source tree. Last, a C++ program (test/install/) finds the runtime
with find_package(shardc) in the prefix and loads the README's artifact.
Prints what it checked; exits non-zero at the first failure, saying what.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

SCRIPTS = pathlib.Path(__file__).resolve().parent
SOURCE = SCRIPTS.parent.parent


def fail(message):
    sys.exit(f"install_check: {message}")


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        fail(f"`{' '.join(map(str, command))}` failed with exit code {result.returncode}:\n"
             f"{result.stdout}{result.stderr}")
    return result.stdout


def inside(path, trees):
    path = os.path.realpath(path)
    return any(path == tree or path.startswith(tree + os.sep) for tree in trees)


def check_no_tree_paths(prefix, trees):
    """No installed file holds the build's or the source's absolute path."""
    needles = [tree.encode() for tree in trees]
    files = [path for path in prefix.rglob("*") if path.is_file() and not path.is_symlink()]
    for path in files:
        data = path.read_bytes()
        for needle in needles:
            if needle in data:
                fail(f"{path.relative_to(prefix)} names {needle.decode()}")
    return len(files)


def check_libraries(prefix, trees):
    """Every installed ELF file finds its libraries, none from the trees."""
    elves = [path for path in prefix.rglob("*")
             if path.is_file() and not path.is_symlink() and path.read_bytes()[:4] == b"\x7fELF"]
    for path in elves:
        for line in run(["ldd", path], env={"PATH": "/usr/bin:/bin"}).splitlines():
            if "not found" in line:
                fail(f"{path.relative_to(prefix)}: {line.strip()}")
            if "=>" in line:
                library = line.split("=>")[1].split("(")[0].strip()
                if library and inside(library, trees):
                    fail(f"{path.relative_to(prefix)} loads {library}")
    return len(elves)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--python", required=True,
                        help="the project venv's python, for numpy and onnxruntime")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="shardc-install-") as work:
        check(os.path.realpath(args.build), args.python, pathlib.Path(work).resolve())


def check(build, project_python, work):
    trees = [build, str(SOURCE)]
    prefix = work / "prefix"
    run(["cmake", "--install", build, "--prefix", prefix])
    tools = ["shardc", "shardrun", "shardc-opt", "shardc-calibrate"]
    for tool in tools:
        if not os.access(prefix / "bin" / tool, os.X_OK):
            fail(f"bin/{tool} was not installed")
    print(f"installed: {', '.join(tools)}")
    print(f"no path into the build or source tree in {check_no_tree_paths(prefix, trees)} files")
    print(f"every library found, none in the trees, for {check_libraries(prefix, trees)} "
          "binaries")

    # A fresh venv: shardc from the prefix, numpy and onnxruntime from the
    # project's venv (its site-packages as a plain path: the .pth files in
    # it, such as the one naming the build's module, are not read). That
    # folder is the one path into a tree the venv may hold (a clone's .venv
    # lies in the source tree).
    venv = work / "venv"
    run([project_python, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
               env={}).strip()
    third_party = run([project_python, "-c",
                       "import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))"],
                      env={}).strip()
    modules = prefix / "lib" / "python3" / "dist-packages"
    (pathlib.Path(site) / "shardc-install.pth").write_text(f"{modules}\n")
    (pathlib.Path(site) / "third-party.pth").write_text(f"{third_party}\n")

    keep = [entry for entry in os.environ.get("PATH", "").split(os.pathsep)
            if entry and not inside(entry, trees)]
    env = {name: value for name, value in os.environ.items()
           if name not in ("PYTHONPATH", "LD_LIBRARY_PATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(prefix / "bin")] + keep)

    where = run([python, "-c", "import shardc, sys; print(shardc.__file__); print(*sys.path, sep='\\n')"],
                env=env).splitlines()
    if not inside(where[0], [str(prefix)]):
        fail(f"the venv imports shardc from {where[0]}, not from the prefix")
    for entry in where[1:]:
        if entry and inside(entry, trees) and entry != third_party:
            fail(f"the venv's sys.path holds {entry}")
    print(f"the venv imports shardc from {os.path.relpath(where[0], work)}")

    tool_version = run(["shardc", "--version"], env=env).splitlines()[0]
    module_version = run([python, "-c", "import shardc; print(shardc.__version__)"],
                         env=env).strip()
    if tool_version != f"shardc {module_version}":
        fail(f"`shardc --version` says '{tool_version}', shardc.__version__ '{module_version}'")
    print(f"one version: {tool_version}")

    readme = prefix / "share" / "doc" / "shardc" / "README.md"
    commands = run([sys.executable, SCRIPTS / "readme_commands.py", readme, "--python", python,
                    "--bin", prefix / "bin", "--work", work / "readme"], env=env)
    sys.stdout.write(commands)

    # A C++ program that embeds the runtime through the installed CMake
    # package loads the README's dp=2 x tp=2 artifact.
    embed = work / "embed"
    run(["cmake", "-S", SOURCE / "test" / "install", "-B", embed, "-G", "Ninja",
         "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
    run(["cmake", "--build", embed], env=env)
    print(run([embed / "embed", work / "readme" / "out4"], env=env), end="")


if __name__ == "__main__":
    main()
