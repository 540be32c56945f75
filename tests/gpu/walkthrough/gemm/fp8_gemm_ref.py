"""Reference for fp8_gemm.tk: Y = (A @ Bt.T) * Scale[0] * Scale[1], in f64 (A, Bt already e4m3 values)."""
from __future__ import annotations
import numpy as np

def reference(inputs, params):
    a, bt = (np.asarray(inputs[n], np.float64) for n in ("A", "Bt"))
    s = np.asarray(inputs["Scale"], np.float32)
    return {"Y": ((a @ bt.T) * np.float64(s[0] * s[1])).astype(np.float32)}
