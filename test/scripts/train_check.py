#!/usr/bin/env python3
"""Trains a fixture with shardc + shardrun and compares it with torch.

The fixture (test/fixtures/training/NAME.*) holds the model, 20 steps of data
and torch's run of the same training: each step's loss and gradient norm,
and every parameter's gradient after the first backward. This script
compiles the training step for a mesh, runs it with `shardrun --train`, and
checks:
  - the loss of each of the first 3 steps within 1e-4 relative of torch's,
    and every loss of the curve within 1e-3 relative (torch's own fp32 and
    fp64 curves agree to 5e-7 on these fixtures);
  - with --dtype bf16|fp16 (mixed precision against torch's fp32 run):
    every loss of the curve within 2e-2 relative, and each of the first 3
    steps' gradient norms within 2e-2 relative;
  - each step's gradient norm within 1e-4 relative for the first 3 steps
    (the gradients' scale: AdamW's update is blind to it, the norm is not);
  - with --gradients: every parameter's gradient after one step within
    1e-5 of torch's, read back as W0 - W1 from a checkpoint of an SGD step
    with lr 1 (each weight put together from the blocks its ranks saved);
  - with --export-check: trains the fixture's weights_after_steps steps,
    writes the trained model with `shardrun --export-onnx`, runs it in
    onnxruntime on step 1's batch and compares the output with torch's
    trained module's (OPT/eval_out3) within 2e-3 of max|torch's|.
With --repeat-batch K each step's batch is its rows K times over (a batch K
times the fixture's): the token-mean loss, its gradients and the curve are
torch's for the rows once, so one reference checks larger batches too
(--microbatches 4 on a reference of batch 2).
A reference of the zoo (test/zoo/training/NAME, make_training_refs.py) names
its export (`onnx`, relative to the reference), the dims to bind (`dims`),
initializers that are no parameter of torch's module (`freeze`), whether
torch exempted the parameters of one dim from weight decay (`no_decay_1d`:
shardc --no-decay-1d) and where outputs are compared (`compare_where`: the positions whose
attention_mask is 1; a padded query's output is padding). Where torch's own
fp32 and fp64 curves disagree by more than 1e-3 (`fp32_vs_fp64_loss`), the
curve's tolerance is that disagreement.
Exit status 0 when every check holds; each failure is printed.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys

import numpy as np


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"train_check: {shlex.join(command)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return result


def optimizer_flags(settings, optimizer, gradients):
    hyper = settings["optimizers"][optimizer]["hyperparameters"]
    if gradients:
        return ["--optimizer", "sgd", "--lr", "1", "--weight-decay", "0"]
    flags = ["--optimizer", optimizer, "--lr", repr(hyper["lr"]),
             "--weight-decay", repr(hyper["weight_decay"])]
    if optimizer == "sgd":
        flags += ["--momentum", repr(hyper["momentum"])]
    else:
        flags += ["--betas", ",".join(map(repr, hyper["betas"])), "--eps", repr(hyper["eps"])]
    return flags


def model_flags(settings, dims):
    """shardc's flags for the reference's export: the dims to bind, what to
    freeze (no parameter of torch's) and the decay exemption torch used."""
    flags = [f"--dim={name}={size}" for name, size in dims.items()]
    if settings.get("freeze"):
        flags.append("--freeze=" + ",".join(settings["freeze"]))
    if settings.get("no_decay_1d"):
        flags.append("--no-decay-1d")
    return flags


def read_safetensors(path):
    """Every tensor of a safetensors file as float32 (the compute-type
    copies of a mixed-precision step are bf16 or fp16); each copy is checked
    equal to its master rounded (check_compute_copies)."""
    with open(path, "rb") as file:
        data = file.read()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = data[8 + length + begin:8 + length + end]
        if entry["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
            values = bits.view(np.float32)
        elif entry["dtype"] == "F16":
            values = np.frombuffer(raw, dtype=np.float16).astype(np.float32)
        else:
            assert entry["dtype"] == "F32", (name, entry["dtype"])
            values = np.frombuffer(raw, dtype=np.float32)
        tensors[name] = values.reshape(entry["shape"])
    check_compute_copies(tensors, path)
    return tensors


def rounded(master, dtype):
    """`master` (float32) rounded to bf16 or f16 as the step casts it (to
    nearest, ties to even), back in float32."""
    if dtype == "f16":
        return master.astype(np.float16).astype(np.float32)
    bits = master.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def check_compute_copies(tensors, path):
    """A mixed-precision step keeps each master's copy in the compute type
    (NAME.bf16, its parts NAME.bf16#K beside NAME#K), which the update
    refreshes: after any step it is the master rounded."""
    for name, copy in tensors.items():
        match = re.fullmatch(r"(.*)\.(bf16|f16)(#\d+)?", name)
        if not match:
            continue
        master = tensors.get(match[1] + (match[3] or ""))
        assert master is not None, f"{path}: {name} has no master beside it"
        if not np.array_equal(copy, rounded(master, match[2])):
            raise AssertionError(f"{path}: {name} is not its master rounded to {match[2]}")


def trained_weights(artifact, checkpoint, initial):
    """Every trained initializer as a checkpoint holds it (`checkpoint`: its
    rank 0 file, the other ranks' beside it): each trained buffer (a whole
    initializer, or one box of a fused one) put in its place from the blocks
    the ranks hold, per the manifest's training.parameters (`blocks`, by
    rank: null where a rank holds none, a pipeline's other stages; replicas
    read once); a stacked expert weight split back into its experts'
    initializers (the entry's parts)."""
    manifest = json.load(open(os.path.join(artifact, "manifest.json")))
    files = {0: read_safetensors(checkpoint)}

    def saved(rank):
        if rank not in files:
            path = os.path.join(os.path.dirname(checkpoint), f"rank{rank}.safetensors")
            files[rank] = read_safetensors(path)
        return files[rank]

    weights, stacks = {}, {}
    for entry in manifest["training"]["parameters"]:
        name = entry["initializer"]
        if name not in weights and "parts" in entry:
            stacks[name] = entry["parts"]
            weights[name] = np.stack([initial[part] for part in stacks[name]]).astype(np.float32)
        if name not in weights:
            weights[name] = np.array(initial[name], dtype=np.float32)
        whole = weights[name]
        placed = set()
        for rank, offsets in enumerate(entry["blocks"]):
            if offsets is None or tuple(offsets) in placed:
                continue
            placed.add(tuple(offsets))
            part = saved(rank)[entry["buffer"]]
            box = tuple(slice(box + offset, box + offset + size) for box, offset, size
                        in zip(entry["box_offsets"], offsets, part.shape))
            whole[box] = part
    for name, parts in stacks.items():
        for expert, part in enumerate(parts):
            weights[part] = weights[name][expert]
    return weights


def initializers(model):
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(model).graph
    return {t.name: numpy_helper.to_array(t) for t in graph.initializer}


def repeated_batches(data_file, rows, repeat, out):
    """The data file with each step's `rows` rows repeated `repeat` times."""
    data = np.load(data_file)
    repeated = {}
    for name in data.files:
        array = data[name]
        steps = array.reshape(len(array) // rows, 1, rows, *array.shape[1:])
        repeated[name] = np.repeat(steps, repeat, axis=1).reshape(-1, *array.shape[1:])
    np.savez(out, **repeated)
    return out


def export_failures(exported, settings, reference, data_file, optimizer, repeat):
    """The exported model's output in onnxruntime on step 1's batch against
    torch's module after the same steps (the first copy of a repeated batch)."""
    import onnxruntime
    data = np.load(data_file)
    rows = settings["batch_size"]
    feeds = {entry["name"]: data[entry["name"]][:rows * repeat] for entry in settings["inputs"]}
    session = onnxruntime.InferenceSession(exported, providers=["CPUExecutionProvider"])
    got = session.run([settings["output"]["name"]], feeds)[0][:rows]
    feeds = {name: value[:rows] for name, value in feeds.items()}
    want = reference[f"{optimizer}/eval_out3"]
    if "compare_where" in settings:
        where = feeds[settings["compare_where"]].astype(bool)
        got, want = got[where], want[where]
    scale = float(np.max(np.abs(want)))
    error = float(np.max(np.abs(got - want)))
    print(f"train_check: the exported model's output is within {error:.2e} of torch's "
          f"(max |torch| {scale:.3g})")
    if not error <= 2e-3 * scale:
        return [f"the exported model's output: max |diff| {error:.2e} > 2e-3 * {scale:.3g}"]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--shardrun", required=True)
    parser.add_argument("--fixture", required=True, help="test/fixtures/training/NAME")
    parser.add_argument("--model", help="another export of the fixture's module (default NAME.onnx)")
    parser.add_argument("--shardc-flag", action="append", default=[],
                        help="one more shardc flag (repeatable)")
    parser.add_argument("--optimizer", choices=["sgd", "adamw"], default="adamw")
    parser.add_argument("--mesh", default="", help="shardc's mesh flags, e.g. '--tp 2 --sp'")
    parser.add_argument("--np", type=int, default=1, help="ranks, as threads of shardrun")
    parser.add_argument("--mpirun", default="",
                        help="run the ranks under MPI: the launcher's words, e.g. 'mpirun -np 2'")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--gradients", action="store_true",
                        help="check every parameter's first gradient instead of the curve")
    parser.add_argument("--export-check", action="store_true",
                        help="train weights_after_steps steps, export ONNX, compare in onnxruntime")
    parser.add_argument("--dtype", choices=["fp32", "bf16", "fp16"], default="fp32",
                        help="shardc's --dtype: the step's compute type (fp32 masters)")
    parser.add_argument("--repeat-batch", type=int, default=1, metavar="K",
                        help="each step's rows K times over (a reference with a batch dim)")
    parser.add_argument("--work", required=True, help="a scratch folder")
    args = parser.parse_args()
    mixed = args.dtype != "fp32"
    if mixed and (args.gradients or args.export_check):
        parser.error("--dtype bf16|fp16 checks the loss curve only (not --gradients or "
                     "--export-check, whose tolerances are fp32's)")

    settings = json.load(open(args.fixture + ".json"))
    reference = np.load(args.fixture + ".ref.npz")
    os.makedirs(args.work, exist_ok=True)
    artifact = os.path.join(args.work, "step")
    model = args.model or os.path.join(os.path.dirname(args.fixture), settings["onnx"])
    dims = dict(settings.get("dims", {}))
    data_file = args.fixture + ".data.npz"
    if args.repeat_batch > 1:
        if "batch" not in dims:
            parser.error(f"--repeat-batch: {args.fixture} binds no batch dim")
        dims["batch"] *= args.repeat_batch
        data_file = repeated_batches(data_file, settings["batch_size"], args.repeat_batch,
                                     os.path.join(args.work, "repeated.data.npz"))
    flags = model_flags(settings, dims)
    run([args.shardc, model, *flags, "--train", "--loss", settings["loss"]["spec"],
         *optimizer_flags(settings, args.optimizer, args.gradients), *shlex.split(args.mesh),
         "--dtype", args.dtype, *args.shardc_flag, "-o", artifact])
    steps = 1 if args.gradients else args.steps
    if args.export_check:
        steps = settings["weights_after_steps"]
    exported = os.path.join(args.work, "trained.onnx")
    log = os.path.join(args.work, "loss.jsonl")
    checkpoint = os.path.join(args.work, "checkpoint")
    command = [args.shardrun, artifact, "--train", "--data", data_file,
               "--steps", str(steps), "--log", log]
    if args.gradients:
        command += ["--save", checkpoint]
    if args.export_check:
        command += ["--export-onnx", exported]
    if args.mpirun:
        command = shlex.split(args.mpirun) + command
    elif args.np > 1:
        command += ["--np", str(args.np)]
    run(command)

    failures = []
    logged = [json.loads(line) for line in open(log)]
    if [entry["step"] for entry in logged] != list(range(1, steps + 1)):
        failures.append(f"the log has steps {[e['step'] for e in logged]}, expected 1..{steps}")
    optimizer = "sgd" if args.gradients else args.optimizer
    losses = reference[f"{optimizer}/losses"]
    norms = reference[f"{optimizer}/grad_norm"]
    curve = max(1e-3, settings["fp32_vs_fp64_loss"][optimizer]["max_rel"])
    worst = 0.0
    for entry in logged:
        step = entry["step"]
        want, got = float(losses[step - 1]), float(entry["loss"])
        tolerance = 2e-2 if mixed else 1e-4 if step <= 3 else curve
        worst = max(worst, abs(got - want) / abs(want))
        if not abs(got - want) <= tolerance * abs(want):
            failures.append(f"step {step}: loss {got:.8g}, torch {want:.8g} "
                            f"(relative {abs(got - want) / abs(want):.2e} > {tolerance})")
        if entry["grad_norm"] is None:
            # The log writes a non-finite norm as null: under fp16 loss
            # scaling that step was skipped, and torch's fp32 run took it.
            failures.append(f"step {step}: non-finite gradients (the step was skipped)")
            continue
        if step <= 3:
            want, got = float(norms[step - 1]), float(entry["grad_norm"])
            tolerance = 2e-2 if mixed else 1e-4
            if not abs(got - want) <= tolerance * abs(want):
                failures.append(f"step {step}: grad_norm {got:.8g}, torch {want:.8g} "
                                f"(relative {abs(got - want) / abs(want):.2e} > {tolerance})")

    if args.gradients:
        before = initializers(model)
        after = trained_weights(artifact, os.path.join(checkpoint, "rank0.safetensors"), before)
        # Another export names its folded copies anew: compare the names it kept.
        names = [key.split("/", 2)[2] for key in reference.keys()
                 if key.startswith("sgd/grad/") and key.split("/", 2)[2] in before]
        for name in names:
            want = reference[f"sgd/grad/{name}"]
            if name not in after:
                failures.append(f"the checkpoint has no parameter '{name}'")
                continue
            got = before[name].astype(np.float32) - after[name]
            error = float(np.max(np.abs(got - want)))
            if not error <= 1e-5:
                failures.append(f"gradient of '{name}': max |diff| {error:.2e} > 1e-5")
        print(f"train_check: {len(names)} gradients compared")

    if args.export_check:
        failures += export_failures(exported, settings, reference, data_file, optimizer,
                                    args.repeat_batch)

    name = os.path.basename(args.fixture)
    what = "gradients" if args.gradients else f"{args.optimizer}, {steps} steps"
    if args.repeat_batch > 1:
        what += f", each batch {args.repeat_batch} times"
    for failure in failures:
        print(f"train_check: {name} ({what}, mesh '{args.mesh}'): {failure}")
    if failures:
        sys.exit(1)
    ranks = "MPI" if args.mpirun else "threads"
    if mixed:
        print(f"train_check: {name} ({what}, {args.dtype}, mesh '{args.mesh}', {ranks}): "
              f"every loss within {worst:.2e} of torch's fp32 curve")
        return
    print(f"train_check: {name} ({what}, mesh '{args.mesh}', {ranks}): "
          f"every loss and gradient matches torch")


if __name__ == "__main__":
    main()
