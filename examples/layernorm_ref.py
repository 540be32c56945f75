"""Reference for layernorm.tk: H = bf16(X + R); Y = LayerNorm(H) * W + Bias over the last axis
(the bf16 sum normalised, as torch's `layer_norm(x + r)` on bf16 tensors does)."""

from __future__ import annotations

import ml_dtypes
import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    x, r, w, b = (np.asarray(inputs[n], np.float32) for n in ("X", "R", "W", "Bias"))
    eps = float(params.get("EPS", 1e-5))
    h = (x + r).astype(ml_dtypes.bfloat16).astype(np.float32)
    mean = h.mean(axis=-1, keepdims=True)
    var = h.var(axis=-1, keepdims=True)
    return {"H": h, "Y": (h - mean) / np.sqrt(var + eps) * w + b}
