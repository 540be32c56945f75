"""Reference for add_rmsnorm.tk: H = bf16(X + R); Y = H * rsqrt(mean(H^2) + EPS) * W."""
from __future__ import annotations
import ml_dtypes
import numpy as np


def reference(inputs, params):
    x, r, w = (np.asarray(inputs[n], np.float32) for n in ("X", "R", "W"))
    eps = float(params.get("EPS", 1e-5))
    h = (x + r).astype(ml_dtypes.bfloat16).astype(np.float32)
    y = h / np.sqrt((h * h).mean(axis=-1, keepdims=True) + eps) * w
    return {"H": h.astype(ml_dtypes.bfloat16), "Y": y.astype(ml_dtypes.bfloat16)}
