"""Reference for decode_gemm.tk: Y = X @ W in f32."""
from __future__ import annotations
import numpy as np

def reference(inputs, params):
    x, w = (np.asarray(inputs[n], np.float32) for n in ("X", "W"))
    return {"Y": x @ w}
