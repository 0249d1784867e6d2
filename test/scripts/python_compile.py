#!/usr/bin/env python3
"""shardc.compile's keywords and errors, one line each.

    python_compile.py MODEL WORK

MODEL has a symbolic batch and seq (test/fixtures/models/gpt2_dynamic.onnx).
Each case prints `NAME: ok` or `NAME: <exception type>: <message>`, and,
for a case that compiles, what the driver printed on sys.stderr when asked
about (warnings, the --verbose summary's first line). WORK receives the
artifacts and MLIR files the .test compares with the tool's.
"""
import contextlib
import io
import pathlib
import sys

import shardc


def case(name, *args, stderr=False, **kwargs):
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            shardc.compile(*args, **kwargs)
        print(f"{name}: ok")
    except Exception as error:  # the type is part of what is checked
        print(f"{name}: {type(error).__module__}.{type(error).__name__}: {error}")
    if stderr:
        for line in captured.getvalue().splitlines()[:1]:
            print(f"{name} stderr: {line}")


def main():
    model, work = sys.argv[1], pathlib.Path(sys.argv[2])
    dims = {"batch": 2, "seq": 16}
    # The forms a keyword takes, each as the tool's flags would say it.
    case("dict dims", model, work / "dims_dict", tp=2, dp=2, dims=dims)
    case("list dims", model, work / "dims_list", tp="2", dp=2, dims=["batch=2", "seq=16"])
    case("mesh dict", model, str(work / "mesh"), mesh={"dp": 2, "tp": 2}, dims=dims)
    case("shape list", model, work / "shape.mlir", emit="import",
         input_shapes={"input_ids": [2, 16]})
    case("none is absent", model, work / "none", tp=None, dims=dims, report=None)
    case("report", model, work / "report", tp=2, dims=dims, report=work / "plan.json")
    case("verbose", model, work / "verbose", tp=2, dims=dims, verbose=True, stderr=True)
    # What the driver says.
    case("warning", model, work / "warned", tp=8, dims=dims, stderr=True)
    case("driver error", model, work / "bad_tp", tp=0, dims=dims)
    case("missing model", work / "missing.onnx", work / "missing")
    case("bad dim", model, work / "bad_dim", dims={"batch": 2, "seq": 16, "nope": 3})
    # What the binding says before the driver runs.
    case("unknown keyword", model, work / "x", weight_dirs=["w"])
    case("far keyword", model, work / "x", colour="red")
    case("bool for a number", model, work / "x", tp=True)
    case("number for a bool", model, work / "x", sp=1)
    case("str for a list", model, work / "x", weights_dirs=5)
    case("dims int", model, work / "x", dims=5)
    case("max_ranks str", model, work / "x", max_ranks="4")
    case("NUL in a path", model, "out\0put")
    case("model None", None, work / "x")
    print("nothing written for the errors:",
          sorted(p.name for p in work.iterdir() if p.name in {"bad_tp", "missing", "bad_dim", "x"}))


if __name__ == "__main__":
    main()
