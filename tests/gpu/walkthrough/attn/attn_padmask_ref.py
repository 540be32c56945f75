import numpy as np

def inputs(params, rng):
    B, N = params["B"], params["N"]
    lens = rng.integers(1, N + 1, size=B)
    lens[0] = N
    keep = (np.arange(N)[None, :] < lens[:, None]).astype(np.float32)
    # also punch a few holes in the middle
    keep[:, 3::7] = 0.0
    return {"KEEP": keep}

def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    keep = np.asarray(inputs["KEEP"], np.float32)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    s = np.where(keep[:, None, None, :] > 0.5, s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    p = np.exp(s - m)
    l = p.sum(-1, keepdims=True)
    return {"O": (p @ v) / np.maximum(l, 1e-30)}
