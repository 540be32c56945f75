"""Reference for attention_softcap.tk: softmax(CAP tanh(Q K^T / (sqrt(D) CAP))) V per (batch,
head), and the natural-log log-sum-exp of each row of capped scores."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    cap = np.float32(params["CAP"])
    s = cap * np.tanh(q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1])) / cap)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    total = p.sum(axis=-1, keepdims=True)
    return {"O": (p / total) @ v, "LSE": (m + np.log(total))[..., 0]}
