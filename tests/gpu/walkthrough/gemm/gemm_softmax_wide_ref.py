"""Reference for gemm_softmax_wide.tk: P = softmax(X @ W, axis=1), in f64."""
from __future__ import annotations
import numpy as np

def reference(inputs, params):
    x, w = (np.asarray(inputs[n], np.float64) for n in ("X", "W"))
    s = x @ w
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return {"P": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}
