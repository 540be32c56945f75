"""Reference for splitk_bf16.tk: C + A @ B, each split's partial sum rounded to bf16 and added in
bf16 (block order s = 0, 1, ...), emulated in f32 with bf16 rounding after each add."""
from __future__ import annotations
import numpy as np, ml_dtypes

def reference(inputs, params):
    a, b, c = (np.asarray(inputs[n], np.float32) for n in ("A", "B", "C"))
    splits, bk = int(params["SPLITS"]), int(params["BK"])
    ktiles = -(-a.shape[1] // bk); per = -(-ktiles // splits)
    r = lambda x: x.astype(ml_dtypes.bfloat16).astype(np.float32)
    for s in range(splits):
        lo, hi = s * per * bk, min((s + 1) * per, ktiles) * bk
        part = a[:, lo:hi] @ b[lo:hi] if hi > lo else np.zeros_like(c)
        c = r(c + r(part))
    return {"C": c}
