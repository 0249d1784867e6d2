#!/usr/bin/env python3
"""Compiles every fixture with --target=cuda and checks what the artifacts hold.

    cuda_artifacts.py --fixtures DIR --shardc SHARDC --out DIR [--arch sm_XX] [SHARDC FLAGS...]

For each fixture of DIR/fixtures.json: `shardc MODEL --target=cuda
--cuda-arch ARCH -o OUT/NAME`, then from the manifest: target and arch as
asked, and, when the program has fused steps, the generated kernels.cu with
one function per step and a kernels.fatbin whose entries (read from the
fatbin's own headers: kind 2 is SASS, kind 1 is PTX, the architecture a
32-bit field of each entry header) are SASS and PTX for exactly ARCH.
Prints one line per fixture and a closing "N compiled, M failed".
"""
import argparse
import json
import pathlib
import re
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50


def fatbin_entries(path):
    """(kind, arch) of every entry: kind 'sass' or 'ptx', arch like 90."""
    data = path.read_bytes()
    magic, _, header, size = struct.unpack_from("<IHHQ", data, 0)
    if magic != FATBIN_MAGIC:
        raise ValueError(f"{path.name} is not a fatbin (magic {magic:#x})")
    entries, offset = [], header
    while offset < header + size:
        kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, offset)
        arch = struct.unpack_from("<I", data, offset + 28)[0]
        entries.append(({1: "ptx", 2: "sass"}.get(kind, f"kind{kind}"), arch))
        offset += entry_header + payload
    return entries


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fixtures", type=pathlib.Path, required=True)
    parser.add_argument("--shardc", required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    parser.add_argument("--arch", default="sm_90")
    args, extra = parser.parse_known_args()
    failed = 0
    args.out.mkdir(parents=True, exist_ok=True)
    entries = json.loads((args.fixtures / "fixtures.json").read_text())
    for entry in entries:
        out = args.out / entry["name"]
        command = [args.shardc, str(args.fixtures / entry["file"]), "--target=cuda",
                   f"--cuda-arch={args.arch}", "-o", str(out)] + extra
        command += [f"--dim={k}={v}" for k, v in entry["dims"].items()]
        run = subprocess.run(command, capture_output=True, text=True)
        problems = []
        if run.returncode != 0:
            problems.append(run.stderr.strip())
        else:
            manifest = json.loads((out / "manifest.json").read_text())
            if manifest["target"] != "cuda" or manifest["cuda_arch"] != args.arch:
                problems.append(f"manifest says {manifest['target']} {manifest['cuda_arch']}")
            steps = 0
            if manifest.get("cuda_kernels"):
                source = (out / "kernels.cu").read_text()
                steps = len(re.findall(r"__global__ void shardc_fused_\d+\(", source))
                number = int(args.arch[3:5])
                found = sorted(set(fatbin_entries(out / manifest["cuda_kernels"])))
                if found != [("ptx", number), ("sass", number)]:
                    problems.append(f"fatbin holds {found}, expected sass and ptx for {args.arch}")
            detail = f"{steps} generated kernel(s)"
        status = "ok  " if not problems else "FAIL"
        print(f"{status} {entry['name']}: " + (detail if not problems else "; ".join(problems)))
        failed += bool(problems)
    print(f"{len(entries) - failed} compiled, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
