import numpy as np


def inputs(params, rng):
    g, t, n = int(params["G"]), int(params["T"]), int(params["N"])
    return {"Off": rng.integers(0, t - n + 1, size=g).astype(np.int32)}


def reference(inputs, params):
    off = np.asarray(inputs["Off"]).astype(np.int64)
    m, n = int(params["M"]), int(params["N"])
    vectors = sum(np.asarray(inputs[k], np.float32) for k in ("A", "B", "C"))
    rows = [vectors[off[r // 64]:off[r // 64] + n] for r in range(m)]
    return {"Y": np.stack(rows).astype(np.float32)}
