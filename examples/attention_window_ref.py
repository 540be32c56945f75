"""Reference for attention_window.tk: causal sliding-window attention, query i attending to the
keys i - W < j <= i, and the natural-log log-sum-exp of each row of scaled scores."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    n, window = q.shape[2], int(params["W"])
    gap = np.arange(n)[:, None] - np.arange(n)[None, :]
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    s = np.where((gap >= 0) & (gap < window), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    total = p.sum(axis=-1, keepdims=True)
    return {"O": (p / total) @ v, "LSE": (m + np.log(total))[..., 0]}
