import numpy as np


def inputs(params, rng):
    return {"Mask": (rng.random((int(params["MB"]), int(params["KB"]))) < 0.5).astype(np.int32)}


def reference(inputs, params):
    a, b = (np.asarray(inputs[n], np.float32) for n in ("A", "B"))
    mask = np.asarray(inputs["Mask"])
    bm, bk = int(params.get("BM", 128)), int(params.get("BK", 64))
    a = a.copy()
    for i in range(mask.shape[0]):
        for k in range(mask.shape[1]):
            if not mask[i, k]:
                a[i * bm:(i + 1) * bm, k * bk:(k + 1) * bk] = 0
    return {"C": a @ b}
