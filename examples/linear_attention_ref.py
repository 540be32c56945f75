"""Reference for linear_attention.tk: O_i = sum over j <= i of (Q_i . K_j) V_j, per (batch, head)."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    n = q.shape[-2]
    a = np.where(np.tril(np.ones((n, n), bool)), q @ np.swapaxes(k, -1, -2), np.float32(0))
    return {"O": a @ v}
