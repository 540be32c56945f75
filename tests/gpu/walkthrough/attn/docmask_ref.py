"""Reference for docmask.tk: query i sees key j only within its own document (Seg equal),
and j <= i with CAUSAL."""

from __future__ import annotations

import numpy as np


def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    seg = np.asarray(inputs["Seg"])
    n = q.shape[2]
    allowed = seg[:, None, :, None] == seg[:, None, None, :]  # [B, 1, N, N]
    if bool(params.get("CAUSAL", False)):
        allowed = allowed & np.tril(np.ones((n, n), bool))
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    s = np.where(allowed, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    return {"O": (p / p.sum(axis=-1, keepdims=True)) @ v}


def inputs(params, rng):
    """Documents of random lengths (sorted ids), so the mask is not all one document."""
    b, n = params["B"], params["N"]
    return {"Seg": np.sort(rng.integers(0, 4, (b, n)), axis=1)}
