import numpy as np


def inputs(params, rng):
    T, L, V = int(params["T"]), int(params["L"]), int(params["V"])
    return {"Ids": rng.integers(0, V, size=(T, L)).astype(np.int32),
            "Len": rng.integers(0, L + 1, size=T).astype(np.int32)}


def reference(inputs, params):
    e = np.asarray(inputs["E"], np.float32)
    w = np.asarray(inputs["W"], np.float32)
    ids = np.asarray(inputs["Ids"]).astype(np.int64)
    y = np.zeros((ids.shape[0], e.shape[1]), np.float32)
    for t, n in enumerate(np.asarray(inputs["Len"])):
        for k in range(n):
            y[t] += e[ids[t, k]] * w[t, k]
    return {"Y": y}
