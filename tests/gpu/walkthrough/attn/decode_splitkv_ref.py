import numpy as np


def inputs(params, rng):
    if "P" not in params:
        return {}
    B, P, MAXP, PS = int(params["B"]), int(params["P"]), int(params["MAXP"]), int(params.get("PS", 64))
    lens = rng.integers(1, MAXP * PS + 1, size=B).astype(np.int32)
    lens[0] = 1
    bt = np.zeros((B, MAXP), np.int32)
    for b in range(B):
        bt[b] = rng.permutation(P)[:MAXP]
    return {"BT": bt, "L": lens}


def _split(inputs, params):
    q, kc, vc = (np.asarray(inputs[n], np.float32) for n in ("Q", "KC", "VC"))
    bt = np.asarray(inputs["BT"]).astype(np.int64)
    lens = np.asarray(inputs["L"]).astype(np.int64)
    G, PPS = int(params.get("G", 4)), int(params.get("PPS", 2))
    B, HQ, D = q.shape
    PS = kc.shape[2]
    S = int(params["S"])
    op = np.zeros((B, S, HQ, D), np.float32)
    lse = np.zeros((B, S, HQ), np.float32)
    for b in range(B):
        npg = -(-lens[b] // PS)
        for s in range(S):
            pages = list(range(s * PPS, min(s * PPS + PPS, npg)))
            for hq in range(HQ):
                h = hq // G
                if not pages:
                    op[b, s, hq] = 0.0
                    lse[b, s, hq] = -np.inf
                    continue
                k = np.concatenate([kc[bt[b, n], h] for n in pages])
                v = np.concatenate([vc[bt[b, n], h] for n in pages])
                valid = np.concatenate([np.arange(n * PS, n * PS + PS) < lens[b] for n in pages])
                sc = np.where(valid, k @ q[b, hq] / np.sqrt(D), -np.inf)
                mx = sc.max()
                p = np.exp(sc - mx)
                op[b, s, hq] = p @ v / p.sum()
                lse[b, s, hq] = mx + np.log(p.sum())
    return {"OP": op, "LSE": lse}


def reference(inputs, params):
    if "Q" in inputs:
        return _split(inputs, params)
    op, lse = (np.asarray(inputs[n], np.float32) for n in ("OP", "LSE"))
    m = lse.max(1, keepdims=True)
    e = np.exp(lse - m)
    return {"O": (op * e[..., None]).sum(1) / e.sum(1)[..., None]}
