import numpy as np

def inputs(params, rng):
    return {}

def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    slopes = np.asarray(inputs["Slopes"], np.float32)
    cap = float(params.get("CAP", 30.0))
    n = q.shape[2]
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    gap = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :]).astype(np.float32)
    s = s - slopes[None, :, None, None] * np.log(gap + 1.0)
    s = cap * np.tanh(s / cap)
    p = np.exp(s - s.max(-1, keepdims=True))
    return {"O": (p / p.sum(-1, keepdims=True)) @ v}
