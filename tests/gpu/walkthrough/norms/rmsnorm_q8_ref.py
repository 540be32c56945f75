"""Reference for rmsnorm_q8.tk: H = bf16(X + R); RMSNorm(H) * W quantised per row to e4m3."""
from __future__ import annotations
import ml_dtypes
import numpy as np


def reference(inputs, params):
    x, r, w = (np.asarray(inputs[k], np.float32) for k in ("X", "R", "W"))
    eps = np.float32(params.get("EPS", 1e-6))
    d = x.shape[1]
    h = (x + r).astype(ml_dtypes.bfloat16).astype(np.float32)
    rr = (1.0 / np.sqrt((h * h).sum(axis=1, dtype=np.float32) * np.float32(1.0 / d) + eps)).astype(np.float32)
    n = (h * rr[:, None] * w).astype(np.float32)
    s = (np.maximum(np.abs(n).max(axis=1), np.float32(1e-12)) / np.float32(448.0)).astype(np.float32)
    q = np.clip(n / s[:, None], -448, 448).astype(ml_dtypes.float8_e4m3fn)
    return {"H": h.astype(ml_dtypes.bfloat16), "Q": q, "S": s}
