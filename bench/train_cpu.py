#!/usr/bin/python3
"""CPU benchmark: a GPT-2-small-shaped training step, shardc against torch.

Builds (into a temporary folder, not the repo) a GPT-2-small-shaped torch
module (12 layers, hidden 768, 12 heads, sequence 128, vocabulary 50257,
LM head tied to the token embedding), exports it with torch's TorchScript
exporter, and in the same run times:
  - torch's eager training step of that module (forward, causal-LM loss,
    backward, AdamW step) on 2 threads;
  - `shardrun --train` of `shardc --train` on the export, one rank on 2
    threads;
  - with --scaling: one rank on 1 thread, and --dp 2 and --tp 2 as 2 rank
    threads of 1 thread each;
  - with --zero: --dp 2 plain and at ZeRO stages 1, 2 and 3, each as 2 rank
    threads of 1 thread (the training issue's ZeRO targets: stage 3 within
    1.25x stage 2's step, stages 1 and 2 within 5% of plain dp), with the
    peak RSS of the process (both ranks) and each plan's per-rank state;
  - with --pipeline: batch 8 in 8 micro-batches, one rank of 1 thread
    (gradient accumulation) against --pp 2 as 2 rank threads of 1 thread,
    with 1f1b and zb-h1: each step's gain against the predicted
    p*m/(m+p-1), and each rank's measured idle share, from a --trace of
    the artifact run on one batch (1 - the rank's F, B, W and update
    seconds over the step's), beside the compiler's predicted bubble.
Every configuration trains the same batches (batch 4 x 128, AdamW); each
figure is the median step time over --steps steps after --warmup untimed
ones (shardrun's --log gives each step's milliseconds). Each configuration
runs in its own process, so its peak RSS is its own. Prints the medians, the
ratios against the targets of the training issue (shardc >= 1.0x torch on 2
threads; dp=2 and tp=2 >= 1.6x one rank on 1 thread) and the first losses of
torch and shardc side by side (the same model and data: they agree).

Run with Debian's python3-torch (/usr/bin/python3), whose TorchScript
exporter writes the model; Debian's torch computes with a reference BLAS
(about 4 GFLOP/s here), so the torch steps are timed with --torch-python, an
interpreter with PyPI's torch (MKL-DNN and a tuned BLAS), the peer a user
would train with. Not part of make test.

    /usr/bin/python3 bench/train_cpu.py --build build --torch-python VENV/bin/python
                                        [--layers 12] [--steps 5] [--warmup 2] [--scaling] [--zero]
"""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

SEQ, VOCAB, HIDDEN, HEADS = 128, 50257, 768, 12
BATCH = 4  # 8 with --pipeline (8 micro-batches)


def gpt2_module(layers):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(HIDDEN)
            self.c_attn = nn.Linear(HIDDEN, 3 * HIDDEN)
            self.c_proj = nn.Linear(HIDDEN, HIDDEN)
            self.ln_2 = nn.LayerNorm(HIDDEN)
            self.c_fc = nn.Linear(HIDDEN, 4 * HIDDEN)
            self.c_out = nn.Linear(4 * HIDDEN, HIDDEN)
            mask = torch.tril(torch.ones(SEQ, SEQ, dtype=torch.bool))
            self.register_buffer("mask", mask, persistent=False)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(HIDDEN, dim=2)
            heads = lambda t: t.view(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)
            q, k, v = heads(q), heads(k), heads(v)
            scores = q @ k.transpose(-1, -2) / math.sqrt(HIDDEN // HEADS)
            scores = scores.masked_fill(~self.mask[:s, :s], torch.finfo(scores.dtype).min)
            attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, HIDDEN)
            x = x + self.c_proj(attended)
            return x + self.c_out(nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class Gpt2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, HIDDEN)
            self.wpe = nn.Embedding(SEQ, HIDDEN)
            self.h = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(HIDDEN)

        def forward(self, input_ids):
            positions = torch.arange(input_ids.shape[1])
            x = self.wte(input_ids) + self.wpe(positions)
            for block in self.h:
                x = block(x)
            return self.ln_f(x) @ self.wte.weight.t()

    torch.manual_seed(0)
    model = Gpt2()
    for parameter in model.parameters():
        nn.init.normal_(parameter, std=0.02)
    return model.eval()


def torch_worker(folder, layers, steps, threads):
    """Runs in its own process: times torch's training steps."""
    import torch
    torch.set_num_threads(threads)
    model = gpt2_module(layers)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = np.load(os.path.join(folder, "data.npz"))
    times, losses = [], []
    for step in range(steps):
        ids = torch.from_numpy(data["input_ids"][step * BATCH:(step + 1) * BATCH])
        labels = torch.from_numpy(data["labels"][step * BATCH:(step + 1) * BATCH])
        start = time.perf_counter()
        optimizer.zero_grad()
        logits = model(ids)
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, VOCAB),
                                                 labels[:, 1:].reshape(-1), ignore_index=-100)
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"ms": [t * 1e3 for t in times], "losses": losses, "peak_rss": peak,
                      "version": torch.__version__}))


