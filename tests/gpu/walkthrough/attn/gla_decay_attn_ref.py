import numpy as np
import ml_dtypes

def inputs(params, rng):
    B, H, N = params["B"], params["H"], params["N"]
    return {"G": (-0.05 * np.abs(rng.standard_normal((B, H, N)))).astype(np.float32)}

def reference(inputs, params):
    q, k, v, g = (np.asarray(inputs[n], np.float64) for n in ("Q", "K", "V", "G"))
    cs = np.cumsum(g, -1)
    N = q.shape[2]
    diff = cs[..., :, None] - cs[..., None, :]
    mask = np.tril(np.ones((N, N), bool))
    decay = np.where(mask, np.exp(np.where(mask, diff, 0)), 0)
    s = (q @ np.swapaxes(k, -1, -2)) * decay
    s = s.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)
    return {"O": (float(params["SCALE"]) * (s @ v)).astype(np.float32)}
