#!/usr/bin/env python3
"""Builds a pp=2 pipeline artifact from shardc's own artifacts, for the runtime's tests.

shardc has no --pp yet, so this script does the compiler's part by hand
(docs/pipeline.md): it cuts a model in two at a residual-stream tensor
(onnx.utils.extract_model), compiles each half with shardc for one
micro-batch (`--dim batch=B/M`, optionally `--tp N`), and assembles the
pipeline artifact: the manifest's pipeline section (a GPipe schedule: stage 0
runs every micro-batch and sends it on, stage 1 receives and runs it), each
half's rank files renamed to rank<r>.stage<k>.*, the programs' mesh widened
to (pp=2, tp=N) through the FlatBuffer object API (`flatc --python
--gen-object-api`), the weight files' rank metadata rewritten, the CRCs
recomputed. The inputs and onnxruntime's outputs of the whole model go beside it.

    pipeline_artifact.py make --schema PYDIR --shardc SHARDC --model M.onnx --cut TENSOR
                              --out DIR --microbatches M [--tp N] [--dim name=value ...]
    pipeline_artifact.py check EXPECTED.npz GOT.npz
    pipeline_artifact.py check-trace MANIFEST.json TRACE.json... [--iters I]
    pipeline_artifact.py run-python DIR INPUTS.npz OUTPUTS.npz
    pipeline_artifact.py edit DIR COPY FIELD=JSON|FIELD...

run-python runs DIR through the binding (shardc.Session(DIR, ranks="threads"));
edit copies the artifact (any artifact) with manifest fields replaced (FIELD
is a dotted path, list indices as numbers: pipeline.actions.1.0.op="backward_input"),
or deleted where no =JSON follows.
"""
import shutil
import argparse
import json
import pathlib
import subprocess
import sys
import zlib

import numpy as np
import onnx
import onnx.utils
import onnxruntime as ort

# The E2E tolerance of test/scripts/e2e_models.py: max |diff| <= 1e-4 x max |ref|.
TOLERANCE = 1e-4


def crc32(path):
    return "%08x" % (zlib.crc32(path.read_bytes()) & 0xFFFFFFFF)


def named_dims(model, tensor_names, dims):
    """Names the leading dims of the cut tensor like the model's inputs
    (extract_model leaves them unk__N) so that --dim binds them."""
    for value in list(model.graph.input) + list(model.graph.output):
        if value.name in tensor_names:
            for dim, name in zip(value.type.tensor_type.shape.dim, dims):
                dim.dim_param = name


def split(model_path, cut, out):
    """The two halves, with the caller's input in the first, its outputs in the second."""
    model = onnx.load(model_path)
    inputs = [i.name for i in model.graph.input]
    outputs = [o.name for o in model.graph.output]
    leading = [d.dim_param for d in model.graph.input[0].type.tensor_type.shape.dim]
    halves = []
    for index, (ins, outs) in enumerate([(inputs, [cut]), ([cut], outputs)]):
        path = out / f"half{index}.onnx"
        onnx.utils.extract_model(str(model_path), str(path), ins, outs)
        half = onnx.load(path)
        named_dims(half, [cut], leading)
        onnx.save(half, path)
        halves.append(path)
    return halves


def widen_mesh(schema, program_path, tp, out_path):
    """The program with its mesh (tp=N or none) made (pp=2, tp=N)."""
    sys.path.insert(0, str(schema))
    import flatbuffers
    from shardc.schema.MeshAxis import MeshAxisT
    from shardc.schema.Program import Program, ProgramT

    program = ProgramT.InitFromObj(Program.GetRootAs(program_path.read_bytes(), 0))
    mesh = [MeshAxisT()]
    mesh[0].name, mesh[0].size = "pp", 2
    if tp > 1:
        axis = MeshAxisT()
        axis.name, axis.size = "tp", tp
        mesh.append(axis)
    program.mesh = mesh
    builder = flatbuffers.Builder(1024)
    builder.Finish(program.Pack(builder), file_identifier=b"SHDP")
    out_path.write_bytes(bytes(builder.Output()))
    return program.arenaBytes


