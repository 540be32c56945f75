"""Reference for splitkv_elem.tk: split sp owns keys [sp * CH, min((sp + 1) * CH, NK)),
CH = ceildiv(NK, S); unnormalised partial output, log2-domain max and sum per split."""

from __future__ import annotations

import numpy as np


def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    splits = int(params["S"])
    nk = k.shape[-2]
    ch = -(-nk // splits)
    s_all = q @ np.swapaxes(k, -1, -2) * np.float32(np.log2(np.e) / np.sqrt(q.shape[-1]))
    b, h, gq, d = q.shape
    op = np.zeros((b, h, splits, gq, d), np.float32)
    mp = np.full((b, h, splits, gq), -np.inf, np.float32)
    lp = np.zeros((b, h, splits, gq), np.float32)
    for sp in range(splits):
        lo = min(sp * ch, nk)
        hi = min(lo + ch, nk)
        if lo >= hi:
            continue
        s = s_all[..., lo:hi]
        m = s.max(axis=-1, keepdims=True)
        p = np.exp2(s - m)
        op[:, :, sp] = p @ v[..., lo:hi, :]
        mp[:, :, sp] = m[..., 0]
        lp[:, :, sp] = p.sum(axis=-1)
    return {"OP": op, "MP": mp, "LP": lp}
