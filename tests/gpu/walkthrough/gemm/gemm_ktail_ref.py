"""Reference for gemm_ktail.tk: C = At.T @ B in f64."""
from __future__ import annotations
import numpy as np

def reference(inputs, params):
    at, b = (np.asarray(inputs[n], np.float64) for n in ("At", "B"))
    return {"C": (at.T @ b).astype(np.float32)}
