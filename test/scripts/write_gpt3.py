#!/usr/bin/env python3
"""Writes bench/gpt3_plan.py's GPT-3-175B-shaped model with float32 weights
whose bytes are absent (shardc plans without reading them), for the
training memory check: write_gpt3.py OUT.onnx [--layers N]; --hidden,
--heads, --seq, --vocab and --batch give other GPT shapes."""
import argparse
import pathlib
import sys

import onnx
from onnx import TensorProto

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
from gpt3_plan import gpt3  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output")
    parser.add_argument("--layers", type=int, default=96)
    parser.add_argument("--hidden", type=int, default=12288)
    parser.add_argument("--heads", type=int, default=96)
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    onnx.save_model(gpt3(args.layers, hidden=args.hidden, heads=args.heads, seq=args.seq,
                         vocab=args.vocab, batch=args.batch, weight_type=TensorProto.FLOAT),
                    args.output)


if __name__ == "__main__":
    main()
