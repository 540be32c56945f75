import numpy as np
def inputs(params, rng):
    return {"Ctx": rng.integers(0, params["NK"] - params["NQ"] + 1, size=params["B"]).astype(np.int32)}
def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    ctx = np.asarray(inputs["Ctx"]); NQ = q.shape[2]
    out = np.zeros_like(q)
    for b in range(q.shape[0]):
        n = ctx[b] + NQ
        s = q[b] @ np.swapaxes(k[b, :, :n], -1, -2) / np.float32(np.sqrt(q.shape[-1]))
        vis = np.arange(n)[None, :] <= ctx[b] + np.arange(NQ)[:, None]
        s = np.where(vis, s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        out[b] = (p / p.sum(-1, keepdims=True)) @ v[b, :, :n]
    return {"O": out}
