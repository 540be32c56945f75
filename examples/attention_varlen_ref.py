"""Reference and host helpers for attention_varlen.tk: sequences packed head-major ([H, T, D]),
sequence b at rows cu_seqlens[b] .. cu_seqlens[b + 1]; softmax(Q K^T / sqrt(D)) V within each
sequence (with CAUSAL, query i attends to keys j <= i of its own sequence)."""

from __future__ import annotations

import numpy as np


def tile_table(cu_seqlens: np.ndarray, block_q: int = 128, causal: bool = False) -> np.ndarray:
    """The kernel's `Tiles`: one (sequence, query tile) row per block, the blocks with the most key
    tiles to walk first (the longest sequences; with `causal`, their last query tiles), so that
    the last wave is short ones."""
    lengths = np.diff(np.asarray(cu_seqlens, np.int64))
    rows = [(b, q) for b in range(len(lengths)) for q in range(-(-int(lengths[b]) // block_q))]
    work = [q + 1 if causal else -(-int(lengths[b]) // block_q) for b, q in rows]
    order = sorted(range(len(rows)), key=lambda i: -work[i])
    return np.asarray([rows[i] for i in order], np.int32).reshape(-1, 2)


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    cu = np.asarray(inputs["CU"], np.int64)
    # rows outside every sequence keep what O held (nothing is written there)
    out = np.array(inputs["O"], np.float32) if "O" in inputs else np.full(q.shape, np.nan, np.float32)
    causal = bool(params.get("CAUSAL", False))
    for start, end in zip(cu[:-1], cu[1:]):
        if end <= start:
            continue  # an empty sequence: no query tile
        s = q[:, start:end] @ np.swapaxes(k[:, start:end], -1, -2) / np.float32(np.sqrt(q.shape[-1]))
        if causal:
            n = end - start
            s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        out[:, start:end] = (p / p.sum(axis=-1, keepdims=True)) @ v[:, start:end]
    return {"O": out}
