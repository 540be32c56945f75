"""Reference for based.tk: o_i = sum over j <= i of w_ij v_j / (sum over j <= i of w_ij + 1e-6),
w_ij = 1 + s + s^2 / 2, s = q_i . k_j / sqrt(DK) (fla-core's naive_parallel_based)."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    n = s.shape[-1]
    w = np.where(np.tril(np.ones((n, n), bool)), 1 + s + s * s / 2, 0)
    return {"O": (w @ v) / (w.sum(-1, keepdims=True) + np.float32(1e-6))}
