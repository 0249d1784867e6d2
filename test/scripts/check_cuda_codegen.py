#!/usr/bin/env python3
"""Runs shardc's generated CUDA kernels on the host and checks them with numpy.

    check_cuda_codegen.py --shardc SHARDC MODEL [SHARDC FLAGS...]

Without a GPU the generated code can still be checked: compiles MODEL with
--target=cuda to an artifact and --emit=exec, compiles the artifact's
kernels.cu as host C++ (a one-thread grid: blockIdx/blockDim/gridDim as
plain structs, __global__ empty) into a shared library, and for every fused
step runs its function on random inputs of the step's shapes, comparing with
the step's expression (ops and args) evaluated by numpy with numpy
broadcasting. Prints one line per step and "N kernels match".
"""
import argparse
import ctypes
import math
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

SHIM = """
#include <cmath>
using std::isnan;
struct Dim3 { unsigned x; };
static const Dim3 blockIdx{0}, threadIdx{0}, blockDim{1}, gridDim{1};
#define __global__
#define __restrict__ __restrict
"""

ERF = np.vectorize(math.erf, otypes=[np.float64])


def reference(op, a, b):
    f = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
        "pow": lambda: np.power(a, b), "max": lambda: np.maximum(a, b),
        "min": lambda: np.minimum(a, b), "neg": lambda: -a, "abs": lambda: np.abs(a),
        "sqrt": lambda: np.sqrt(a), "rsqrt": lambda: 1 / np.sqrt(a),
        "reciprocal": lambda: 1 / a, "exp": lambda: np.exp(a), "log": lambda: np.log(a),
        "cos": lambda: np.cos(a), "sin": lambda: np.sin(a), "erf": lambda: ERF(a),
        "tanh": lambda: np.tanh(a), "sigmoid": lambda: 1 / (1 + np.exp(-a)),
        "relu": lambda: np.maximum(a, 0), "silu": lambda: a / (1 + np.exp(-a)),
        "gelu": lambda: 0.5 * a * (1 + ERF(a / math.sqrt(2))),
        "gelu_tanh": lambda: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3))),
    }
    return f[op]()


STEP = re.compile(r'exec\.kernel "fused"\(([^)]*)\) -> \([^)]*\) \{(.*?)\} \{source.*?: \((.*?)\) -> (memref<[^>]*>)')


def shape_of(memref):
    dims = memref[len("memref<"):-1].split("x")[:-1]
    return [int(d) for d in dims]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shardc", required=True)
    parser.add_argument("model")
    args, extra = parser.parse_known_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        base = [args.shardc, args.model, "--target=cuda"] + extra
        subprocess.run(base + ["-o", str(tmp / "artifact")], check=True)
        program = subprocess.run(base + ["--emit=exec", "-o", "-"], check=True,
                                 capture_output=True, text=True).stdout
        source = tmp / "artifact" / "kernels.cu"
        if not source.exists():
            print("0 kernels match (no fused steps)")
            return
        host = tmp / "kernels.cpp"
        host.write_text(SHIM + source.read_text())
        library = tmp / "kernels.so"
        subprocess.run(["g++", "-O1", "-shared", "-fPIC", "-o", str(library), str(host)], check=True)
        lib = ctypes.CDLL(str(library))
        rng = np.random.default_rng(7)
        checked = failed = 0
        for match in STEP.finditer(program):
            params, types, out_type = match.group(2), match.group(3), match.group(4)
            ops = re.search(r'ops = \[(.*?)\]', params).group(1).replace('"', "").split(", ")
            operands = [int(x) for x in re.search(r'args = array<i64: (.*?)>', params).group(1).split(", ")]
            name = re.search(r'cuda_kernel = "(\w+)"', params).group(1)
            in_shapes = [shape_of(t.strip()) for t in re.findall(r"memref<[^>]*>", types)]
            out_shape = shape_of(out_type)
            # Positive inputs keep log/sqrt/pow defined; the values are what matter.
            inputs = [rng.uniform(0.1, 2.0, size=s).astype(np.float32) for s in in_shapes]
            values = [x.astype(np.float64) for x in inputs]
            position = 0
            for op in ops:
                arity = 2 if op in ("add", "sub", "mul", "div", "pow", "max", "min") else 1
                a = values[operands[position]]
                b = values[operands[position + 1]] if arity == 2 else None
                position += arity
                values.append(reference(op, a, b))
            expected = np.broadcast_to(values[-1], out_shape)
            out = np.zeros(out_shape, np.float32)
            pointers = [x.ctypes.data_as(ctypes.c_void_p) for x in inputs]
            getattr(lib, name)(*pointers, out.ctypes.data_as(ctypes.c_void_p))
            error = float(np.max(np.abs(out - expected) / (np.abs(expected) + 1e-6)))
            ok = error < 1e-5
            checked += 1
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {' '.join(ops)} on {in_shapes} -> {out_shape}, "
                  f"max relative error {error:.1e}")
        print(f"{checked - failed} kernels match" + (f", {failed} differ" if failed else ""))
        sys.exit(1 if failed or not checked else 0)


if __name__ == "__main__":
    main()
