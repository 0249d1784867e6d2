#!/usr/bin/env python3
"""Copies an artifact and breaks it the way an attacker would, then rewrites
the manifest's sizes and CRC-32s so that the checksums still pass (the
manifest itself is not checksummed). For artifact_checks.test.

    tamper_artifact.py --flatc FLATC --schema PROGRAM.fbs SRC DST CASE

Cases:
  no-outputs    the manifest lists no outputs
  output-dtype  the manifest's first output is float64
  input-smaller the manifest's first input has half its last dim (the program's
                input buffer is then larger than what the caller passes)
  float-dim     the manifest's first input has a dim of 3.3e111 (a float, which
                a careless reader converts to int64 out of range)
  arena-wrap    the program's first arena buffer at offset 2^64 - 16
  no-steps      the program has no steps
  swap-ranks    rank0.safetensors and rank1.safetensors swapped
  mesh          the manifest's mesh is dp=2 (the program's is tp=2)
  escape        rank 0's weights named '../outside.safetensors'
  symlink-out   rank0.safetensors a symlink to a copy outside the artifact
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import tempfile
import zlib


def program_json(flatc, schema, path):
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([flatc, "--json", "--strict-json", "--raw-binary", "-o", scratch,
                        str(schema), "--", str(path)], check=True)
        return json.loads((pathlib.Path(scratch) / (path.stem + ".json")).read_text())


def write_program(flatc, schema, path, program):
    with tempfile.TemporaryDirectory() as scratch:
        source = pathlib.Path(scratch) / (path.stem + ".json")
        source.write_text(json.dumps(program))
        subprocess.run([flatc, "-b", "-o", scratch, str(schema), str(source)], check=True)
        shutil.copyfile(pathlib.Path(scratch) / (path.stem + ".program"), path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--flatc", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("src", type=pathlib.Path)
    parser.add_argument("dst", type=pathlib.Path)
    parser.add_argument("case")
    args = parser.parse_args()
    if args.dst.exists():
        shutil.rmtree(args.dst)
    shutil.copytree(args.src, args.dst)
    manifest_path = args.dst / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    program_path = args.dst / "rank0.program"
    case = args.case
    if case == "no-outputs":
        manifest["outputs"] = []
    elif case == "output-dtype":
        manifest["outputs"][0]["dtype"] = "float64"
    elif case == "input-smaller":
        manifest["inputs"][0]["shape"][-1] //= 2
    elif case == "float-dim":
        manifest["inputs"][0]["shape"][0] = 3.3e111
    elif case in ("arena-wrap", "no-steps"):
        program = program_json(args.flatc, args.schema, program_path)
        if case == "no-steps":
            program["steps"] = []
        else:
            arena = next(b for b in program["buffers"] if b.get("storage", "Arena") == "Arena")
            arena["offset"] = 2**64 - 16
        write_program(args.flatc, args.schema, program_path, program)
    elif case == "swap-ranks":
        first, second = args.dst / "rank0.safetensors", args.dst / "rank1.safetensors"
        held = first.read_bytes()
        first.write_bytes(second.read_bytes())
        second.write_bytes(held)
    elif case == "mesh":
        manifest["mesh"]["axes"] = {"dp": 2}
    elif case == "escape":
        manifest["ranks"][0]["weights"] = "../outside.safetensors"
        shutil.copyfile(args.dst / "rank0.safetensors", args.dst.parent / "outside.safetensors")
    elif case == "symlink-out":
        outside = args.dst.parent / "outside.safetensors"
        shutil.move(args.dst / "rank0.safetensors", outside)
        (args.dst / "rank0.safetensors").symlink_to(outside.resolve())
    else:
        parser.error("unknown case " + case)
    for name, facts in manifest["files"].items():
        path = args.dst / name
        data = path.read_bytes()
        facts["bytes"] = len(data)
        facts["crc32"] = "%08x" % (zlib.crc32(data) & 0xFFFFFFFF)
    manifest_path.write_text(json.dumps(manifest, indent=2))


if __name__ == "__main__":
    main()
