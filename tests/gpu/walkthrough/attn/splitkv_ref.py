"""Reference for splitkv.tk. split_partial: per split of ceildiv(key tiles, S) tiles of BKV keys,
the unnormalised partial output, its log2-domain max and its sum. split_combine: the merge
of S partials (whatever they hold) into the normalised output and the natural-log LSE."""

from __future__ import annotations

import numpy as np


def tile_ranges(nk, splits, bkv):
    """Split sp's keys: ceildiv(key tiles, S) whole tiles of BKV keys each, the last cut at NK."""
    tiles = -(-nk // bkv)
    tps = -(-tiles // splits)
    return [(sp * tps * bkv, min((sp + 1) * tps * bkv, nk)) for sp in range(splits)]


def partials(q, k, v, ranges):
    """Per split (its keys lo .. hi), the unnormalised output, log2-domain max and sum."""
    splits = len(ranges)
    s_all = q @ np.swapaxes(k, -1, -2) * np.float32(np.log2(np.e) / np.sqrt(q.shape[-1]))
    b, h, gq, d = q.shape
    op = np.zeros((b, h, splits, gq, d), np.float32)
    mp = np.full((b, h, splits, gq), -np.inf, np.float32)
    lp = np.zeros((b, h, splits, gq), np.float32)
    for sp, (lo, hi) in enumerate(ranges):
        if lo >= hi:
            continue
        s = s_all[..., lo:hi]
        m = s.max(axis=-1, keepdims=True)
        p = np.exp2(s - m)
        op[:, :, sp] = p @ v[..., lo:hi, :]
        mp[:, :, sp] = m[..., 0]
        lp[:, :, sp] = p.sum(axis=-1)
    return op, mp, lp


def combine(op, mp, lp):
    m = np.maximum(mp.max(axis=2, keepdims=True), np.float32(-1e30))
    w = np.exp2(mp - m)
    l = (lp * w).sum(axis=2)
    o = (op * w[..., None]).sum(axis=2) / l[..., None]
    return o, (m[:, :, 0] + np.log2(l)) * np.float32(np.log(2))


def reference(inputs, params):
    if "Q" in inputs:
        q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
        splits = int(params["S"])
        op, mp, lp = partials(q, k, v, tile_ranges(k.shape[-2], splits, int(params["BKV"])))
        return {"OP": op, "MP": mp, "LP": lp}
    op, mp, lp = (np.asarray(inputs[n], np.float32) for n in ("OP", "MP", "LP"))
    o, lse = combine(op, mp, lp)
    return {"O": o, "LSE": lse}
