"""Reference for ssd.tk: the state before each chunk (ssd_states) and the output of the scalar-decay
recurrence h_t = exp(g_t) h_{t-1} + k_t^T v_t, o_t = SCALE q_t h_t (ssd_output, within each chunk
from its inputs, across chunks from the states it is given)."""

from __future__ import annotations

import numpy as np


def _chunks(g: np.ndarray, bc: int) -> tuple[np.ndarray, np.ndarray]:
    """Each token's chunk-local inclusive cumulative g, and its chunk index."""
    n = g.shape[-1]
    chunk = np.arange(n) // bc
    cs = np.cumsum(g, axis=-1)
    starts = np.concatenate([np.zeros(g.shape[:-1] + (1,), np.float32), cs], axis=-1)[..., chunk * bc]
    return cs - starts, chunk


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    k, v, g = (np.asarray(inputs[n], np.float32) for n in ("K", "V", "G"))
    bc = int(params.get("BC", 64))
    cs, chunk = _chunks(g, bc)
    if "Q" not in inputs:
        b, h, n, d = k.shape
        states = np.zeros((b, h, -(-n // bc), d, d), np.float32)
        for c in range(1, states.shape[2]):
            rows = slice((c - 1) * bc, c * bc)
            last = cs[..., rows][..., -1:]
            decayed = k[:, :, rows] * np.exp(last - cs[..., rows])[..., None]
            states[:, :, c] = np.exp(last)[..., None] * states[:, :, c - 1] + np.swapaxes(decayed, -1, -2) @ v[:, :, rows]
        return {"S": states}
    q = np.asarray(inputs["Q"], np.float32)
    given = np.asarray(inputs["S"], np.float32)
    same = (chunk[:, None] == chunk[None, :]) & np.tril(np.ones((len(chunk),) * 2, bool))
    decay = np.where(same, np.exp(np.where(same, cs[..., :, None] - cs[..., None, :], 0)), 0)
    out = (q @ np.swapaxes(k, -1, -2) * decay) @ v
    out += np.exp(cs)[..., None] * np.einsum("bhnd,bhnde->bhne", q, given[:, :, chunk])
    return {"O": out * np.float32(params.get("SCALE", 0.125))}
