"""Timing and reporting shared by the CPU benchmarks (bench/gpt2_cpu.py, ...).

`main` generates a model (into a temporary folder, not the repo), and in the
same run and with the same thread count times onnxruntime's CPU session and
`shardrun` on the artifact `shardc` compiled; it reports the medians, their
ratio (throughput of shardrun / onnxruntime), the largest output difference,
shardrun's planned arena against its measured peak RSS and where its time
goes. With --scaling it adds strong scaling on two cores, tp=2 and dp=2
against one rank, each ratio beside its acceptance target, and in the same
rounds how far the machine itself scales a compute-only loop from one core
to two: the ceiling those ratios run into (`scaling`).
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort

REPO = pathlib.Path(__file__).resolve().parent.parent


def median_ms(function, warmup, iters):
    for _ in range(warmup):
        function()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def shardrun_ms(build, artifact, inputs, outputs, threads, iters, ranks=None, mpi=False):
    """Median ms/iter that shardrun reports for `artifact` (ranks as threads, or under mpirun)."""
    command = [str(build / "bin" / "shardrun"), str(artifact), "--inputs", str(inputs),
               "--outputs", str(outputs), "--threads", str(threads), "--warmup", "2",
               "--iters", str(iters)]
    env = dict(os.environ)
    if mpi:
        command = ["mpirun", "--oversubscribe", "-np", str(ranks)] + command
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    elif ranks:
        command += ["--np", str(ranks)]
    run = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return float(re.search(r"([0-9.]+) ms/iter", run.stdout).group(1))


def cores_ms(build, threads):
    """Milliseconds `threads` threads take to run a register-only FMA loop at
    once (bench/CoreScalingBench.cpp): the machine's compute alone."""
    run = subprocess.run([str(build / "bin" / "shardc-bench-cores"), str(threads)], check=True,
                         capture_output=True, text=True)
    return float(re.search(r"([0-9.]+) ms", run.stdout).group(1))


def verdict(ratio, target):
    """`ratio` beside issue 13's acceptance target for it."""
    return f"{ratio:.2f}x ({'pass' if ratio >= target else 'FAIL'}: target >= {target}x)"


def save(model, path):
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=f"{path.stem}.weights", size_threshold=1024)


def ort_session(model_path, threads):
    """onnxruntime's CPU session of `model_path` on `threads` threads."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


def time_ort(model_path, ids, threads, iters):
    """onnxruntime's median ms/iter on `threads` threads, and its output."""
    session = ort_session(model_path, threads)
    reference = session.run(None, {"input_ids": ids})[0]
    return median_ms(lambda: session.run(None, {"input_ids": ids}), 2, iters), reference


def calibrated(build, tmp):
    """A device file of this machine's 2 ranks x 1 thread (shardc-calibrate)."""
    device = tmp / "cpu.json"
    subprocess.run([str(build / "bin" / "shardc-calibrate"), "--ranks", "2", "--threads", "1",
                    "-o", str(device)], check=True, capture_output=True)
    return device


def plan_of(shardc, model, flags, out):
    """The collectives and estimated step of `shardc model flags`'s plan, from its report."""
    report = out.with_suffix(".report.json")
    subprocess.run([shardc, str(model)] + flags + ["--emit", "partitioned", "-o",
                                                   str(out.with_suffix(".mlir")), "--report",
                                                   str(report)], check=True)
    data = json.load(open(report))
    collectives = [(c["kind"], c.get("source"), c["bytes"]) for c in data["collectives"]]
    return collectives, data["totals"]["est_step_seconds"] * 1e3


def compare_calibrated(shardc, model, flags, device, tmp, name, measured):
    """The plan priced with the calibrated device beside the default (H100) one:
    whether they differ, and the calibrated estimate against `measured` ms."""
    default, _ = plan_of(shardc, model, flags, tmp / f"{name}_h100")
    plan, estimate = plan_of(shardc, model, flags + ["--device", str(device)],
                             tmp / f"{name}_cpu")
    print(f"    calibrated cost model (shardc-calibrate, 2 ranks x 1 thread): {name} estimated "
          f"{estimate:.1f} ms, measured {measured:.1f} ms ({estimate / measured:.2f}x); plan "
          f"{'the same as' if plan == default else 'differs from'} the H100-priced one")


