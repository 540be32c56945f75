"""Reference for linear_attention_chunked.tk: the state before each chunk (la_states) and
O_i = sum over j <= i of (Q_i . K_j) V_j (la_output, from the states it is given)."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    k, v = (np.asarray(inputs[n], np.float32) for n in ("K", "V"))
    bc = int(params.get("BC", 64))
    b, h, n, d = k.shape
    chunks = -(-n // bc)
    products = np.zeros((b, h, chunks, d, d), np.float32)
    for c in range(chunks):
        products[:, :, c] = np.swapaxes(k[:, :, c * bc:(c + 1) * bc], -1, -2) @ v[:, :, c * bc:(c + 1) * bc]
    states = np.cumsum(products, axis=2) - products  # exclusive: the chunks before c
    if "Q" not in inputs:
        return {"S": states}
    q = np.asarray(inputs["Q"], np.float32)
    given = np.asarray(inputs["S"], np.float32)
    rows = np.arange(n)
    within = np.where(rows[:, None] // bc == rows[None, :] // bc, 1, 0) * np.tril(np.ones((n, n), np.float32))
    out = (q @ np.swapaxes(k, -1, -2) * within) @ v
    out += np.einsum("bhnd,bhnde->bhne", q, np.repeat(given, bc, axis=2)[:, :, :n])
    return {"O": out}
