"""Reference for attention_alibi.tk: softmax(Q K^T / sqrt(D) - slope_h |i - j|) V per (batch,
head), slope_h = 2^(-8 (h + 1) / H), and the natural-log log-sum-exp of each row of biased scores."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    heads, n = q.shape[1], q.shape[2]
    slopes = np.exp2(-8.0 * np.arange(1, heads + 1) / heads).astype(np.float32)
    positions = np.arange(n)
    distance = np.abs(positions[:, None] - positions[None, :]).astype(np.float32)
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1])) - slopes[:, None, None] * distance
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    total = p.sum(axis=-1, keepdims=True)
    return {"O": (p / total) @ v, "LSE": (m + np.log(total))[..., 0]}
