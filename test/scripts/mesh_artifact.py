#!/usr/bin/env python3
"""Writes small multi-rank artifacts by hand, for shardrun's multi-rank tests.

They test the runtime on its own, with programs the compiler would not
write (a rank broken on purpose, collectives chosen for coverage rather than
by a plan): manifest.json, rank{r}.program (the FlatBuffer schema
runtime/schemas/program.fbs, through the Python module `flatc --python`
makes of it) and rank{r}.safetensors, laid out as compiler/Artifact writes
them, with the inputs and the expected outputs (numpy) beside them.

    mesh_artifact.py make --schema PYDIR --out DIR --case tp|dp_tp [--break-rank R]
                          [--tp N] [--target cpu|cuda] [--cuda-arch sm_90]
    mesh_artifact.py check EXPECTED.npz GOT.npz

Cases (every rank gets the whole input x; w is the rank's own weight):
  tp     mesh [tp=N] (--tp, default 2), x [4, 3N]: xs = all_slice(x, dim 1);
         y = xs * w; gathered = all_gather(y, dim 1); summed = all_reduce(y)
  dp_tp  mesh [dp=2, tp=2], x [8, 8]: xs = all_slice over dp (dim 0), then
         over tp (dim 1); y = xs * w; rows = all_gather over dp (dim 0) of
         all_reduce over tp of y; moved = all_to_all over tp of y (split and
         concat dim 1: strided blocks both ways), then all_gather over dp and
         tp (dim 0)
--break-rank R gives rank R's all_gather an out-of-range dim: that rank
fails at run time while the others wait for it in the collective.
--target cuda writes the manifest of a cuda artifact (target, cuda_arch) with
the same programs: the steps' kernels have the same names in both backends.
"""
import argparse
import json
import pathlib
import sys
import zlib

import numpy as np


def crc32(path):
    return "%08x" % (zlib.crc32(path.read_bytes()) & 0xFFFFFFFF)


def write_safetensors(path, tensors, metadata):
    """safetensors: u64 header length, JSON header, data (64-byte aligned)."""
    header = {"__metadata__": metadata}
    data = b""
    for name, array in tensors.items():
        data += b"\0" * (-len(data) % 64)
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 64)
    path.write_bytes(len(text).to_bytes(8, "little") + text + data)


