"""Reference for softmax_f16.tk: softmax per row, every op rounded to f16."""
from __future__ import annotations
import numpy as np


def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float16)
    m = x.max(axis=1, keepdims=True)
    e = np.exp((x.astype(np.float32) - m).astype(np.float16).astype(np.float32)).astype(np.float16)
    s = e.astype(np.float32).sum(axis=1, keepdims=True).astype(np.float16)
    return {"Y": (e.astype(np.float32) / s.astype(np.float32)).astype(np.float16)}
