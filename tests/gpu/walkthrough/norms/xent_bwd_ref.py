import numpy as np


def inputs(params, rng):
    M, V = int(params["M"]), int(params["V"])
    return {"Label": rng.integers(0, V, size=M).astype(np.float32)}


def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32)
    lab = np.asarray(inputs["Label"]).astype(np.int64)
    gs = float(params.get("GS", 1.0))
    m = x.max(-1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(-1))
    loss = lse - x[np.arange(len(lab)), lab]
    p = np.exp(x - lse[:, None])
    p[np.arange(len(lab)), lab] -= 1.0
    return {"Loss": loss.astype(np.float32), "DX": p * gs}
