"""Reference for attention_bwd.tk, from the inputs each kernel reads: Delta = rowsum(dO * O) and
a zeroed dQacc (attn_bwd_delta, attn_bwd_prep), and dQ, dK, dV of softmax(Q K^T / sqrt(D)) V given
the forward's natural-log LSE and Delta (attn_bwd_dkdv, attn_bwd_dq; attn_bwd adds dQ to dQacc);
K and V have H / G heads."""

from __future__ import annotations

import numpy as np


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    if "O" in inputs:  # attn_bwd_delta, attn_bwd_prep
        o = np.asarray(inputs["O"], np.float32)
        return {"Delta": (o * np.asarray(inputs["dO"], np.float32)).sum(-1), "dQacc": np.zeros_like(o)}
    q, k, v, d_o = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V", "dO"))
    lse, delta = (np.asarray(inputs[n], np.float32)[..., None] for n in ("LSE", "Delta"))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = np.float32(1 / np.sqrt(q.shape[-1]))
    s = q @ np.swapaxes(k, -1, -2) * scale
    p = np.exp(s - lse)
    if bool(params.get("CAUSAL", False)):
        n = s.shape[-1]
        p = np.where(np.tril(np.ones((n, n), bool)), p, 0)
    ds = p * (d_o @ np.swapaxes(v, -1, -2) - delta)
    dk = (np.swapaxes(ds, -1, -2) @ q * scale).reshape(k.shape[0], -1, group, *k.shape[2:]).sum(2)
    dv = (np.swapaxes(p, -1, -2) @ d_o).reshape(k.shape[0], -1, group, *k.shape[2:]).sum(2)
    dq = ds @ k * scale
    out = {"dQ": dq, "dK": dk, "dV": dv}
    if "dQacc" in inputs:  # attn_bwd adds dQ into what dQacc holds
        out["dQacc"] = np.asarray(inputs["dQacc"], np.float32) + dq
    return out
