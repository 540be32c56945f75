"""Reference for prefixlm.tk: query i attends to key j when j < P or j <= i."""

from __future__ import annotations

import numpy as np


def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    n, prefix = q.shape[2], int(params["P"])
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    s = np.where((j < prefix) | (j <= i), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    tot = p.sum(axis=-1, keepdims=True)
    return {"O": (p / tot) @ v, "LSE": (m + np.log(tot))[..., 0]}
