import numpy as np


def inputs(params, rng):
    B, L = int(params["B"]), int(params["L"])
    return {"Len": rng.integers(1, L + 1, size=B).astype(np.int32)}


def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32)
    n = np.asarray(inputs["Len"]).astype(np.int64)
    y = np.stack([x[b, : n[b]].mean(0) for b in range(x.shape[0])])
    ym = np.stack([x[b, : n[b]].max(0) for b in range(x.shape[0])])
    return {"Y": y, "Ymax": ym}
