import numpy as np

def reference(inputs, params):
    x, w, dy = (np.asarray(inputs[n], np.float64) for n in ("X", "W", "DY"))
    D = x.shape[1]; BM = int(params["BM"]); eps = float(params["EPS"])
    rstd = 1 / np.sqrt((x * x).mean(1, keepdims=True) + eps)
    g = dy * w
    dx = rstd * g - x * rstd ** 3 * (g * x).mean(1, keepdims=True)
    M = x.shape[0]; NB = -(-M // BM)
    part = dy * x * rstd
    dwp = np.stack([part[b * BM:(b + 1) * BM].sum(0) for b in range(NB)])
    return {"DX": dx.astype(np.float32), "DWP": dwp.astype(np.float32)}
