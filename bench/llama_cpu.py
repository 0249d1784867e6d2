#!/usr/bin/env python3
"""CPU benchmark: a Llama-shaped model of GPT-2-small's size, shardrun against onnxruntime.

Generates (into a temporary folder, not the repo) a Llama-shaped ONNX model
with random weights: 12 layers, hidden 768, 12 query heads sharing 4
key/value heads (head size 64), SwiGLU MLP of width 2048, sequence 128,
batch 1, vocabulary 32000, written the way Hugging Face's eager Llama
exports (RMSNorm spelled Pow/ReduceMean/Add/Sqrt/Reciprocal/Mul, rotary
embeddings in the rotate_half convention from gathered cos/sin tables,
repeat_kv's Unsqueeze/Expand/Reshape, scaled scores with an additive causal
mask, x * sigmoid(x), bias-free linears, untied LM head). The timing and the
report, --scaling's tp=2 and dp=2 runs and their targets included, are
bench/gpt2_cpu.py's (bench/cpu_bench.py), as is the command line:

    .venv/bin/python bench/llama_cpu.py [--threads N] [--iters I] [--layers L] [--scaling]

It is a script of its own rather than a --model option of gpt2_cpu.py so
that each benchmark's command line and docstring name the one model it
measures, and gpt2_cpu.py's stay as other documents quote them.
"""
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import cpu_bench  # noqa: E402
import cpu_models  # noqa: E402

SEQ, VOCAB = 128, 32000


def llama_small(layers, batch):
    return cpu_models.llama(layers, 768, 12, 4, 2048, SEQ, VOCAB, np.random.default_rng(0),
                            batch=batch)


if __name__ == "__main__":
    sys.exit(cpu_bench.main(cpu_bench.parse_args(__doc__), "Llama shape",
                            "hidden 768, 12 query / 4 kv heads, SwiGLU 2048", "llama_small",
                            llama_small, SEQ, VOCAB))
