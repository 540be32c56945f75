"""Reference for layernorm.tk: H = X + R; Y = LayerNorm(H) * W + Bias over the last axis."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    x, r, w, b = (np.asarray(inputs[n], np.float32) for n in ("X", "R", "W", "Bias"))
    eps = float(params.get("EPS", 1e-5))
    h = x + r
    mean = h.mean(axis=-1, keepdims=True)
    var = h.var(axis=-1, keepdims=True)
    return {"H": h, "Y": (h - mean) / np.sqrt(var + eps) * w + b}
