"""Reference for gemm.tk: C = A @ B in f32."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    a, b = (np.asarray(inputs[n], np.float32) for n in ("A", "B"))
    return {"C": a @ b}
