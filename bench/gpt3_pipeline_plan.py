#!/usr/bin/env python3
"""Pipeline planning benchmark: shardc --pp on a GPT-3-175B-shaped graph.

The model is bench/gpt3_plan.py's (96 layers, hidden 12288, 96 heads,
sequence 2048, weights absent), stored as bf16 (`--dtype bf16`). For each
configuration (default `--tp 8 --pp 4` and `--tp 8 --pp 16 --dp 8`, 8
micro-batches of one sequence per data-parallel rank) it times the whole
`shardc --emit=partitioned -o /dev/null --report r.json` process for 12,
24, 48 and 96 layers (median of --repeats runs), and from the 96-layer
report prints: the fullest rank's memory against 80 GB, the estimated
slowest stage against the mean stage (embedding and LM head counted, as
the stage search estimates them), the slowest stage of Megatron-LM's
uniform layer split against ours (both priced with the report's per-op
costs), the step and its bubble beside the schedule's formula, and a row
per stage (its layers, memory, the search's compute C and send X, the
report's compute and collectives, its last ONNX node).

With --train it plans the training step instead (`--train --loss
causal-lm:logits`, bf16 compute on fp32 masters, AdamW), by default the
training issue's `--tp 8 --pp 16 --dp 8 --microbatches 64` with 1F1B, on
80 GB devices with `--recompute` (selective, full, or auto: full on the
stages that do not fit otherwise); memory then counts the gradients and
optimizer state too, and each stage's optimizer bytes are set against
ZeRO's 12Ψ/(t·d) (`--zero S`: the stage over dp; 12Ψ/t without).

    .venv/bin/python bench/gpt3_pipeline_plan.py [--layers 12,24,48,96] [--repeats 3]
                                                 [--train] [--recompute R] [--microbatches M]
                                                 [--zero S]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import onnx

from gpt3_plan import REPO, gpt3

DEVICE_BYTES = 80e9  # an H100 or A100 80GB
CONFIGS = {"tp8-pp4": ["--tp", "8", "--pp", "4"],
           "tp8-pp16-dp8": ["--tp", "8", "--pp", "16", "--dp", "8"]}


def data_parallel(flags):
    return int(flags[flags.index("--dp") + 1]) if "--dp" in flags else 1


def plan(shardc, model_path, flags, microbatches, report_path, repeats, train, recompute, zero):
    # --untie: the weights are absent, so no bytes to compare for ties.
    training = (["--train", "--loss", "causal-lm:logits", "--untie", "--recompute", recompute,
                 "--device-memory", f"{DEVICE_BYTES / 1e9:.0f}GB", "--zero", str(zero)]
                if train else [])
    command = [shardc, str(model_path), *flags, *training, "--microbatches", str(microbatches),
               "--dtype", "bf16", "--emit=partitioned", "-o", "/dev/null",
               "--report", str(report_path)]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run = subprocess.run(command, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if run.returncode != 0:
            sys.exit(f"{' '.join(command)} failed: {run.stderr.strip()}")
    return statistics.median(times)


def zero_figures(report, zero):
    """Each stage's optimizer bytes per rank against ZeRO's 12Ψ/(t·d) (Ψ
    the stage's parameters, AdamW with fp32 masters; d = 1 without ZeRO),
    the worst ratio last."""
    mesh = report["mesh"]["axes"] if "mesh" in report else {}
    t, d = mesh.get("tp", 1), mesh.get("dp", 1) if zero else 1
    worst = 1.0
    for stage in report["pipeline"]["stages"]:
        formula = 12 * stage["parameters"] / (t * d)
        ratio = stage["optimizer_bytes"] / formula
        worst = ratio if abs(ratio - 1) > abs(worst - 1) else worst
    print(f"  ZeRO {zero}: optimizer bytes per rank / (12 x stage parameters / (tp {t} x dp {d})): "
          f"worst stage x{worst:.4f}")


def describe(name, report):
    pipeline = report["pipeline"]
    schedule, uniform = pipeline["schedule"], pipeline["uniform_split"]
    # A training step's ranks also hold gradients and optimizer state.
    def held(rank):
        return rank.get("total_bytes", rank["param_bytes"] + rank["peak_activation_bytes"])
    fullest = max(report["ranks"], key=held)
    memory = held(fullest)
    state = fullest.get("grad_bytes", 0) + fullest.get("optimizer_bytes", 0)
    recomputed = sum(s.get("recomputed", False) for s in pipeline["stages"])
    print(f"{name}, {len(report['layers'])} layers, {schedule['stages']} stages, "
          f"{schedule['microbatches']} micro-batches, recompute "
          f"{schedule.get('recompute', '-')} ({recomputed} stages computed again):")
    print(f"  fullest rank {fullest['rank']}: {fullest['param_bytes'] / 1e9:.1f} GB weights + "
          f"{state / 1e9:.1f} GB gradients and optimizer state + "
          f"{fullest['peak_activation_bytes'] / 1e9:.1f} GB activations = {memory / 1e9:.1f} GB "
          f"({'fits' if memory <= DEVICE_BYTES else 'OVER'} {DEVICE_BYTES / 1e9:.0f} GB)")
    print(f"  stage estimate: slowest {schedule['slowest_stage_seconds'] * 1e3:.2f} ms, mean "
          f"{schedule['mean_stage_seconds'] * 1e3:.2f} ms "
          f"(x{schedule['slowest_stage_seconds'] / schedule['mean_stage_seconds']:.3f})")
    print(f"  uniform split's slowest stage {uniform['slowest_seconds'] * 1e3:.2f} ms, ours "
          f"{uniform['ours_slowest_seconds'] * 1e3:.2f} ms "
          f"(ours x{uniform['ours_slowest_seconds'] / uniform['slowest_seconds']:.3f})")
    print(f"  step {schedule['step_seconds'] * 1e3:.1f} ms, bubble {schedule['bubble']:.1%} "
          f"(formula {schedule['bubble_formula']} = {schedule['bubble_formula_value']:.1%})")
    print(f"  {'stage':>5s} {'layers':>9s} {'GB':>6s} {'C ms':>8s} {'X ms':>7s} "
          f"{'compute':>8s} {'comm':>8s}  last node")
    for stage in pipeline["stages"]:
        layers = stage["layers"]
        span = f"{layers[0]}-{layers[-1]}" if layers else "-"
        held = stage["memory_bytes"] + stage.get("grad_bytes", 0) + stage.get("optimizer_bytes", 0)
        print(f"  {stage['stage']:5d} {span:>9s} {held / 1e9:6.1f} "
              f"{stage['seconds'] * 1e3:8.2f} {stage['send_seconds'] * 1e3:7.2f} "
              f"{stage['compute_seconds'] * 1e3:8.2f} {stage['comm_seconds'] * 1e3:8.2f}  "
              f"{stage['last_node']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", default="12,24,48,96")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--microbatches", type=int)
    parser.add_argument("--configs")
    parser.add_argument("--train", action="store_true", help="plan the training step")
    parser.add_argument("--recompute", default="selective",
                        help="with --train: selective, full or auto (auto under 80 GB)")
    parser.add_argument("--zero", type=int, choices=[0, 1, 2, 3], default=0,
                        help="with --train: the ZeRO stage over dp")
    parser.add_argument("--shardc", default=str(REPO / "build" / "bin" / "shardc"))
    args = parser.parse_args()
    args.microbatches = args.microbatches or (64 if args.train else 8)
    args.configs = args.configs or ("tp8-pp16-dp8" if args.train else ",".join(CONFIGS))
    counts = [int(n) for n in args.layers.split(",")]
    rows, reports = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for name in args.configs.split(","):
            flags = CONFIGS[name]
            # One sequence per micro-batch on each data-parallel rank.
            batch = args.microbatches * data_parallel(flags)
            for layers in counts:
                model_path = tmp / f"gpt3_{layers}_b{batch}.onnx"
                if not model_path.exists():
                    # Training keeps fp32 masters; inference stores bf16.
                    weights = onnx.TensorProto.FLOAT if args.train else onnx.TensorProto.FLOAT16
                    onnx.save_model(gpt3(layers, batch=batch, weight_type=weights),
                                    str(model_path))
                report_path = tmp / f"{name}_{layers}.json"
                seconds = plan(args.shardc, model_path, flags, args.microbatches, report_path,
                               args.repeats, args.train, args.recompute, args.zero)
                rows.append((name, layers, seconds))
                reports[name] = json.loads(report_path.read_text())

    print(f"{'config':14s} {'layers':>6s} {'plan s':>8s} {'s/layer':>8s}   (whole process, median)")
    for name, layers, seconds in rows:
        print(f"{name:14s} {layers:6d} {seconds:8.2f} {seconds / layers:8.4f}")
    for name in dict.fromkeys(row[0] for row in rows):
        mine = [row for row in rows if row[0] == name]
        first, last = mine[0], mine[-1]
        slow = [f"{layers} layers {seconds:.1f} s" for _, layers, seconds in mine if seconds > 10]
        print(f"{name}: time x{last[2] / first[2]:.2f} for layers x{last[1] / first[1]:.0f}"
              + (f"; NOTE over the 10 s target: {', '.join(slow)}" if slow else ""))
    for name, report in reports.items():
        describe(name, report)
        if args.train:
            zero_figures(report, args.zero)


if __name__ == "__main__":
    main()
