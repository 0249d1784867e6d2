#!/usr/bin/env python3
"""Makes the inputs of export_onnx.test's error cases.

    export_artifact.py external MODEL.onnx OUT.onnx   MODEL with every initializer
                                                       in external data (OUT.onnx.data)
    export_artifact.py older ARTIFACT                 drops training.export from the
                                                       manifest, as an older shardc wrote it
    export_artifact.py garbage ARTIFACT               replaces the embedded model with bytes
                                                       that are no protobuf (its size and
                                                       CRC-32 in the manifest made to match)
    export_artifact.py parts ARTIFACT                 says the first trained parameter is a
                                                       stack of 2 initializers, which its
                                                       dim 0 is not
"""
import json
import os
import sys
import zlib


def manifest_of(artifact):
    path = os.path.join(artifact, "manifest.json")
    return path, json.load(open(path))


def main():
    kind, *args = sys.argv[1:]
    if kind == "external":
        import onnx
        model = onnx.load(args[0])
        onnx.save_model(model, args[1], save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(args[1]) + ".data", size_threshold=0)
    elif kind == "older":
        path, manifest = manifest_of(args[0])
        del manifest["training"]["export"]
        json.dump(manifest, open(path, "w"), indent=2)
    elif kind == "garbage":
        path, manifest = manifest_of(args[0])
        name = manifest["training"]["export"]["model"]
        # A length-delimited field 7 whose length runs past the end.
        garbage = b"\x3a\xff\xff\xff\x0f" + b"\x00" * 16
        open(os.path.join(args[0], name), "wb").write(garbage)
        manifest["files"][name] = {"bytes": len(garbage),
                                   "crc32": format(zlib.crc32(garbage), "08x")}
        json.dump(manifest, open(path, "w"), indent=2)
    elif kind == "parts":
        path, manifest = manifest_of(args[0])
        manifest["training"]["parameters"][0]["parts"] = ["expert.0", "expert.1"]
        json.dump(manifest, open(path, "w"), indent=2)
    else:
        sys.exit(f"export_artifact.py: unknown kind '{kind}'")


if __name__ == "__main__":
    main()
