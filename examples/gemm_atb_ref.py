"""Reference for gemm_atb.tk: C = A @ B in f32, from the transposed operands as stored."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    a = np.asarray(inputs["A"], np.float32) if "A" in inputs else np.asarray(inputs["At"], np.float32).T
    b = np.asarray(inputs["B"], np.float32) if "B" in inputs else np.asarray(inputs["Bt"], np.float32).T
    return {"C": a @ b}
