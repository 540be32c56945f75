import numpy as np

def reference(inputs, params):
    a = np.asarray(inputs["A"], np.float32); b = np.asarray(inputs["B"], np.float32)
    c = a @ b
    return {"C": c, "R": np.asarray(inputs["R"], np.float32) + c.sum(1)}