def relabel_weights(path, out_path, rank, mesh):
    """The safetensors file with the rank's identity in its metadata."""
    data = path.read_bytes()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    header["__metadata__"] = {"mesh": mesh, "ranks": str(rank)}
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 64)
    out_path.write_bytes(len(text).to_bytes(8, "little") + text + data[8 + length:])


def make(args):
    out = pathlib.Path(args.out)
    work = pathlib.Path(str(out) + ".work")
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    dims = dict(item.split("=") for item in args.dim)
    batch = int(dims["batch"])
    micro = dict(dims, batch=str(batch // args.microbatches))
    shard = ["--tp", str(args.tp)] if args.tp > 1 else []
    compiled = []
    for index, half in enumerate(split(pathlib.Path(args.model), args.cut, work)):
        target = work / f"stage{index}"
        command = [args.shardc, str(half), "-o", str(target)] + shard
        for name, value in micro.items():
            command += ["--dim", f"{name}={value}"]
        subprocess.run(command, check=True)
        compiled.append(json.loads((target / "manifest.json").read_text()))

    whole = onnx.load(args.model)
    session = ort.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(20261201)
    feeds = {}
    for value in whole.graph.input:
        shape = [int(dims.get(d.dim_param, d.dim_value)) for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.integers(0, 200, size=shape).astype(np.int64)
    names = [o.name for o in whole.graph.output]
    expected = dict(zip(names, session.run(names, feeds)))
    np.savez(str(out) + ".inputs.npz", **feeds)
    np.savez(str(out) + ".expected.npz", **expected)

    m, tp = args.microbatches, args.tp
    stage0, stage1 = compiled
    transfer = stage0["outputs"][0]
    mesh_axes = {"pp": 2, "tp": tp} if tp > 1 else {"pp": 2}
    mesh_text = "pp=2, tp=%d" % tp if tp > 1 else "pp=2"
    ranks, files = [], {}
    for rank in range(2 * tp):
        pp, t = divmod(rank, tp)
        coords = {"pp": pp, "tp": t} if tp > 1 else {"pp": pp}
        source_dir = work / f"stage{pp}"
        source = compiled[pp]["ranks"][t]
        program = f"rank{rank}.stage{pp}.program"
        weights = f"rank{rank}.stage{pp}.safetensors"
        arena = widen_mesh(args.schema, source_dir / source["program"], tp, out / program)
        relabel_weights(source_dir / source["weights"], out / weights, rank, mesh_text)
        for name in (program, weights):
            files[name] = {"bytes": (out / name).stat().st_size, "crc32": crc32(out / name)}
        ranks.append({"rank": rank, "coords": coords, "stages": [
            {"stage": pp, "program": program, "weights": weights, "arena_bytes": arena}]})

    def caller(entries, names):
        return [dict(e, shape=[batch] + e["shape"][1:]) for e in entries if e["name"] in names]

    def as_transfer(entry):
        return dict(entry, transfer=0)

    actions = [[], []]
    for mb in range(m):
        actions[0] += [{"op": "forward", "stage": 0, "microbatch": mb},
                       {"op": "send", "transfer": 0, "microbatch": mb}]
        actions[1] += [{"op": "recv", "transfer": 0, "microbatch": mb},
                       {"op": "forward", "stage": 1, "microbatch": mb}]
    inputs = caller(stage0["inputs"], feeds)
    outputs = caller(stage1["outputs"], names)
    manifest = {
        "format": "shardc-artifact", "version": 2, "target": "cpu",
        "cuda_arch": None, "cuda_kernels": None, "model": args.model,
        "mesh": {"axes": mesh_axes}, "inputs": inputs, "outputs": outputs,
        "pipeline": {
            "stages": 2, "microbatches": m, "virtual_stages": 1, "schedule": "gpipe",
            "inputs": [{"name": e["name"], "microbatch_dim": 0} for e in inputs],
            "outputs": [{"name": e["name"], "microbatch_dim": 0} for e in outputs],
            "transfers": [{"id": 0, "from": 0, "to": 1, "dtype": transfer["dtype"],
                           "shape": transfer["shape"]}],
            "programs": [
                {"stage": 0, "inputs": stage0["inputs"],
                 "outputs": [as_transfer(transfer)]},
                {"stage": 1, "inputs": [as_transfer(stage1["inputs"][0])],
                 "outputs": stage1["outputs"]}],
            "actions": actions,
            "output_rank": tp,  # the first rank of the last stage: (pp 1, tp 0)
        },
        "ranks": ranks, "files": files,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def check(args):
    expected, got = np.load(args.expected), np.load(args.got)
    names = []
    for name in expected.files:
        reference, result = expected[name], got[name]
        if reference.shape != result.shape:
            sys.exit(f"{name}: shape {result.shape}, expected {reference.shape}")
        error = float(np.max(np.abs(reference - result)))
        scale = float(np.max(np.abs(reference)))
        if error > TOLERANCE * scale:
            sys.exit(f"{name}: max |diff| {error:.3g} > {TOLERANCE} x max |ref| {scale:.3g}")
        names.append(name)
    print("match: " + ", ".join(names))


def check_trace(args):
    manifest = json.loads(pathlib.Path(args.manifest).read_text())
    pipeline = manifest["pipeline"]
    tp = manifest["mesh"]["axes"].get("tp", 1)
    # Ranks that are processes write a file each; threads share one.
    events = [e for path in args.traces
              for e in json.loads(pathlib.Path(path).read_text())["traceEvents"] if e["ph"] == "X"]
    for event in events:
        for key in ("name", "ts", "dur", "pid", "tid"):
            if key not in event:
                sys.exit(f"event {event} has no '{key}'")
    ranks = len(manifest["ranks"])
    for rank in range(ranks):
        actions = pipeline["actions"][rank // tp]
        mine = sorted((e for e in events if e["tid"] == rank), key=lambda e: e["ts"])
        if len(mine) != len(actions) * args.iters:
            sys.exit(f"rank {rank}: {len(mine)} events for {len(actions)} actions x {args.iters}")
        for event, action in zip(mine, actions * args.iters):
            if not event["name"].startswith(action["op"]) or \
                    event["args"]["microbatch"] != action["microbatch"]:
                sys.exit(f"rank {rank}: event '{event['name']}' for action {action}")
    print(f"trace: {len(events)} events, one per action of each of {ranks} ranks")


def run_python(args):
    import shardc
    feeds = dict(np.load(args.inputs))
    np.savez(args.outputs, **shardc.Session(args.artifact, ranks="threads").run(feeds))


def edit(args):
    copy = pathlib.Path(args.copy)
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(args.artifact, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    for field in args.fields:
        path, replaced, value = field.partition("=")
        keys = [int(key) if key.isdigit() else key for key in path.split(".")]
        target = manifest
        for key in keys[:-1]:
            target = target[key]
        if replaced:
            target[keys[-1]] = json.loads(value)
        else:
            del target[keys[-1]]
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("make")
    made.add_argument("--schema", required=True)
    made.add_argument("--shardc", required=True)
    made.add_argument("--model", required=True)
    made.add_argument("--cut", required=True)
    made.add_argument("--out", required=True)
    made.add_argument("--microbatches", type=int, default=1)
    made.add_argument("--tp", type=int, default=1)
    made.add_argument("--dim", action="append", default=[])
    checked = commands.add_parser("check")
    checked.add_argument("expected")
    checked.add_argument("got")
    traced = commands.add_parser("check-trace")
    traced.add_argument("manifest")
    traced.add_argument("traces", nargs="+")
    traced.add_argument("--iters", type=int, default=1)
    python = commands.add_parser("run-python")
    python.add_argument("artifact")
    python.add_argument("inputs")
    python.add_argument("outputs")
    edited = commands.add_parser("edit")
    edited.add_argument("artifact")
    edited.add_argument("copy")
    edited.add_argument("fields", nargs="+")
    args = parser.parse_args()
    {"make": make, "check": check, "check-trace": check_trace, "run-python": run_python,
     "edit": edit}[args.command](args)


if __name__ == "__main__":
    main()
