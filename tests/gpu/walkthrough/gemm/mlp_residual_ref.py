import numpy as np
import ml_dtypes

def reference(inputs, params):
    x, w1, w2 = (np.asarray(inputs[n], np.float32) for n in ("X", "W1", "W2"))
    h = x @ w1
    g = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    g = g.astype(ml_dtypes.bfloat16).astype(np.float32)
    return {"Y": x + g @ w2}
