import numpy as np
import ml_dtypes

def inputs(params, rng):
    B, H, N, D, G = params["B"], params["H"], params["N"], params["D"], params["G"]
    bf = ml_dtypes.bfloat16
    q = rng.standard_normal((B, H, N, D)).astype(bf)
    k = rng.standard_normal((B, H // G, N, D)).astype(bf)
    v = rng.standard_normal((B, H // G, N, D)).astype(bf)
    do = rng.standard_normal((B, H, N, D)).astype(bf)
    qf, kf, vf, dof = (np.asarray(x, np.float32) for x in (q, k, v, do))
    kr, vr = np.repeat(kf, G, 1), np.repeat(vf, G, 1)
    s = qf @ np.swapaxes(kr, -1, -2) / np.sqrt(D)
    if params["CAUSAL"]:
        s = np.where(np.tril(np.ones((N, N), bool)), s, -np.inf)
    m = s.max(-1, keepdims=True); p = np.exp(s - m); t = p.sum(-1, keepdims=True)
    o = (p / t) @ vr
    lse = (m + np.log(t))[..., 0].astype(np.float32)
    delta = (np.asarray(o.astype(bf), np.float32) * dof).sum(-1).astype(np.float32)
    return {"Q": q, "K": k, "V": v, "dO": do, "LSE": lse, "Delta": delta,
            "dQacc": np.zeros((B, H, N, D), np.float32)}

def reference(inputs, params):
    q, k, v, do = (np.asarray(inputs[n], np.float32) for n in ("Q", "K", "V", "dO"))
    lse, delta = inputs["LSE"], inputs["Delta"]
    G = params["G"]; N, D = q.shape[2], q.shape[3]
    kr, vr = np.repeat(k, G, 1), np.repeat(v, G, 1)
    s = q @ np.swapaxes(kr, -1, -2) / np.sqrt(D)
    if params["CAUSAL"]:
        s = np.where(np.tril(np.ones((N, N), bool)), s, -np.inf)
    p = np.exp(s - lse[..., None])
    dv = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - delta[..., None])
    dq = ds @ kr / np.sqrt(D)
    dk = np.swapaxes(ds, -1, -2) @ q / np.sqrt(D)
    B, H = q.shape[:2]
    sumg = lambda x: x.reshape(B, H // G, G, N, D).sum(2)
    return {"dQacc": dq, "dK": sumg(dk), "dV": sumg(dv)}
