#!/usr/bin/env python3
"""Every wrong argument to shardc.Session and its methods raises shardc.Error
naming the argument, never pybind's TypeError: prints one line per case,
"NAME: shardc.Error: MESSAGE" or "NAME: TYPE (not shardc.Error): MESSAGE".

    python_bad_arguments.py ARTIFACT   (an inference artifact of one device)
"""
import pathlib
import sys

import shardc


def main():
    artifact = sys.argv[1]
    session = shardc.Session(artifact)
    cases = {
        "path None": lambda: shardc.Session(None),
        "path int": lambda: shardc.Session(7),
        "path NUL": lambda: shardc.Session(artifact + "\0x"),
        "ranks int": lambda: shardc.Session(artifact, ranks=2),
        "threads str": lambda: shardc.Session(artifact, threads="2"),
        "threads bool": lambda: shardc.Session(artifact, threads=True),
        "threads 2**70": lambda: shardc.Session(artifact, threads=2**70),
        "threads -1": lambda: shardc.Session(artifact, threads=-1),
        "run list": lambda: session.run([1, 2]),
        "run None": lambda: session.run(None),
        "save None": lambda: session.save(None),
        "export NUL": lambda: session.export_onnx("a\0b.onnx"),
        "resume int": lambda: session.resume(3),
        "resume bytes": lambda: session.resume(b"no-such-checkpoint"),
    }
    for name, case in cases.items():
        try:
            case()
            print(f"{name}: no error")
        except shardc.Error as error:
            print(f"{name}: shardc.Error: {error}")
        except Exception as error:  # noqa: BLE001 - the case is what is printed
            print(f"{name}: {type(error).__name__} (not shardc.Error): {error}")
    # A path-like object is a path.
    print("pathlib:", shardc.Session(pathlib.Path(artifact)).input_names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
