#!/usr/bin/env python3
"""CPU benchmark: a GPT-2-small-shaped model, shardrun against onnxruntime.

Generates (into a temporary folder, not the repo) a GPT-2-small-shaped ONNX
model with random weights: 12 layers, hidden 768, 12 heads, sequence 128,
batch 1, vocabulary 50257, written the way exporters write it (LayerNormalization,
MatMul+Add linears, head reshapes, scaled scores with an additive causal mask,
softmax, erf GELU spelled out, tied output projection). Then, in the same run
and with the same thread count, it times onnxruntime's CPU session and
`shardrun` on the artifact `shardc` compiled, reports the medians, their
ratio (throughput of shardrun / onnxruntime), the largest output difference,
and shardrun's planned arena against its measured peak RSS.

    .venv/bin/python bench/gpt2_cpu.py [--threads N] [--iters I] [--layers L] [--scaling]
                                       [--rounds R]

With --scaling it also compiles --tp 2 and times, in the same run, one rank
with 1 thread, one rank with 2 threads, and the tp=2 artifact as 2 rank
threads of 1 thread each (and under mpirun -np 2 when mpirun is found):
strong scaling on two cores, as ratios of the medians. Then it compiles the
same model at batch 2 for one rank and with --dp 2 and times one rank with 1
thread against the dp=2 artifact as 2 rank threads of 1 thread each (and
under mpirun). Each ratio is printed with issue 13's target and whether it
meets it: one rank x 2 threads >= 1.0x onnxruntime on 2 threads, tp=2 >=
1.6x one rank x 1 thread and >= 0.9x one rank x 2 threads, dp=2 >= 1.8x one
rank x 1 thread; the targets ask for medians of at least 10 iterations.
The scaling configurations (and onnxruntime on 2 threads) are timed in
--rounds interleaved rounds (default 5), each round timing every one once,
and each figure is the median of its rounds: on a shared machine whose speed
drifts by 5-10% over minutes, timing one configuration after another made
the ratios measure the drift, and on the Zen 3 machine bursts slowed a
2-core run by 20-50% for a round or two. It also prices the tp=2 and dp=2
plans with a device file shardc-calibrate measures in the same run (the
estimate beside the measured step).

The model is bench/cpu_models.py's `gpt2`, the timing bench/cpu_bench.py's,
shared with bench/llama_cpu.py.
"""
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import cpu_bench  # noqa: E402
import cpu_models  # noqa: E402

SEQ, VOCAB = 128, 50257


def gpt2_small(layers, batch):
    return cpu_models.gpt2(layers, 768, 12, SEQ, VOCAB, np.random.default_rng(0), batch=batch)


if __name__ == "__main__":
    sys.exit(cpu_bench.main(cpu_bench.parse_args(__doc__), "GPT-2 small shape", "hidden 768, 12 heads",
                            "gpt2_small", gpt2_small, SEQ, VOCAB))
