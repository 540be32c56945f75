"""Reference for colsoftmax.tk: softmax over axis 0 (down each column)."""
from __future__ import annotations
import ml_dtypes
import numpy as np


def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float64)
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return {"Y": (e / e.sum(axis=0, keepdims=True)).astype(np.float32).astype(ml_dtypes.bfloat16)}
