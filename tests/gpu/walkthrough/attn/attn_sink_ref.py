import numpy as np
def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    n = q.shape[2]; W = int(params["W"]); S = int(params["S"])
    i = np.arange(n)[:, None]; j = np.arange(n)[None, :]
    gap = i - j
    vis = (gap >= 0) & ((gap < W) | (j < S))
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    s = np.where(vis, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return {"O": (p / p.sum(-1, keepdims=True)) @ v}
