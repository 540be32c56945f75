import numpy as np
import ml_dtypes

def inputs(params, rng):
    B, H, N, BC = params["B"], params["H"], params["N"], params["BC"]
    nc = -(-N // BC)
    return {"Gam": rng.uniform(0.5, 1.0, size=(B, H, nc)).astype(np.float32)}

def bf(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)

def reference(inputs, params):
    q, k, v = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V"))
    gam = np.asarray(inputs["Gam"], np.float32)
    B, H, N, D = q.shape; BC = params["BC"]; nc = -(-N // BC)
    o = np.zeros_like(q); S = np.zeros((B, H, nc, D, D), np.float32)
    st = np.zeros((B, H, D, D), np.float32)
    for c in range(nc):
        sl = slice(c * BC, min(N, (c + 1) * BC))
        S[:, :, c] = st
        qc, kc, vc = q[:, :, sl], k[:, :, sl], v[:, :, sl]
        a = np.tril(qc @ np.swapaxes(kc, -1, -2))
        o[:, :, sl] = bf(a) @ vc + qc @ bf(st)
        st = st * gam[:, :, c, None, None] + np.swapaxes(kc, -1, -2) @ vc
    return {"O": o, "S": S}