def run_child(command, env=None):
    """Runs `command`, returns (stdout, peak RSS of that process in bytes)."""
    with tempfile.TemporaryFile(mode="w+") as err:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        out = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            err.seek(0)
            sys.exit(f"train_cpu: {' '.join(command)} failed:\n{out}{err.read()}")
    return out, usage.ru_maxrss * 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--steps", type=int, default=5, help="timed steps")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--zero", action="store_true", help="only the ZeRO stages at dp=2")
    parser.add_argument("--pipeline", action="store_true",
                        help="only --pp 2 --microbatches 8 (1f1b, zb-h1) against one rank")
    parser.add_argument("--torch-python", default=sys.executable,
                        help="the interpreter whose torch the torch steps run on")
    parser.add_argument("--torch-worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    global BATCH
    if args.pipeline:
        BATCH = 8
    total = args.warmup + args.steps
    if args.torch_worker:
        return torch_worker(args.torch_worker, args.layers, total, int(os.environ["BENCH_THREADS"]))

    import torch
    folder = tempfile.mkdtemp(prefix="shardc-train-bench-")
    rng = np.random.default_rng(0)
    ids = rng.integers(0, VOCAB, size=(total * BATCH, SEQ), dtype=np.int64)
    np.savez(os.path.join(folder, "data.npz"), input_ids=ids, labels=ids)
    model = gpt2_module(args.layers)
    onnx_path = os.path.join(folder, "gpt2.onnx")
    torch.onnx.export(model, (torch.from_numpy(ids[:BATCH]),), onnx_path, opset_version=17,
                      input_names=["input_ids"], output_names=["logits"],
                      do_constant_folding=False)
    shardc = os.path.join(args.build, "bin", "shardc")
    shardrun = os.path.join(args.build, "bin", "shardrun")

    def compile_step(name, mesh):
        start = time.perf_counter()
        run_child([shardc, onnx_path, "--train", "--loss", "causal-lm:logits", "--lr", "1e-4",
                   *mesh, "-o", os.path.join(folder, name)])
        return time.perf_counter() - start

    def train(name, threads, ranks):
        log = os.path.join(folder, name + ".jsonl")
        command = [shardrun, os.path.join(folder, name), "--train", "--data",
                   os.path.join(folder, "data.npz"), "--steps", str(total), "--log", log,
                   "--threads", str(threads)]
        if ranks > 1:
            command += ["--np", str(ranks)]
        _, peak = run_child(command)
        entries = [json.loads(line) for line in open(log)]
        return {"ms": [e["ms"] for e in entries], "losses": [e["loss"] for e in entries],
                "peak_rss": peak}

    def torch_run(threads):
        out, peak = run_child([args.torch_python, __file__, "--layers", str(args.layers), "--steps",
                               str(args.steps), "--warmup", str(args.warmup), "--torch-worker",
                               folder], env=dict(os.environ, BENCH_THREADS=str(threads)))
        result = json.loads(out.strip().splitlines()[-1])
        result["peak_rss"] = peak
        return result

    median = lambda run: float(np.median(run["ms"][args.warmup:]))
    if args.zero:
        return zero_stages(args, compile_step, train, median, folder)
    if args.pipeline:
        return pipeline_schedules(compile_step, train, median, folder, ids, shardrun)
    seconds = compile_step("one", [])
    print(f"shardc --train compiled the {args.layers}-layer step in {seconds:.1f} s")
    torch2 = torch_run(2)
    print(f"torch {torch2['version']} from {args.torch_python}")
    shard2 = train("one", 2, 1)
    print(f"torch eager, 2 threads:     {median(torch2):8.1f} ms/step, peak RSS "
          f"{torch2['peak_rss'] / 2**20:.0f} MiB")
    print(f"shardrun, 1 rank x 2 threads: {median(shard2):8.1f} ms/step, peak RSS "
          f"{shard2['peak_rss'] / 2**20:.0f} MiB")
    ratio = median(torch2) / median(shard2)
    print(f"shardc / torch throughput: {ratio:.2f} (target >= 1.0: "
          f"{'met' if ratio >= 1.0 else 'NOT met'})")
    print("first losses, torch:  ", " ".join(f"{x:.5f}" for x in torch2["losses"][:3]))
    print("first losses, shardc: ", " ".join(f"{x:.5f}" for x in shard2["losses"][:3]))
    if args.scaling:
        one = train("one", 1, 1)
        print(f"shardrun, 1 rank x 1 thread: {median(one):8.1f} ms/step")
        for name, mesh in (("dp2", ["--dp", "2"]), ("tp2", ["--tp", "2"])):
            compile_step(name, mesh)
            ranks = train(name, 2, 2)
            ratio = median(one) / median(ranks)
            print(f"{name}, 2 ranks x 1 thread: {median(ranks):8.1f} ms/step, {ratio:.2f}x one "
                  f"rank x 1 thread (target >= 1.6: {'met' if ratio >= 1.6 else 'NOT met'}), "
                  f"peak RSS {ranks['peak_rss'] / 2**20:.0f} MiB")


def zero_stages(args, compile_step, train, median, folder):
    """--dp 2 plain and at each ZeRO stage, 2 rank threads of 1 thread."""
    times = {}
    for stage in (0, 1, 2, 3):
        name = f"zero{stage}"
        report = os.path.join(folder, name + ".json")
        seconds = compile_step(name, ["--dp", "2", "--zero", str(stage), "--report", report])
        rank = json.load(open(report))["ranks"][0]
        run = train(name, 1, 2)
        times[stage] = median(run)
        print(f"dp2 zero {stage}: {times[stage]:8.1f} ms/step, peak RSS (2 ranks) "
              f"{run['peak_rss'] / 2**20:.0f} MiB; per rank weights "
              f"{rank['param_bytes'] / 2**20:.0f} MiB, gradients {rank['grad_bytes'] / 2**20:.0f} "
              f"MiB, optimizer {rank['optimizer_bytes'] / 2**20:.0f} MiB; compiled in "
              f"{seconds:.1f} s; first losses {' '.join(f'{x:.5f}' for x in run['losses'][:3])}")
    for stage in (1, 2):
        ratio = times[stage] / times[0]
        print(f"zero {stage} / plain dp: {ratio:.3f} (target <= 1.05: "
              f"{'met' if ratio <= 1.05 else 'NOT met'})")
    ratio = times[3] / times[2]
    print(f"zero 3 / zero 2: {ratio:.3f} (target <= 1.25: {'met' if ratio <= 1.25 else 'NOT met'})")


def idle_shares(trace_path):
    """Per rank, 1 - its compute actions' seconds over each iteration's
    span, the median over the iterations (shardrun --trace events)."""
    events = json.load(open(trace_path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    compute = ("forward", "backward_input", "backward_weight", "update")
    spans, busy = {}, {}
    for event in events:
        if event.get("ph") != "X" or event.get("cat") != "pipeline":
            continue
        key = (event["tid"], event.get("args", {}).get("iteration", 0))
        start, end = event["ts"], event["ts"] + event["dur"]
        low, high = spans.get(key, (start, end))
        spans[key] = (min(low, start), max(high, end))
        if event["name"].split(" ")[0] in compute:
            busy[key] = busy.get(key, 0) + event["dur"]
    shares = {}
    for (rank, iteration), (low, high) in spans.items():
        shares.setdefault(rank, []).append(1 - busy.get((rank, iteration), 0) / (high - low))
    return {rank: float(np.median(values)) for rank, values in sorted(shares.items())}


def pipeline_schedules(compile_step, train, median, folder, ids, shardrun):
    """--pp 2 --microbatches 8 against one rank of 1 thread, 1f1b and zb-h1."""
    m, p = 8, 2
    compile_step("accumulate", ["--microbatches", str(m)])
    one = median(train("accumulate", 1, 1))
    print(f"one rank x 1 thread, {m} micro-batches: {one:8.1f} ms/step")
    batch = os.path.join(folder, "batch.npz")
    np.savez(batch, input_ids=ids[:BATCH], labels=ids[:BATCH])
    predicted = p * m / (m + p - 1)
    for schedule in ("1f1b", "zb-h1"):
        name = "pp2-" + schedule
        report = os.path.join(folder, name + ".json")
        compile_step(name, ["--pp", str(p), "--microbatches", str(m), "--schedule", schedule,
                            "--report", report])
        run = train(name, 1, p)
        gain = one / median(run)
        trace = os.path.join(folder, name + ".trace.json")
        run_child([shardrun, os.path.join(folder, name), "--inputs", batch, "--np", str(p),
                   "--threads", "1", "--warmup", "1", "--iters", "3", "--trace", trace])
        idle = idle_shares(trace)
        bubble = json.load(open(report))["pipeline"]["schedule"]["bubble"]
        print(f"pp 2 {schedule}, 2 ranks x 1 thread: {median(run):8.1f} ms/step, {gain:.2f}x one "
              f"rank (predicted p*m/(m+p-1) = {predicted:.2f}); measured idle share per rank "
              + ", ".join(f"{rank}: {share:.1%}" for rank, share in idle.items())
              + f" (predicted bubble {bubble:.1%}); first losses "
              + " ".join(f"{x:.5f}" for x in run["losses"][:3]))


if __name__ == "__main__":
    main()
