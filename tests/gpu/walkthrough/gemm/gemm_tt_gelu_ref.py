import numpy as np
from math import erf

def reference(inputs, params):
    a = np.asarray(inputs["A"], np.float32); b = np.asarray(inputs["B"], np.float32)
    z = a.T @ b.T + np.asarray(inputs["Bias"], np.float32)[None]
    verf = np.vectorize(erf)
    return {"C": 0.5 * z * (1 + verf(z / np.sqrt(2.0))), "C2": np.maximum(z, 0) ** 2}
