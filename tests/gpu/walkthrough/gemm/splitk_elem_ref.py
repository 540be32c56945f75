"""Reference for splitk.tk: C (its contents at launch) + A @ B, in f32."""
from __future__ import annotations
import numpy as np

def reference(inputs, params):
    a, b, c = (np.asarray(inputs[n], np.float32) for n in ("A", "B", "C"))
    return {"C": c + a @ b}
