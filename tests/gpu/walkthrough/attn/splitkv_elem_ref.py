"""Reference for splitkv_elem.tk: split sp owns keys [sp * CH, min((sp + 1) * CH, NK)),
CH = ceildiv(NK, S); unnormalised partial output, log2-domain max and sum per split."""

from __future__ import annotations

import numpy as np

from splitkv_ref import partials


def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    nk, splits = k.shape[-2], int(params["S"])
    ch = -(-nk // splits)
    ranges = [(min(sp * ch, nk), min(min(sp * ch, nk) + ch, nk)) for sp in range(splits)]
    op, mp, lp = partials(q, k, v, ranges)
    return {"OP": op, "MP": mp, "LP": lp}
