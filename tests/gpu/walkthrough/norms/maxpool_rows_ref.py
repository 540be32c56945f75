import numpy as np

def reference(inputs, params):
    x = np.asarray(inputs["X"], np.float32)
    B, T, D = x.shape
    TO = -(-T // 16)
    pad = np.full((B, TO * 16, D), -np.inf, np.float32); pad[:, :T] = x
    return {"Y": pad.reshape(B, TO, 16, D).max(2)}
