"""Reference for mlp.tk: Y = relu(X @ W1) @ W2, the hidden activations rounded to bf16 as the
kernel rounds them before the second product, in f32."""

from __future__ import annotations

import numpy as np

from tkc.dtypes import BY_NAME


def reference(inputs: dict[str, np.ndarray], params: dict[str, int | bool | float]) -> dict[str, np.ndarray]:
    x, w1, w2 = (np.asarray(inputs[n], np.float32) for n in ("X", "W1", "W2"))
    hidden = np.maximum(x @ w1, 0.0)
    return {"Y": hidden.astype(BY_NAME["bf16"].numpy_dtype()).astype(np.float32) @ w2}
