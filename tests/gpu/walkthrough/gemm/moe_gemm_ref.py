import numpy as np


def inputs(params, rng):
    T, E = int(params["T"]), int(params["E"])
    assert int(params["E1"]) == E + 1
    cuts = np.sort(rng.integers(0, T + 1, size=E - 1))
    offs = np.concatenate([[0], cuts, [T]]).astype(np.int32)
    return {"Offs": offs}


def reference(inputs, params):
    x, w = (np.asarray(inputs[n], np.float32) for n in ("X", "W"))
    offs = np.asarray(inputs["Offs"]).astype(np.int64)
    y = np.full((x.shape[0], w.shape[2]), np.nan, np.float32)
    for e in range(w.shape[0]):
        s, t = offs[e], offs[e + 1]
        y[s:t] = x[s:t] @ w[e]
    return {"Y": y}
