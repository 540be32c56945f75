"""Reference for xent_mean.tk: Total += mean over rows of logsumexp(L) - L[:, 0] (target 0)."""
from __future__ import annotations
import numpy as np


def reference(inputs, params):
    x = np.asarray(inputs["L"], np.float64)
    m = x.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    return {"Total": (np.asarray(inputs["Total"], np.float64) + (lse - x[:, 0]).mean()).astype(np.float32)}
