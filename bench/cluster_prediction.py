#!/usr/bin/env python3
"""Predicted against published: Megatron-LM's training runs on A100s.

Narayanan et al. (SC'21) trained GPT models on DGX A100 nodes and published
the TFLOP/s per GPU they reached, counting the step's FLOPs with their eq. 3
(full recompute): 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). Each run is
compiled here with its own mesh (`--device a100 --dtype bf16 --recompute
full`, sequence 2048, vocabulary 51200, one sequence per micro-batch, 1F1B),
and eq. 3 over the report's est_step_seconds and the GPU count is set
against the published figure. Stages hold Megatron-LM's uniform split
(layers / pp each, the embedding with the first and the LM head with the
last: `--pp-split` at those layers' ends). The table prints each run's prediction, the
published figure, the error and the plan time (the whole shardc process);
the Llama-3-405B shape on 8,192 H100s is printed beside Meta's published
38-43% MFU (a different setting: reported, not compared).

    .venv/bin/python bench/cluster_prediction.py [--runs NAME,...] [--shardc PATH]
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import onnx

from gpt3_plan import REPO, gpt3

SEQ, VOCAB = 2048, 51200
# name: (hidden, heads, layers, tp, pp, dp, global batch, published TFLOP/s per GPU)
RUNS = {
    "gpt3-175b-384": (12288, 96, 96, 8, 16, 3, 1536, 153),
    "gpt3-175b-768": (12288, 96, 96, 8, 16, 6, 1536, 149),
    "gpt3-175b-1536": (12288, 96, 96, 8, 16, 12, 1536, 141),
    "gpt-1t-3072": (25600, 160, 128, 8, 64, 6, 3072, 163),
}


def eq3(batch, hidden, layers):
    """Narayanan et al. eq. 3: a step's FLOPs with full recompute."""
    return (96 * batch * SEQ * layers * hidden ** 2
            * (1 + SEQ / (6 * hidden) + VOCAB / (16 * layers * hidden)))


def uniform_cuts(graph, layers, stages):
    """Megatron-LM's split: layers/stages layers a stage (the embedding with
    the first, the LM head with the last), as the ONNX nodes that end each
    stage but the last: the residual add feeding a layer's first norm."""
    norms = [node for node in graph.node if node.op_type == "LayerNormalization"]
    producer = {output: node.name for node in graph.node for output in node.output}
    per_stage = layers // stages
    # Layer k's first norm is norms[2k]; its input is layer k-1's last add.
    return [producer[norms[2 * per_stage * stage].input[0]] for stage in range(1, stages)]


def predict(shardc, folder, name, run):
    hidden, heads, layers, tp, pp, dp, batch, published = run
    model = folder / f"{name}.onnx"
    proto = gpt3(layers, hidden=hidden, heads=heads, seq=SEQ, vocab=VOCAB, batch=batch,
                 weight_type=onnx.TensorProto.FLOAT)
    onnx.save_model(proto, str(model))
    cuts = ",".join(uniform_cuts(proto.graph, layers, pp))
    report = folder / f"{name}.json"
    command = [shardc, str(model), "--device", "a100", "--dtype", "bf16", "--train",
               "--loss", "causal-lm:logits", "--untie", "--recompute", "full",
               "--tp", str(tp), "--pp", str(pp), "--dp", str(dp),
               "--microbatches", str(batch // dp), "--schedule", "1f1b", "--pp-split", cuts,
               "--emit=partitioned", "-o", "/dev/null", "--report", str(report)]
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{name}: {' '.join(command)} failed: {result.stderr.strip()}")
    totals = json.loads(report.read_text())["totals"]
    gpus = tp * pp * dp
    predicted = eq3(batch, hidden, layers) / (totals["est_step_seconds"] * gpus) / 1e12
    return predicted, published, seconds, totals


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default=",".join(RUNS))
    parser.add_argument("--shardc", default=str(REPO / "build" / "bin" / "shardc"))
    args = parser.parse_args()
    print(f"{'run':16s} {'GPUs':>5s} {'predicted':>9s} {'published':>9s} {'error':>7s} "
          f"{'step s':>8s} {'MFU':>6s} {'plan s':>7s}   (TFLOP/s per GPU, eq. 3)")
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.runs.split(","):
            run = RUNS[name]
            predicted, published, seconds, totals = predict(args.shardc, pathlib.Path(tmp),
                                                            name, run)
            error = predicted / published - 1
            errors.append(abs(error))
            print(f"{name:16s} {run[3] * run[4] * run[5]:5d} {predicted:9.1f} {published:9d} "
                  f"{error:+7.1%} {totals['est_step_seconds']:8.2f} {totals['est_mfu']:6.1%} "
                  f"{seconds:7.1f}")
    print(f"largest error {max(errors):.1%}, mean {sum(errors) / len(errors):.1%}")


if __name__ == "__main__":
    main()
