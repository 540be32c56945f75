import numpy as np, ml_dtypes
def bf(x): return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
def reference(inputs, params):
    q, k, v, c, s = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V", "COS", "SIN"))
    h = q.shape[-1] // 2
    def rot(x):
        x1, x2 = x[..., :h], x[..., h:]
        return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    qr, kr = rot(q), bf(rot(k))
    sc = qr @ np.swapaxes(kr, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    n = q.shape[2]
    sc = np.where(np.tril(np.ones((n, n), bool)), sc, -np.inf)
    p = np.exp(sc - sc.max(-1, keepdims=True))
    return {"O": (p / p.sum(-1, keepdims=True)) @ v}
