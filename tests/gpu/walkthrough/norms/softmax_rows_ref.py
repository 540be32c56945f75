import numpy as np
import ml_dtypes

def inputs(params, rng):
    M, N = params["M"], params["N"]
    mask = (rng.random((M, N)) < 0.7).astype(np.float32)
    mask[0, :] = 0.0          # a fully masked row
    return {"Mask": mask.astype(ml_dtypes.bfloat16)}

def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32); keep = np.asarray(inputs["Mask"], np.float32) != 0
    s = np.where(keep, x / np.float32(params["T"]), -np.inf)
    m = s.max(1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.where(keep, np.exp(s - m), 0.0)
    t = p.sum(1, keepdims=True)
    return {"Y": np.where(t > 0, p / np.where(t > 0, t, 1.0), 0.0)}
