import numpy as np
def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32); y = np.zeros_like(x)
    for k in range(4):
        s = 3 - k
        y[s:] += x[:x.shape[0] - s]
    return {"Y": y}
