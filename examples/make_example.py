#!/usr/bin/python3
"""Makes examples/gpt2_tiny.onnx, the model `make demo` compiles.

A GPT-2-style language model (the test fixtures' GPT-2 modules, hidden 64,
4 heads, 2 layers, vocabulary 256) with its own weights, exported with dynamic
batch and sequence axes at opset 17 and checked against onnxruntime.
Run with Debian's python, which has python3-torch:

    /usr/bin/python3 examples/make_example.py
"""
import os
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "fixtures"))
import make_torch_fixtures as fixtures  # noqa: E402  (the model code lives there)


def main():
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(2026)
    model = fixtures.init_weights(fixtures.GPT2LMHeadModel(), seed=2026)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    with tempfile.TemporaryDirectory() as tmp:
        fixtures.export("gpt2_tiny.onnx", model, (fixtures.ids(gen, 1, 16),), ["input_ids"],
                        ["logits"], 17, dynamic_axes=axes, checks=[(fixtures.ids(gen, 2, 32),)],
                        tmp=tmp, out_dir=HERE)


if __name__ == "__main__":
    main()
