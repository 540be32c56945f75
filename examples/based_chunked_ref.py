"""Inputs and reference for based_chunked.tk. `feature_maps(dk, f2)` builds E1 and E2, whose
products (x E1) * (x E2) are the second-order Taylor features phi2(x) (phi2(x) . phi2(y) =
(x . y)^2); `reference(inputs, params)` is Based attention (based_ref.py) with the quadratic term
taken through whatever E1 and E2 it is given (`tkc run --check`), which for feature_maps' is
s^2 / 2 up to their bf16 rounding."""

from __future__ import annotations

import numpy as np


def feature_maps(dk: int = 16, f2: int = 144) -> tuple[np.ndarray, np.ndarray]:
    """E1, E2 [dk, f2] bf16-exact f32: column f of the pair (a, b), a <= b, picks x_a (times
    sqrt 2 where a < b) and x_b; columns past the dk (dk + 1) / 2 pairs are zero."""
    pairs = [(a, b) for a in range(dk) for b in range(a, dk)]
    if len(pairs) > f2:
        raise ValueError(f"{len(pairs)} products of {dk} features need F2 >= {len(pairs)}, got {f2}")
    e1, e2 = np.zeros((dk, f2), np.float32), np.zeros((dk, f2), np.float32)
    for f, (a, b) in enumerate(pairs):
        e1[a, f], e2[b, f] = (np.sqrt(2.0) if a < b else 1.0), 1.0
    return e1, e2


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    q, k, v, e1, e2 = (np.asarray(inputs[n], np.float64) for n in ("Q", "K", "V", "E1", "E2"))
    dk = q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(dk)
    q2, k2 = (q @ e1) * (q @ e2), (k @ e1) * (k @ e2)
    n = s.shape[-1]
    w = np.where(np.tril(np.ones((n, n), bool)), 1 + s + q2 @ np.swapaxes(k2, -1, -2) * (0.5 / dk), 0)
    return {"O": (w @ v) / (w.sum(-1, keepdims=True) + 1e-6)}


def inputs(params: dict[str, int | float], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """E1 and E2 as the kernel needs them (`tkc run` fills the other inputs at random)."""
    e1, e2 = feature_maps(int(params["DK"]), int(params["F2"]))
    return {"E1": e1, "E2": e2}
