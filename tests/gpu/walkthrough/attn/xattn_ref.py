"""Reference for xattn.tk: cross-attention softmax(Q K^T * SCALE) V with NQ queries, NK keys."""

from __future__ import annotations

import numpy as np


def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    s = q @ np.swapaxes(k, -1, -2) * np.float32(params["SCALE"])
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return {"O": (p / p.sum(axis=-1, keepdims=True)) @ v}