class ProgramWriter:
    """One rank's program: buffers, then steps, then outputs. Buffers are
    float32 [4 bytes an element] unless `dtype` says otherwise; a State
    buffer (program version 3) may start as zeros (`zero_init`). Step
    parameters are integers, or lists of them."""

    def __init__(self, schema, version=2):
        import flatbuffers
        self.fb = flatbuffers
        self.s = schema
        self.version = version
        self.buffers, self.steps, self.outputs = [], [], []
        self.arena = 0

    def buffer(self, storage, shape, name=None, index=0, dtype="F32", zero_init=False):
        offset = 0
        if storage == "Arena":
            offset = self.arena
            size = np.dtype({"F32": np.float32, "I64": np.int64}[dtype]).itemsize
            self.arena += (int(np.prod(shape)) * size + 63) // 64 * 64
        self.buffers.append((storage, shape, offset, name, index, dtype, zero_init))
        return len(self.buffers) - 1

    def step(self, kernel, inputs, outputs, mesh_axes, **ints):
        self.steps.append((kernel, inputs, outputs, mesh_axes, ints))

    def output(self, name, buffer):
        self.outputs.append((name, buffer))

    def _vector(self, b, start, items):
        start(b, len(items))
        for item in reversed(items):
            b.PrependUOffsetTRelative(item)
        return b.EndVector()

    def bytes(self, mesh):
        s, b = self.s, self.fb.Builder(1024)
        buffers = []
        for storage, shape, offset, name, index, dtype, zero_init in self.buffers:
            shape_vec = b.CreateNumpyVector(np.array(shape, np.int64))
            name_off = b.CreateString(name) if name else None
            s.Buffer.BufferStart(b)
            s.Buffer.BufferAddStorage(b, getattr(s.Storage.Storage, storage))
            s.Buffer.BufferAddDtype(b, getattr(s.DType.DType, dtype))
            s.Buffer.BufferAddShape(b, shape_vec)
            s.Buffer.BufferAddOffset(b, offset)
            if name_off is not None:
                s.Buffer.BufferAddName(b, name_off)
            s.Buffer.BufferAddIndex(b, index)
            if zero_init:
                s.Buffer.BufferAddZeroInit(b, True)
            buffers.append(s.Buffer.BufferEnd(b))
        steps = []
        for kernel, inputs, outputs, axes, ints in self.steps:
            params = []
            if axes is not None:
                names = [b.CreateString(a) for a in axes]
                strings = self._vector(b, s.Param.ParamStartStringsVector, names)
                key = b.CreateString("mesh_axes")
                s.Param.ParamStart(b)
                s.Param.ParamAddKey(b, key)
                s.Param.ParamAddStrings(b, strings)
                params.append(s.Param.ParamEnd(b))
            for name, value in ints.items():
                values = b.CreateNumpyVector(np.array(value if isinstance(value, list) else [value],
                                                      np.int64))
                key = b.CreateString(name)
                s.Param.ParamStart(b)
                s.Param.ParamAddKey(b, key)
                s.Param.ParamAddInts(b, values)
                params.append(s.Param.ParamEnd(b))
            params_vec = self._vector(b, s.Step.StepStartParamsVector, params)
            inputs_vec = b.CreateNumpyVector(np.array(inputs, np.uint32))
            outputs_vec = b.CreateNumpyVector(np.array(outputs, np.uint32))
            kernel_off, source = b.CreateString(kernel), b.CreateString(kernel + "_node")
            s.Step.StepStart(b)
            s.Step.StepAddKernel(b, kernel_off)
            s.Step.StepAddInputs(b, inputs_vec)
            s.Step.StepAddOutputs(b, outputs_vec)
            s.Step.StepAddParams(b, params_vec)
            s.Step.StepAddSource(b, source)
            steps.append(s.Step.StepEnd(b))
        outputs = []
        for name, buffer in self.outputs:
            name_off = b.CreateString(name)
            s.Output.OutputStart(b)
            s.Output.OutputAddName(b, name_off)
            s.Output.OutputAddBuffer(b, buffer)
            outputs.append(s.Output.OutputEnd(b))
        axes = []
        for name, size in mesh:
            name_off = b.CreateString(name)
            s.MeshAxis.MeshAxisStart(b)
            s.MeshAxis.MeshAxisAddName(b, name_off)
            s.MeshAxis.MeshAxisAddSize(b, size)
            axes.append(s.MeshAxis.MeshAxisEnd(b))
        vectors = [self._vector(b, start, items) for start, items in [
            (s.Program.ProgramStartBuffersVector, buffers),
            (s.Program.ProgramStartStepsVector, steps),
            (s.Program.ProgramStartOutputsVector, outputs),
            (s.Program.ProgramStartMeshVector, axes)]]
        s.Program.ProgramStart(b)
        s.Program.ProgramAddVersion(b, self.version)
        s.Program.ProgramAddArenaBytes(b, self.arena)
        s.Program.ProgramAddBuffers(b, vectors[0])
        s.Program.ProgramAddSteps(b, vectors[1])
        s.Program.ProgramAddOutputs(b, vectors[2])
        s.Program.ProgramAddMesh(b, vectors[3])
        b.Finish(s.Program.ProgramEnd(b), file_identifier=b"SHDP")
        return bytes(b.Output())


def weight_of(rank, shape):
    return ((np.arange(np.prod(shape)).reshape(shape) % 5) + rank + 1).astype(np.float32) / 4


def case_tp(schema, broken, n=2):
    mesh = [("tp", n)]
    programs, weights = [], []
    for rank in range(n):
        p = ProgramWriter(schema)
        x = p.buffer("Input", [4, 3 * n], "x", 0)
        w = p.buffer("Weight", [4, 3], "w")
        xs, y = p.buffer("Arena", [4, 3]), p.buffer("Arena", [4, 3])
        gathered, summed = p.buffer("Arena", [4, 3 * n]), p.buffer("Arena", [4, 3])
        p.step("all_slice", [x], [xs], ["tp"], dim=1)
        p.step("mul", [xs, w], [y], None)
        p.step("all_gather", [y], [gathered], ["tp"], dim=5 if rank == broken else 1)
        p.step("all_reduce", [y], [summed], ["tp"])
        p.output("gathered", gathered)
        p.output("summed", summed)
        programs.append(p.bytes(mesh))
        weights.append({"w": weight_of(rank, (4, 3))})
    x = np.arange(12 * n, dtype=np.float32).reshape(4, 3 * n) / 8 - 1
    ys = [x[:, 3 * r:3 * r + 3] * weights[r]["w"] for r in range(n)]
    expected = {"gathered": np.concatenate(ys, axis=1), "summed": sum(ys)}
    return mesh, programs, weights, {"x": x}, expected


