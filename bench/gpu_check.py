#!/usr/bin/env python3
"""The one-command GPU check (`make gpu-check`): numerics, ranks and a benchmark on one GPU.

Made for a machine with one GPU (an H200), PyTorch, onnx and onnxruntime
installed and no network, after `make gpu-check` has built shardc and
shardrun. Each part runs and reports on its own — a part that fails, crashes
or runs out of time does not stop the others — and the whole check keeps to
a time budget (--deadline, which the Makefile sets 8 minutes after it starts,
build included). The report is written after every part, so whatever was
measured survives an interruption:

  fixtures-fp32   every fixture compiled with --target=cuda, run by shardrun,
                  against onnxruntime: max |diff| <= 1e-4 * max |ref|
  fixtures-bf16   the same with --dtype bf16: <= 2e-2 * max |ref|
  tp2, tp4        the fixtures compiled with --tp 2 / --tp 4, run as
                  `shardrun --np N`: N ranks as threads sharing the GPU, each
                  on its own stream, collectives through the in-process world
  nccl            one rank under the NCCL communicator, started torchrun-style
                  (RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1): a fixture against
                  onnxruntime, and a hand-made artifact whose collectives run
                  on a one-rank NCCL group (mesh_artifact.py)
  nccl-failures   a rank that never joins (rank 0 gives up within the
                  timeout, one line) and two ranks on one GPU (NCCL refuses:
                  one line per rank, no hang)
  training        the training fixtures compiled with --target=cuda --train and
                  trained by shardrun on the GPU against torch's run
                  (test/scripts/train_check.py): every loss and gradient norm
                  of 20 AdamW steps, every first gradient, --tp 2 as 2
                  ranks sharing the GPU, and --pp 2 pipelines (1F1B, ZB-H1)
                  as 2 stages sharing it
  unit-gpu        the CUDA collective kernels and NCCL unit tests (ctest -R cuda)
  lit-gpu         the lit tests that need a GPU (test/E2E/cuda_runtime.test: --np
                  ranks on the GPU, NCCL, an artifact for a newer GPU)
  benchmark       a GPT-2-medium-shaped forward (24 layers, hidden 1024, 16
                  heads, seq 1024, batch 8, bf16; bench/gpt2_gpu.py): shardrun
                  against torch eager and torch.compile on the same weights and
                  GPU in this run — tokens/s, the ratios, achieved TFLOP/s —
                  and cuBLAS's own GEMM TFLOP/s at the forward's shapes as the
                  ceiling for shardrun's GEMM steps

    python3 bench/gpu_check.py --build build --out build/gpu-check [--deadline EPOCH_S]

Writes OUT/report.json and OUT/report.txt (and prints the text). Exit code 0
when every part passed.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "test" / "scripts"))

FP32_TOLERANCE, BF16_TOLERANCE = 1e-4, 2e-2
# Seconds kept for the NCCL parts and the benchmark (torch.compile alone takes
# a minute or two) when the fixture parts run long.
RESERVE_AFTER_FIXTURES = 200


class Budget:
    def __init__(self, deadline):
        self.deadline = deadline

    def left(self):
        return self.deadline - time.time()

    def timeout(self, cap, reserve=0.0):
        """Seconds a step may take: its cap, or what is left (less `reserve`)."""
        return max(1.0, min(cap, self.left() - reserve))


class Report:
    """The parts so far, written as JSON and text after every part."""

    def __init__(self, out, environment):
        self.out, self.environment, self.parts = out, environment, []
        self.lock = threading.Lock()
        out.mkdir(parents=True, exist_ok=True)

    def add(self, name, status, seconds, summary, details=(), data=None):
        with self.lock:
            self.parts.append({"part": name, "status": status, "seconds": round(seconds, 1),
                               "summary": summary, "details": list(details), "data": data or {}})
            self.write()
        print(self.line(self.parts[-1]), flush=True)
        for detail in list(details)[:12]:
            print(f"        {detail}", flush=True)

    @staticmethod
    def line(part):
        return (f"[{part['status']:7s}] {part['part']:14s} {part['summary']} "
                f"({part['seconds']:.0f} s)")

    def text(self):
        lines = ["shardc GPU check: " + ", ".join(f"{k} {v}" for k, v in self.environment.items())]
        for part in self.parts:
            lines.append(self.line(part))
            lines += [f"          {d}" for d in part["details"][:40]]
        passed = sum(p["status"] == "pass" for p in self.parts)
        skipped = sum(p["status"] == "skip" for p in self.parts)
        lines.append(f"{passed} of {len(self.parts)} parts passed" +
                     (f", {skipped} skipped" if skipped else ""))
        return "\n".join(lines) + "\n"

    def write(self):
        (self.out / "report.json").write_text(json.dumps(
            {"environment": self.environment, "parts": self.parts}, indent=2) + "\n")
        (self.out / "report.txt").write_text(self.text())


def run_part(report, name, function):
    """Runs one part; whatever it raises becomes its failure, not the check's."""
    start = time.time()
    try:
        status, summary, details, data = function()
    except subprocess.TimeoutExpired as error:
        status, summary, details, data = "timeout", f"ran out of time: {error}", [], {}
    except Exception as error:  # noqa: BLE001 — a part's crash is its own result
        status, summary = "error", f"{type(error).__name__}: {error}"
        details, data = traceback.format_exc().splitlines()[-6:], {}
    report.add(name, status, time.time() - start, summary, details, data)
    return status == "pass"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_line_error(run):
    lines = run.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit code {run.returncode}"


