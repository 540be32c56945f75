"""Reference for swiglu.tk: H = silu(X @ Wg) * (X @ Wu) in f32."""
from __future__ import annotations
import numpy as np

def reference(inputs, params):
    x, wg, wu = (np.asarray(inputs[n], np.float64) for n in ("X", "Wg", "Wu"))
    g = x @ wg
    return {"H": (g / (1.0 + np.exp(-g)) * (x @ wu)).astype(np.float32)}
