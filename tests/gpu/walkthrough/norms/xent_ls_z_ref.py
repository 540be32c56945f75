import numpy as np
def inputs(params, rng):
    M, V = params["M"], params["V"]
    return {"Lab": rng.integers(0, V, size=M).astype(np.float32)}
def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float64); lab = np.asarray(inputs["Lab"]).astype(np.int64)
    M, V = x.shape; eps = float(params["EPS"]); zl = float(params["ZL"])
    m = x.max(1, keepdims=True); lse = (m + np.log(np.exp(x - m).sum(1, keepdims=True)))[:, 0]
    xy = x[np.arange(M), lab]
    loss = lse - (1 - eps) * xy - eps / V * x.sum(1) + zl * lse**2
    p = np.exp(x - lse[:, None]); oh = np.zeros_like(x); oh[np.arange(M), lab] = 1
    dx = p * (1 + 2 * zl * lse[:, None]) - (1 - eps) * oh - eps / V
    return {"Loss": loss.astype(np.float32), "DX": dx.astype(np.float32)}
