import numpy as np
import ml_dtypes

def inputs(params, rng):
    B, H, N, BC = params["B"], params["H"], params["N"], params["BC"]
    nc = -(-N // BC)
    return {"LogG": rng.uniform(-0.5, 0.0, size=(B, H, nc)).astype(np.float32),
            "Beta": rng.uniform(0.0, 0.1, size=(B, H, N)).astype(np.float32),
            "K": (rng.standard_normal((B, H, N, params["D"])) * 0.125).astype(ml_dtypes.bfloat16)}

def bf(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)

def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    beta = np.asarray(inputs["Beta"], np.float32); lg = np.asarray(inputs["LogG"], np.float32)
    B, H, N, D = q.shape; BC = params["BC"]; nc = -(-N // BC)
    o = np.zeros_like(q); st = np.zeros((B, H, D, D), np.float32)
    for c in range(nc):
        sl = slice(c * BC, min(N, (c + 1) * BC))
        qc, kc, vc = q[:, :, sl], k[:, :, sl], v[:, :, sl]
        sb = bf(st)
        u = bf((vc - kc @ sb) * beta[:, :, sl, None])
        a = bf(np.tril(qc @ np.swapaxes(kc, -1, -2)))
        o[:, :, sl] = a @ u + qc @ sb
        st = st * np.exp(lg[:, :, c])[..., None, None] + np.swapaxes(kc, -1, -2) @ u
    return {"O": o}