def interleaved(timers, rounds):
    """Median ms of each of `timers` (name -> function returning ms) over
    `rounds` rounds, every round timing each once in turn: a machine that
    slows down for a while slows every configuration alike, not the one
    that happened to run then."""
    samples = {name: [] for name in timers}
    for _ in range(rounds):
        for name, timer in timers.items():
            samples[name].append(timer())
    return {name: statistics.median(values) for name, values in samples.items()}


def ort_timer(model_path, threads, iters):
    """A function timing one onnxruntime session on `threads` threads (median ms)."""
    session = ort_session(model_path, threads)
    feed = {"input_ids": np.load(model_path.parent / "inputs.npz")["input_ids"]}
    return lambda: median_ms(lambda: session.run(None, feed), 2, iters)


def scaling(args, build_model, model_path, tmp, rng, seq, vocab):
    """Strong scaling on two cores: tp=2 ranks against one rank on the batch-1
    model, and dp=2 ranks against one rank on the same model at batch 2, and
    one rank on 2 threads against onnxruntime on 2 threads; all timed in
    interleaved rounds (`interleaved`)."""
    build, iters = args.build, args.iters
    shardc = str(build / "bin" / "shardc")
    subprocess.run([shardc, str(model_path), "--tp", "2", "-o", str(tmp / "tp2")], check=True)
    model, _ = build_model(args.layers, 2)
    save(model, tmp / "batch2.onnx")
    subprocess.run([shardc, str(tmp / "batch2.onnx"), "-o", str(tmp / "batch2")], check=True)
    subprocess.run([shardc, str(tmp / "batch2.onnx"), "--dp", "2", "-o", str(tmp / "dp2")],
                   check=True)
    inputs, inputs2, outputs = tmp / "inputs.npz", tmp / "inputs2.npz", tmp / "scaling.npz"
    np.savez(inputs2, input_ids=rng.integers(0, vocab, size=(2, seq), dtype=np.int64))
    run = lambda artifact, feed, threads, **kw: lambda: shardrun_ms(  # noqa: E731
        build, tmp / artifact, feed, outputs, threads, iters, **kw)
    timers = {"ort_2": ort_timer(model_path, 2, iters),
              "one_1": run("artifact", inputs, 1), "one_2": run("artifact", inputs, 2),
              "tp2": run("tp2", inputs, 2, ranks=2), "batch_1": run("batch2", inputs2, 1),
              "dp2": run("dp2", inputs2, 1, ranks=2),
              "cores_1": lambda: cores_ms(build, 1), "cores_2": lambda: cores_ms(build, 2)}
    mpi = shutil.which("mpirun")
    if mpi:
        timers["tp2_mpi"] = run("tp2", inputs, 1, ranks=2, mpi=True)
        timers["dp2_mpi"] = run("dp2", inputs2, 1, ranks=2, mpi=True)
    ms = interleaved(timers, args.rounds)
    one_1, one_2, tp2, batch_1, dp2 = ms["one_1"], ms["one_2"], ms["tp2"], ms["batch_1"], ms["dp2"]
    print(f"  scaling ({args.rounds} interleaved rounds of medians of {iters}): 1 rank x 1 thread "
          f"{one_1:.1f} ms, 1 rank x 2 threads {one_2:.1f} ms, tp=2 as 2 threads x 1 {tp2:.1f} ms")
    print(f"    the machine's own 2-core scaling, a register-only FMA loop on 1 and on 2 "
          f"threads at once ({ms['cores_1']:.1f}, {ms['cores_2']:.1f} ms): "
          f"{2 * ms['cores_1'] / ms['cores_2']:.2f}x of the ideal 2.0x")
    print(f"    1 rank x 2 threads vs onnxruntime on 2 threads ({ms['ort_2']:.1f} ms): "
          f"{verdict(ms['ort_2'] / one_2, 1.0)}")
    print(f"    tp=2 (threads) vs 1 rank x 1 thread: {verdict(one_1 / tp2, 1.6)}; "
          f"vs 1 rank x 2 threads: {verdict(one_2 / tp2, 0.9)}")
    device = calibrated(build, tmp)
    compare_calibrated(shardc, model_path, ["--tp", "2"], device, tmp, "tp=2", tp2)
    if mpi:
        tp2_mpi = ms["tp2_mpi"]
        print(f"    tp=2 under mpirun (1 thread each) {tp2_mpi:.1f} ms: vs 1 rank x 1 thread "
              f"{verdict(one_1 / tp2_mpi, 1.6)}; vs 1 rank x 2 threads {verdict(one_2 / tp2_mpi, 0.9)}")
    print(f"  batch 2: 1 rank x 1 thread {batch_1:.1f} ms, dp=2 as 2 threads x 1 {dp2:.1f} ms "
          f"(the batch-1 rank's time over dp=2's: {one_1 / dp2:.2f}, 1.0 is two independent "
          f"batch-1 ranks)")
    print(f"    dp=2 (threads) vs 1 rank x 1 thread: {verdict(batch_1 / dp2, 1.8)}")
    compare_calibrated(shardc, tmp / "batch2.onnx", ["--dp", "2"], device, tmp, "dp=2", dp2)
    if mpi:
        dp2_mpi = ms["dp2_mpi"]
        print(f"    dp=2 under mpirun (1 thread each) {dp2_mpi:.1f} ms: vs 1 rank x 1 thread "
              f"{verdict(batch_1 / dp2_mpi, 1.8)}")


