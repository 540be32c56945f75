"""Reference for fp8_quant.tk: per-row-scaled e4m3 quantisation (kernel fp8_quant: X -> Q, S)
and dequantisation (kernel fp8_dequant: Q, S -> Y); the inputs say which kernel ran."""

from __future__ import annotations

import ml_dtypes
import numpy as np

E4M3_MAX = 448.0


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    if "X" in inputs:
        x = np.asarray(inputs["X"], np.float32)
        scale = (np.maximum(np.abs(x).max(axis=1), np.float32(1e-30)) / np.float32(E4M3_MAX)).astype(np.float32)
        q = np.clip(x / scale[:, None], -E4M3_MAX, E4M3_MAX).astype(ml_dtypes.float8_e4m3fn)
        return {"Q": q, "S": scale}
    q = np.asarray(inputs["Q"], np.float32)
    scale = np.asarray(inputs["S"], np.float32)
    return {"Y": (q * scale[:, None]).astype(ml_dtypes.bfloat16)}
