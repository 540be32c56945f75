import numpy as np


def inputs(params, rng):
    B, P, MAXP, PS = int(params["B"]), int(params["P"]), int(params["MAXP"]), int(params.get("PS", 64))
    lens = rng.integers(1, MAXP * PS + 1, size=B).astype(np.int32)
    bt = np.zeros((B, MAXP), np.int32)
    for b in range(B):
        bt[b] = rng.permutation(P)[:MAXP]
    return {"BT": bt, "L": lens}


def reference(inputs, params):
    q, kc, vc = (np.asarray(inputs[n], np.float32) for n in ("Q", "KC", "VC"))
    bt = np.asarray(inputs["BT"]).astype(np.int64)
    lens = np.asarray(inputs["L"]).astype(np.int64)
    G = int(params.get("G", 4))
    B, HQ, D = q.shape
    PS = kc.shape[2]
    out = np.zeros_like(q)
    for b in range(B):
        n = lens[b]
        pages = bt[b, : -(-n // PS)]
        k = kc[pages].transpose(1, 0, 2, 3).reshape(kc.shape[1], -1, D)[:, :n]
        v = vc[pages].transpose(1, 0, 2, 3).reshape(vc.shape[1], -1, D)[:, :n]
        for hq in range(HQ):
            h = hq // G
            s = k[h] @ q[b, hq] / np.sqrt(D)
            p = np.exp(s - s.max())
            out[b, hq] = (p / p.sum()) @ v[h]
    return {"O": out}
