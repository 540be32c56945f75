"""Reference for bias.tk: softmax(Q K^T / sqrt(D) + Bias[h]) V and the natural-log LSE."""

from __future__ import annotations

import numpy as np


def reference(inputs, params):
    q, k, v, bias = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V", "Bias"))
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1])) + bias[None]
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    tot = p.sum(axis=-1, keepdims=True)
    return {"O": (p / tot) @ v, "LSE": (m + np.log(tot))[..., 0]}