def case_dp_tp(schema, broken, n=2):
    mesh = [("dp", 2), ("tp", 2)]
    programs, weights = [], []
    for rank in range(4):
        p = ProgramWriter(schema)
        x = p.buffer("Input", [8, 8], "x", 0)
        w = p.buffer("Weight", [4, 4], "w")
        rows, xs, y = p.buffer("Arena", [4, 8]), p.buffer("Arena", [4, 4]), p.buffer("Arena", [4, 4])
        tp_sum, gathered = p.buffer("Arena", [4, 4]), p.buffer("Arena", [8, 4])
        moved, moved_all = p.buffer("Arena", [4, 4]), p.buffer("Arena", [16, 4])
        p.step("all_slice", [x], [rows], ["dp"], dim=0)
        p.step("all_slice", [rows], [xs], ["tp"], dim=1)
        p.step("mul", [xs, w], [y], None)
        p.step("all_reduce", [y], [tp_sum], ["tp"])
        p.step("all_gather", [tp_sum], [gathered], ["dp"], dim=5 if rank == broken else 0)
        p.step("all_to_all", [y], [moved], ["tp"], split_dim=1, concat_dim=1)
        p.step("all_gather", [moved], [moved_all], ["dp", "tp"], dim=0)
        p.output("rows", gathered)
        p.output("moved", moved_all)
        programs.append(p.bytes(mesh))
        weights.append({"w": weight_of(rank, (4, 4))})
    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 16 - 1

    def y_of(rank):
        dp, tp = divmod(rank, 2)
        return x[4 * dp:4 * dp + 4, 4 * tp:4 * tp + 4] * weights[rank]["w"]

    tp_sums = [y_of(2 * dp) + y_of(2 * dp + 1) for dp in range(2)]
    # Rank (dp, tp) gets column block tp of both tp peers' y, side by side.
    moved = [np.concatenate([y_of(2 * dp + peer)[:, 2 * tp:2 * tp + 2] for peer in range(2)],
                            axis=1)
             for dp in range(2) for tp in range(2)]
    expected = {"rows": np.concatenate(tp_sums, axis=0), "moved": np.concatenate(moved, axis=0)}
    return mesh, programs, weights, {"x": x}, expected


def make(args):
    sys.path.insert(0, args.schema)
    import shardc.schema.Buffer, shardc.schema.DType, shardc.schema.MeshAxis  # noqa: F401
    import shardc.schema.Output, shardc.schema.Param, shardc.schema.Program  # noqa: F401
    import shardc.schema.Step, shardc.schema.Storage  # noqa: F401
    import shardc.schema as schema
    mesh, programs, weights, inputs, expected = \
        {"tp": case_tp, "dp_tp": case_dp_tp}[args.case](schema, args.break_rank, args.tp)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = [size for _, size in mesh]
    ranks, files = [], {}
    for rank, (program, tensors) in enumerate(zip(programs, weights)):
        coords = dict(zip([n for n, _ in mesh], np.unravel_index(rank, sizes)))
        coords = {name: int(c) for name, c in coords.items()}
        (out / f"rank{rank}.program").write_bytes(program)
        write_safetensors(out / f"rank{rank}.safetensors", tensors,
                          {"mesh": ", ".join(f"{n}={s}" for n, s in mesh), "ranks": str(rank)})
        ranks.append({"rank": rank, "coords": coords, "program": f"rank{rank}.program",
                      "weights": f"rank{rank}.safetensors", "arena_bytes": 0})
        for name in (f"rank{rank}.program", f"rank{rank}.safetensors"):
            files[name] = {"bytes": (out / name).stat().st_size, "crc32": crc32(out / name)}

    def signature(arrays):
        return [{"name": n, "dtype": "float32", "shape": list(a.shape)} for n, a in arrays.items()]

    manifest = {"format": "shardc-artifact", "version": 2, "target": args.target,
                "cuda_arch": args.cuda_arch if args.target == "cuda" else None,
                "model": f"mesh_artifact.py {args.case}", "inputs": signature(inputs),
                "outputs": signature(expected), "mesh": {"axes": dict(mesh)},
                "ranks": ranks, "files": files}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    np.savez(out.parent / f"{out.name}.inputs.npz", **inputs)
    np.savez(out.parent / f"{out.name}.expected.npz", **expected)


def check(args):
    expected, got = np.load(args.expected), np.load(args.got)
    if sorted(expected.files) != sorted(got.files):
        sys.exit(f"outputs {sorted(got.files)}, expected {sorted(expected.files)}")
    for name in sorted(expected.files):
        want, have = expected[name], got[name]
        if want.shape != have.shape or not np.allclose(want, have, rtol=1e-6, atol=1e-6):
            sys.exit(f"{name}: got {have.shape} {have.ravel()[:8]}, "
                     f"expected {want.shape} {want.ravel()[:8]}")
    print("match: " + ", ".join(sorted(expected.files)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    m = commands.add_parser("make")
    m.add_argument("--schema", required=True, help="where flatc --python wrote the schema")
    m.add_argument("--out", required=True)
    m.add_argument("--case", choices=["tp", "dp_tp"], required=True)
    m.add_argument("--break-rank", type=int, default=-1)
    m.add_argument("--tp", type=int, default=2, help="the tp case's mesh size")
    m.add_argument("--target", choices=["cpu", "cuda"], default="cpu")
    m.add_argument("--cuda-arch", default="sm_90")
    c = commands.add_parser("check")
    c.add_argument("expected")
    c.add_argument("got")
    args = parser.parse_args()
    make(args) if args.command == "make" else check(args)


if __name__ == "__main__":
    main()
