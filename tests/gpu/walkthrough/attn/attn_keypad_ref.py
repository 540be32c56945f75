import numpy as np

def inputs(params, rng):
    B, N = params["B"], params["N"]
    lens = rng.integers(1, N + 1, size=B).astype(np.int32)
    lens[0] = N
    if B > 1: lens[1] = 1
    return {"Lens": lens}

def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    lens = np.asarray(inputs["Lens"], np.int64)
    o = np.empty_like(q); lse = np.empty(q.shape[:3], np.float32)
    for b in range(q.shape[0]):
        L = int(lens[b])
        s = q[b] @ np.swapaxes(k[b, :, :L], -1, -2) / np.float32(np.sqrt(q.shape[-1]))
        mx = s.max(-1, keepdims=True); p = np.exp(s - mx); t = p.sum(-1, keepdims=True)
        o[b] = (p / t) @ v[b, :, :L]
        lse[b] = (mx + np.log(t))[..., 0]
    return {"O": o, "LSE": lse}
