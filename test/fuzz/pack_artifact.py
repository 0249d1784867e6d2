#!/usr/bin/env python3
"""Packs rank 0 of an artifact into one input of the artifact fuzzer.

    pack_artifact.py ARTIFACT_DIR OUT

The input is manifest.json, rank0.program and rank0.safetensors, each ended by
the separator test/fuzz/ArtifactFuzzer.cpp splits on.
"""
import os
import sys

SEPARATOR = b"\n#shardc-fuzz-file#\n"


def main():
    directory, out = sys.argv[1:]
    parts = []
    for name in ("manifest.json", "rank0.program", "rank0.safetensors"):
        with open(os.path.join(directory, name), "rb") as f:
            parts.append(f.read() + SEPARATOR)
    with open(out, "wb") as f:
        f.write(b"".join(parts))


if __name__ == "__main__":
    main()
