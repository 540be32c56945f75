import numpy as np
def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32); y = np.zeros_like(x); y[3:] = x[:-3]; return {"Y": y}
