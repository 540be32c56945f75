import numpy as np

def inputs(params, rng):
    return {"IDS": rng.integers(0, params["VOCAB"], size=(params["NB"], params["L"])).astype(np.int32)}

def reference(inputs, params):
    ids = np.asarray(inputs["IDS"], np.int64)
    w = np.asarray(inputs["PSW"], np.float64)
    emb = np.asarray(inputs["EMB"], np.float64)
    return {"Y": np.einsum("nk,nkd->nd", w, emb[ids]).astype(np.float32)}
