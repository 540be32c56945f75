import numpy as np

def reference(inputs, params):
    f = lambda n: np.asarray(inputs[n], np.float32)
    y = f("X1") @ f("W1") + f("X2") @ f("W2")
    BN = params["BN"]
    r = f("R")
    for j0 in range(0, y.shape[1], 2 * BN):
        y[:, j0:j0 + BN] += r[:, j0:j0 + BN]
    return {"Y": y}