# ---------------------------------------------------------------------------
# Fixtures against onnxruntime


class FixtureJob:
    def __init__(self, part, entry, flags, tolerance, env=None):
        self.part, self.entry, self.flags, self.tolerance = part, entry, flags, tolerance
        self.env = env or {}


def check_fixture(job, tools, fixtures, budget):
    """(status, detail): 'pass', 'fail', 'skip' (the mesh cannot split the model)."""
    import numpy as np
    from e2e_models import compare, load_model, make_inputs, reference_outputs, reference_session

    model_path = fixtures / job.entry["file"]
    model = load_model(model_path)
    feeds = make_inputs(model, job.entry["dims"], np.random.default_rng(20261129))
    reference = reference_outputs(reference_session(model_path, model), feeds)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        np.savez(tmp / "inputs.npz", **feeds)
        command = [tools["shardc"], str(model_path), "-o", str(tmp / "artifact")] + job.flags
        command += [f"--dim={k}={v}" for k, v in job.entry["dims"].items()]
        run = subprocess.run(command, capture_output=True, text=True,
                             timeout=budget.timeout(300))
        if run.returncode != 0:
            message = one_line_error(run)
            if "not divisible" in message or "cannot split" in message:
                return "skip", message
            return "fail", message
        ranks = len(json.loads((tmp / "artifact" / "manifest.json").read_text())["ranks"])
        command = [tools["shardrun"], str(tmp / "artifact"), "--inputs", str(tmp / "inputs.npz"),
                   "--outputs", str(tmp / "out.npz"), "--warmup", "1", "--iters", "3",
                   "--comm-timeout", "120"]
        if ranks > 1:
            command += ["--np", str(ranks)]
        run = subprocess.run(command, capture_output=True, text=True, timeout=budget.timeout(300),
                             env=dict(os.environ, **job.env))
        if run.returncode != 0:
            return "fail", one_line_error(run)
        summary = run.stdout.strip().splitlines()[0] if run.stdout.strip() else ""
        problems, worst = compare(reference, np.load(tmp / "out.npz"), job.tolerance)
        if problems:
            return "fail", "; ".join(problems)
        return "pass", f"max |diff| / max |ref| = {worst:.1e}; {summary}"


def fixture_parts(report, tools, fixtures, budget, workers, parts):
    """All fixture parts' jobs in one pool; each part reported once its jobs are done."""
    entries = json.loads((fixtures / "fixtures.json").read_text())
    jobs = [FixtureJob(part, entry, flags, tolerance)
            for part, flags, tolerance in parts for entry in entries]
    started = {part: time.time() for part, _, _ in parts}
    results = {part: [] for part, _, _ in parts}
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
    futures = {pool.submit(check_fixture, job, tools, fixtures, budget): job for job in jobs}
    pending = {part: sum(job.part == part for job in jobs) for part, _, _ in parts}
    try:
        for future in concurrent.futures.as_completed(
                futures, timeout=max(1, budget.left() - RESERVE_AFTER_FIXTURES)):
            job = futures[future]
            try:
                status, detail = future.result()
            except subprocess.TimeoutExpired:
                status, detail = "fail", "ran out of time"
            except Exception as error:  # noqa: BLE001
                status, detail = "fail", f"{type(error).__name__}: {error}"
            results[job.part].append((job.entry["name"], status, detail))
            pending[job.part] -= 1
            if pending[job.part] == 0:
                report_fixture_part(report, job.part, results[job.part], started[job.part],
                                    len(entries))
    except concurrent.futures.TimeoutError:
        pass
    pool.shutdown(wait=False, cancel_futures=True)
    for part, _, _ in parts:
        if pending[part]:
            done = {name for name, _, _ in results[part]}
            results[part] += [(e["name"], "fail", "not run: the time budget ran out")
                              for e in entries if e["name"] not in done]
            report_fixture_part(report, part, results[part], started[part], len(entries),
                                timed_out=True)


