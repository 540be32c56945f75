"""Reference for gqa.tk: grouped-query attention, query head h uses KV head h // GROUP."""

from __future__ import annotations

import numpy as np


def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    group = int(params["GROUP"])
    assert q.shape[1] == k.shape[1] * group, (q.shape, k.shape, group)
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    tot = p.sum(axis=-1, keepdims=True)
    return {"O": (p / tot) @ v, "LSE": (m + np.log(tot))[..., 0]}
