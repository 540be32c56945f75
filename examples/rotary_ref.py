"""Reference for rotary.tk: rotate the two halves of every head vector by per-position angles."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    x, cos, sin = (np.asarray(inputs[n], np.float32) for n in ("X", "COS", "SIN"))
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return {"Y": np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)}