def parse_args(description):
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--build", type=pathlib.Path, default=REPO / "build")
    parser.add_argument("--rounds", type=int, default=5,
                        help="with --scaling: interleaved rounds, each timing every "
                        "configuration once (medians of the rounds' medians)")
    parser.add_argument("--scaling", action="store_true",
                        help="also time --tp 2 ranks against one rank (1 and 2 threads), and "
                        "--dp 2 ranks against one rank at batch 2")
    return parser.parse_args()


def main(args, title, shape, stem, build_model, seq, vocab):
    """Benchmarks `build_model(layers, batch)` (a model and its logits' name)
    fed `input_ids` [batch, seq] below `vocab`; `title` and `shape` head the
    report. Returns the exit status: 1 when shardrun's output is off
    onnxruntime's."""
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model, output = build_model(args.layers, 1)
        model_path = tmp / f"{stem}.onnx"
        save(model, model_path)
        ids = rng.integers(0, vocab, size=(1, seq), dtype=np.int64)
        np.savez(tmp / "inputs.npz", input_ids=ids)
        ort_ms, reference = time_ort(model_path, ids, args.threads, args.iters)

        start = time.perf_counter()
        subprocess.run([str(args.build / "bin" / "shardc"), str(model_path), "-o", str(tmp / "artifact")],
                       check=True)
        compile_s = time.perf_counter() - start
        run = subprocess.run([str(args.build / "bin" / "shardrun"), str(tmp / "artifact"),
                              "--inputs", str(tmp / "inputs.npz"), "--outputs", str(tmp / "out.npz"),
                              "--threads", str(args.threads), "--warmup", "2",
                              "--iters", str(args.iters), "--profile"],
                             check=True, capture_output=True, text=True)
        summary = run.stdout.splitlines()[0]
        shard_ms = float(re.search(r"([0-9.]+) ms/iter", summary).group(1))
        arena = re.search(r"arena ([0-9.]+) MB", summary).group(1)
        rss = re.search(r"peak RSS ([0-9.]+) MB", summary).group(1)
        got = np.load(tmp / "out.npz")[output]
        diff = float(np.max(np.abs(got - reference))) / float(np.max(np.abs(reference)))
        weights_mb = (tmp / "artifact" / "rank0.safetensors").stat().st_size / 1e6

        by_kernel = {}
        for line in run.stdout.splitlines()[2:]:
            fields = line.split()
            if len(fields) >= 3:
                by_kernel[fields[1]] = by_kernel.get(fields[1], 0.0) + float(fields[2])
        print(f"{title}: {args.layers} layers, {shape}, seq {seq}, batch 1, "
              f"{args.threads} thread(s), median of {args.iters}")
        print(f"  onnxruntime {ort.__version__}: {ort_ms:8.2f} ms/iter")
        print(f"  shardrun:        {shard_ms:8.2f} ms/iter   (compile {compile_s:.1f} s)")
        print(f"  throughput ratio shardrun / onnxruntime: {ort_ms / shard_ms:.2f}x")
        print(f"  max |diff| / max |ref| = {diff:.2e}")
        print(f"  memory: planned arena {arena} MB + weights {weights_mb:.1f} MB, "
              f"measured peak RSS {rss} MB")
        total = sum(by_kernel.values())
        print("  where shardrun's time goes: " + ", ".join(
            f"{k} {100 * v / total:.0f}%" for k, v in sorted(by_kernel.items(), key=lambda kv: -kv[1])[:6]))
        if args.scaling:
            scaling(args, build_model, model_path, tmp, rng, seq, vocab)
        return 0 if diff <= 1e-4 else 1
