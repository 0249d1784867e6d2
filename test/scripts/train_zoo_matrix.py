#!/usr/bin/env python3
"""Every causal-LM zoo export trained on every mesh against torch: the full matrix.

For each reference of test/zoo/training (make_training_refs.py), each
optimizer (sgd, adamw) and each mesh (one device, --tp 2, --tp 2 --sp,
--dp 2, --dp 2 --tp 2, --microbatches 2, --microbatches 4 on each batch
twice over (the zoo's batch is 2: train_check.py --repeat-batch), --ep 2 for
the MoE models, ZeRO: --dp 2 --zero 1/2/3, --dp 2 --tp 2 --zero 3, --dp 4
--zero 3 (also in groups of 2) on each batch twice over, and over a
pipeline's stages; pipelines: --pp 2, --pp 2 --tp 2, --pp 4
with zb-h1, --pp 2 interleaved with 2 virtual stages), runs train_check.py: the 20-step curve, and with --export
also the trained model's outputs after 3 steps (shardrun --export-onnx, in
onnxruntime). Ranks are threads, or processes with --mpi. Prints one line
per run and a summary; exits 1 when any run fails. Too slow for CI (about
half an hour on 2 cores); E2E/training/train_zoo_torch.test runs a slice.

    .venv/bin/python test/scripts/train_zoo_matrix.py --build build [--jobs 2]
        [--only gpt2.dynamo,...] [--optimizer adamw] [--mesh tp2,dp2] [--export] [--mpi]
        [--dtype bf16]
"""
import argparse
import concurrent.futures
import glob
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ZOO = os.path.join(HERE, "..", "zoo", "training")
FREE_LINKS = os.path.join(HERE, "free_links.device.json")
MESHES = {  # name: (shardc flags, ranks, times each batch is repeated)
    "one": ("", 1, 1),
    "tp2": ("--tp 2", 2, 1),
    "tp2sp": ("--tp 2 --sp", 2, 1),
    "dp2": ("--dp 2", 2, 1),
    "dp2tp2": ("--dp 2 --tp 2", 4, 1),
    "mb2": ("--microbatches 2", 1, 1),
    "mb4": ("--microbatches 4", 1, 2),
    "ep2": ("--ep 2", 2, 1),
    "z1": ("--dp 2 --zero 1", 2, 1),
    "z2": ("--dp 2 --zero 2", 2, 1),
    "z3": ("--dp 2 --zero 3", 2, 1),
    "dp2tp2z3": ("--dp 2 --tp 2 --zero 3", 4, 1),
    "dp4z3": ("--dp 4 --zero 3", 4, 2),
    # Hybrid sharding: two ZeRO groups of 2 dp ranks.
    "dp4z3g2": ("--dp 4 --zero 3 --zero-group 2", 4, 2),
    # Pipelines that train, priced with free links (free_links.device.json)
    # so that the stages balance compute and cut inside these tiny models
    # (on a real device's links the cheapest cut of a tiny model is by its
    # loss).
    "pp2": (f"--pp 2 --microbatches 2 --device {FREE_LINKS}", 2, 1),
    "pp2tp2": (f"--pp 2 --tp 2 --microbatches 2 --device {FREE_LINKS}", 4, 1),
    "pp4zb": (f"--pp 4 --microbatches 4 --schedule zb-h1 --device {FREE_LINKS}", 4, 2),
    "pp2v2": (f"--pp 2 --microbatches 2 --schedule interleaved --virtual-stages 2 "
              f"--device {FREE_LINKS}", 2, 1),
    "pp4": (f"--pp 4 --microbatches 4 --device {FREE_LINKS}", 4, 2),
    "pp4zbh2": (f"--pp 4 --microbatches 4 --schedule zb-h2 --device {FREE_LINKS}", 4, 2),
    "dp2pp2tp2": (f"--dp 2 --pp 2 --tp 2 --microbatches 2 --device {FREE_LINKS}", 8, 2),
    # Each stage's backward computes its forward again (--recompute full).
    "pp2full": (f"--pp 2 --tp 2 --microbatches 2 --recompute full --device {FREE_LINKS}", 4, 1),
    # ZeRO over each stage's dp ranks.
    "dp2pp2z2": (f"--dp 2 --pp 2 --zero 2 --microbatches 2 --device {FREE_LINKS}", 4, 2),
    "dp2pp2z3": (f"--dp 2 --pp 2 --zero 3 --microbatches 2 --device {FREE_LINKS}", 4, 2),
}
MOE = ("mixtral", "qwen2_moe")


def check(args, model, optimizer, mesh):
    flags, ranks, repeat = MESHES[mesh]
    bin_dir = os.path.join(args.build, "bin")
    command = [sys.executable, os.path.join(HERE, "train_check.py"),
               "--shardc", os.path.join(bin_dir, "shardc"),
               "--shardrun", os.path.join(bin_dir, "shardrun"),
               "--fixture", os.path.join(ZOO, model), "--optimizer", optimizer,
               "--mesh", flags, "--repeat-batch", str(repeat),
               "--work", os.path.join(args.work, f"{model}-{optimizer}-{mesh}")]
    if args.export:
        command.append("--export-check")
    if args.dtype:
        command += ["--dtype", args.dtype]
    if ranks > 1:
        command += (["--mpirun", f"env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                                 f"mpirun --oversubscribe -np {ranks}"]
                    if args.mpi else ["--np", str(ranks)])
    start = time.time()
    result = subprocess.run(command, capture_output=True, text=True)
    lines = (result.stdout + result.stderr).strip().splitlines()
    return result.returncode == 0, time.time() - start, lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, help="the build folder (its bin/ has shardc)")
    parser.add_argument("--work", default="/tmp/train_zoo_matrix")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--only", help="comma-separated references (default: all)")
    parser.add_argument("--optimizer", choices=["sgd", "adamw"], help="default: both")
    parser.add_argument("--mesh", help=f"comma-separated, of {','.join(MESHES)} (default: all)")
    parser.add_argument("--export", action="store_true",
                        help="3 steps and the exported model's outputs instead of the curve")
    parser.add_argument("--mpi", action="store_true", help="ranks as mpirun processes")
    parser.add_argument("--dtype", choices=["bf16", "fp16"],
                        help="mixed precision (the curve against torch's fp32 one)")
    args = parser.parse_args()
    models = sorted(os.path.basename(p)[:-len(".json")] for p in glob.glob(os.path.join(ZOO, "*.json")))
    if args.only:
        wanted = args.only.split(",")
        unknown = sorted(set(wanted) - set(models))
        if unknown:
            sys.exit(f"train_zoo_matrix: no reference for {', '.join(unknown)}")
        models = wanted
    meshes = args.mesh.split(",") if args.mesh else list(MESHES)
    unknown = sorted(set(meshes) - set(MESHES))
    if unknown:
        sys.exit(f"train_zoo_matrix: unknown mesh {', '.join(unknown)} (of {', '.join(MESHES)})")
    optimizers = [args.optimizer] if args.optimizer else ["sgd", "adamw"]
    runs = [(m, o, mesh) for m in models for o in optimizers for mesh in meshes
            if mesh != "ep2" or m.split(".")[0] in MOE]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(check, args, *run): run for run in runs}
        for future in concurrent.futures.as_completed(futures):
            model, optimizer, mesh = futures[future]
            ok, seconds, lines = future.result()
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {model} {optimizer} {mesh} ({seconds:.1f} s)", flush=True)
            if not ok:
                print("    " + "\n    ".join(lines[-6:]), flush=True)
    print(f"train_zoo_matrix: {len(runs) - failed} of {len(runs)} runs match torch")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
