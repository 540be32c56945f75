import numpy as np
import ml_dtypes

def inputs(params, rng):
    B, H, N = params["B"], params["H"], params["N"]
    return {"LogG": rng.uniform(-0.2, 0.0, size=(B, H, N)).astype(np.float32)}

def bf(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)

def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    lg = np.asarray(inputs["LogG"], np.float32)
    B, H, N, D = q.shape; BC = params["BC"]
    o = np.zeros_like(q); st = np.zeros((B, H, D, D), np.float32)
    for c0 in range(0, N, BC):
        sl = slice(c0, min(N, c0 + BC))
        qc, kc, vc = q[:, :, sl], k[:, :, sl], v[:, :, sl]
        cs = np.cumsum(lg[:, :, sl], -1); last = cs[..., -1:]
        dec = np.exp(cs[..., :, None] - cs[..., None, :])
        a = bf(np.tril((qc @ np.swapaxes(kc, -1, -2)) * dec))
        o[:, :, sl] = a @ vc + (qc @ bf(st)) * np.exp(cs)[..., None]
        vs = bf(vc * np.exp(last - cs)[..., None])
        st = st * np.exp(last)[..., None] + np.swapaxes(kc, -1, -2) @ vs
    return {"O": o}
