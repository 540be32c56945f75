import numpy as np
def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    t = np.asarray(inputs["T"], np.float32); R = int(params["R"])
    n = q.shape[2]
    gap = np.clip(np.arange(n)[:, None] - np.arange(n)[None, :], -R, R) + R
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    s = s + t[:, gap][None]
    p = np.exp(s - s.max(-1, keepdims=True))
    return {"O": (p / p.sum(-1, keepdims=True)) @ v}
