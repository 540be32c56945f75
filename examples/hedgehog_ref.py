"""Reference for hedgehog.tk, in its chunked form: the states before each chunk (hh_states: S_c, the
sum over chunks c' < c of phi(K_c')^T V_c', and z_c, the column sums of those phi(K_c')), and the
output from the states it is given (hh_output: each query's sliding-window softmax over the keys
j <= t of its chunk and the one before, plus linear attention through S_{c-1}, z_{c-1}).
`hedgehog` chains the two in float64, the form the tests compare with the quadratic definition.

`reference` (the kernels' check) rounds what the kernels give wgmma in bf16 as they do: phi(K),
phi(Q) and the window weights (of the numerator; their sum is taken before rounding). The
checks feed random states, whose denominators can come close to 0, where those roundings show."""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np


def bf16(x: np.ndarray) -> np.ndarray:
    return x.astype(ml_dtypes.bfloat16).astype(x.dtype)


def same(x: np.ndarray) -> np.ndarray:
    return x


def softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def features(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """phi(x) = [softmax(x W), softmax(-x W)] for x [B, H, N, D] and a per-head W [H, D, F / 2]."""
    xw = np.einsum("bhnd,hdf->bhnf", x, w)
    return np.concatenate([softmax_rows(xw), softmax_rows(-xw)], -1)


def states(k: np.ndarray, v: np.ndarray, wk: np.ndarray, bc: int,
           operand: Callable[[np.ndarray], np.ndarray] = same) -> tuple[np.ndarray, np.ndarray]:
    """S [B, H, NC, F, D] and z [B, H, NC, F]: the sums over the chunks before each chunk."""
    phi = operand(features(k, wk))
    b, h, n, f = phi.shape
    chunks = -(-n // bc)
    products = np.zeros((b, h, chunks, f, v.shape[-1]), phi.dtype)
    sums = np.zeros((b, h, chunks, f), phi.dtype)
    for c in range(chunks):
        rows = slice(c * bc, (c + 1) * bc)
        products[:, :, c] = np.swapaxes(phi[:, :, rows], -1, -2) @ v[:, :, rows]
        sums[:, :, c] = phi[:, :, rows].sum(-2)
    return np.cumsum(products, 2) - products, np.cumsum(sums, 2) - sums  # exclusive: the chunks before c


def output(q: np.ndarray, k: np.ndarray, v: np.ndarray, wq: np.ndarray, s: np.ndarray, z: np.ndarray,
           bc: int, alpha: float, beta: float, operand: Callable[[np.ndarray], np.ndarray] = same) -> np.ndarray:
    """O from the states before each chunk: chunk c's linear part reads S_{c-1}, z_{c-1} (keys of
    chunks c - 2 and older; zero for c < 2), its window the keys of chunks c - 1 and c up to the query."""
    n, d = q.shape[-2:]
    rows = np.arange(n)
    chunk: np.ndarray = rows // bc
    window = (chunk[None, :] >= chunk[:, None] - 1) & (rows[None, :] <= rows[:, None])
    scores = np.where(window, q @ np.swapaxes(k, -1, -2) / np.sqrt(d), -np.inf)
    w = beta * np.exp(scores - scores.max(-1, keepdims=True))
    phi_q = operand(alpha * features(q, wq))
    before = np.maximum(chunk - 1, 0)
    linear = np.einsum("bhnf,bhnfd->bhnd", phi_q, s[:, :, before])
    linear_den = np.einsum("bhnf,bhnf->bhn", phi_q, z[:, :, before])
    return (operand(w) @ v + linear) / (w.sum(-1) + linear_den + 1e-6)[..., None]


def hedgehog(q: np.ndarray, k: np.ndarray, v: np.ndarray, wq: np.ndarray, wk: np.ndarray,
             bc: int = 64, alpha: float = 1.0, beta: float = 1.0) -> np.ndarray:
    q, k, v, wq, wk = (np.asarray(a, np.float64) for a in (q, k, v, wq, wk))
    s, z = states(k, v, wk, bc)
    return output(q, k, v, wq, s, z, bc, alpha, beta)


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    k, v = (np.asarray(inputs[n], np.float32) for n in ("K", "V"))
    bc = int(params.get("BC", 64))
    if "Q" not in inputs:
        s, z = states(k, v, np.asarray(inputs["WK"], np.float32), bc, bf16)
        return {"S": s, "Z": z}
    q, wq, s, z = (np.asarray(inputs[n], np.float32) for n in ("Q", "WQ", "S", "Z"))
    return {"O": output(q, k, v, wq, s, z, bc, float(params.get("ALPHA", 1.0)), float(params.get("BETA", 1.0)), bf16)}
