"""Reference for bias_gelu.tk: gelu(X + bias), erf form or tanh approximation (TANH)."""
from __future__ import annotations
import math
import ml_dtypes
import numpy as np


def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float64) + np.asarray(inputs["Bias"], np.float64)
    if params.get("TANH", False):
        y = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    else:
        y = 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    return {"Y": y.astype(np.float32).astype(ml_dtypes.bfloat16)}
