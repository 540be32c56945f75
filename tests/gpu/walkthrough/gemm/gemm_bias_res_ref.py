"""Reference for gemm_bias_res.tk: Y = X @ W + bias[None, :] + R, in f32."""
from __future__ import annotations
import numpy as np

def reference(inputs, params):
    x, w, bias, r = (np.asarray(inputs[n], np.float32) for n in ("X", "W", "Bias", "R"))
    return {"Y": x @ w + bias[None, :] + r}
