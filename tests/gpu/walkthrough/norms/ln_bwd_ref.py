import numpy as np
import ml_dtypes


def inputs(params, rng):
    D = int(params.get("D", 512))
    M = int(params["M"])
    x = rng.standard_normal((M, D)).astype(np.float32) * 2 + 0.5
    xb = x.astype(ml_dtypes.bfloat16)
    xf = xb.astype(np.float32)
    mean = xf.mean(-1).astype(np.float32)
    rstd = (1.0 / np.sqrt(xf.var(-1) + 1e-5)).astype(np.float32)
    return {"X": xb, "Mean": mean, "Rstd": rstd}


def reference(inputs, params):
    x, dy, w = (np.asarray(inputs[n], np.float32) for n in ("X", "DY", "W"))
    mu = np.asarray(inputs["Mean"], np.float32)[:, None]
    rs = np.asarray(inputs["Rstd"], np.float32)[:, None]
    D = x.shape[1]
    xhat = (x - mu) * rs
    g = dy * w
    dx = rs * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
    dw = np.asarray(inputs["DW"], np.float32) + (dy * xhat).sum(0)
    db = np.asarray(inputs["DB"], np.float32) + dy.sum(0)
    return {"DX": dx, "DW": dw, "DB": db}
