"""Reference for ssd.tk: the state before each chunk (ssd_states, or ssd_passing from the chunks' own
terms), each chunk's own term (ssd_chunk_states) and the output of the scalar-decay recurrence
h_t = exp(g_t) h_{t-1} + k_t^T v_t, o_t = SCALE q_t h_t (ssd_output, within each chunk from its
inputs, across chunks from the states it is given)."""

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
    g = np.asarray(inputs["G"], np.float32)
    bc = int(params.get("BC", 64))
    cs, chunk = _chunks(g, bc)
    nc = -(-g.shape[-1] // bc)
    totals = [cs[..., c * bc : (c + 1) * bc][..., -1:] for c in range(nc)]  # each chunk's sum of g
    if "L" in inputs:  # ssd_passing: S_{c+1} = exp(total_c) S_c + L_c
        terms = np.asarray(inputs["L"], np.float32)
        states = np.zeros_like(terms)
        for c in range(1, nc):
            states[:, :, c] = np.exp(totals[c - 1])[..., None] * states[:, :, c - 1] + terms[:, :, c - 1]
        return {"S": states}
    k, v = (np.asarray(inputs[n], np.float32) for n in ("K", "V"))
    if "Q" not in inputs:  # ssd_states (S) or ssd_chunk_states (L)
        b, h, _, d = k.shape
        terms = np.zeros((b, h, nc, d, d), np.float32)
        states = np.zeros_like(terms)
        for c in range(nc):
            rows = slice(c * bc, (c + 1) * bc)
            decayed = k[:, :, rows] * np.exp(totals[c] - cs[..., rows])[..., None]
            terms[:, :, c] = np.swapaxes(decayed, -1, -2) @ v[:, :, rows]
            if c + 1 < nc:
                states[:, :, c + 1] = np.exp(totals[c])[..., None] * states[:, :, c] + terms[:, :, c]
        return {"S": states, "L": terms}
    q = np.asarray(inputs["Q"], np.float32)
    given = np.asarray(inputs["S"], np.float32)
    same = (chunk[:, None] == chunk[None, :]) & np.tril(np.ones((len(chunk),) * 2, bool))
    decay = np.where(same, np.exp(np.where(same, cs[..., :, None] - cs[..., None, :], 0)), 0)
    out = (q @ np.swapaxes(k, -1, -2) * decay) @ v
    out += np.exp(cs)[..., None] * np.einsum("bhnd,bhnde->bhne", q, given[:, :, chunk])
    return {"O": out * np.float32(params.get("SCALE", 0.125))}
