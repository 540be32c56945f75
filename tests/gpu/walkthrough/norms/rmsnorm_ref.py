"""Reference for rmsnorm.tk: Y = X * rsqrt(mean(X^2) + EPS) * W."""
from __future__ import annotations
import ml_dtypes
import numpy as np


def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32)
    w = np.asarray(inputs["W"], np.float32)
    eps = float(params.get("EPS", 1e-6))
    r = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    return {"Y": (x * r * w).astype(ml_dtypes.bfloat16)}
