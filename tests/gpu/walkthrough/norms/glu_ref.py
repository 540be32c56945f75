"""Reference for glu.tk: SwiGLU silu(G) * U, or GeGLU gelu(G) * U (erf form) when GELU."""
from __future__ import annotations
import math
import ml_dtypes
import numpy as np


def reference(inputs, params):
    g = np.asarray(inputs["G"], np.float64)
    u = np.asarray(inputs["U"], np.float64)
    if params.get("GELU", False):
        erf = np.vectorize(math.erf)
        act = 0.5 * g * (1.0 + erf(g / math.sqrt(2.0)))
    else:
        act = g / (1.0 + np.exp(-g))
    return {"Y": (act * u).astype(np.float32).astype(ml_dtypes.bfloat16)}
