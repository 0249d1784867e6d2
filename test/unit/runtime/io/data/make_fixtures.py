"""Writes the .npz fixtures that test/unit/runtime/io reads, with numpy itself,
so the reader is checked against the real producer rather than our writer:

    .venv/bin/python test/unit/runtime/io/data/make_fixtures.py

NpzFixtureTest.cpp spells out the same values; change both together.
bfloat16 comes from ml_dtypes (installed with onnx), which numpy saves as '<V2'.
"""
import os

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

ARRAYS = {
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3) / 4,
    "i64": np.array([-3, 0, 2**40], dtype=np.int64),
    "mask": np.array([[True, False, True], [False, False, True]]),
    "scalar": np.array(3.25),  # 0-d float64
    "f16": np.array([1.5, -2.0], dtype=np.float16),
    "bf16": np.array([1.0, -0.5, 256.0], dtype=ml_dtypes.bfloat16),
    "i32": np.array([[7], [-8]], dtype=np.int32),
    "i16": (np.arange(1024) % 7 - 3).astype(np.int16),  # compressible: deflate has work
    "i8": np.array([-128, 127], dtype=np.int8),
    "u8": np.array([0, 255, 9], dtype=np.uint8),
    "empty": np.zeros((0, 4), dtype=np.int32),
}

np.savez(os.path.join(HERE, "savez.npz"), **ARRAYS)
np.savez_compressed(os.path.join(HERE, "savez_compressed.npz"), **ARRAYS)
# Column-major 2x3: the reader must refuse it rather than transpose silently.
np.savez(os.path.join(HERE, "fortran.npz"),
         matrix=np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
