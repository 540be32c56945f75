import numpy as np


def reference(inputs, params):
    x, w, bias = (np.asarray(inputs[n], np.float32) for n in ("X", "W", "Bias"))
    B, L, C = x.shape
    xp = np.concatenate([np.zeros((B, 3, C), np.float32), x], axis=1)
    acc = np.broadcast_to(bias, x.shape).copy()
    for k in range(4):
        acc += w[k] * xp[:, k:k + L]
    return {"Y": acc / (1 + np.exp(-acc))}
