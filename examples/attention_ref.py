"""Reference for attention.tk: softmax(Q K^T / sqrt(D)) V per (batch, head), and the natural-log
log-sum-exp of each row of scaled scores; with CAUSAL, query i attends to keys j <= i."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    if bool(params.get("CAUSAL", False)):
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    total = p.sum(axis=-1, keepdims=True)
    return {"O": (p / total) @ v, "LSE": (m + np.log(total))[..., 0]}
