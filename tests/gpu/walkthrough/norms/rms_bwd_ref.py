import numpy as np


def reference(inputs, params):
    x, dy, w = (np.asarray(inputs[n], np.float32) for n in ("X", "DY", "W"))
    eps = float(params.get("EPS", 1e-6))
    D = x.shape[1]
    rstd = 1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    xhat = x * rstd
    g = dy * w
    dx = rstd * (g - xhat * (g * xhat).mean(-1, keepdims=True))
    dw = np.asarray(inputs["DW"], np.float32) + (dy * xhat).sum(0)
    return {"DX": dx, "DW": dw}
