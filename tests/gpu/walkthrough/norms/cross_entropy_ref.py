import numpy as np

def inputs(params, rng):
    return {"LABEL": rng.integers(0, params["V"], size=params["M"]).astype(np.int32)}

def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float64)
    lab = np.asarray(inputs["LABEL"], np.int64)
    m = x.max(1)
    lse = m + np.log(np.exp(x - m[:, None]).sum(1))
    return {"LOSS": (lse - x[np.arange(x.shape[0]), lab]).astype(np.float32)}
