import numpy as np

def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    tab = np.asarray(inputs["Tab"], np.float32); nb = params["NB"]
    n = q.shape[2]
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    bk = np.minimum(np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]), nb - 1)
    s = s + tab[:, bk][None]
    s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return {"O": (p / p.sum(-1, keepdims=True)) @ v}
