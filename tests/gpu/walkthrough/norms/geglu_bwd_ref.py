import numpy as np
def reference(inputs, params):
    g, u, dy = (np.asarray(inputs[n], np.float64) for n in ("G", "U", "DY"))
    c = np.sqrt(2 / np.pi)
    t = np.tanh(c * (g + 0.044715 * g**3))
    gel = 0.5 * g * (1 + t)
    dgel = 0.5 * (1 + t) + 0.5 * g * (1 - t * t) * c * (1 + 3 * 0.044715 * g * g)
    return {"DU": (dy * gel).astype(np.float32), "DG": (dy * u * dgel).astype(np.float32)}