def report_fixture_part(report, part, results, started, total, timed_out=False):
    passed = [r for r in results if r[1] == "pass"]
    failed = [r for r in results if r[1] == "fail"]
    skipped = [r for r in results if r[1] == "skip"]
    status = "timeout" if timed_out else ("pass" if not failed and passed else "fail")
    summary = f"{len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped of {total}"
    details = [f"{s:4s} {name}: {detail}" for name, s, detail in sorted(results)]
    report.add(part, status, time.time() - started, summary, details,
               {"passed": len(passed), "failed": len(failed), "skipped": len(skipped)})


# ---------------------------------------------------------------------------
# NCCL


def nccl_environment(rank, size, port):
    return {"RANK": str(rank), "WORLD_SIZE": str(size), "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port), "LOCAL_RANK": "0"}


def part_nccl(tools, fixtures, budget):
    details, ok = [], True
    entries = {e["name"]: e for e in json.loads((fixtures / "fixtures.json").read_text())}
    # A fixture, one rank, NCCL: the summary must say so and the outputs match.
    for name in ("gpt2", "llama"):
        job = FixtureJob("nccl", entries[name], ["--target=cuda"], FP32_TOLERANCE,
                         env=nccl_environment(0, 1, free_port()))
        status, detail = check_fixture(job, tools, fixtures, budget)
        if status == "pass" and "over NCCL" not in detail:
            status, detail = "fail", "shardrun did not run over NCCL: " + detail
        ok &= status == "pass"
        details.append(f"{status:4s} {name}: {detail}")
    # Collectives on a one-rank NCCL group: mesh_artifact.py's tp case with tp=1.
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        script = make_tp_artifact(tools, tmp, "one", "--tp", "1")
        run = subprocess.run([tools["shardrun"], str(tmp / "one"), "--inputs",
                              str(tmp / "one.inputs.npz"), "--outputs", str(tmp / "got.npz")],
                             capture_output=True, text=True, timeout=budget.timeout(120),
                             env=dict(os.environ, **nccl_environment(0, 1, free_port())))
        if run.returncode != 0:
            ok = False
            details.append("fail collectives: " + one_line_error(run))
        else:
            check = subprocess.run([sys.executable, script, "check", str(tmp / "one.expected.npz"),
                                    str(tmp / "got.npz")], capture_output=True, text=True)
            ok &= check.returncode == 0
            details.append(("pass" if check.returncode == 0 else "fail") + " collectives: " +
                           (check.stdout.strip() or check.stderr.strip()) + "; " +
                           run.stdout.strip().splitlines()[0])
    return ("pass" if ok else "fail"), ("one NCCL rank matches" if ok else "mismatch"), details, {}


def make_tp_artifact(tools, tmp, name, *flags):
    """mesh_artifact.py's tp case for CUDA (more `flags` to it) as tmp/NAME, its inputs
    tmp/NAME.inputs.npz; returns the script's path, whose `check` compares the outputs."""
    subprocess.run([tools["flatc"], "--python", "-o", str(tmp / "schema"),
                    str(REPO / "runtime" / "schemas" / "program.fbs")], check=True)
    script = str(REPO / "test" / "scripts" / "mesh_artifact.py")
    subprocess.run([sys.executable, script, "make", "--schema", str(tmp / "schema"),
                    "--out", str(tmp / name), "--case", "tp", *flags, "--target", "cuda"],
                   check=True)
    return script


def part_nccl_failures(tools, fixtures, budget):
    """Bad launches end with one line per rank within the timeout, never a hang."""
    details, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        make_tp_artifact(tools, tmp, "tp")
        base = [tools["shardrun"], str(tmp / "tp"), "--inputs", str(tmp / "tp.inputs.npz"),
                "--comm-timeout", "5"]

        def expect_one_line(label, runs, pattern, limit):
            nonlocal ok
            for rank, (run, seconds) in enumerate(runs):
                lines = run.stderr.strip().splitlines()
                good = (run.returncode == 1 and len(lines) == 1 and
                        re.search(pattern, lines[0]) is not None and seconds < limit)
                ok &= good
                details.append(f"{'pass' if good else 'fail'} {label}, rank {rank}: exit "
                               f"{run.returncode} after {seconds:.1f} s: "
                               f"{' | '.join(lines[-3:]) or '(no error line)'}")

        # Rank 1 never starts: rank 0 waits for it in the bootstrap, then gives up.
        start = time.time()
        run = subprocess.run(base, capture_output=True, text=True, timeout=budget.timeout(60),
                             env=dict(os.environ, **nccl_environment(0, 2, free_port())))
        expect_one_line("a rank that never joins", [(run, time.time() - start)],
                        r"^shardrun: error: rank 0: rank 1 did not join within 5 s", 30)
        # Two ranks on one GPU: NCCL refuses them; each says so and exits.
        port, processes = free_port(), []
        start = time.time()
        for rank in range(2):
            processes.append(subprocess.Popen(base, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                              text=True,
                                              env=dict(os.environ,
                                                       **nccl_environment(rank, 2, port))))
        runs = []
        for process in processes:
            try:
                stdout, stderr = process.communicate(timeout=budget.timeout(90))
            except subprocess.TimeoutExpired:
                process.kill()
                stdout, stderr = process.communicate()
            runs.append((subprocess.CompletedProcess(process.args, process.returncode, stdout,
                                                     stderr), time.time() - start))
        expect_one_line("two ranks on one GPU", runs, r"^shardrun: error: rank [01]: .*NCCL", 60)
    return ("pass" if ok else "fail"), ("one line per rank, no hang" if ok else "see details"), \
        details, {}


def part_training(tools, fixtures, budget):
    """The training fixtures trained on the GPU, against torch (train_check.py)."""
    cases = [("tiny_gpt2", ["--optimizer", "adamw"]), ("tiny_llama", ["--optimizer", "sgd"]),
             ("tiny_llama", ["--gradients"]),
             ("tiny_gpt2", ["--optimizer", "adamw", "--mesh", "--tp 2", "--np", "2"]),
             # A training pipeline: two stages as rank threads sharing the
             # GPU, transfers over the in-process world (1F1B, then ZB-H1).
             ("tiny_llama", ["--optimizer", "adamw", "--mesh",
                             "--pp 2 --microbatches 2 --pp-split /layers.0/Add_1", "--np", "2"]),
             ("tiny_gpt2", ["--optimizer", "sgd", "--mesh",
                            "--pp 2 --microbatches 2 --schedule zb-h1 --pp-split /h.0/Add_1",
                            "--np", "2"])]
    details, failed = [], 0
    with tempfile.TemporaryDirectory(prefix="gpu-train-") as work:
        for index, (name, flags) in enumerate(cases):
            run = subprocess.run(
                [sys.executable, str(REPO / "test" / "scripts" / "train_check.py"), "--shardc",
                 tools["shardc"], "--shardrun", tools["shardrun"], "--fixture",
                 str(fixtures / "training" / name), "--shardc-flag=--target=cuda",
                 "--work", os.path.join(work, str(index)), *flags],
                capture_output=True, text=True, timeout=budget.timeout(120))
            lines = (run.stdout + run.stderr).strip().splitlines()
            failed += run.returncode != 0
            details += [f"{name} {' '.join(flags)}: {line}" for line in lines[-3:]]
    summary = f"{len(cases) - failed} of {len(cases)} training runs match torch"
    return ("pass" if not failed else "fail"), summary, details, {}


def part_unit_gpu(tools, build, budget):
    run = subprocess.run(["ctest", "-V", "-R", "cuda"], cwd=build, capture_output=True, text=True,
                         timeout=budget.timeout(300))
    lines = run.stdout.strip().splitlines()
    summary = next((l for l in lines if re.search(r"\d+% tests passed", l)),
                   lines[-1] if lines else "no output")
    # GoogleTest's skips (no GPU seen) pass under ctest; here they are failures.
    skipped = [l.strip() for l in lines if re.search(r"\[  SKIPPED \] [\w/]+\.[\w/]+ \(", l)]
    status = "pass" if run.returncode == 0 and "100% tests passed" in summary and not skipped \
        else "fail"
    if skipped:
        summary += f"; {len(skipped)} skipped (no GPU seen)"
    details = [l for l in lines if "Test #" in l or "Failure" in l or "FAILED" in l][-20:]
    return status, summary, details + skipped[:10], {}


def part_lit_gpu(build, budget):
    cache = (build / "CMakeCache.txt").read_text()
    found = {k: re.search(rf"^{k}:\w+=(.*)$", cache, re.M) for k in ("SHARDC_LIT", "SHARDC_PYTHON")}
    lit, python = (found[k].group(1) if found[k] else "" for k in ("SHARDC_LIT", "SHARDC_PYTHON"))
    if not os.path.exists(lit) or not os.access(python, os.X_OK):
        return "skip", f"lit ({lit or '?'}) or the tests' python ({python or '?'}) is missing", [], {}
    run = subprocess.run([python, lit, "-v", str(build / "test"), "--filter", "cuda_runtime"],
                         capture_output=True, text=True, timeout=budget.timeout(300))
    lines = run.stdout.strip().splitlines()
    results = [l for l in lines if re.match(r"^(PASS|FAIL|UNSUPPORTED|XFAIL|XPASS|UNRESOLVED):", l)]
    ran = [l for l in results if not l.startswith("UNSUPPORTED")]
    # The GPU tests themselves must have run, not only the no-GPU error paths.
    gpu_ran = any(l.startswith("PASS:") and "cuda_runtime.test" in l for l in results)
    status = "pass" if run.returncode == 0 and gpu_ran else "fail"
    return status, f"{len(ran)} run, {len(results) - len(ran)} unsupported", \
        results + ([] if status == "pass" else lines[-30:]), {}


# ---------------------------------------------------------------------------
# Benchmark


class BenchmarkPrep:
    """Makes the model and compiles it (CPU work) while the GPU parts run."""

    def __init__(self, tools, workdir):
        self.tools, self.workdir = tools, workdir
        self.error, self.compile_s, self.make_s = None, None, None
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            start = time.time()
            subprocess.run([sys.executable, str(REPO / "bench" / "gpt2_gpu.py"), "make",
                            "--out", str(self.workdir)], check=True, capture_output=True,
                           text=True, timeout=600)
            self.make_s = time.time() - start
            start = time.time()
            run = subprocess.run([self.tools["shardc"], str(self.workdir / "gpt2m.onnx"),
                                  "--target=cuda", "--dtype", "bf16", "-o",
                                  str(self.workdir / "artifact")],
                                 capture_output=True, text=True, timeout=600)
            if run.returncode != 0:
                self.error = "shardc: " + one_line_error(run)
            self.compile_s = time.time() - start
        except subprocess.CalledProcessError as error:
            self.error = f"model generation failed: {(error.stderr or '').strip()[-300:]}"
        except Exception as error:  # noqa: BLE001
            self.error = f"{type(error).__name__}: {error}"


def part_benchmark(prep, tools, budget):
    import numpy as np
    sys.path.insert(0, str(REPO / "bench"))
    from gpt2_gpu import flops

    prep.thread.join(timeout=max(1, budget.left() - 120))
    if prep.thread.is_alive():
        return "timeout", "the model was not compiled in time", [], {}
    if prep.error:
        return "fail", prep.error, [], {}
    work = prep.workdir
    roles = json.loads((work / "roles.json").read_text())
    b, s, h, layers, vocab = (roles["batch"], roles["seq"], roles["hidden"], roles["layers_count"],
                              roles["vocab"])
    gemm_flops, attention_flops = flops(layers, h, s, b, vocab)
    tokens = b * s
    data = {"shape": f"{layers} layers, hidden {h}, {roles['heads']} heads, seq {s}, batch {b}, "
                     f"bf16", "make_s": prep.make_s, "shardc_s": prep.compile_s,
            "gemm_gflop": gemm_flops / 1e9, "attention_gflop": attention_flops / 1e9}
    details = [f"model {data['shape']}: {(gemm_flops + attention_flops) / 1e12:.2f} TFLOP per "
               f"forward (GEMMs {gemm_flops / 1e12:.2f}, attention {attention_flops / 1e12:.2f}); "
               f"made in {prep.make_s:.0f} s, compiled by shardc in {prep.compile_s:.0f} s"]

    # shardrun: the timed runs, then a profiled one for where the time goes.
    run = subprocess.run([tools["shardrun"], str(work / "artifact"), "--inputs",
                          str(work / "inputs.npz"), "--outputs", str(work / "shardrun.npz"),
                          "--warmup", "3", "--iters", "20"],
                         capture_output=True, text=True, timeout=budget.timeout(180, 60))
    if run.returncode != 0:
        return "fail", one_line_error(run), details, data
    shardrun_s = float(re.search(r"([0-9.]+) ms/iter", run.stdout).group(1)) / 1e3
    data["shardrun_s"] = shardrun_s
    details.append("shardrun: " + run.stdout.strip().splitlines()[0])
    profile = subprocess.run([tools["shardrun"], str(work / "artifact"), "--inputs",
                              str(work / "inputs.npz"), "--warmup", "1", "--iters", "3",
                              "--profile"], capture_output=True, text=True,
                             timeout=budget.timeout(120, 60))
    by_kernel = {}
    for line in profile.stdout.splitlines()[2:]:
        fields = line.split()
        if len(fields) >= 3 and fields[0].isdigit():
            by_kernel[fields[1]] = by_kernel.get(fields[1], 0.0) + float(fields[2]) / 1e3
    data["profile_s"] = by_kernel
    if by_kernel:
        total = sum(by_kernel.values())
        details.append("shardrun --profile (steps synchronized): " + ", ".join(
            f"{k} {v * 1e3:.2f} ms ({100 * v / total:.0f}%)"
            for k, v in sorted(by_kernel.items(), key=lambda kv: -kv[1])[:8]))

    # torch eager and torch.compile on the same weights, and cuBLAS's GEMMs.
    torch_report = work / "torch.json"
    try:
        torch_run = subprocess.run([sys.executable, str(REPO / "bench" / "gpt2_gpu.py"), "torch",
                                    "--model", str(work), "--report", str(torch_report),
                                    "--iters", "20"],
                                   capture_output=True, text=True, timeout=budget.timeout(400, 15))
        if torch_run.returncode != 0:
            details.append("torch: " + " | ".join(torch_run.stderr.strip().splitlines()[-3:]))
    except subprocess.TimeoutExpired:
        details.append("torch: ran out of time; the figures below are those it had written")
    figures = json.loads(torch_report.read_text()) if torch_report.exists() else {}
    data["torch"] = figures

    def line(label, seconds):
        achieved = (gemm_flops + attention_flops) / seconds / 1e12
        return (f"{label:14s} {seconds * 1e3:8.2f} ms  {tokens / seconds / 1e3:8.1f} k tokens/s"
                f"  {achieved:6.1f} TFLOP/s")

    details.append(line("shardrun", shardrun_s))
    ratios = {}
    for key, label in (("eager_s", "torch eager"), ("compiled_s", "torch.compile")):
        if key in figures:
            ratios[label] = figures[key] / shardrun_s
            details.append(line(label, figures[key]) +
                           f"   shardrun is {ratios[label]:.2f}x its tokens/s")
    data["ratios"] = ratios
    if "compile_build_s" in figures:
        details.append(f"torch.compile took {figures['compile_build_s']:.0f} s to compile")
    if "cublas" in figures:
        ceiling = figures["cublas"]["layer_tflops"]
        shapes = ", ".join(f"{k} {v['m']}x{v['k']}x{v['n']} {v['tflops']:.0f}"
                           for k, v in figures["cublas"]["shapes"].items())
        details.append(f"cuBLAS bf16 GEMMs at the forward's shapes: {ceiling:.0f} TFLOP/s over a "
                       f"layer ({shapes})")
        if by_kernel.get("linear"):
            achieved = gemm_flops / by_kernel["linear"] / 1e12
            data["gemm_fraction_of_cublas"] = achieved / ceiling
            details.append(f"shardrun's linear steps: {achieved:.0f} TFLOP/s = "
                           f"{100 * achieved / ceiling:.0f}% of cuBLAS's")
    # Same weights, same inputs: the logits agree to bf16's precision.
    if (work / "torch_logits.npy").exists() and (work / "shardrun.npz").exists():
        ref = np.load(work / "torch_logits.npy")
        got = np.load(work / "shardrun.npz")[roles["output"]]
        diff = float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
        data["logits_vs_torch"] = diff
        details.append(f"logits against torch eager (both bf16): max |diff| / max |ref| = "
                       f"{diff:.1e}")
    if "torch eager" not in ratios:
        return "fail", "torch did not run", details, data
    summary = ", ".join(f"shardrun/{k} {v:.2f}x" for k, v in ratios.items())
    status = "pass" if data.get("logits_vs_torch", 1) <= 5e-2 else "fail"
    return status, summary, details, data


# ---------------------------------------------------------------------------


def environment(tools):
    env = {"host": platform.node(), "python": platform.python_version()}
    smi = shutil.which("nvidia-smi")
    if smi:
        listed = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True)
        env["gpu"] = listed.stdout.strip().replace("\n", "; ") or "none"
    for module in ("torch", "onnxruntime", "onnx", "numpy"):
        try:
            env[module] = __import__(module).__version__
        except Exception:  # noqa: BLE001
            env[module] = "missing"
    return env


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=pathlib.Path, default=REPO / "build")
    parser.add_argument("--out", type=pathlib.Path, default=None)
    parser.add_argument("--deadline", type=float, default=None,
                        help="seconds since the epoch to be done by (default: 7 min from now)")
    parser.add_argument("--workers", type=int, default=max(2, (os.cpu_count() or 4) // 2))
    parser.add_argument("--skip", action="append", default=[], help="a part to leave out")
    args = parser.parse_args()
    budget = Budget(args.deadline or time.time() + 420)
    out = args.out or args.build / "gpu-check"
    tools = {"shardc": str(args.build / "bin" / "shardc"),
             "shardrun": str(args.build / "bin" / "shardrun"),
             "flatc": shutil.which("flatc") or "flatc"}
    report = Report(out, environment(tools))
    print(f"GPU check: {report.environment}; {budget.left():.0f} s budget", flush=True)
    for tool in ("shardc", "shardrun"):
        if not os.access(tools[tool], os.X_OK):
            report.add("build", "fail", 0, f"{tools[tool]} is missing: build first")
            return 1
    fixtures = REPO / "test" / "fixtures"

    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        prep = None
        if "benchmark" not in args.skip:
            prep = BenchmarkPrep(tools, pathlib.Path(tmp) / "gpt2m")
        parts = [(name, flags, tolerance) for name, flags, tolerance in (
            ("fixtures-fp32", ["--target=cuda"], FP32_TOLERANCE),
            ("fixtures-bf16", ["--target=cuda", "--dtype", "bf16"], BF16_TOLERANCE),
            ("tp2", ["--target=cuda", "--tp", "2"], FP32_TOLERANCE),
            ("tp4", ["--target=cuda", "--tp", "4"], FP32_TOLERANCE)) if name not in args.skip]
        if parts:
            try:
                fixture_parts(report, tools, fixtures, budget, args.workers, parts)
            except Exception as error:  # noqa: BLE001
                report.add("fixtures", "error", 0, f"{type(error).__name__}: {error}",
                           traceback.format_exc().splitlines()[-6:])
        for name, function in (
                ("nccl", lambda: part_nccl(tools, fixtures, budget)),
                ("nccl-failures", lambda: part_nccl_failures(tools, fixtures, budget)),
                ("training", lambda: part_training(tools, fixtures, budget)),
                ("unit-gpu", lambda: part_unit_gpu(tools, args.build, budget)),
                ("lit-gpu", lambda: part_lit_gpu(args.build, budget))):
            if name in args.skip:
                continue
            if budget.left() < 150 and prep:
                report.add(name, "timeout", 0, "not run: the time left is the benchmark's")
                continue
            run_part(report, name, function)
        if prep:
            run_part(report, "benchmark", lambda: part_benchmark(prep, tools, budget))
    print(f"\nreport: {out / 'report.txt'} and {out / 'report.json'}", flush=True)
    ok = all(p["status"] in ("pass", "skip") for p in report.parts)
    sys.stdout.flush()
    # Fixture jobs still running past the budget are abandoned, not waited for.
    os._exit(0 if ok else 1)


if __name__ == "__main__":
    main()
