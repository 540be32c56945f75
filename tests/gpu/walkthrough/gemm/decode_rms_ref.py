"""Reference for decode_rms.tk: Y = bf16(X * rsqrt(mean(X^2) + EPS)) @ W (the normalised rows rounded
to bf16 as the kernel rounds them before the product), in f64."""
from __future__ import annotations
import numpy as np, ml_dtypes

def reference(inputs, params):
    x, w = (np.asarray(inputs[n], np.float64) for n in ("X", "W"))
    xn = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + params["EPS"])
    xn = xn.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)
    return {"Y": (xn @ w).astype(np.float32)}
