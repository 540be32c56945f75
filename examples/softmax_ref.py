"""Reference for softmax.tk: softmax over each row of X."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    x = np.asarray(inputs["X"], np.float32)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return {"Y": e / e.sum(axis=-1, keepdims=True)}
