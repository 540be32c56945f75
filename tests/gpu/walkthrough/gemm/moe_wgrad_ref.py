import numpy as np


def inputs(params, rng):
    T, E = int(params["T"]), int(params["E"])
    cuts = np.sort(rng.integers(0, T + 1, size=E - 1))
    return {"Offs": np.concatenate([[0], cuts, [T]]).astype(np.int32)}


def reference(inputs, params):
    x, dy = (np.asarray(inputs[n], np.float32) for n in ("X", "DY"))
    offs = np.asarray(inputs["Offs"]).astype(np.int64)
    E = len(offs) - 1
    dw = np.stack([x[offs[e]:offs[e + 1]].T @ dy[offs[e]:offs[e + 1]] for e in range(E)])
    return {"DW": dw}
