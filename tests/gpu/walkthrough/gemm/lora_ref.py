import numpy as np
import ml_dtypes


def inputs(params, rng):
    MB, NA = int(params["MB"]), int(params["NA"])
    return {"Ad": rng.integers(0, NA + 1, size=MB).astype(np.int32)}


def reference(inputs, params):
    x, w, la, lb = (np.asarray(inputs[n], np.float32) for n in ("X", "W", "LA", "LB"))
    ad = np.asarray(inputs["Ad"]).astype(np.int64)
    BM = int(params.get("BM", 64)); scale = float(params.get("SCALE", 0.5))
    y = x @ w
    for i, a in enumerate(ad):
        if a > 0:
            rows = slice(i * BM, (i + 1) * BM)
            xa = (x[rows] @ la[a - 1] * scale).astype(ml_dtypes.bfloat16).astype(np.float32)
            y[rows] += xa @ lb[a - 1]
    return {"Y": y}
