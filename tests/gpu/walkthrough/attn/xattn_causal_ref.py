"""Reference for xattn_causal.tk: query i attends to key j when j <= i + NK - NQ."""

from __future__ import annotations

import numpy as np


def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    nq, nk = q.shape[2], k.shape[2]
    allowed = np.arange(nk)[None, :] <= np.arange(nq)[:, None] + (nk - nq)
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    s = np.where(allowed, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return {"O": (p / p.sum(axis=-1, keepdims=True)) @ v}
