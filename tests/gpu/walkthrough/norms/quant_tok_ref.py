"""Reference for quant_tok.tk: per-row e4m3 quantisation, scale = max(absmax, 1e-12) / 448."""
from __future__ import annotations
import ml_dtypes
import numpy as np


def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32)
    fmax = np.float32(params.get("FMAX", 448.0))
    scale = (np.maximum(np.abs(x).max(axis=1), np.float32(1e-12)) * (np.float32(1.0) / fmax)).astype(np.float32)
    inv = (np.float32(1.0) / scale).astype(np.float32)
    q = np.clip(x * inv[:, None], -448.0, 448.0).astype(ml_dtypes.float8_e4m3fn)
    return {"Q": q, "S": scale}
