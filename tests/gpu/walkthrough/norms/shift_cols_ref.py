import numpy as np
def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32); w = 24; xs = np.zeros_like(x); xs[:, w:] = x[:, :-w]; return {"Y": x - xs}
