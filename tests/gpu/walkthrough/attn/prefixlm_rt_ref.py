"""Reference for prefixlm_rt.tk: query i of sequence b attends to key j when j < Pre[b] or j <= i."""

from __future__ import annotations

import numpy as np


def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    pre = np.asarray(inputs["Pre"], np.int64)
    n = q.shape[2]
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    allowed = (j[None] < pre[:, None, None]) | (j <= i)[None]  # [B, N, N]
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    s = np.where(allowed[:, None], s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    return {"O": (p / p.sum(axis=-1, keepdims=True)) @ v}


def inputs(params, rng):
    """A prefix of random length per sequence (0 to N)."""
    return {"Pre": rng.integers(0, params["N"] + 1, params["B"])}
