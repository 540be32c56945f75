import numpy as np
def reference(inputs, params):
    dy, w, z = (np.asarray(inputs[n], np.float64) for n in ("DY", "W", "Z"))
    c = np.sqrt(2 / np.pi); t = np.tanh(c * (z + 0.044715 * z**3))
    d = 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * c * (1 + 3 * 0.044715 * z * z)
    return {"DZ": ((dy @ w.T) * d).astype(np.float32)}
